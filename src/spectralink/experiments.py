"""The papers' evaluation protocol: constraint counts x trials x methods -> records.

For every number of constraints ``c`` and every trial ``t`` one constraint set is drawn
from the ground truth, either as ``c`` random labelled pairs (``protocol="pairs"``,
:meth:`Constraints.from_labels`: CCSR, CCSKL, COSC, LSCP) or as all pairs among ``c``
labelled points (``protocol="labeled"``, :meth:`Constraints.from_labeled_subset`: SCACS,
FCSC). Every method is then fitted on the same draw and scored. One run is one *record*,
a flat ``dict``:

==================  ===============================================================
``dataset``         name given to :func:`run_protocol`
``method``          method label (registry name unless renamed)
``n_constraints``   ``c``: number of pairs, or of labelled points with ``"labeled"``
``trial``           0-based trial index
``seed``            the seed of this (c, trial) cell: constraint draw and method
``n_must_link``     must-links actually drawn (duplicates merged)
``n_cannot_link``   cannot-links actually drawn
``error``           :func:`~spectralink.metrics.clustering_error` (Hungarian)
``majority_error``  :func:`~spectralink.metrics.majority_vote_error`
``ari``, ``nmi``    adjusted Rand index, normalized mutual information
``violated``        :func:`~spectralink.metrics.violated_fraction`
``ncut``            :func:`~spectralink.metrics.normalized_cut` of the labels on the
                    run's reference graph (the same graph for every method, so values
                    compare across methods); NaN when ``compute_ncut=False``
``n_found``         number of distinct clusters in the labels (fewer than asked for
                    means a degenerate partition)
``smallest``        size of the smallest cluster
``time_s``          wall time of ``fit`` in seconds (a shared graph is built before and
                    is not counted; use ``share_graph=False`` to time whole fits)
``status``          ``"ok"`` or ``"failed"`` (e.g. COP-KMeans finds no feasible assignment)
``message``         the error message of a failed run, else ``""``
``warnings``        distinct warning messages emitted by ``fit``, joined by ``" | "``
==================  ===============================================================

Every method, parameter value and the number of clusters are checked before the first fit
(:func:`check_methods`). A run can be kept on disk as soon as it is scored
(``on_record`` with a :class:`RecordLog`, one JSON line per run) and handed back as
``done`` after an interruption, so that only the missing runs are fitted.

Graphs do not depend on the constraints, so the k-NN graph is built once per call and
handed to every method that clusters that same graph (``affinity="precomputed"``);
methods that need features (``_supports_precomputed = False``) or build their own kind
of graph get the features. Everything is deterministic given ``random_state``.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import stat
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .constraints import Constraints
from .graph import knn_affinity
from .methods import shareable_knn_graph
from .metrics import (
    normalized_cut,
    partition_scores,
    violated_fraction,
)
from .registry import get_method
from .utils._validation import check_n_clusters

__all__ = [
    "METRICS",
    "PROTOCOLS",
    "RECORD_FIELDS",
    "RecordLog",
    "atomic_write",
    "check_methods",
    "draw_constraints",
    "format_table",
    "read_record_log",
    "read_records_json",
    "run_protocol",
    "summarize",
    "write_records_csv",
    "write_records_json",
]

#: Protocol name -> how one constraint set is drawn from the labels.
PROTOCOLS = ("pairs", "labeled")

#: Score columns of a record (lower is better for the first two and the last two).
METRICS = ("error", "majority_error", "ari", "nmi", "violated", "ncut", "time_s")

RECORD_FIELDS = (
    "dataset",
    "method",
    "n_constraints",
    "trial",
    "seed",
    "n_must_link",
    "n_cannot_link",
    "error",
    "majority_error",
    "ari",
    "nmi",
    "violated",
    "ncut",
    "n_found",
    "smallest",
    "time_s",
    "status",
    "message",
    "warnings",
)

#: Graph parameters of the reference graph (the estimators' defaults).
_REFERENCE_GRAPH = {"n_neighbors": 20, "sigma": None}


# --------------------------------------------------------------------------- protocol
def draw_constraints(y, n_constraints: int, protocol: str = "pairs", random_state=None):
    """One constraint set drawn from the labels ``y`` under ``protocol``.

    ``"pairs"``: ``n_constraints`` random pairs (:meth:`Constraints.from_labels`).
    ``"labeled"``: all pairs among ``n_constraints`` random points
    (:meth:`Constraints.from_labeled_subset`).
    """
    if protocol == "pairs":
        return Constraints.from_labels(y, n_constraints, random_state=random_state)
    if protocol == "labeled":
        return Constraints.from_labeled_subset(y, n_constraints, random_state=random_state)
    raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}; got {protocol!r}.")


def _cell_seed(random_state: int, n_constraints: int, trial: int) -> int:
    # A seed per (count, trial) cell, independent of which other counts are run, so a
    # cell is reproducible on its own.
    seq = np.random.SeedSequence(entropy=random_state, spawn_key=(int(n_constraints), trial))
    return int(seq.generate_state(1)[0] & 0x7FFFFFFF)


def _normalize_methods(methods) -> dict[str, tuple[str, dict]]:
    """``label -> (registry name, params)`` from names or a mapping of params."""
    if isinstance(methods, str):
        methods = [m.strip() for m in methods.split(",") if m.strip()]
    if isinstance(methods, Mapping):
        items = list(methods.items())
    else:
        items = [(m, {}) for m in methods]
    if not items:
        raise ValueError("no methods given.")
    out: dict[str, tuple[str, dict]] = {}
    for label, params in items:
        if not isinstance(label, str):
            raise TypeError(f"method names must be strings, got {label!r}.")
        params = dict(params or {})
        name = params.pop("method", label)
        get_method(name)  # unknown or missing method -> ValueError before any work
        if label in out:
            raise ValueError(f"method {label!r} is listed twice.")
        out[label] = (name, params)
    return out


def _method_probes(methods, n_clusters: int, n_samples: int) -> tuple[dict, dict]:
    """``(specs, probes)``: :func:`_normalize_methods` of ``methods`` and ``label ->
    unfitted estimator``, after every check that needs no fit."""
    specs = _normalize_methods(methods)
    probes = {}
    for label, (name, params) in specs.items():
        cls = get_method(name)
        try:
            probe = cls(n_clusters=n_clusters, **params)
        except TypeError as exc:
            raise ValueError(f"invalid parameters for method {label!r}: {exc}") from None
        # scikit-learn's parameter checks run at the start of fit; run them now so that
        # a bad value fails once, not in every run
        try:
            probe._validate_params()
        except ValueError as exc:
            raise ValueError(f"method {label!r}: {exc}") from None
        if getattr(cls, "_two_clusters_only", False) and n_clusters != 2:
            raise ValueError(
                f"method {label!r} ({cls.__name__}) partitions into 2 clusters only, but the "
                f"data has k={n_clusters} classes; leave it out or use a 2-class dataset."
            )
        try:
            check_n_clusters(n_clusters, n_samples)
        except ValueError as exc:
            raise ValueError(f"method {label!r}: {exc}") from None
        probes[label] = probe
    return specs, probes


def check_methods(methods, n_clusters: int, n_samples: int) -> None:
    """Check methods, their parameters and ``n_clusters`` without fitting anything.

    Unknown methods, unknown or invalid parameter values, and a method that cannot
    produce ``n_clusters`` clusters (e.g. SCLC, which is k = 2 only) raise a
    ``ValueError`` naming the method, so that a protocol fails at once rather than in
    every run. :func:`run_protocol` calls it first.

    Parameters
    ----------
    methods : list of str, mapping or comma-separated str
        As in :func:`run_protocol`.
    n_clusters : int
        Number of clusters the methods will be asked for.
    n_samples : int
        Number of points.
    """
    _method_probes(methods, n_clusters, n_samples)


def _run_key(record: Mapping) -> tuple:
    """What identifies one run within a protocol (with the data, protocol and params)."""
    return (
        str(record["method"]),
        int(record["n_constraints"]),
        int(record["trial"]),
        int(record["seed"]),
    )


def _check_counts(n_constraints) -> list[int]:
    if isinstance(n_constraints, (int, np.integer)):
        n_constraints = [n_constraints]
    counts = []
    for c in n_constraints:
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 0:
            raise ValueError(f"constraint counts must be non-negative integers, got {c!r}.")
        counts.append(int(c))
    if not counts:
        raise ValueError("no constraint counts given.")
    return counts


def _build_graph(X, key, random_state) -> sp.csr_matrix:
    n_neighbors, sigma = key
    return knn_affinity(
        X,
        n_neighbors=min(int(n_neighbors), X.shape[0] - 1),
        sigma=sigma,
        random_state=random_state,
    )


def _score(y, labels, constraints, W) -> dict:
    _, sizes = np.unique(labels, return_counts=True)
    return {
        "n_found": len(sizes),
        "smallest": int(sizes.min()),
        **partition_scores(y, labels),
        "violated": violated_fraction(labels, constraints),
        "ncut": normalized_cut(W, labels) if W is not None else math.nan,
    }


def _fit_one(name, params, data, graph, n_clusters, seed, constraints, errors):
    """Fit one method on one constraint draw; returns (labels or None, record fields)."""
    kwargs = {"n_clusters": n_clusters, **params}
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            estimator = get_method(name)(**kwargs)
            if "random_state" not in params and "random_state" in estimator.get_params():
                estimator.set_params(random_state=seed)
            if graph is not None:
                estimator.set_params(affinity="precomputed")
                labels = estimator.fit(graph, constraints=constraints).labels_
            else:
                labels = estimator.fit(data, constraints=constraints).labels_
            status, message = "ok", ""
        except Exception as exc:  # a method failing on one draw is a result, not a crash
            if errors == "raise":
                raise
            labels, status = None, "failed"
            message = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    elapsed = time.perf_counter() - t0
    seen = dict.fromkeys(str(w.message).replace("\n", " ") for w in caught)
    return labels, {
        "time_s": elapsed,
        "status": status,
        "message": message,
        "warnings": " | ".join(seen),
    }


def run_protocol(
    X,
    y,
    methods: Sequence[str] | Mapping[str, Mapping] | str,
    n_constraints: Iterable[int] | int,
    *,
    n_trials: int = 10,
    protocol: str = "pairs",
    n_clusters: int | None = None,
    random_state: int = 0,
    dataset: str = "data",
    share_graph: bool = True,
    compute_ncut: bool = True,
    errors: str = "record",
    progress: bool = True,
    done: Iterable[Mapping] | None = None,
    on_record: Callable[[dict], None] | None = None,
) -> list[dict]:
    """Run every (constraint count, trial, method) of the papers' protocol on ``(X, y)``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Features.
    y : array-like of shape (n_samples,)
        Ground-truth labels; constraints are drawn from them and the scores use them.
    methods : list of str, mapping or comma-separated str
        Registry names (see :func:`spectralink.registry.available_methods`), or a mapping
        ``label -> params`` of constructor parameters. A params dict may hold
        ``"method": name`` to run a registry method under another label (e.g. two
        settings of one method).
    n_constraints : int or iterable of int
        The constraint counts: pairs (``"pairs"``) or labelled points (``"labeled"``).
    n_trials : int, default=10
        Constraint draws per count. All methods see the same draw in a trial.
    protocol : {"pairs", "labeled"}, default="pairs"
        See :func:`draw_constraints`.
    n_clusters : int, default=None
        Number of clusters; ``None`` uses the number of distinct labels in ``y``.
    random_state : int, default=0
        Base seed. Each (count, trial) cell gets a seed derived from it, used for the
        constraint draw and as every method's ``random_state`` (unless its params fix
        one), so the records are reproducible.
    dataset : str, default="data"
        Name stored in the records.
    share_graph : bool, default=True
        Build each distinct k-NN graph once and pass it as ``affinity="precomputed"`` to
        the methods that would build exactly that graph themselves.
    compute_ncut : bool, default=True
        Score the normalized cut of every labelling on the reference graph (20-NN,
        default sigma). Costs one graph build when no method shares it.
    errors : {"record", "raise"}, default="record"
        ``"record"`` stores a failed fit as ``status="failed"`` with its message and goes
        on; ``"raise"`` re-raises (for debugging).
    progress : bool, default=True
        Show a tqdm progress bar (on stderr).
    done : iterable of dict, default=None
        Records of runs already finished (e.g. read back with :func:`read_record_log`
        after an interruption). A run whose ``(method, n_constraints, trial, seed)``
        matches one of them is not fitted again: that record takes its place. The caller
        makes sure they were run with the same data, protocol and method parameters.
    on_record : callable, default=None
        Called with each new record as soon as its run is scored (not with the reused
        ones), e.g. :meth:`RecordLog.append` to keep it on disk.

    Returns
    -------
    records : list of dict
        One row per run, in the order count, trial, method; fields in
        :data:`RECORD_FIELDS`.

    Raises
    ------
    ValueError
        Before any fit, for an unknown method, an invalid parameter value, or a method
        that cannot give ``n_clusters`` clusters (:func:`check_methods`).

    Examples
    --------
    >>> from spectralink.datasets import load
    >>> from spectralink.experiments import run_protocol, summarize
    >>> X, y = load("iris")
    >>> recs = run_protocol(X, y, ["ncut"], [0, 50], n_trials=2, progress=False)
    >>> len(recs)
    4
    """
    from sklearn.utils.validation import check_array

    from .utils._validation import check_features

    X = check_features(X)
    y = check_array(np.asarray(y), ensure_2d=False, dtype=None)
    if y.ndim != 1 or len(y) != X.shape[0]:
        raise ValueError(f"y must hold one label per row of X ({X.shape[0]}), got {y.shape}.")
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}; got {protocol!r}.")
    if errors not in ("record", "raise"):
        raise ValueError(f"errors must be 'record' or 'raise', got {errors!r}.")
    if isinstance(n_trials, bool) or not isinstance(n_trials, (int, np.integer)) or n_trials < 1:
        raise ValueError(f"n_trials must be a positive integer, got {n_trials!r}.")
    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)):
        raise ValueError(f"random_state must be an integer, got {random_state!r}.")
    if random_state < 0:
        raise ValueError(f"random_state must be non-negative, got {random_state}.")
    counts = _check_counts(n_constraints)
    k = len(np.unique(y)) if n_clusters is None else n_clusters
    # One probe estimator per method: every method, parameter and k is checked before
    # the first fit, and the probe tells which graph the method would build.
    specs, probes = _method_probes(methods, k, X.shape[0])
    graph_keys: dict[str, tuple | None] = {
        label: shareable_knn_graph(probe) if share_graph else None
        for label, probe in probes.items()
    }
    reuse = {_run_key(r): r for r in done or ()}

    graphs: dict[tuple, sp.csr_matrix] = {}
    ref_key = (_REFERENCE_GRAPH["n_neighbors"], _REFERENCE_GRAPH["sigma"])
    needed = {key for key in graph_keys.values() if key is not None}
    if compute_ncut:
        needed.add(ref_key)
    for key in needed:
        graphs[key] = _build_graph(X, key, random_state)
    W_ref = graphs.get(ref_key) if compute_ncut else None

    total = len(counts) * n_trials * len(specs)
    bar = _progress_bar(total, dataset, progress)
    records: list[dict] = []
    try:
        for c in counts:
            for trial in range(n_trials):
                seed = _cell_seed(random_state, c, trial)
                cons = None
                for label, (name, params) in specs.items():
                    previous = reuse.get((label, c, trial, seed))
                    if previous is not None:
                        records.append({f: previous[f] for f in RECORD_FIELDS})
                        bar.update(1)
                        continue
                    if cons is None:  # drawn only for a cell that still has a run to do
                        cons = draw_constraints(y, c, protocol, random_state=seed)
                    key = graph_keys[label]
                    labels, fields = _fit_one(
                        name, params, X, graphs.get(key) if key else None, k, seed, cons, errors
                    )
                    rec = {
                        "dataset": dataset,
                        "method": label,
                        "n_constraints": c,
                        "trial": trial,
                        "seed": seed,
                        "n_must_link": cons.n_must_link,
                        "n_cannot_link": cons.n_cannot_link,
                    }
                    if labels is not None:
                        rec.update(_score(y, labels, cons, W_ref))
                    else:
                        rec.update(dict.fromkeys(METRICS[:-1], math.nan))
                        rec.update(n_found=0, smallest=0)
                    rec.update(fields)
                    records.append({f: rec[f] for f in RECORD_FIELDS})
                    if on_record is not None:
                        on_record(records[-1])
                    bar.update(1)
    finally:
        bar.close()
    return records


def _progress_bar(total: int, desc: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="fit", disable=not enabled, leave=False)


# --------------------------------------------------------------------------- summaries
def summarize(records: Sequence[Mapping], metric: str = "error") -> list[dict]:
    """Mean and standard deviation of ``metric`` per method and constraint count.

    Failed runs are left out of the statistics and counted in ``n_failed``. The standard
    deviation is the sample one (``ddof=1``; 0 for a single run).

    Returns
    -------
    rows : list of dict
        Keys ``method``, ``n_constraints``, ``mean``, ``std``, ``n_ok``, ``n_failed``,
        ordered by method (first appearance) then count.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {metric!r}.")
    groups: dict[tuple[str, int], list[Mapping]] = {}
    for r in records:
        groups.setdefault((r["method"], int(r["n_constraints"])), []).append(r)
    order = list(dict.fromkeys(r["method"] for r in records))
    rows = []
    for (method, c), runs in sorted(
        groups.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1])
    ):
        vals = np.array(
            [float(r[metric]) for r in runs if r["status"] == "ok" and r[metric] is not None],
            dtype=float,
        )
        vals = vals[np.isfinite(vals)]
        rows.append(
            {
                "method": method,
                "n_constraints": c,
                "mean": float(vals.mean()) if len(vals) else math.nan,
                "std": float(vals.std(ddof=1))
                if len(vals) > 1
                else (0.0 if len(vals) else math.nan),
                "n_ok": int(len(vals)),
                "n_failed": sum(r["status"] != "ok" for r in runs),
            }
        )
    return rows


