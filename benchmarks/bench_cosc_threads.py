"""COSC k-way fit time against its thread count, on the same graph and pairs.

For one dataset, builds COSC's adaptive 10-NN graph once, draws random pairs from the labels
(seed 0) and fits ``COSC(n_clusters=k, affinity="precomputed", random_state=0, guard=None)``
once per ``n_jobs`` value given, printing wall-clock and CPU time, the normalized multi-cut,
the violated pairs and the majority-vote error. The partition must not depend on ``n_jobs``
(the printed figures show it). Run it with nothing else heavy on the machine. Results:
``docs/results/cosc/timing.md``.

Usage::

    python -m benchmarks.bench_cosc_threads digits 400 1,2,1,2
    python -m benchmarks.bench_cosc_threads mnist 2000 2,1
    python -m benchmarks.bench_cosc_threads mnist 2000 2 --cosc '{"inner_step": "per_edge"}'
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from sklearn.datasets import load_digits, make_blobs

from spectralink import COSC, Constraints
from spectralink.datasets import load
from spectralink.graph import adaptive_knn_affinity
from spectralink.metrics import majority_vote_error


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset", help="digits (bundled) or a data-directory name, e.g. mnist")
    p.add_argument("n_pairs", type=int)
    p.add_argument("n_jobs", help="comma list, e.g. 1,2")
    p.add_argument("--cosc", type=json.loads, default={}, help="further COSC parameters (JSON)")
    args = p.parse_args()
    if args.dataset == "digits":
        X, y = load_digits(return_X_y=True)
    else:
        X, y = load(args.dataset)
    X = np.asarray(X, dtype=np.float64)
    k = len(np.unique(y))
    t0 = time.perf_counter()
    W = adaptive_knn_affinity(X, 10, random_state=0)
    print(f"{args.dataset}: n={len(y)} k={k}, graph {time.perf_counter() - t0:.1f} s", flush=True)
    cons = Constraints.from_labels(y, n_pairs=args.n_pairs, random_state=0)
    # compile the numba kernels first
    Xb, yb = make_blobs(120, centers=3, random_state=0)
    COSC(3, random_state=0, guard=None).fit(
        Xb, constraints=Constraints.from_labels(yb, 20, random_state=0)
    )
    first = None
    for n_jobs in (int(j) for j in args.n_jobs.split(",")):
        t0, c0 = time.perf_counter(), time.process_time()
        m = COSC(
            k, affinity="precomputed", n_jobs=n_jobs, random_state=0, guard=None, **args.cosc
        ).fit(W, constraints=cons)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        first = m.labels_ if first is None else first
        print(
            f"n_jobs={n_jobs}: {wall:.2f} s wall, {cpu:.2f} s CPU, multi-cut {m.cut_:.4f}, "
            f"{m.n_violated_} violated, error {majority_vote_error(y, m.labels_):.4f}, "
            f"same partition as the first fit: {np.array_equal(first, m.labels_)}",
            flush=True,
        )


if __name__ == "__main__":
    main()
