"""COSC running time: 2-way on USPS 0-vs-rest (9,298 points) and k-way on MNIST (70,000).

Prints the graph time, the fit time (wall clock and CPU time of the process), the
normalized cut, the number and fraction of violated constraints and the majority-vote
error, and appends the line to ``docs/results/cosc/timing.md``. The first fit compiles the
FISTA kernel (numba, cached on disk afterwards); a warm-up fit on a small problem runs
first so the figures exclude compilation.

Usage::

    python benchmarks/bench_cosc_timing.py                 # USPS 0-vs-rest, 2-way
    python benchmarks/bench_cosc_timing.py --mnist         # also MNIST 70k, 10-way
    python benchmarks/bench_cosc_timing.py --mnist --skip-usps --mnist-pairs 2000
    python benchmarks/bench_cosc_timing.py --n-pairs 2000 --n-starts 10
    python benchmarks/bench_cosc_timing.py --n-jobs 2      # the starts in 2 threads
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from spectralink import COSC, Constraints
from spectralink.datasets import load
from spectralink.graph import adaptive_knn_affinity
from spectralink.metrics import majority_vote_error

OUT = Path(__file__).resolve().parents[1] / "docs" / "results" / "cosc" / "timing.md"


def _warm_up() -> None:
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 1, (40, 2)), rng.normal(3, 1, (40, 2))])
    y = np.repeat([0, 1], 40)
    COSC(n_starts=1, random_state=0).fit(X, constraints=Constraints.from_labels(y, 10, 0))


def run(name: str, X, y, k: int, n_pairs: int, est_kwargs: dict, seed: int) -> None:
    t0 = time.perf_counter()
    W = adaptive_knn_affinity(X, 10, random_state=seed)
    t_graph = time.perf_counter() - t0
    cons = Constraints.from_labels(y, n_pairs, random_state=seed)
    est = COSC(k, affinity="precomputed", random_state=seed, **est_kwargs)
    t0, c0 = time.perf_counter(), time.process_time()
    est.fit(W, constraints=cons)
    t_fit, c_fit = time.perf_counter() - t0, time.process_time() - c0
    line = (
        f"{name}: n={len(y)} k={k} pairs={n_pairs} edges={W.nnz // 2} | graph {t_graph:.1f} s"
        f" | COSC fit {t_fit:.1f} s (CPU {c_fit:.1f} s) | ncut {est.cut_:.4f}"
        f" | violated {est.n_violated_} ({est.n_violated_ / max(len(cons), 1):.3f})"
        f" | majority-vote error {majority_vote_error(y, est.labels_):.4f} | {est_kwargs}"
    )
    print(line, flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUT, "a") as fh:
        fh.write(f"- {time.strftime('%Y-%m-%d')}: {line}\n")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-pairs", type=int, default=1000)
    parser.add_argument("--n-starts", type=int, default=10)
    parser.add_argument("--n-jobs", type=int, default=1, help="threads for the starts")
    parser.add_argument("--mnist", action="store_true", help="also run MNIST 70k, 10-way")
    parser.add_argument("--skip-usps", action="store_true", help="skip the USPS 2-way run")
    parser.add_argument("--mnist-pairs", type=int, default=10000)
    parser.add_argument("--mnist-recursions", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    _warm_up()
    if not args.skip_usps:
        X, y = load("usps")
        run(
            "USPS 0-vs-rest",
            X,
            (y == 0).astype(np.int64),
            2,
            args.n_pairs,
            {"n_starts": args.n_starts, "n_jobs": args.n_jobs},
            args.seed,
        )
    if args.mnist:
        X, y = load("mnist")
        run(
            "MNIST",
            X.astype(np.float32),
            y,
            10,
            args.mnist_pairs,
            {"n_recursions": args.mnist_recursions, "n_jobs": args.n_jobs},
            args.seed,
        )


if __name__ == "__main__":
    main()
