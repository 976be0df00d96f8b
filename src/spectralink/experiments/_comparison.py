"""One comparison of methods under the papers' protocol, recorded run by run and resumable.

What ``spectralink compare`` runs, as a library object: a :class:`Comparison` holds the
labelled data, the methods and the constraint counts; :meth:`Comparison.plan` reads an
earlier record log (what a resumed run keeps and what it still has to fit),
:meth:`Comparison.run` fits the grid with every record appended to the log as it is made,
and :meth:`Comparison.write` writes the runs as CSV and JSON and the Markdown summary.
:func:`problem_lines` says, one line each, which runs failed and which warnings they gave.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import __version__
from ..exceptions import one_line
from ..io import atomic_write
from ._protocol import cell_seed, run_protocol
from ._records import (
    RECORD_FIELDS,
    RecordLog,
    data_fingerprint,
    grid_order,
    resumable_records,
    run_key,
    write_records_csv,
    write_records_json,
)
from ._summary import summary_markdown

__all__ = ["Comparison", "ComparisonPlan", "problem_lines", "warning_summary"]


@dataclass
class ComparisonPlan:
    """What a run of a :class:`Comparison` does: the earlier records it keeps, the runs
    already done that its grid wants, the number of runs of the grid, and what it says
    about the earlier log (``notes``)."""

    keep: list[dict]
    done: list[dict]
    total: int
    notes: list[str] = field(default_factory=list)


@dataclass
class Comparison:
    """Methods compared on labelled data: ``n_trials`` draws of constraints per count of
    ``counts`` (``protocol`` ``"pairs"`` or ``"labeled"``), every method fitted on each.

    ``methods`` maps a registry name to its parameters; ``scale`` and ``data`` (the file
    read, if any) are recorded, not applied.
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    methods: dict[str, dict]
    counts: list[int]
    n_trials: int
    protocol: str
    random_state: int
    scale: str | None = None
    data: str | None = None

    @property
    def n_clusters(self) -> int:
        return len(np.unique(self.y))

    def header(self) -> dict:
        """The record log's header: what a resumed run must match."""
        return {
            "dataset": self.name,
            "n_samples": int(self.X.shape[0]),
            "n_features": int(self.X.shape[1]),
            "n_clusters": int(self.n_clusters),
            "data_sha256": data_fingerprint(self.X, self.y),
            "protocol": self.protocol,
            "random_state": self.random_state,
            "scale": self.scale,
            "spectralink_version": __version__,
        }

    def plan(self, log_path: Path, resume: bool) -> ComparisonPlan:
        """What a run writing ``log_path`` keeps of it (with ``resume``) and has to fit."""
        keep: list[dict] = []
        done: list[dict] = []
        notes = []
        if resume and log_path.is_file():
            keep, done = resumable_records(log_path, self.header(), self.methods)
        elif resume:
            notes.append(f"no earlier runs in {log_path}; starting afresh")
        elif log_path.is_file():
            notes.append(f"replacing the earlier runs in {log_path} (--resume keeps them)")
        wanted = {
            (m, c, t, cell_seed(self.random_state, c, t))
            for c in self.counts
            for t in range(self.n_trials)
            for m in self.methods
        }
        return ComparisonPlan(keep, [r for r in done if run_key(r) in wanted], len(wanted), notes)

    def run(
        self, log_path: Path, plan: ComparisonPlan, *, progress: bool = True
    ) -> tuple[list[dict], bool]:
        """``(records, interrupted)``: the grid fitted, each record appended to the log at
        ``log_path`` as it is made; on an interrupt, the records made so far in the grid's
        order."""
        finished: list[dict] = []
        with RecordLog(log_path, self.header(), keep=plan.keep) as log:

            def record(rec: dict) -> None:
                log.append(rec, params=self.methods[rec["method"]])
                finished.append(rec)

            try:
                records = run_protocol(
                    self.X, self.y, self.methods, self.counts, n_trials=self.n_trials,
                    protocol=self.protocol, random_state=self.random_state, dataset=self.name,
                    progress=progress, done=plan.done, on_record=record,
                )  # fmt: skip
            except KeyboardInterrupt:
                rows = [{f: r.get(f, "") for f in RECORD_FIELDS} for r in plan.done] + finished
                return grid_order(rows, list(self.methods), self.counts), True
        return records, False

    def config(self, n_runs: int, n_planned: int) -> dict:
        """The configuration written beside the records."""
        header = self.header()
        config = {
            **{key: header[key] for key in ("dataset", "n_samples", "n_features", "n_clusters")},
            "methods": self.methods,
            "n_constraints": self.counts,
            "n_trials": self.n_trials,
            "protocol": self.protocol,
            "scale": self.scale,
            "random_state": self.random_state,
            "spectralink_version": header["spectralink_version"],
            "n_runs": n_runs,
            "n_runs_planned": n_planned,
        }
        if self.data is not None:
            config["data"] = self.data
        return config

    def write(self, out: Path, records: list[dict], metric: str, n_planned: int) -> list[Path]:
        """The runs as ``<name>_runs.csv`` and ``.json`` and the summary
        ``<name>_summary.md`` in ``out``, each written whole or not at all; their paths."""
        config = self.config(len(records), n_planned)
        paths = [out / f"{self.name}_runs.csv", out / f"{self.name}_runs.json",
                 out / f"{self.name}_summary.md"]  # fmt: skip
        write_records_csv(records, paths[0])
        write_records_json(records, paths[1], config=config)
        with atomic_write(paths[2], "w") as fh:
            fh.write(summary_markdown(records, config, metric))
        return paths


def warning_summary(records: list[dict]) -> list[str]:
    """One line per kind of warning over the runs: how many runs, which methods, and the
    first message (records without ``warning_kinds`` are grouped by message)."""
    by_kind: dict[str, tuple[list[str], str]] = {}
    for r in records:
        messages = [m for m in r.get("warnings", "").split(" | ") if m]
        kinds = [k for k in r.get("warning_kinds", "").split(" | ") if k]
        aligned = kinds if len(kinds) == len(messages) else messages  # older records: none
        for kind, message in zip(aligned, messages, strict=True):
            methods, _ = by_kind.setdefault(kind, ([], message))
            methods.append(r["method"])
    lines = []
    for kind, (methods, first) in by_kind.items():
        label = kind if kind.endswith("Warning") else "warning"
        names = ", ".join(dict.fromkeys(methods))
        lines.append(one_line(f"{label} in {len(methods)} runs ({names}); first: {first}"))
    return lines


def problem_lines(records: list[dict]) -> list[str]:
    """Failures per method (with the first message) and one line per kind of warning."""
    lines = []
    for method in dict.fromkeys(r["method"] for r in records):
        mine = [r for r in records if r["method"] == method]
        failed = [r for r in mine if r["status"] != "ok"]
        if failed and len(failed) == len(mine):
            lines.append(
                f"{method}: every one of its {len(mine)} runs failed, so it is left out of "
                f"the plot; first: {failed[0]['message']}"
            )
        elif failed:
            lines.append(
                f"{method}: {len(failed)} of {len(mine)} runs failed, first: {failed[0]['message']}"
            )
    return lines + warning_summary(records)
