"""Each named method at its defaults is its paper's method: the cells where that shows.

The held-out guard is opt-in (``guard="held_out"``); at their defaults the estimators return
the partition their papers define. This script prints, for the cells where the guard used to
return NCut's partition instead, what each method gives at its defaults against NCut in the
same run (clustering error, or ARI, and fit time), and how long the opt-in guard makes a fit:

* ``usps``: NCut, CCSR and CCSKL on one precomputed 20-NN graph of USPS, 1,000 random
  pairs, 3 draws (error, time as a multiple of NCut's);
* ``segmentation``: SL (spectral learning) and NCut on standardised segmentation, 1,000
  random pairs, 3 draws;
* ``propagation``: LSCP, E2CP and NCut, mean ARI over 5 draws of 300 random pairs, on
  ionosphere and standardised wine;
* ``sonar``: COSC and SCLC on standardised sonar, 80 random pairs, 3 draws: pairs violated
  and normalized cut on COSC's own (adaptive k-NN) graph;
* ``mnist``: SCACS and LSC-R on MNIST (70,000 points), all pairs among 500 labelled points
  (50 per class), one draw: error and time;
* ``overhead``: every named constrained method at its defaults against itself with
  ``guard=None`` (the paper's setting: labels compared, time ratio of the fastest of three
  fits after a warm-up) and with the opt-in ``guard="held_out"`` (time ratio), median over
  iris, standardised wine and digits with 200 random pairs.

Run from the repository root with nothing else running (times are ratios within one run)::

    python -m benchmarks.bench_paper_defaults
    python -m benchmarks.bench_paper_defaults --cases usps,sonar --draws 2
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits, load_iris, load_wine
from sklearn.preprocessing import StandardScaler

from spectralink import Constraints
from spectralink.datasets import load
from spectralink.graph import adaptive_knn_graph, adaptive_scales, kneighbors, knn_affinity
from spectralink.metrics import adjusted_rand_score, clustering_error, normalized_cut
from spectralink.registry import get_method

CASES = ("usps", "segmentation", "propagation", "sonar", "mnist", "overhead")
OVERHEAD_METHODS = ("sl", "copkmeans", "ccsr", "ccskl", "e2cp", "lscp", "cosc", "scacs", "fcsc")


def timed_fit(est, X, cons=None):
    """``(labels, seconds)`` of one quiet fit."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        est.fit(X, constraints=cons)
        return est.labels_, time.perf_counter() - t0


def best_of_three(est, X, cons):
    """``(labels, seconds)``: the fastest of three fits (fits of milliseconds are noisy)."""
    runs = [timed_fit(est, X, cons) for _ in range(3)]
    return runs[0][0], min(t for _, t in runs)


def standardised(name: str):
    X, y = load(name)
    return StandardScaler().fit_transform(X), y


def usps(draws: int) -> None:
    X, y = load("usps")
    W = knn_affinity(X, 20, random_state=0)
    rows = {m: ([], []) for m in ("ncut", "ccsr", "ccskl")}
    for s in range(draws):
        cons = Constraints.from_labels(y, 1000, random_state=s)
        for m, (errs, times) in rows.items():
            est = get_method(m)(10, affinity="precomputed", random_state=s)
            labels, t = timed_fit(est, W, None if m == "ncut" else cons)
            errs.append(clustering_error(y, labels))
            times.append(t)
    base = np.mean(rows["ncut"][1])
    print(f"\nusps, precomputed 20-NN graph, 1,000 pairs, {draws} draws")
    for m, (errs, times) in rows.items():
        print(f"  {m:6s} error {np.mean(errs):.3f}  time {np.mean(times):6.2f} s "
              f"({np.mean(times) / base:.1f}x NCut)")  # fmt: skip


def segmentation(draws: int) -> None:
    X, y = standardised("segmentation")
    errs = {"ncut": [], "sl": []}
    for s in range(draws):
        cons = Constraints.from_labels(y, 1000, random_state=s)
        for m in errs:
            labels, _ = timed_fit(
                get_method(m)(7, random_state=s), X, None if m == "ncut" else cons
            )
            errs[m].append(clustering_error(y, labels))
    print(f"\nsegmentation (standardised), 1,000 pairs, {draws} draws")
    for m, e in errs.items():
        print(f"  {m:6s} error {np.mean(e):.3f} ± {np.std(e):.3f}")


