"""How much of the best named method's gain over NCut `Auto` keeps, from bench_defaults records.

`Auto` is the library's safe front door: it must never end clearly worse than NCut (more than
0.02 above its mean error in a cell) and should keep nearly all of what the best named
method at its defaults (its paper's method) gains over NCut. This script reads the records
``benchmarks.bench_defaults`` wrote (every method and ``auto`` on the same draws) and prints,
per dataset, protocol and count: NCut's mean error, the best named method and its error,
Auto's, and the share of the gain Auto keeps; then, pooled over the cells where the best
method gains, ``sum(ncut - auto) / sum(ncut - best)`` per dataset and over all of them, and
the cells where Auto is above NCut + 0.02. Run the fits first, e.g.::

    python -m benchmarks.bench_defaults --datasets wine,iris --methods ncut,ccsr,auto \\
        --counts 50,200 --trials 3 --pairs-only --out DIR
    python -m benchmarks.bench_auto_gain DIR [--write PAGE]

``--before FOLDER`` also compares Auto's records with those of the tables of the same names
there (Auto before a change), draw by draw: mean error and fit time per table, and summed.

``--named FOLDER`` adds the named methods' records of the tables of the same names in another
results folder (Auto's records are kept apart from them, e.g.
``docs/results/model_selection/auto_safety`` with ``--named docs/results/defaults/unguarded``).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import numpy as np

from benchmarks._store import SUFFIX, read_table, records_dir
from spectralink.experiments import atomic_write

TOLERANCE = 0.02
NOT_NAMED = {"ncut", "auto", "lscr"}  # the reference, the chooser, an unconstrained method


def cells(records: list[dict]) -> dict[tuple, dict[str, float]]:
    """``{(count,): {method: mean error}}`` over the draws, counts above 0 only."""
    errors: dict[tuple, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        if int(r["n_constraints"]) > 0 and r["status"] == "ok":
            errors[int(r["n_constraints"])][r["method"]].append(float(r["error"]))
    return {c: {m: float(np.mean(v)) for m, v in by.items()} for c, by in sorted(errors.items())}


def records_of(path: Path, named: Path | None) -> list[dict]:
    """The records of one table, and with ``named`` those of the table of the same name
    there (every method but Auto: the named methods' records of the same draws)."""
    records = read_table(path)[1]
    other = records_dir(named) / path.name if named is not None else None
    if other is not None and other.exists():
        records += [r for r in read_table(other)[1] if r["method"] != "auto"]
    return records


def report(folder: Path, named: Path | None = None) -> list[str]:
    lines = [
        "| set | count | NCut | best named | Auto | gain kept |",
        "|---|---|---|---|---|---|",
    ]
    pooled: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    above = []
    for path in sorted(records_dir(folder).glob(f"*{SUFFIX}")):
        name = path.name.removesuffix(SUFFIX)
        for count, errs in cells(records_of(path, named)).items():
            if "auto" not in errs or "ncut" not in errs:
                continue
            scored = {m: e for m, e in errs.items() if m not in NOT_NAMED}
            best = min(scored, key=scored.get)
            ncut, auto, top = errs["ncut"], errs["auto"], scored[best]
            gain = ncut - top
            kept = f"{(ncut - auto) / gain:.2f}" if gain > 0 else "-"
            if gain > 0:
                pooled[name][0] += ncut - auto
                pooled[name][1] += gain
            if auto > ncut + TOLERANCE:
                above.append(f"{name} {count}: Auto {auto:.3f}, NCut {ncut:.3f}")
            lines.append(
                f"| {name} | {count} | {ncut:.3f} | {best} {top:.3f} | {auto:.3f} | {kept} |"
            )
    lines += ["", "Gain kept, pooled over the cells where the best named method gains:", ""]
    total = [0.0, 0.0]
    for name, (got, gain) in pooled.items():
        lines.append(f"- {name}: {got / gain:.2f} ({got:.3f} of {gain:.3f})")
        total = [total[0] + got, total[1] + gain]
    if total[1] > 0:
        lines.append(f"- **all: {total[0] / total[1]:.2f}** ({total[0]:.3f} of {total[1]:.3f})")
    lines += ["", f"Cells where Auto is more than {TOLERANCE} above NCut: {len(above)}"]
    lines += [f"- {a}" for a in above]
    return lines


def _auto_runs(path: Path) -> dict[tuple, dict]:
    return {
        (int(r["n_constraints"]), int(r["trial"])): r
        for r in read_table(path)[1]
        if r["method"] == "auto" and r["status"] == "ok" and int(r["n_constraints"]) > 0
    }


def compare(folder: Path, before: Path) -> list[str]:
    """Auto now against Auto in ``before``, over the draws both have, per table."""
    lines = [
        "| table | draws | error before | error now | time before (s) | time now (s) |",
        "|---|---|---|---|---|---|",
    ]
    totals = np.zeros(2)
    for path in sorted(records_dir(folder).glob(f"*{SUFFIX}")):
        old_path = records_dir(before) / path.name
        if not old_path.exists():
            continue
        now, old = _auto_runs(path), _auto_runs(old_path)
        keys = sorted(set(now) & set(old))
        if not keys:
            continue
        err = [np.mean([runs[k]["error"] for k in keys]) for runs in (old, now)]
        secs = np.array([sum(runs[k]["time_s"] for k in keys) for runs in (old, now)])
        totals += secs
        lines.append(
            f"| {path.name.removesuffix(SUFFIX)} | {len(keys)} | {err[0]:.4f} | {err[1]:.4f} "
            f"| {secs[0]:.0f} | {secs[1]:.0f} |"
        )
    lines.append(f"\nAuto's fit time summed: before {totals[0]:.0f} s, now {totals[1]:.0f} s "
                 f"({totals[1] / totals[0]:.2f}x)")  # fmt: skip
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path, help="a bench_defaults --out folder")
    p.add_argument("--named", type=Path, help="a results folder whose tables of the same "
                   "names hold the named methods' records of the same draws")  # fmt: skip
    p.add_argument("--write", type=Path, help="also write the table to this Markdown file")
    p.add_argument("--before", type=Path, help="a results folder of Auto's records to compare")
    args = p.parse_args()
    lines = report(args.folder, args.named)
    if args.before is not None:
        lines += ["", *compare(args.folder, args.before)]
    print("\n".join(lines))
    if args.write:
        with atomic_write(args.write, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
