"""The papers' protocol: draw constraints per (count, trial) cell, fit every method, score."""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..constraints import Constraints
from ..graph import knn_affinity
from ..methods import shareable_knn_graph
from ..metrics import normalized_cut, partition_scores, violated_fraction
from ..registry import get_method
from ..utils import Int, StrOptions, check_features, check_n_clusters, check_params
from ._records import METRICS, PROTOCOLS, RECORD_FIELDS, run_key

#: Graph parameters of the reference graph (the estimators' defaults).
_REFERENCE_GRAPH = {"n_neighbors": 20, "sigma": None}

_RUN_PROTOCOL_PARAMS = {
    "n_trials": [Int(1, None)],
    "protocol": [StrOptions(set(PROTOCOLS))],
    "random_state": [Int(0, None)],
    "errors": [StrOptions({"record", "raise"})],
}


def draw_constraints(
    y: ArrayLike,
    n_constraints: int,
    protocol: str = "pairs",
    random_state: int | np.random.RandomState | None = None,
) -> Constraints:
    """One constraint set drawn from the labels ``y`` under ``protocol``.

    ``"pairs"``: ``n_constraints`` random pairs (:meth:`Constraints.from_labels`).
    ``"labeled"``: all pairs among ``n_constraints`` random points
    (:meth:`Constraints.from_labeled_subset`).
    """
    check_params(
        {"protocol": [StrOptions(set(PROTOCOLS))]}, {"protocol": protocol}, "draw_constraints"
    )
    if protocol == "pairs":
        return Constraints.from_labels(y, n_constraints, random_state=random_state)
    return Constraints.from_labeled_subset(y, n_constraints, random_state=random_state)


def cell_seed(random_state: int, n_constraints: int, trial: int) -> int:
    """The seed of one (count, trial) cell of :func:`run_protocol` with base seed
    ``random_state``: its constraint draw and every method's ``random_state``.

    It does not depend on which other counts are run, so a cell is reproducible on its own.
    """
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
            check_params(cls._parameter_constraints, probe.get_params(deep=False), cls.__name__)
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


def check_methods(
    methods: Sequence[str] | Mapping[str, Mapping] | str, n_clusters: int, n_samples: int
) -> None:
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
            if "verbose" not in params and "verbose" in estimator.get_params():
                estimator.set_params(verbose=0)  # one of many fits: no stage lines
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
    # each distinct message once, with its warning class beside it (same order)
    seen = dict.fromkeys((str(w.message).replace("\n", " "), w.category.__name__) for w in caught)
    return labels, {
        "time_s": elapsed,
        "status": status,
        "message": message,
        "warnings": " | ".join(m for m, _ in seen),
        "warning_kinds": " | ".join(k for _, k in seen),
    }


def run_protocol(
    X: ArrayLike,
    y: ArrayLike,
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

    given = {"n_trials": n_trials, "protocol": protocol, "random_state": random_state}
    check_params(_RUN_PROTOCOL_PARAMS, {**given, "errors": errors}, "run_protocol")
    X = check_features(X)
    y = check_array(np.asarray(y), ensure_2d=False, dtype=None)
    if y.ndim != 1 or len(y) != X.shape[0]:
        raise ValueError(f"y must hold one label per row of X ({X.shape[0]}), got {y.shape}.")
    counts = _check_counts(n_constraints)
    k = len(np.unique(y)) if n_clusters is None else n_clusters
    # One probe estimator per method: every method, parameter and k is checked before
    # the first fit, and the probe tells which graph the method would build.
    specs, probes = _method_probes(methods, k, X.shape[0])
    graph_keys: dict[str, tuple | None] = {
        label: shareable_knn_graph(probe) if share_graph else None
        for label, probe in probes.items()
    }
    reuse = {run_key(r): r for r in done or ()}

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
                seed = cell_seed(random_state, c, trial)
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
                    rec.setdefault("warning_kinds", "")  # a fit function of an older form
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
