"""Records summarised: mean ± std per method and count, as a table or a Markdown page."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..utils import Int, StrOptions, check_params
from ._provenance import provenance_line
from ._records import METRICS

#: Metrics of a summary page, after the one asked for.
_SUMMARY_METRICS = ("error", "ari", "nmi", "violated", "ncut", "time_s")


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
    check_params({"metric": [StrOptions(set(METRICS))]}, {"metric": metric}, "summarize")
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
    check_params({"digits": [Int(0, None)]}, {"digits": digits}, "format_table")
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


def count_label(protocol: str) -> str:
    """What a protocol's counts count: ``"labelled points"`` or ``"constraints"``."""
    return "labelled points" if protocol == "labeled" else "constraints"


def summary_markdown(records: Sequence[Mapping], config: Mapping, metric: str) -> str:
    """A Markdown page of ``records``: the setting from ``config`` (as ``spectralink
    compare`` writes it beside the runs), then a table per metric, ``metric`` first, and
    the line saying where it was made (:func:`provenance_line`)."""
    lines = [
        f"# {config['dataset']}: {', '.join(config['methods'])}",
        "",
        f"n = {config['n_samples']}, d = {config['n_features']}, k = {config['n_clusters']}; "
        f"protocol `{config['protocol']}`; {config['n_trials']} trials per count; "
        f"base seed {config['random_state']}; spectralink {config['spectralink_version']}.",
        "Cells are mean ± std (sample std) over the trials; failed runs are left out and counted.",
        "",
    ]
    if config.get("n_runs", 0) < config.get("n_runs_planned", 0):
        lines += [
            f"**Partial**: interrupted after {config['n_runs']} of {config['n_runs_planned']} "
            "runs; the same command with `--resume` does the rest.",
            "",
        ]
    params = {m: p for m, p in config["methods"].items() if p}
    if params:
        lines += ["Parameters: " + "; ".join(f"{m}: {p}" for m, p in params.items()), ""]
    shown = [metric] + [m for m in _SUMMARY_METRICS if m != metric]
    for m in shown:
        lines += [
            f"## {m}",
            "",
            format_table(summarize(records, m), count_label=count_label(config["protocol"])),
            "",
        ]
    lines += [provenance_line(), ""]
    return "\n".join(lines)