def propagation(draws: int) -> None:
    for name in ("ionosphere", "wine"):
        X, y = standardised(name) if name == "wine" else load(name)
        k = len(np.unique(y))
        ari = {"ncut": [], "e2cp": [], "lscp": []}
        for s in range(draws):
            cons = Constraints.from_labels(y, 300, random_state=s)
            for m in ari:
                est = get_method(m)(k, random_state=s)
                labels, _ = timed_fit(est, X, None if m == "ncut" else cons)
                ari[m].append(adjusted_rand_score(y, labels))
        scaled = " (standardised)" if name == "wine" else ""
        print(f"\n{name}{scaled}, 300 pairs, {draws} draws: mean ARI")
        for m, a in ari.items():
            print(f"  {m:6s} ARI {np.mean(a):.3f} ± {np.std(a):.3f}")


def sonar(draws: int) -> None:
    X, y = standardised("sonar")
    dist, ind = kneighbors(X, 10)
    W = adaptive_knn_graph(dist, ind, adaptive_scales(dist))  # COSC's default graph
    print(f"\nsonar (standardised), 80 pairs, {draws} draws: COSC against SCLC")
    for s in range(draws):
        cons = Constraints.from_labels(y, 80, random_state=s)
        line = []
        for m in ("cosc", "sclc"):
            labels, t = timed_fit(get_method(m)(2, random_state=s), X, cons)
            violated = int(cons.violated(labels).sum())
            cut = normalized_cut(W, labels)
            line.append(
                f"{m} violates {violated}, cut {cut:.4f}, "
                f"error {clustering_error(y, labels):.3f}, {t:.2f} s"
            )
        print(f"  draw {s}: " + "; ".join(line))


def mnist(draws: int) -> None:
    X, y = load("mnist")
    print(f"\nmnist (n = {len(y):,}), all pairs among 500 labelled points, {draws} draw(s)")
    for s in range(draws):
        cons = Constraints.from_labeled_subset(y, 500, random_state=s)
        out = {}
        for m in ("lscr", "scacs"):
            labels, t = timed_fit(get_method(m)(10, random_state=s), X, cons)
            out[m] = (clustering_error(y, labels), t)
        for m, (e, t) in out.items():
            print(f"  draw {s}: {m:6s} error {e:.3f}  time {t:6.1f} s "
                  f"({t / out['lscr'][1]:.2f}x LSC-R)")  # fmt: skip


def overhead(draws: int) -> None:
    X_wine, y_wine = load_wine(return_X_y=True)
    sets = {
        "iris": load_iris(return_X_y=True),
        "wine": (StandardScaler().fit_transform(X_wine), y_wine),
        "digits": load_digits(return_X_y=True),
    }
    print("\noverhead, 200 pairs: default against guard=None (same labels?) and the opt-in guard")
    for m in OVERHEAD_METHODS:
        paper, guard, same = [], [], True
        for X, y in sets.values():
            k = len(np.unique(y))
            cons = Constraints.from_labels(y, 200, random_state=0)
            timed_fit(get_method(m)(k, random_state=0), X, cons)  # warm-up (imports, caches)
            default, t_def = best_of_three(get_method(m)(k, random_state=0), X, cons)
            plain, t_paper = best_of_three(get_method(m)(k, random_state=0, guard=None), X, cons)
            _, t_guard = timed_fit(get_method(m)(k, random_state=0, guard="held_out"), X, cons)
            same &= bool(np.array_equal(default, plain))
            paper.append(t_def / t_paper)
            guard.append(t_guard / t_def)
        print(f"  {m:9s} same labels as guard=None: {same}; time {np.median(paper):.2f}x "
              f"guard=None; the opt-in guard {np.median(guard):.1f}x")  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--draws", type=int, default=None, help="default: as each case says")
    args = p.parse_args()
    cases = {
        "usps": (usps, 3), "segmentation": (segmentation, 3), "propagation": (propagation, 5),
        "sonar": (sonar, 3), "mnist": (mnist, 1), "overhead": (overhead, 1),
    }  # fmt: skip
    for case in args.cases.split(","):
        run, draws = cases[case]
        run(args.draws or draws)


if __name__ == "__main__":
    main()