def format_table(
    summary: Sequence[Mapping],
    *,
    digits: int = 3,
    markdown: bool = True,
    count_label: str = "constraints",
) -> str:
    """A table of ``mean ± std``: one row per constraint count, one column per method.

    Cells with failed runs show ``(f/n failed)``; a cell with no successful run shows
    ``failed``. ``markdown=False`` gives aligned plain text for a terminal;
    ``count_label`` heads the first column.
    """
    methods = list(dict.fromkeys(r["method"] for r in summary))
    counts = sorted({int(r["n_constraints"]) for r in summary})
    cell = {(r["method"], int(r["n_constraints"])): r for r in summary}

    def fmt(r):
        if r is None:
            return ""
        n = r["n_ok"] + r["n_failed"]
        if r["n_ok"] == 0:
            return f"failed ({r['n_failed']}/{n})"
        text = f"{r['mean']:.{digits}f} ± {r['std']:.{digits}f}"
        if r["n_failed"]:
            text += f" ({r['n_failed']}/{n} failed)"
        return text

    header = [count_label, *methods]
    body = [[str(c), *(fmt(cell.get((m, c))) for m in methods)] for c in counts]
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---:|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in body]
        return "\n".join(lines)
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    return "\n".join(
        "  ".join(v.rjust(w) for v, w in zip(row, widths, strict=True)) for row in [header, *body]
    )


