"""How large a sample ``--dask``'s sample route needs: a method fitted on every constrained
row plus ``s`` rows drawn uniformly, then ``predict`` on every row, against the same method
fitted on all the rows (agreement, ARI) and against the classes (error).

The route is the one :class:`spectralink.distributed.SampledFit` takes, run here in memory
(the sample drawn by :func:`spectralink.distributed.sample_rows`), so no cluster is needed.

    python -m benchmarks.bench_sample_size --sets mnist,blobs_overlap --methods ccskl,lscp \\
        --sizes 2000,5000,10000,20000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from spectralink import Constraints, get_method
from spectralink.datasets import load
from spectralink.distributed import sample_rows
from spectralink.experiments import provenance_line
from spectralink.metrics import adjusted_rand_score, clustering_error


def synthetic(name: str, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Blobs in 10-d: ``blobs_overlap`` (centres 2.5 sd apart, equal sizes) and
    ``blobs_unequal`` (sizes 1:2:4:8:16, centres 4 sd apart)."""
    rng = np.random.default_rng(seed)
    k, d = 5, 10
    centers = rng.normal(size=(k, d))
    if name == "blobs_overlap":
        centers *= 2.5 / np.sqrt(2)
        y = rng.integers(k, size=n)
    elif name == "blobs_unequal":
        centers *= 4.0 / np.sqrt(2)
        y = rng.choice(k, size=n, p=np.array([1, 2, 4, 8, 16]) / 31)
    else:
        raise ValueError(name)
    return centers[y] + rng.normal(size=(n, d)), y


def data(name: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    if name.startswith("blobs_"):
        return synthetic(name, n)
    X, y = load(name)
    X = np.asarray(X, dtype=np.float64)
    return X, np.asarray(y)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default="mnist,blobs_overlap,blobs_unequal")
    p.add_argument("--n", type=int, default=100_000, help="rows of the synthetic sets")
    p.add_argument("--methods", default="ncut,ccskl,lscp")
    p.add_argument("--sizes", default="2000,5000,10000,20000")
    p.add_argument("--pairs", type=int, default=1000)
    p.add_argument("--seeds", type=int, default=2)
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(provenance_line())
    print("set method n size seed ari_vs_full error_sample error_full t_sample t_full")
    for name in args.sets.split(","):
        X, y = data(name, args.n)
        n, k = len(X), len(np.unique(y))
        for seed in range(args.seeds):
            cons = Constraints.from_labels(y, args.pairs, random_state=seed)
            for method in args.methods.split(","):
                t0 = time.perf_counter()
                full = get_method(method)(n_clusters=k, random_state=seed).fit(X, constraints=cons)
                t_full = time.perf_counter() - t0
                for size in sizes:
                    t0 = time.perf_counter()
                    rows = sample_rows(n, cons.constrained_points, size, random_state=seed)
                    est = get_method(method)(n_clusters=k, random_state=seed)
                    est.fit(X[rows], constraints=cons.subset(rows))
                    labels = est.predict(X)
                    t = time.perf_counter() - t0
                    agree = adjusted_rand_score(full.labels_, labels)
                    errors = clustering_error(y, labels), clustering_error(y, full.labels_)
                    print(
                        f"{name} {method} {n} {size} {seed} {agree:.4f} "
                        f"{errors[0]:.4f} {errors[1]:.4f} {t:.1f} {t_full:.1f}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
