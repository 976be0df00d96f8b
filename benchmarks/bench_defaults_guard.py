"""What the held-out guard changes on ``bench_defaults``' eight sets: the records in
``docs/results/defaults/records/`` (the guard on) against the same fits without it, either
made by the same code (``bench_defaults --unguarded``, in ``unguarded/records/``) or kept
at an earlier commit, before the guard existed.

For each set and protocol, over the judged cells (every seed method and SL; counts >= 50
random pairs, every labelled count) present in both: the cells more than 0.02 above NCut
before and after, the **share of the gains kept** (the sum over cells of NCut's mean error
minus the method's, where positive, after against before; NCut's means are those of
the records compared with), and the fits that returned the unconstrained partition. Only
records made with the guard (a ``guard`` entry) count as "after". Reads records only; no
fit. ``--write`` writes the table to ``docs/results/defaults/guard.md``::

    python -m benchmarks.bench_defaults_guard --write
    python -m benchmarks.bench_defaults_guard --before 77ca6d2
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from benchmarks.bench_defaults import JUDGED, OUT, TOLERANCE
from spectralink.experiments import atomic_write, read_records_json, summarize

RECORDS = OUT / "records"
UNGUARDED = OUT / "unguarded" / "records"
FALLBACK = "unconstrained partition returned"


def records_at(rev: str, name: str) -> list[dict]:
    """The records of ``records/<name>``: from a directory of records, or as committed at
    a git revision ([] where absent)."""
    if Path(rev).is_dir():
        path = Path(rev) / name
        return read_records_json(path) if path.exists() else []
    root = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True
    ).stdout.strip()
    path = (RECORDS / name).resolve().relative_to(root)
    shown = subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True)
    return json.loads(shown.stdout)["records"] if shown.returncode == 0 else []


def means(records: list[dict]) -> dict[tuple[str, int], float]:
    return {(s["method"], s["n_constraints"]): s["mean"] for s in summarize(records) if s["n_ok"]}


def compare(before: list[dict], after: list[dict], min_count: int) -> dict:
    """Judged cells of one set and protocol, before the guard and with it."""
    old, new = means(before), means([r for r in after if "guard" in r])
    ncut = {c: v for (m, c), v in old.items() if m == "ncut"}
    cells = [
        (m, c) for (m, c) in new
        if m in JUDGED and c >= min_count and (m, c) in old and c in ncut
    ]  # fmt: skip
    gain = lambda table, cell: max(0.0, ncut[cell[1]] - table[cell])  # noqa: E731
    judged = [
        r for r in after
        if "guard" in r and r["method"] in JUDGED and r["n_constraints"] >= min_count
    ]  # fmt: skip
    return {
        "cells": len(cells),
        "hurt_before": sum(old[x] > ncut[x[1]] + TOLERANCE for x in cells),
        "hurt_after": sum(new[x] > ncut[x[1]] + TOLERANCE for x in cells),
        "gain_before": sum(gain(old, x) for x in cells),
        "gain_after": sum(gain(new, x) for x in cells),
        "fallbacks": sum(FALLBACK in r["warnings"] for r in judged),
        "fits": len(judged),
    }


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--before", default=str(UNGUARDED),
        help="a directory of records fitted with guard=None (default: unguarded/records), "
        "or a git revision whose records predate the guard",
    )  # fmt: skip
    p.add_argument("--write", action="store_true", help="write docs/results/defaults/guard.md")
    args = p.parse_args(argv)
    lines = [
        "| set | protocol | cells | above NCut + 0.02 before / after | gains kept | fallbacks |",
        "|---|---|---|---|---|---|",
    ]
    totals: dict[str, list[float]] = {}
    for path in sorted(RECORDS.glob("*.json")):
        name, protocol = path.stem.rsplit("_", 1)
        row = compare(
            records_at(args.before, path.name), read_records_json(path),
            50 if protocol == "pairs" else 1,
        )  # fmt: skip
        if not row["cells"]:
            continue
        tot = totals.setdefault(protocol, [0.0, 0.0])
        tot[0] += row["gain_before"]
        tot[1] += row["gain_after"]
        kept = f"{row['gain_after'] / row['gain_before']:.2f}" if row["gain_before"] else "no gain"
        lines.append(
            f"| {name} | {protocol} | {row['cells']} | {row['hurt_before']} / "
            f"{row['hurt_after']} | {kept} | {row['fallbacks']} of {row['fits']} |"
        )
    lines.append("")
    for protocol, (before, after) in totals.items():
        lines.append(f"- {protocol}, all sets pooled: {after / before:.2f} of the gains kept")
    before, after = (sum(t[i] for t in totals.values()) for i in (0, 1))
    lines.append(f"- both protocols pooled: {after / before:.2f}")
    print("\n".join(lines))
    if args.write:
        what = " ".join(__doc__.split("\n\n")[1].split(" Reads records only")[0].split())
        if Path(args.before).is_dir():
            command = "python -m benchmarks.bench_defaults_guard --write"
            source = (
                "the same fits with `guard=None` by the same code, in "
                "[`unguarded/`](unguarded/README.md) (`python -m benchmarks.bench_defaults "
                "--unguarded --out docs/results/defaults/unguarded`)"
            )
        else:
            command = f"python -m benchmarks.bench_defaults_guard --before {args.before} --write"
            source = f"the same files at commit `{args.before}`, made before the guard"
        head = [
            "# The held-out guard on the eight sets",
            "",
            f"`{command}`: the records of this folder (the guard on) against {source}. {what}",
            "",
        ]
        with atomic_write(OUT / "guard.md", "w") as fh:
            fh.write("\n".join(head + lines) + "\n")


if __name__ == "__main__":
    main()
