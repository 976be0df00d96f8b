"""The raw records behind ``docs/results``: one compact format, in one place.

Every table of records is one gzipped JSON-lines file under ``docs/results/records/``, in
the folder of the page that reports it (``records/defaults/iris_pairs.jsonl.gz`` backs
``defaults/README.md``). Line 1 is ``{"config": ..., "provenance": ...}``: what the records
depend on, and the revision, library versions, machine and load that made them (records
made before the project stamped them carry the commit that last wrote them instead,
``committed_in``). Every later line is one record, NaN written as ``null``. The gzip
stream carries no time stamp, so the same records give the same bytes.

Outside the repository (``pandas``): ``pd.read_json(path, lines=True).iloc[1:]``, or
``zcat path | tail -n +2`` for the records alone.

A script that writes pages to a folder ``out`` keeps its tables in :func:`records_dir`
``(out)``: the store's folder for that page when ``out`` is under ``docs/results``, else
``out/records`` (a run at a smoke size into a temporary folder). A run that takes hours
logs each record as it is scored to a plain JSON-lines file beside the table
(:class:`TableLog`), sealed into the table when the run ends, so an interrupted run
resumes from its log.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from spectralink.experiments import METRICS, RecordLog, provenance
from spectralink.io import atomic_write

from ._common import RESULTS

#: the one place every raw record lives
STORE = RESULTS / "records"
SUFFIX = ".jsonl.gz"


def records_dir(out: str | os.PathLike) -> Path:
    """Where a script that writes its pages to ``out`` keeps its tables."""
    out = Path(out).resolve()
    try:
        rel = out.relative_to(RESULTS.resolve())
    except ValueError:
        return out / "records"
    return STORE / rel


def table_path(out: str | os.PathLike, name: str) -> Path:
    """The table ``name`` of the pages in ``out``: ``records_dir(out) / (name + SUFFIX)``."""
    return records_dir(out) / f"{name}{SUFFIX}"


def _value(v: object) -> object:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if hasattr(v, "item") and not isinstance(v, (list, dict, str)):  # a NumPy scalar
        return _value(v.item())
    return v


def _line(obj: Mapping) -> str:
    doc = {k: _value(v) for k, v in obj.items()}
    return json.dumps(doc, allow_nan=False, default=str, separators=(",", ":")) + "\n"


def write_lines(path: Path, head: Mapping, records: Sequence[Mapping]) -> None:
    """Write the header and the records as one table, atomically and reproducibly."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="") as gz:
        gz.write(_line(head).encode())
        for r in records:
            gz.write(_line(r).encode())
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, "wb") as fh:
        fh.write(buf.getvalue())


def load_doc(path: str | os.PathLike) -> dict:
    """``{"config", "provenance", "records"}`` of a table as written; records as stored
    (``null`` stays ``None``). Empty when the table does not exist yet."""
    path = Path(path)
    if not path.exists():
        return {"config": {}, "provenance": {}, "records": []}
    with gzip.open(path, "rt") as fh:
        lines = [json.loads(line) for line in fh if line.strip()]
    if not lines or "config" not in lines[0]:
        raise ValueError(f"{path}: line 1 is not the header of a table of records.")
    head = lines[0]
    return {
        "config": head["config"],
        "provenance": head.get("provenance", {}),
        "records": lines[1:],
    }


def save_doc(path: str | os.PathLike, doc: Mapping) -> None:
    """Write ``doc`` (``config`` and ``records``) as a table stamped with today's
    provenance. A ``doc`` read with :func:`load_doc` carries its table's stamp: the records
    it keeps were made then, so that stamp (and the earlier ones it holds) stays, under
    ``provenance["earlier"]``; a doc without one is new records."""
    stamp = provenance()
    carried = dict(doc.get("provenance") or {})
    before = carried.pop("earlier", [])
    if carried and carried.get("revision") != stamp["revision"]:
        before = [carried, *before]
    if before:
        stamp["earlier"] = before
    head = {"config": dict(doc.get("config", {})), "provenance": stamp}
    write_lines(Path(path), head, doc["records"])


def read_table(path: str | os.PathLike) -> tuple[dict, list[dict]]:
    """``(config, records)`` of a table, the score fields' ``null`` read back as NaN."""
    doc = load_doc(path)
    return doc["config"], [_with_nan(r) for r in doc["records"]]


def write_table(
    records: Sequence[Mapping],
    path: str | os.PathLike,
    *,
    config: Mapping | None = None,
    carried: Mapping | None = None,
) -> None:
    """Write ``records`` as a table with ``config``, stamped with today's provenance;
    ``carried`` is the stamp of the table some of them were read from (:func:`save_doc`)."""
    save_doc(path, {"config": dict(config or {}), "records": list(records), "provenance": carried})