# --------------------------------------------------------------------------- files
@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", **open_kwargs):
    """Open a temporary file beside ``path``; on success move it over ``path``.

    The old content of ``path`` is kept if anything fails before the end of the block,
    and no temporary file is left behind. ``mode`` is ``"w"`` or ``"wb"``. The file gets
    the permissions a plain ``open`` would give it (those of the file it replaces, else
    ``0o666`` minus the umask), not the owner-only ones of a temporary file.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}.")
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, mode, **open_kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, _file_mode(path))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _file_mode(path: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)  # the only portable way to read the umask is to set it
        os.umask(umask)
        return 0o666 & ~umask


def _json_value(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, np.generic):
        return _json_value(v.item())
    return v


def write_records_csv(records: Sequence[Mapping], path: str | os.PathLike) -> None:
    """Write records as CSV (columns :data:`RECORD_FIELDS`), atomically."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=RECORD_FIELDS, extrasaction="ignore")
    writer.writeheader()
    for r in records:
        writer.writerow({k: _json_value(r.get(k)) for k in RECORD_FIELDS})
    with atomic_write(path, "w", newline="") as fh:
        fh.write(buf.getvalue())


def write_records_json(
    records: Sequence[Mapping], path: str | os.PathLike, *, config: Mapping | None = None
) -> None:
    """Write ``{"config": config, "records": [...]}`` as JSON (NaN -> null), atomically."""
    doc = {
        "config": {k: _json_value(v) for k, v in (config or {}).items()},
        "records": [{k: _json_value(v) for k, v in r.items()} for r in records],
    }
    text = json.dumps(doc, indent=1, allow_nan=False, default=str)
    with atomic_write(path, "w") as fh:
        fh.write(text + "\n")


