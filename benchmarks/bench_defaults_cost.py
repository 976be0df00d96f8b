"""What the safe defaults cost: each default against its paper setting on the same graph.

CCSR and CCSKL (``shrinkage="auto"`` fits twice: the shrunk and the unshrunk problem),
SCACS (``beta0="auto"`` also clusters LSC-R's embedding) and FCSC (``beta="auto"`` also
clusters the unconstrained eigenvectors), best of a few repeats, as ratios against NCut on
the same precomputed graph where there is one. Run with nothing else on the machine::

    OMP_NUM_THREADS=1 python benchmarks/bench_defaults_cost.py

Needs ``usps.npz`` and ``segmentation.npz`` in ``SPECTRALINK_DATA``.
"""

from __future__ import annotations

import resource
import time
import warnings

from sklearn.preprocessing import StandardScaler

from spectralink import CCSKL, CCSR, FCSC, SCACS, Constraints, NCut
from spectralink.datasets import load
from spectralink.graph import knn_affinity


def best(fit, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fit()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    warnings.simplefilter("ignore")
    X, y = load("usps")
    cons = Constraints.from_labels(y, 800, random_state=0)
    W = knn_affinity(X, n_neighbors=20, random_state=0)
    t_ncut = best(lambda: NCut(10, affinity="precomputed", random_state=0).fit(W))
    print(f"USPS, 800 pairs, precomputed 20-NN graph; NCut {t_ncut:.2f} s")
    for cls in (CCSR, CCSKL):
        for shrinkage in ("auto", 0):
            est = cls(10, affinity="precomputed", shrinkage=shrinkage, random_state=0)
            t = best(lambda est=est: est.fit(W, constraints=cons))
            print(f"  {cls.__name__} shrinkage={shrinkage!r}: {t:.2f} s = {t / t_ncut:.2f}x NCut")
    for beta0 in ("auto", "paper"):
        est = SCACS(10, beta0=beta0, random_state=0)
        t = best(lambda est=est: est.fit(X, constraints=cons))
        print(f"  SCACS beta0={beta0!r} (graph included): {t:.2f} s")
    X, y = load("segmentation")
    X = StandardScaler().fit_transform(X)
    cons = Constraints.from_labels(y, 200, random_state=0)
    print("standardised segmentation, 200 pairs, 20-NN graph")
    for beta in ("auto", "paper"):
        est = FCSC(7, beta=beta, random_state=0)
        t = best(lambda est=est: est.fit(X, constraints=cons), repeats=2)
        print(f"  FCSC beta={beta!r} (graph included): {t:.2f} s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory: {peak:.0f} MB")


if __name__ == "__main__":
    main()