class TableLog:
    """A table written record by record: a plain JSON-lines log beside the table
    (``<name>.log.jsonl``, a :class:`~spectralink.experiments.RecordLog`) while the run goes,
    sealed into the table by :meth:`seal`. ``keep`` are records carried over."""

    def __init__(self, path: str | os.PathLike, header: Mapping, *, keep: Sequence = ()):
        self.path = Path(path)
        self.log_path = log_path(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._log = RecordLog(self.log_path, header, keep=keep)

    def append(self, record: Mapping, **extra: object) -> None:
        self._log.append(record, **extra)

    def seal(self) -> None:
        """Write the table from the log and remove the log."""
        self._log.close()
        head, records = _read_log(self.log_path)
        head.setdefault("provenance", provenance())
        write_lines(self.path, head, records)
        self.log_path.unlink()

    def __enter__(self) -> TableLog:
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is None:
            self.seal()
        else:  # interrupted: the log stays, for the next run to resume from
            self._log.close()


def log_path(table: Path) -> Path:
    """The in-progress log of ``table`` (``x.jsonl.gz`` -> ``x.log.jsonl``)."""
    return table.with_name(table.name.removesuffix(SUFFIX) + ".log.jsonl")


def read_progress(table: str | os.PathLike) -> tuple[dict, list[dict]] | None:
    """``(config, records)`` of an unfinished run's log if there is one, else of the
    table, else ``None``; score fields' ``null`` read back as NaN."""
    table = Path(table)
    if log_path(table).exists():
        head, records = _read_log(log_path(table))
        return head["config"], [_with_nan(r) for r in records]
    if table.exists():
        return read_table(table)
    return None


def _read_log(path: Path) -> tuple[dict, list[dict]]:
    """``(header line, records)`` of a log, the records as written (a record log reader
    would add every score a record lacks). A last line cut short by a crash is dropped."""
    with open(path) as fh:
        lines = [line for line in fh.read().split("\n")[:-1] if line.strip()]
    try:
        head, *records = [json.loads(line) for line in lines]
    except ValueError:  # a malformed line, or none at all
        raise ValueError(f"{path}: not a log of records (a malformed or missing line).") from None
    if not isinstance(head, dict) or "config" not in head:
        raise ValueError(f"{path}: line 1 is not the header of a log of records.")
    return head, records


def _with_nan(record: Mapping) -> dict:
    return {k: math.nan if k in METRICS and v is None else v for k, v in record.items()}


def read_header(path: str | os.PathLike) -> dict:
    """The header line of a table (``config`` and ``provenance``), without its records."""
    with gzip.open(path, "rt") as fh:
        return json.loads(fh.readline())


def records_note(paths: Sequence[str | os.PathLike]) -> str:
    """The paragraph a generated page ends with: where its records are and what made them
    (revisions, library versions, machine), from the tables' headers."""
    paths = sorted(Path(p) for p in paths if Path(p).exists())  # not while a run logs
    if not paths:
        return "*Records: none yet (written when the run ends).*"
    provs = [stamp for p in paths for stamp in _stamps(read_header(p).get("provenance", {}))]
    folders = sorted({shown_folder(p.parent) for p in paths})
    stamped = [p for p in provs if "revision" in p]
    parts = [f"*Generated from {len(paths)} table(s) of records in {', '.join(folders)}"]
    if stamped:
        revisions = _revisions({p["revision"][:7] for p in stamped})
        versions = sorted({_versions(p) for p in stamped})
        machines = sorted({_machine(p) for p in stamped})
        parts.append(
            f"; records made at {revisions} with {'; '.join(versions)}, on {'; '.join(machines)}"
        )
    older = sorted({p["committed_in"] for p in provs if "committed_in" in p})
    if older:
        parts.append(
            f"; records made before they carried provenance, last written at "
            f"{_revisions(older)} (library versions not recorded)"
        )
    return "".join(parts) + ".*"


def _stamps(prov: Mapping) -> list[dict]:
    """A table's stamp and the earlier ones it keeps."""
    return [{k: v for k, v in prov.items() if k != "earlier"}, *prov.get("earlier", [])]


def _revisions(revisions: set | list) -> str:
    names = ", ".join(f"`{r}`" for r in sorted(revisions))
    return f"revision{'s' if len(revisions) > 1 else ''} {names}"


def shown_folder(folder: Path) -> str:
    """A records folder as a page names it (from the repository root when it is there)."""
    try:
        return f"`docs/results/{folder.resolve().relative_to(RESULTS.resolve()).as_posix()}/`"
    except ValueError:
        return f"`{folder.name}/`"


def _versions(prov: Mapping) -> str:
    keep = ("numpy", "scipy", "scikit-learn")
    return ", ".join(f"{k} {v}" for k, v in prov.get("versions", {}).items() if k in keep)


def _machine(prov: Mapping) -> str:
    m = prov.get("machine", {})
    return f"{m.get('cores', '?')} cores ({m.get('system', '?')} {m.get('cpu', '?')})"
