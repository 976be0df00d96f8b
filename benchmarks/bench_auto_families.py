"""Auto now against Auto with the held-out guard, on the synthetic families, draw by draw.

Reads a ``bench_defaults --families ... --methods ncut,auto`` output folder and the guard's
records (``docs/results/records/guard/families/``, where ``Auto`` refitted its choice with
the guard), and prints per instance and count, over the draws both have: NCut's mean error,
Auto's with the guard and now, and their mean fit times; then the cells above NCut + 0.02
for each, the paired difference and the gain over NCut summed over the cells::

    python -m benchmarks.bench_defaults --families all --grid check --max-n 500 \\
        --methods ncut,auto --draws 2 --out DIR
    python -m benchmarks.bench_auto_families DIR

``--guarded FOLDER --before NAME`` compares with Auto's records in another folder of family
tables of the same names (e.g. Auto before a change of its defaults), under that name.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from benchmarks._store import STORE, SUFFIX, read_table, records_dir

TOLERANCE = 0.02
GUARDED = STORE / "guard" / "families"


def read(path: Path) -> dict[tuple, dict]:
    """``{(method, count, trial): record}`` of one table of records."""
    return {(r["method"], r["n_constraints"], r["trial"]): r for r in read_table(path)[1]}


def cells(folder: Path, guarded: Path) -> list[tuple]:
    rows = []
    for path in sorted(records_dir(folder / "families").glob(f"*{SUFFIX}")):
        old_path = guarded / path.name
        if not old_path.exists():
            continue
        new, old = read(path), read(old_path)
        for count in sorted({c for m, c, _ in new if m == "auto"}):
            keys = [
                (c, t) for m, c, t in new
                if m == "auto" and c == count and ("auto", c, t) in old and ("ncut", c, t) in new
            ]  # fmt: skip
            if not keys:
                continue
            rows.append((
                path.name.removesuffix(SUFFIX), count, len(keys), _mean(new, "ncut", "error", keys),
                _mean(old, "auto", "error", keys), _mean(new, "auto", "error", keys),
                _mean(old, "auto", "time_s", keys), _mean(new, "auto", "time_s", keys),
            ))  # fmt: skip
    return rows


def _mean(records: dict, method: str, field: str, keys: list) -> float:
    return float(np.mean([records[(method, *k)][field] for k in keys]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path)
    p.add_argument("--guarded", type=Path, default=GUARDED,
                   help="the folder of Auto's records to compare with")  # fmt: skip
    p.add_argument("--before", default="Auto with the guard", help="what they are called")
    args = p.parse_args()
    before = args.before
    rows = cells(args.folder, args.guarded)
    print(f"| instance | pairs | draws | NCut | {before} | Auto now | time before (s) "
          "| time now (s) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.3f} | {r[4]:.3f} | {r[5]:.3f} | {r[6]:.1f} "
              f"| {r[7]:.1f} |")  # fmt: skip
    a = np.array([r[3:] for r in rows])
    d = a[:, 2] - a[:, 1]
    print(f"\ncells: {len(rows)}; above NCut + {TOLERANCE}: now "
          f"{int(np.sum(a[:, 2] > a[:, 0] + TOLERANCE))}, {before} "
          f"{int(np.sum(a[:, 1] > a[:, 0] + TOLERANCE))}")  # fmt: skip
    se = d.std(ddof=1) / np.sqrt(len(d))
    print(f"mean error now - {before}: {d.mean():+.4f} ± {se:.4f}"
          f"; gain over NCut summed: now {np.sum(a[:, 0] - a[:, 2]):.3f}, {before} "
          f"{np.sum(a[:, 0] - a[:, 1]):.3f}")  # fmt: skip
    print(f"time: now {a[:, 4].sum():.0f} s, before {a[:, 3].sum():.0f} s (mean per fit, summed)")


if __name__ == "__main__":
    main()
