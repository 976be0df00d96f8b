"""Per-fit cost at small n: the spectral core's eigensolvers, and NCut against scikit-learn.

Two parts, each printed as a table:

* ``solvers``: on the default NCut graph of blobs of n points (k = 5 and 15), the time of
  ``laplacian_eigenvectors`` with ``solver="dense"`` and ``"arpack"``, best of 5: where
  ARPACK's start-up stops costing more than LAPACK's full reduction (this sets
  ``spectral.DENSE_EIGEN_MAX``).
* ``sklearn``: one NCut fit at its defaults (20 neighbours) against scikit-learn's
  ``SpectralClustering(affinity="nearest_neighbors")`` at its defaults (10 neighbours) and
  with 20 neighbours (the same graph size), best of ``--repeats``, in the same run, on
  digits, USPS and blobs of 500 to 100,000 points (10 clusters, 30 dimensions), with the
  adjusted Rand index of each against the labels.

Run it alone on the machine (ratios are taken within one run)::

    OMP_NUM_THREADS=1 python -m benchmarks.bench_eigensolver
    python -m benchmarks.bench_eigensolver --part sklearn --data digits,usps --repeats 5

Results: ``docs/results/eigensolver.md``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.cluster import SpectralClustering
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

from spectralink import NCut
from spectralink.datasets import load
from spectralink.graph import knn_affinity
from spectralink.spectral import DENSE_EIGEN_MAX, laplacian_eigenvectors


def best_of(fn, repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def blobs(n: int, k: int, d: int = 10) -> tuple[np.ndarray, np.ndarray]:
    return make_blobs(n, d, centers=k, cluster_std=3.0, random_state=0)


def part_solvers() -> None:
    print(f"\n## solvers (DENSE_EIGEN_MAX = {DENSE_EIGEN_MAX})\n")
    print("| n | k | dense (ms) | arpack (ms) |")
    print("|---|---|---|---|")
    for n in (100, 150, 200, 300, 500, 1000, 2000):
        for k in (5, 15):
            X, _ = blobs(n, k)
            W = knn_affinity(X, n_neighbors=20)  # NCut's default graph
            t_d, _ = best_of(lambda W=W, k=k: laplacian_eigenvectors(W, k, solver="dense"), 5)
            t_a, _ = best_of(
                lambda W=W, k=k: laplacian_eigenvectors(W, k, solver="arpack", random_state=0), 5
            )
            print(f"| {n} | {k} | {1e3 * t_d:.2f} | {1e3 * t_a:.2f} |")


def dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    if name.startswith("blobs"):
        n = int(float(name[5:]))
        return make_blobs(n, 30, centers=10, cluster_std=3.0, random_state=0)
    return load(name)


def part_sklearn(names: list[str], repeats: int) -> None:
    print("\n## NCut against scikit-learn's SpectralClustering (best of repeats, s)\n")
    print(
        "| data | n | NCut | sklearn (10 nn) | ratio | sklearn (20 nn) | ratio "
        "| ARI NCut | ARI sklearn (10 nn) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name in names:
        X, y = dataset(name)
        k = len(np.unique(y))
        t_n, m = best_of(lambda X=X, k=k: NCut(n_clusters=k, random_state=0).fit(X), repeats)
        t_s, s = best_of(
            lambda X=X, k=k: SpectralClustering(
                n_clusters=k, affinity="nearest_neighbors", random_state=0
            ).fit(X),
            repeats,
        )
        t_s20, _ = best_of(
            lambda X=X, k=k: SpectralClustering(
                n_clusters=k, affinity="nearest_neighbors", n_neighbors=20, random_state=0
            ).fit(X),
            repeats,
        )
        print(
            f"| {name} | {len(y)} | {t_n:.3f} | {t_s:.3f} | {t_n / t_s:.2f} | {t_s20:.3f} "
            f"| {t_n / t_s20:.2f} | {adjusted_rand_score(y, m.labels_):.3f} "
            f"| {adjusted_rand_score(y, s.labels_):.3f} |",
            flush=True,
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", choices=("solvers", "sklearn", "all"), default="all")
    p.add_argument("--data", default="digits,usps,blobs500,blobs2000,blobs10000,blobs1e5")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    print(f"load average before: {os.getloadavg()}", flush=True)
    with warnings.catch_warnings():
        # scikit-learn warns about disconnected k-NN graphs on some data; not measured here
        warnings.simplefilter("ignore", UserWarning)
        if args.part in ("solvers", "all"):
            part_solvers()
        if args.part in ("sklearn", "all"):
            part_sklearn(args.data.split(","), args.repeats)
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
