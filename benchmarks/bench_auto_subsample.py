"""Auto's search on a sample of large data: what the sample's size costs and changes.

For each data set and draw of random labelled pairs, ``Auto(k, subsample=m)`` for every
``m`` of ``--sizes`` (``all``: the search on all the points), each fitted once in this
process: its time, its choice and that choice's error against the labels; then one fit of
each distinct choice on all the points with the same pairs (the ratio Auto / choice), and
one NCut fit. Also r (the mean distance to the k-th neighbour) estimated by
``sample_scale`` against the exact r of the whole data. Run it alone on the machine::

    python -m benchmarks.bench_auto_subsample --datasets mnist --pairs 1000 --sizes 2000,5000
    python -m benchmarks.bench_auto_subsample --datasets usps,pendigits --pairs 1000 \\
        --sizes 2000,5000,all

Results: ``docs/results/model_selection/auto_cost.md``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

from benchmarks._common import peak_rss_mib
from spectralink import Auto, Constraints, NCut
from spectralink.datasets import load
from spectralink.graph import kneighbors, sigma_from_distances
from spectralink.metrics import clustering_error
from spectralink.model_selection import sample_scale


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _size(text: str) -> int | None:
    return None if text == "all" else int(text)


def scale_check(X: np.ndarray, n_neighbors: int, seed: int) -> str:
    t_exact, (dist, _) = timed(lambda: kneighbors(X, n_neighbors, random_state=seed))
    exact = sigma_from_distances(dist)
    t_est, est = timed(lambda: sample_scale(X, n_neighbors, random_state=seed))
    return (
        f"r: exact {exact:.4g} ({t_exact:.1f} s, the fit's own search), sample_scale "
        f"{est:.4g} ({t_est:.1f} s), relative difference {(est - exact) / exact:+.2%}"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", default="usps")
    p.add_argument("--pairs", type=int, default=1000)
    p.add_argument("--sizes", default="2000,5000,all")
    p.add_argument("--draws", type=int, default=1)
    args = p.parse_args()
    sizes = [_size(s) for s in args.sizes.split(",")]
    warnings.simplefilter("ignore")
    print(f"load average before: {os.getloadavg()}", flush=True)
    for name in args.datasets.split(","):
        X, y = load(name)
        k = len(np.unique(y))
        print(f"\n## {name}: n = {len(y)}, d = {X.shape[1]}, k = {k}", flush=True)
        print(scale_check(X, NCut().n_neighbors, 0), flush=True)
        t0 = time.perf_counter()
        ncut = NCut(k, random_state=0).fit(X)
        t_ncut = time.perf_counter() - t0
        print(f"NCut: {t_ncut:.1f} s, error {clustering_error(y, ncut.labels_):.3f}", flush=True)
        print("| draw | sample | Auto (s) | chosen | error | choice, one fit (s) | Auto / choice "
              "| Auto / NCut |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|")
        for draw in range(args.draws):
            cons = Constraints.from_labels(y, args.pairs, random_state=draw)
            for size in sizes:
                auto = Auto(k, subsample=size, random_state=draw, verbose=0)
                t0 = time.perf_counter()
                auto.fit(X, constraints=cons)
                t_auto = time.perf_counter() - t0
                choice = auto.best_estimator_
                winner = type(choice)(**choice.get_params(deep=False))
                t0 = time.perf_counter()
                winner.fit(X, constraints=cons)
                t_win = time.perf_counter() - t0
                chosen = auto.best_method_ + (
                    f" ({', '.join(f'{a}={v!r}' for a, v in auto.best_params_.items())})"
                    if auto.best_params_
                    else ""
                )
                sample = "all" if auto.subsample_ is None else f"{len(auto.subsample_):,}"
                print(
                    f"| {draw} | {sample} | {t_auto:.1f} | {chosen} | "
                    f"{clustering_error(y, auto.labels_):.3f} | {t_win:.1f} | "
                    f"{t_auto / t_win:.1f} | {t_auto / t_ncut:.1f} |",
                    flush=True,
                )
    print(f"\npeak memory: {peak_rss_mib():.0f} MiB")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
