"""Records on disk: CSV and JSON tables, the append-only record log, and what resuming needs.

A record is one run of the protocol (fields :data:`RECORD_FIELDS`). :class:`RecordLog` keeps
each run as it finishes; after an interruption :func:`resumable_records` reads an earlier log
back, checked against the new run's header (:data:`RESUME_KEYS`, the data's
:func:`data_fingerprint`, every method's parameters), and :func:`grid_order` puts a partial set
of records in the order of an uninterrupted run.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from ..io import atomic_write
from ._provenance import provenance

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
    "warning_kinds",
)

#: Header fields of a record log that must match for a run to resume it.
RESUME_KEYS = (
    "dataset",
    "n_samples",
    "n_features",
    "n_clusters",
    "data_sha256",
    "protocol",
    "random_state",
)


def run_key(record: Mapping) -> tuple[str, int, int, int]:
    """What identifies one run within a protocol (with the data, protocol and params):
    ``(method, n_constraints, trial, seed)``."""
    return (
        str(record["method"]),
        int(record["n_constraints"]),
        int(record["trial"]),
        int(record["seed"]),
    )


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
    """Write ``{"config": config, "provenance": ..., "records": [...]}`` as JSON (NaN ->
    null), atomically; ``provenance`` is :func:`~spectralink.experiments.provenance` now."""
    doc = {
        "config": {k: _json_value(v) for k, v in (config or {}).items()},
        "provenance": provenance(),
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

    The first line is ``{"config": header, "provenance": ...}`` (the revision, versions,
    machine and load, :func:`~spectralink.experiments.provenance`); every later line is
    one record (NaN
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

    def __init__(
        self, path: str | os.PathLike, header: Mapping, *, keep: Sequence[Mapping] = ()
    ) -> None:
        self.path = Path(path)
        lines = [_json_line({"config": dict(header), "provenance": provenance()})]
        lines += [_json_line(r) for r in keep]
        # rewriting (not appending to) the old file also drops a line cut short by a
        # crash, which would otherwise run into the first new line
        with atomic_write(self.path, "w") as fh:
            fh.write("".join(lines))
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)

    def append(self, record: Mapping, **extra: object) -> None:
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

    def __enter__(self) -> RecordLog:
        return self

    def __exit__(self, *exc) -> None:
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


# --------------------------------------------------------------------------- resuming
def data_fingerprint(X: np.ndarray, y: np.ndarray) -> str:
    """A short digest of ``(X, y)``, so that resuming notices changed data.

    ``X`` is digested in single precision: data generated with BLAS or LAPACK (a random
    rotation, a product of matrices) differs between machines in the last bits of its
    float64 values, and that must not make a record log of the same data look foreign.
    A value within the difference of a float32 rounding boundary can still change the
    digest (a chance of about the number of values times the difference over float32's
    spacing: some 10^-3 for 10^5 values a few units apart in the last place); resuming then
    refuses loudly rather than mixing data.
    """
    with np.errstate(over="ignore"):  # beyond float32's range is inf: still a digest
        # + 0.0 makes -0.0 and 0.0 one value
        X32 = np.ascontiguousarray(np.asarray(X, dtype=np.float64).astype(np.float32) + 0.0)
    h = hashlib.sha256(X32.tobytes())
    h.update(str(X32.shape).encode())
    h.update("\n".join(map(str, y.tolist())).encode())
    return h.hexdigest()[:16]


def resumable_records(
    log_path: str | os.PathLike, header: Mapping, methods: Mapping[str, Mapping]
) -> tuple[list[dict], list[dict]]:
    """``(records to carry over, those of the current methods)`` from an earlier record log.

    Raises ``ValueError`` when the log's header differs from ``header`` in one of
    :data:`RESUME_KEYS`, or holds runs of one of ``methods`` (label -> parameters) with
    other parameters (the ``params`` field :class:`RecordLog` lines carry).
    """
    old_header, old = read_record_log(log_path)
    for key in RESUME_KEYS:
        if old_header.get(key) != header[key]:
            raise ValueError(
                f"--resume: {log_path} holds runs of another configuration ({key} "
                f"{old_header.get(key)!r} there, {header[key]!r} now); use another --out, "
                "or leave out --resume to start over."
            )
    for r in old:
        name = r.get("method")
        if name in methods and r.get("params", {}) != _jsonable(methods[name]):
            raise ValueError(
                f"--resume: {log_path} holds runs of {name} with parameters "
                f"{r.get('params', {})}, now {methods[name]}; use the same --param, another "
                "--out, or leave out --resume to start over."
            )
    return old, [r for r in old if r.get("method") in methods]


def _jsonable(params: Mapping) -> dict:
    """``params`` as they read back from JSON (tuples become lists...)."""
    return json.loads(json.dumps(params, default=str))


def grid_order(
    records: Iterable[Mapping], methods: Sequence[str], counts: Sequence[int]
) -> list[Mapping]:
    """Records in the order of an uninterrupted run: count, trial, method."""
    m_pos = {m: i for i, m in enumerate(methods)}
    c_pos = {c: i for i, c in enumerate(counts)}
    return sorted(
        records,
        key=lambda r: (c_pos[int(r["n_constraints"])], int(r["trial"]), m_pos[r["method"]]),
    )
