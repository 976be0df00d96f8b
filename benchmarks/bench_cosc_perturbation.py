"""COSC's perturbed restarts (``n_perturbations``, from the authors' code): cut, error, time.

The authors' code re-solves every RatioDCA run from noisy copies of its solution (10 tries,
on by default for two clusters); the library leaves it off by default. This script measures
what it buys: the same constraint draws as ``benchmarks.bench_cosc_protocol`` (same graph, same
seeds), COSC in hard mode with 10 starts, ``n_perturbations=0`` against ``10``. Writes
``docs/results/cosc/perturbation.md``.

Usage::

    python -m benchmarks.bench_cosc_perturbation
    python -m benchmarks.bench_cosc_perturbation --datasets sonar --trials 2
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from benchmarks.bench_cosc_protocol import COUNTS, OUT, load_task
from spectralink import COSC, Constraints
from spectralink.graph import adaptive_knn_affinity
from spectralink.io import atomic_write
from spectralink.metrics import majority_vote_error

SETTINGS = (0, 10)


def run(datasets, trials, n_starts):
    rows = []
    for ds in datasets:
        X, y, k, counts = load_task(ds)
        if k != 2:
            raise SystemExit(f"{ds}: the perturbed restarts apply to two clusters only.")
        W = adaptive_knn_affinity(X, 10, random_state=0)
        for n_pairs in counts:
            for trial in range(trials):
                cons = Constraints.from_labels(y, n_pairs, random_state=1000 * trial + n_pairs)
                for npert in SETTINGS:
                    est = COSC(
                        affinity="precomputed",
                        n_starts=n_starts,
                        n_perturbations=npert,
                        random_state=trial,
                        guard=None,
                    )
                    t0 = time.perf_counter()
                    est.fit(W, constraints=cons)
                    rows.append(
                        {
                            "dataset": ds,
                            "n_pairs": n_pairs,
                            "trial": trial,
                            "n_perturbations": npert,
                            "ncut": est.cut_,
                            "error": majority_vote_error(y, est.labels_),
                            "violated": est.n_violated_,
                            "seconds": time.perf_counter() - t0,
                        }
                    )
                    r = rows[-1]
                    print(
                        f"{ds:20s} pairs={n_pairs:4d} trial={trial} pert={npert:2d} "
                        f"ncut={r['ncut']:.4f} err={r['error']:.4f} viol={r['violated']} "
                        f"({r['seconds']:.1f} s)",
                        flush=True,
                    )
    return rows


def report(rows, trials, n_starts):
    lines = [
        "# COSC: perturbed restarts (`n_perturbations`)",
        "",
        f"`python -m benchmarks.bench_cosc_perturbation` ({trials} trials per count, "
        f"{n_starts} starts, hard mode, the protocol's graph and constraint draws). Mean over "
        "trials; `lower / higher` counts the fits whose cut the perturbations lowered / "
        "raised (they only keep improvements within a run, but a different run can change "
        "the gamma path).",
        "",
        "| dataset | pairs | ncut (0) | ncut (10) | error (0) | error (10) | seconds (0) | "
        "seconds (10) | lower / higher |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    keys = sorted(
        {(r["dataset"], r["n_pairs"]) for r in rows}, key=lambda t: (list(COUNTS).index(t[0]), t[1])
    )
    for ds, c in keys:
        sel = {
            p: [
                r
                for r in rows
                if (r["dataset"], r["n_pairs"]) == (ds, c) and r["n_perturbations"] == p
            ]
            for p in SETTINGS
        }
        a, b = sel[SETTINGS[0]], sel[SETTINGS[1]]
        lower = sum(y["ncut"] < x["ncut"] - 1e-9 for x, y in zip(a, b, strict=True))
        higher = sum(y["ncut"] > x["ncut"] + 1e-9 for x, y in zip(a, b, strict=True))

        def m(rs, q):
            return np.mean([r[q] for r in rs])

        lines.append(
            f"| {ds} | {c} | {m(a, 'ncut'):.4f} | {m(b, 'ncut'):.4f} | {m(a, 'error'):.4f} | "
            f"{m(b, 'error'):.4f} | {m(a, 'seconds'):.1f} | {m(b, 'seconds'):.1f} | "
            f"{lower} / {higher} |"
        )
    a = [r for r in rows if r["n_perturbations"] == SETTINGS[0]]
    b = [r for r in rows if r["n_perturbations"] == SETTINGS[1]]
    rel = [(y["ncut"] - x["ncut"]) / x["ncut"] for x, y in zip(a, b, strict=True) if x["ncut"] > 0]
    lines += [
        "",
        f"All fits: mean relative cut change {100 * np.mean(rel):+.2f} % "
        f"(min {100 * np.min(rel):+.2f} %, max {100 * np.max(rel):+.2f} %), time "
        f"x{sum(r['seconds'] for r in b) / sum(r['seconds'] for r in a):.1f}; violated "
        f"constraints: {sum(r['violated'] for r in a)} without, {sum(r['violated'] for r in b)} "
        "with.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--datasets", nargs="+", default=["sonar", "breast_cancer_dedup", "diabetes"]
    )
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--n-starts", type=int, default=10)
    parser.add_argument("--out", type=Path, default=OUT / "perturbation.md")
    args = parser.parse_args(argv)
    rows = run(args.datasets, args.trials, args.n_starts)
    text = report(rows, args.trials, args.n_starts)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(args.out) as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
