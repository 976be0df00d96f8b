"""A user's overlapping data through the command line: 200,000 x 30 blobs, 1,000 correct pairs.

The case of issue 36: ``make_blobs(n_samples=200000, n_features=30, centers=10,
cluster_std=12, random_state=0)``, 1,000 random correct pairs (seed 0), written as
``X.npy`` and ``pairs.csv`` in a temporary directory; then, for each method,
``spectralink cluster X.npy -k 10 --method M -c pairs.csv -o labels.csv`` in a fresh
interpreter (defaults, so the held-out guard is on), and the clustering error of the labels
it wrote, its wall time and peak memory, and what it printed on stderr (the guard's
warning when it set the pairs aside).

    python -m benchmarks.bench_overlap_cli                     # ncut, ccsr, scacs
    python -m benchmarks.bench_overlap_cli --methods ncut,ccsr --n 20000 --write
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import make_blobs

from spectralink import Constraints
from spectralink.io import read_labels
from spectralink.metrics import clustering_error

from ._common import RESULTS, ROOT

#: the command line in a fresh interpreter that prints its own peak memory (KiB, Linux
#: ``ru_maxrss``) as the last line of stderr
CHILD = (
    "import resource, runpy, sys\n"
    "sys.argv = ['spectralink'] + sys.argv[1:]\n"
    "try:\n"
    "    runpy.run_module('spectralink', run_name='__main__')\n"
    "finally:\n"
    "    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--methods", default="ncut,ccsr,scacs")
    p.add_argument("--n", type=int, default=200_000)
    p.add_argument("--pairs", type=int, default=1000)
    p.add_argument("--write", action="store_true", help="write docs/results/guard/cli.md")
    args = p.parse_args(argv)
    X, y = make_blobs(n_samples=args.n, n_features=30, centers=10, cluster_std=12, random_state=0)
    cons = Constraints.from_labels(y, args.pairs, random_state=0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        np.save(d / "X.npy", X)
        cons.to_csv(d / "pairs.csv")
        for m in args.methods.split(","):
            out = d / f"{m}.csv"
            cmd = ["cluster", str(d / "X.npy"), "-k", "10", "--method", m,
                   "-c", str(d / "pairs.csv"), "-o", str(out), "--random-state", "0"]  # fmt: skip
            t0 = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-c", CHILD, *cmd], cwd=ROOT, capture_output=True, text=True,
                check=False,
            )  # fmt: skip
            wall = time.perf_counter() - t0
            if proc.returncode != 0:
                print(f"{m}: exit {proc.returncode}\n{proc.stderr}", flush=True)
                continue
            *said, last = proc.stderr.strip().splitlines()
            peak = float(last) / 1024.0
            err = clustering_error(y, read_labels(out))
            notes = [ln for ln in said if "warning" in ln.lower()]
            rows.append((m, err, wall, peak, notes))
            print(f"{m}: error {err:.3f}, {wall:.0f} s, peak {peak:.0f} MiB", flush=True)
            for ln in notes:
                print(f"    {ln}", flush=True)
    lines = [
        f"# Overlapping blobs through the command line ({args.n:,} x 30, {args.pairs} pairs)",
        "",
        f"Produced by `python -m benchmarks.bench_overlap_cli --n {args.n} --pairs "
        f"{args.pairs} --methods {args.methods} --write`: `make_blobs(n_samples={args.n}, "
        "n_features=30, centers=10, cluster_std=12, random_state=0)`, random correct pairs "
        "(seed 0), `spectralink cluster` at the defaults (the held-out guard on).",
        "",
        "| method | error | wall time (s) | peak memory (MiB) | warnings printed |",
        "|---|---|---|---|---|",
    ]
    for m, err, wall, peak, notes in rows:
        shown = "<br>".join(n.replace("|", "/") for n in notes) or "none"
        lines.append(f"| {m} | {err:.3f} | {wall:.0f} | {peak:.0f} | {shown} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        name = "cli.md" if args.n == 200_000 else f"cli_{args.n}.md"
        (RESULTS / "guard").mkdir(parents=True, exist_ok=True)
        (RESULTS / "guard" / name).write_text(text)


if __name__ == "__main__":
    main()