def read_records_json(path: str | os.PathLike) -> list[dict]:
    """Records written by :func:`write_records_json` (null scores back to NaN)."""
    with open(path) as fh:
        doc = json.load(fh)
    out = []
    for r in doc["records"]:
        r = dict(r)
        for m in METRICS:
            if r.get(m) is None:
                r[m] = math.nan
        out.append(r)
    return out


class RecordLog:
    """An append-only JSON-lines file of records, safe to interrupt at any point.

    The first line is ``{"config": header}``; every later line is one record (NaN
    scores as ``null``) with the fields given to :meth:`append`. Each line is written
    with a single ``write`` on a file opened for appending, then fsynced,
    so an interruption loses at most the run in progress and never garbles the lines
    before it. Read it back with :func:`read_record_log`.

    Parameters
    ----------
    path : path
        The file. It is replaced (atomically) by the header and ``keep``.
    header : dict
        What the records depend on (data, protocol, seed...); JSON-serialisable.
    keep : sequence of dict, default=()
        Records to carry over (as written by :meth:`append`, e.g. those read back to
        resume a run).
    """

    def __init__(self, path: str | os.PathLike, header: Mapping, *, keep: Sequence[Mapping] = ()):
        self.path = Path(path)
        lines = [_json_line({"config": dict(header)})]
        lines += [_json_line(r) for r in keep]
        # rewriting (not appending to) the old file also drops a line cut short by a
        # crash, which would otherwise run into the first new line
        with atomic_write(self.path, "w") as fh:
            fh.write("".join(lines))
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)

    def append(self, record: Mapping, **extra) -> None:
        """Write ``record`` (and ``extra`` fields) as one line, flushed to disk."""
        data = _json_line({**record, **extra}).encode()
        # one unbuffered write per line: a text file's buffer could split a long line
        while data:
            data = data[os.write(self._fd, data) :]
        os.fsync(self._fd)

    def close(self) -> None:
        """Close the file (records appended so far are already on disk)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _json_line(obj: Mapping) -> str:
    doc = {k: _json_value(v) for k, v in obj.items()}
    return json.dumps(doc, allow_nan=False, default=str, separators=(",", ":")) + "\n"


def read_record_log(path: str | os.PathLike) -> tuple[dict, list[dict]]:
    """``(header, records)`` of a file written by :class:`RecordLog`.

    A last line cut short (the process was killed while writing it) is ignored; a
    malformed line elsewhere, or a missing header, raises ``ValueError``.
    """
    path = Path(path)
    with open(path) as fh:
        lines = fh.read().split("\n")
    complete = lines[:-1]  # text after the final newline is a line cut short: ignored
    header = None
    records = []
    for lineno, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError:
            raise ValueError(f"{path}: line {lineno} is not a JSON record.") from None
        if header is None:
            if not isinstance(doc, dict) or "config" not in doc:
                raise ValueError(f"{path}: line 1 is not the header of a record log.")
            header = doc["config"]
            continue
        for m in METRICS:
            if doc.get(m) is None:
                doc[m] = math.nan
        records.append(doc)
    if header is None:
        raise ValueError(f"{path}: holds no header; not a record log.")
    return header, records
