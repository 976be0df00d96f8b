"""COSC running time beside NCut's: k-way at 1.8k-70k points and 2-way USPS.

One run prints, for every task, COSC's and NCut's wall-clock time (and the process's CPU
time), their ratio, the normalized (multi-)cut, the violated constraints and the
majority-vote error, all at the estimators' defaults:

* ``blobs``: 50,000 separable 20-d points in 10 blobs
  (``make_blobs(50000, centers=10, n_features=20, random_state=0)``), 500 random pairs,
  10-way, **end to end from the features** (graph included) for both methods;
* ``mnist``: MNIST 70,000 x 784, 2,000 random pairs, 10-way; COSC's fit on its adaptive
  10-NN graph (built once, timed apart) and NCut end to end from the features;
* ``digits``: scikit-learn's digits (1,797 points), 400 random pairs, 10-way, end to end
  from the features (the mean of ``--repeats`` fits);
* ``usps``: USPS 0-vs-rest (9,298 points), 1,000 random pairs, 2-way hard mode, COSC's fit
  on its adaptive graph and NCut end to end.

The numba kernels are compiled by a warm-up fit first. ``--n-jobs`` sets both methods'
threads where they have them (COSC: the starts and the two clusters of a split).

Peak memory is the process's peak resident set (``ru_maxrss``), printed after the data
(and COSC's graph) are ready, after COSC's fits and after NCut's, beside the current
resident set just before COSC's fit (Linux). The peak only grows, so a task's figures are
its own when it runs alone (``--tasks mnist``) or is the largest run; when the peak after
COSC is above the one before, the difference to the current resident set before the fit
is what the fit added.

Usage::

    python -m benchmarks.bench_cosc_timing                      # every task
    python -m benchmarks.bench_cosc_timing --tasks digits usps
    python -m benchmarks.bench_cosc_timing --n-jobs 2 --out docs/results/cosc/timing.md
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import make_blobs

from benchmarks._common import peak_rss_mib, rss_mib
from spectralink import COSC, Constraints, NCut
from spectralink.datasets import load
from spectralink.graph import adaptive_knn_affinity
from spectralink.metrics import majority_vote_error

TASKS = ("digits", "usps", "blobs", "mnist")
TARGETS = {
    "digits": "COSC under 3 s per fit",
    "usps": "COSC under 10 s",
    "blobs": "COSC end to end <= 10x NCut's",
    "mnist": "COSC fit under 120 s",
}


def _timed(fn):
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def _warm_up() -> None:
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 1, (40, 2)), rng.normal(3, 1, (40, 2)), rng.normal(6, 1, (40, 2))])
    y = np.repeat([0, 1, 2], 40)
    cons = Constraints.from_labels(y, 10, random_state=0)
    COSC(2, n_starts=2, random_state=0, guard=None).fit(
        X[:80], constraints=Constraints.from_labels(y[:80], 10, 0)
    )
    COSC(3, n_recursions=1, random_state=0, guard=None).fit(X, constraints=cons)


def task_data(name):
    """(X, y, k, n_pairs, precomputed COSC graph?)"""
    if name == "blobs":
        X, y = make_blobs(50000, centers=10, n_features=20, random_state=0)
        return X, y, 10, 500, False
    if name == "mnist":
        X, y = load("mnist")
        return X.astype(np.float32), y, 10, 2000, True
    if name == "digits":
        X, y = load("digits")
        return X, y, 10, 400, False
    X, y = load("usps")
    return X, (y == 0).astype(np.int64), 2, 1000, True


def run(name, n_jobs, repeats, seed, params=None):
    X, y, k, n_pairs, precomputed = task_data(name)
    cons = Constraints.from_labels(y, n_pairs, random_state=seed)
    cosc = COSC(k, random_state=seed, n_jobs=n_jobs, guard=None, **(params or {}))
    extra = ""
    if precomputed:
        W, t_graph, _ = _timed(lambda: adaptive_knn_affinity(X, 10, random_state=seed))
        cosc.set_params(affinity="precomputed")
        data = W
        extra = f" (adaptive graph {t_graph:.1f} s apart)"
    else:
        data = X
    rss_data, rss_now = peak_rss_mib(), rss_mib()
    reps = repeats if name == "digits" else 1
    times = []
    for _ in range(reps):
        _, tw, tc = _timed(lambda: cosc.fit(data, constraints=cons))
        times.append((tw, tc))
    tw, tc = np.mean(times, axis=0)
    rss_cosc = peak_rss_mib()
    ncut = NCut(k, random_state=seed)
    ntimes = []
    for _ in range(reps):
        _, nw, nc = _timed(lambda: ncut.fit(X))
        ntimes.append((nw, nc))
    nw, nc = np.mean(ntimes, axis=0)
    lines = [
        f"{name}: n={len(y)} k={k} pairs={n_pairs} ({TARGETS[name]})",
        f"  COSC {'fit' if precomputed else 'end to end'}{extra}: {tw:.2f} s wall "
        f"(CPU {tc:.2f} s){' mean of ' + str(reps) if reps > 1 else ''} | ncut "
        f"{cosc.cut_:.4f} | violated {cosc.n_violated_} of {len(cons)} | majority-vote error "
        f"{majority_vote_error(y, cosc.labels_):.4f}",
        f"  NCut end to end: {nw:.2f} s wall (CPU {nc:.2f} s) | majority-vote error "
        f"{majority_vote_error(y, ncut.labels_):.4f} | violated "
        f"{int(cons.violated(ncut.labels_).sum())}",
        f"  COSC / NCut wall time: {tw / nw:.1f}x",
        f"  peak RSS: {rss_data:.0f} MiB with the data ready (current {rss_now:.0f} MiB), "
        f"{rss_cosc:.0f} MiB after COSC, {peak_rss_mib():.0f} MiB after NCut",
    ]
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    parser.add_argument("--n-jobs", type=int, default=None, help="COSC's threads")
    parser.add_argument("--repeats", type=int, default=3, help="fits averaged on digits")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="append the lines to this file")
    parser.add_argument(
        "--cosc",
        type=json.loads,
        default={},
        help='COSC parameters, e.g. \'{"inner_step": "per_edge"}\'',
    )
    args = parser.parse_args(argv)

    _warm_up()
    load_before = os.getloadavg()
    out = [
        f"{time.strftime('%Y-%m-%d %H:%M')} n_jobs={args.n_jobs} {args.cosc or ''} "
        f"load before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}"
    ]
    print(out[0], flush=True)
    for name in args.tasks:
        lines = run(name, args.n_jobs, args.repeats, args.seed, args.cosc)
        print("\n".join(lines), flush=True)
        out += lines
    if args.out:
        with open(args.out, "a") as fh:
            fh.write("\n```\n" + "\n".join(out) + "\n```\n")


if __name__ == "__main__":
    main()
