"""How well k is chosen from the pairs, against the eigengap and the silhouette.

For every data set, number of random labelled pairs and draw: k chosen as
``Auto(n_clusters=None)`` chooses it (``model_selection.choose_n_clusters`` on Auto's search
points: the data, or its sample where Auto samples, ``Auto.subsample_size``; range
``default_k_range(n)``), beside the eigengap rule alone and the best silhouette of k-means
on the row-normalised spectral embedding (NCut's partition at each k, silhouette in that
embedding, on up to 2,000 points). Per set and count it prints how often the true k is
chosen and the mean |chosen - true|, and how often each tie rule (``KScan.k_by``: "auto",
Auto's; "smallest"; "eigengap") would choose it from the same scan. At ``--auto-pairs``
pairs it also fits ``Auto(n_clusters=None)`` and ``Auto(true k)`` and prints both errors
(when the chosen k is the true one the two are the same fit, seeded alike, and Auto(true
k) is fitted once).

Real sets as the papers used them (wine, breast cancer and segmentation standardised: their
features are in different units); synthetic blobs in 5 dimensions with k in {2, 3, 5, 8,
12, 15}, 100 k + 100 points, at two overlaps (cluster_std 1.5 and 3.0, centres in
[-10, 10]^5). ``--cost`` times ``Auto(None)`` against ``Auto(true k)`` on the same data and
pairs, in this process. Run it alone on the machine::

    python -m benchmarks.bench_choose_k --pairs 0,50,200,1000 --draws 5
    python -m benchmarks.bench_choose_k --sets digits,usps --pairs 200 --draws 1 --cost

Results: ``docs/results/model_selection/choose_k.md``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.datasets import make_blobs
from sklearn.metrics import silhouette_score
from sklearn.preprocessing import StandardScaler

from benchmarks._common import peak_rss_mib
from spectralink import Auto, Constraints
from spectralink.datasets import load
from spectralink.graph import knn_affinity
from spectralink.metrics import clustering_error
from spectralink.model_selection import choose_n_clusters, default_k_range, search_sample
from spectralink.spectral import kmeans_rows, laplacian_eigenvectors, normalize_rows

REAL = ("iris", "wine", "breast_cancer", "digits", "segmentation", "usps", "pendigits")
STANDARDISED = {"wine", "breast_cancer", "segmentation"}
BLOB_KS = (2, 3, 5, 8, 12, 15)
BLOB_STDS = (1.5, 3.0)
TIE_RULES = ("auto", "smallest", "eigengap")


def dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    if name.startswith("blobs"):
        _, k, std = name.split("_")
        X, y = make_blobs(
            100 * int(k) + 100, centers=int(k), n_features=5, cluster_std=float(std),
            center_box=(-10, 10), random_state=int(k),
        )  # fmt: skip
        return X, y
    X, y = load(name)
    return (StandardScaler().fit_transform(X) if name in STANDARDISED else X), y


def silhouette_k(X: np.ndarray, k_range: tuple[int, int], seed: int) -> int:
    lo, hi = k_range
    _, V = laplacian_eigenvectors(knn_affinity(X), hi, random_state=seed)
    best, best_k = -np.inf, lo
    for k in range(lo, hi + 1):
        F = normalize_rows(V[:, :k])
        labels = kmeans_rows(F, k, random_state=seed)
        if len(np.unique(labels)) < 2:
            continue
        s = silhouette_score(F, labels, sample_size=min(2000, len(F)), random_state=seed)
        if s > best:
            best, best_k = s, k
    return best_k


# PLR0915 (statements): a benchmark's protocol, step by step as its page describes it.
def main() -> None:  # noqa: PLR0915
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_sets = ",".join([*REAL, *(f"blobs_{k}_{s}" for s in BLOB_STDS for k in BLOB_KS)])
    p.add_argument("--sets", default=default_sets)
    p.add_argument("--pairs", default="0,50,200,1000")
    p.add_argument("--draws", type=int, default=5)
    p.add_argument("--auto-pairs", type=int, default=200)
    p.add_argument("--no-auto", action="store_true", help="skip the Auto fits")
    p.add_argument("--cost", action="store_true", help="time Auto(None) against Auto(true k)")
    p.add_argument(
        "--tie-break",
        choices=("auto", "smallest", "eigengap"),
        default="auto",
        help="the scan's tie rule (Auto's is 'auto'); with another rule pass --no-auto",
    )
    args = p.parse_args()
    warnings.simplefilter("ignore")
    print(f"load average before: {os.getloadavg()}", flush=True)
    counts = [int(c) for c in args.pairs.split(",")]
    totals: dict = {}
    print(
        "| set | n | true k | pairs | chosen (per draw) | true k chosen | mean abs diff | "
        "eigengap | silhouette | scan (s) | Auto(None) error | Auto(true k) error | "
        + " | ".join(f"tie rule {r}" for r in TIE_RULES)
        + " |"
    )
    print("|---" * (12 + len(TIE_RULES)) + "|")
    for name in args.sets.split(","):
        X, y = dataset(name)
        n, kt = len(y), len(np.unique(y))
        k_range = default_k_range(n)
        family = "synthetic" if name.startswith("blobs") else "real"
        for count in counts:
            chosen, gap, sil, secs, err_none, err_true = [], [], [], [], [], []
            by_rule = {rule: [] for rule in TIE_RULES}
            for draw in range(args.draws):
                cons = (
                    Constraints.from_labels(y, count, random_state=draw)
                    if count
                    else Constraints(n_samples=n)
                )
                size = Auto(None).subsample_size(n)
                sample = None if size is None else search_sample(n, cons, size, draw)
                Xs, cs = (X, cons) if sample is None else (X[sample], cons.subset(sample))
                rng = (k_range[0], min(k_range[1], len(Xs) - 1))
                t0 = time.perf_counter()
                scan = choose_n_clusters(Xs, cs, rng, tie_break=args.tie_break, random_state=draw)
                secs.append(time.perf_counter() - t0)
                chosen.append(scan.n_clusters)
                for rule in TIE_RULES:
                    by_rule[rule].append(scan.k_by(rule) == kt)
                gap.append(int(scan.ks[np.argmax(scan.eigengaps)]))
                sil.append(silhouette_k(Xs, rng, draw))
                if count == args.auto_pairs and not args.no_auto:
                    t0 = time.perf_counter()
                    truth = Auto(kt, random_state=draw, verbose=0).fit(X, constraints=cons)
                    t_true = time.perf_counter() - t0
                    err_true.append(clustering_error(y, truth.labels_))
                    if scan.n_clusters == kt and not args.cost:
                        err_none.append(err_true[-1])
                    else:
                        t0 = time.perf_counter()
                        auto = Auto(None, random_state=draw, verbose=0).fit(X, constraints=cons)
                        t_none = time.perf_counter() - t0
                        err_none.append(clustering_error(y, auto.labels_))
                        if args.cost:
                            print(
                                f"cost {name} draw {draw}: Auto(None) {t_none:.1f} s (k="
                                f"{auto.n_clusters_}), Auto({kt}) {t_true:.1f} s, ratio "
                                f"{t_none / t_true:.2f}",
                                flush=True,
                            )
            hit = np.mean(np.array(chosen) == kt)
            key = (family, count)
            tot = totals.setdefault(
                key, {"hit": [], "diff": [], "gap": [], "sil": [], **{r: [] for r in TIE_RULES}}
            )
            for rule in TIE_RULES:
                tot[rule] += by_rule[rule]
            tot["hit"] += [c == kt for c in chosen]
            tot["diff"] += [abs(c - kt) for c in chosen]
            tot["gap"] += [g == kt for g in gap]
            tot["sil"] += [s == kt for s in sil]
            auto_cols = f"{np.mean(err_none):.3f} | {np.mean(err_true):.3f}" if err_true else " | "
            print(
                f"| {name} | {n} | {kt} | {count} | {chosen} | {hit:.0%} | "
                f"{np.mean(np.abs(np.array(chosen) - kt)):.1f} | "
                f"{np.mean(np.array(gap) == kt):.0%} | {np.mean(np.array(sil) == kt):.0%} | "
                f"{np.mean(secs):.1f} | {auto_cols} | "
                + " | ".join(f"{np.mean(by_rule[r]):.0%}" for r in TIE_RULES)
                + " |",
                flush=True,
            )
    print(
        "\n| family | pairs | fits | true k chosen | mean abs diff | eigengap | silhouette | "
        + " | ".join(f"tie rule {r}" for r in TIE_RULES)
        + " |"
    )
    print("|---" * (7 + len(TIE_RULES)) + "|")
    for (family, count), tot in sorted(totals.items()):
        print(
            f"| {family} | {count} | {len(tot['hit'])} | {np.mean(tot['hit']):.0%} | "
            f"{np.mean(tot['diff']):.2f} | {np.mean(tot['gap']):.0%} | "
            f"{np.mean(tot['sil']):.0%} | "
            + " | ".join(f"{np.mean(tot[r]):.0%}" for r in TIE_RULES)
            + " |"
        )
    print(f"\npeak memory: {peak_rss_mib():.0f} MiB")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
