"""What `Auto` costs against what a user would otherwise do: try each method once by hand.

For each dataset, one draw of random pairs (400 by default), in one run: NCut alone; "by
hand", one fit at its defaults (its paper's method) of every method in Auto's menu for that
size plus NCut, summed, with each one's error; and ``Auto`` at its defaults, with its error,
its choice and its time as a multiple of both. Run it with nothing else on the machine
(the ratios are within one run)::

    OMP_NUM_THREADS=1 python -m benchmarks.bench_auto_cost --datasets iris,wine,digits,usps
    python -m benchmarks.bench_auto_cost --datasets mnist --pairs 1000 --no-by-hand

``--floor`` prints instead the least that *any* choice made on held-out pairs among the
same menu can cost: every method fitted once on the training pairs of one fold (after one
fit of each on all the pairs has filled the shared caches of a model search: graphs,
neighbours, eigenvectors, so the fold fits pay only what a search cannot share), plus the
cheapest refit on all the pairs; as a multiple of "by hand" (one fit of each, no sharing)::

    OMP_NUM_THREADS=1 python -m benchmarks.bench_auto_cost --datasets digits,usps --floor

``--auto-params JSON`` fits Auto with those parameters besides its defaults, e.g. its score
before this release (``'{"scoring": "balanced"}'``), to time one setting against another.

Wine and breast cancer are standardised (columns in different units).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import numpy as np
from sklearn.preprocessing import StandardScaler

from benchmarks._common import peak_rss_mib
from spectralink import Auto, Constraints, NCut
from spectralink.auto import default_methods
from spectralink.constraints import constraint_folds
from spectralink.datasets import load
from spectralink.metrics import clustering_error
from spectralink.registry import get_method
from spectralink.spectral import shared_eigenvectors

STANDARDISE = {"wine", "breast_cancer", "segmentation"}


def timed(fit):
    t0 = time.perf_counter()
    model = fit()
    return model, time.perf_counter() - t0


def problem(name: str, n_pairs: int, seed: int):
    """``(X, y, k, constraints)``: the data as Auto's records use it, one draw of pairs."""
    X, y = load(name)
    if name in STANDARDISE:
        X = StandardScaler().fit_transform(X)
    k = len(np.unique(y))
    return X, y, k, Constraints.from_labels(y, n_pairs, random_state=seed)


def one_dataset(
    name: str, n_pairs: int, seed: int, by_hand: bool = True, auto_params: dict | None = None
) -> None:
    X, y, k, cons = problem(name, n_pairs, seed)
    ncut, t_ncut = timed(lambda: NCut(k, random_state=seed).fit(X))
    hand, errors = t_ncut, {"ncut": clustering_error(y, ncut.labels_)}
    for m in default_methods(len(y), k) if by_hand else []:
        est, t = timed(lambda m=m: get_method(m)(k, random_state=seed).fit(X, constraints=cons))
        hand += t
        errors[m] = clustering_error(y, est.labels_)
    params = {"random_state": seed, "verbose": 0, **(auto_params or {})}
    auto, t_auto = timed(lambda: Auto(k, **params).fit(X, constraints=cons))
    menu = ", ".join(f"{m} {e:.3f}" for m, e in errors.items())
    print(f"\n{name} (n = {len(y):,}, k = {k}), {n_pairs} pairs, seed {seed}")
    against = f"{t_auto / hand:.2f}x by hand = " if by_hand else ""
    print(f"  NCut {t_ncut:.2f} s; by hand {hand:.2f} s (errors: {menu})" if by_hand else
          f"  NCut {t_ncut:.2f} s (error {errors['ncut']:.3f}); by hand not run")  # fmt: skip
    print(
        f"  Auto {t_auto:.1f} s = {against}{t_auto / t_ncut:.1f}x NCut; "
        f"error {clustering_error(y, auto.labels_):.3f}, chose {auto.best_method_}"
        f" {auto.best_params_ or ''}; peak memory of the process so far {peak_rss_mib():.0f} MiB"
    )


def fit_time(method: str, k: int, seed: int, X, cons) -> float:
    """Seconds of one fit of ``method`` at its defaults (NCut without the pairs)."""
    est = get_method(method)(k, random_state=seed)
    return timed(lambda: est.fit(X) if method == "ncut" else est.fit(X, constraints=cons))[1]


def floor(name: str, n_pairs: int, seed: int) -> None:
    """By hand against the floor of any held-out choice among the same menu."""
    X, y, k, cons = problem(name, n_pairs, seed)
    train = cons.take(constraint_folds(cons, 5, random_state=seed)[0][0])
    menu = ["ncut", *default_methods(len(y), k)]
    hand = {m: fit_time(m, k, seed, X, cons) for m in menu}
    with shared_eigenvectors(seed):
        for m in menu:  # fills the caches a search shares between its fits
            fit_time(m, k, seed, X, cons)
        fold = {m: fit_time(m, k, seed, X, train) for m in menu}
    least = sum(fold.values()) + min(hand.values())
    print(f"\n{name} (n = {len(y):,}, k = {k}), {n_pairs} pairs ({len(train.pairs)} in the fold)")
    for m in menu:
        print(f"  {m:10s} by hand {hand[m]:7.3f} s   on one fold, caches warm {fold[m]:7.3f} s")
    print(
        f"  by hand {sum(hand.values()):.2f} s; floor {least:.2f} s "
        f"= {least / sum(hand.values()):.2f}x by hand (one fold each + the cheapest refit)"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", default="iris,wine,digits,usps")
    p.add_argument("--pairs", type=int, default=400)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-by-hand", action="store_true", help="Auto against NCut only")
    p.add_argument("--floor", action="store_true", help="by hand against the least any "
                   "held-out choice among the same menu costs (no Auto fit)")  # fmt: skip
    p.add_argument(
        "--auto-params",
        type=json.loads,
        default=None,
        help='Auto\'s parameters besides its defaults, as JSON: \'{"scoring": "balanced"}\'',
    )
    args = p.parse_args()
    print(f"load average before: {os.getloadavg()}", flush=True)
    warnings.simplefilter("ignore")
    for name in args.datasets.split(","):
        if args.floor:
            floor(name, args.pairs, args.seed)
        else:
            one_dataset(name, args.pairs, args.seed, not args.no_by_hand, args.auto_params)
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
