"""What the safe defaults cost: each default against its paper setting on the same graph.

CCSR and CCSKL (``shrinkage="auto"`` fits twice: the shrunk and the unshrunk problem),
SCACS (``beta0="auto"`` also clusters LSC-R's embedding) and FCSC (``beta="auto"`` also
clusters the unconstrained eigenvectors), best of a few repeats, as ratios against NCut on
the same precomputed graph where there is one. Run with nothing else on the machine::

    OMP_NUM_THREADS=1 python -m benchmarks.bench_defaults_cost

Needs ``usps.npz`` and ``segmentation.npz`` in ``SPECTRALINK_DATA``. Results:
``docs/results/defaults/README.md``.
"""

from __future__ import annotations

import argparse
import time
import warnings

from sklearn.preprocessing import StandardScaler

from benchmarks._common import peak_rss_mib
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


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=3, help="fits per setting; the best is kept")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    X, y = load("usps")
    cons = Constraints.from_labels(y, 800, random_state=0)
    W = knn_affinity(X, n_neighbors=20, random_state=0)
    t_ncut = best(lambda: NCut(10, affinity="precomputed", random_state=0).fit(W), args.repeats)
    print(f"USPS, 800 pairs, precomputed 20-NN graph; NCut {t_ncut:.2f} s")
    for cls in (CCSR, CCSKL):
        for shrinkage in ("auto", 0):
            est = cls(10, affinity="precomputed", shrinkage=shrinkage, random_state=0)
            t = best(lambda est=est: est.fit(W, constraints=cons), args.repeats)
            print(f"  {cls.__name__} shrinkage={shrinkage!r}: {t:.2f} s = {t / t_ncut:.2f}x NCut")
    for beta0 in ("auto", "paper"):
        est = SCACS(10, beta0=beta0, random_state=0)
        t = best(lambda est=est: est.fit(X, constraints=cons), args.repeats)
        print(f"  SCACS beta0={beta0!r} (graph included): {t:.2f} s")
    X, y = load("segmentation")
    X = StandardScaler().fit_transform(X)
    cons = Constraints.from_labels(y, 200, random_state=0)
    print("standardised segmentation, 200 pairs, 20-NN graph")
    for beta in ("auto", "paper"):
        est = FCSC(7, beta=beta, random_state=0)
        t = best(lambda est=est: est.fit(X, constraints=cons), min(2, args.repeats))
        print(f"  FCSC beta={beta!r} (graph included): {t:.2f} s")
    print(f"peak resident memory: {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
