"""The default of ``--scale``: which rule standardises the tables that need it and leaves pixel
data as it is.

For every set: the spread ratio (the widest column's standard deviation over the median
column's, constant columns left out) and NCut's clustering error and ARI on the features as
given and standardised (``StandardScaler``), k the number of classes, no pairs (NCut ignores
them). Then, for each candidate rule, which scaler it picks and the error that gives.

The sets: the eight of ``bench_defaults`` raw (through ``spectralink.datasets.load``; blobs
``make_blobs(2000, centers=3, n_features=5, random_state=0)``), MNIST's 10,000 test images,
and synthetic tables whose columns share a unit and differ in spread:

* ``pct-R`` ("percentages"): 8 columns, 3 classes, every column as informative relative to
  its own spread (class means 1.2 within-class standard deviations apart on average), five
  columns of spread 0.3 to 1 and three of 0.3, 0.6 and 1 times R, so that the widest is R
  times the median (a user's fatty-acid table was 9x): standardising lets every column count;
* ``wide-R``: the same spreads, but only the 3 widest columns carry the classes and the
  others are noise (as a pixel image's border): standardising hurts.

Run (one at a time, ``OMP_NUM_THREADS=1``; ``SPECTRALINK_DATA`` pointing at the data
directory)::

    python -m benchmarks.bench_scale_default [--datasets iris,wine,...] [--markdown FILE]

Results: ``docs/results/scaling.md``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import make_blobs
from sklearn.preprocessing import StandardScaler

from spectralink import NCut
from spectralink.datasets import load
from spectralink.metrics import adjusted_rand_score, clustering_error
from spectralink.preprocessing import column_spread_ratio

REAL = ("iris", "wine", "breast_cancer", "digits", "segmentation", "sonar", "usps", "blobs")
PIXELS = ("digits", "usps", "mnist_test")
SYNTHETIC = ("pct-3", "pct-4", "pct-6", "pct-9", "pct-20", "wide-3", "wide-6", "wide-9", "wide-20")

#: candidate rules: name -> the spread ratio above which the features are standardised
RULES = {"ratio>10 (before)": 10.0, "ratio>5": 5.0, "ratio>4": 4.0, "ratio>3": 3.0}


def synthetic(name: str, n: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``pct-R`` or ``wide-R`` (see the module's docstring)."""
    kind, ratio = name.split("-")
    rng = np.random.default_rng(seed)
    d, k = 8, 3
    # five columns of spread 0.3 to 1 (the median 1), three of 0.3, 0.6 and 1 times the ratio
    r = float(ratio)
    spread = np.array([0.3, 0.5, 0.8, 1.0, 1.0, 0.3 * r, 0.6 * r, r])
    y = np.repeat(np.arange(k), n // k)
    shift = rng.normal(scale=1.2, size=(k, d))
    if kind == "wide":
        shift[:, : d - 3] = 0.0  # only the three widest columns tell the classes apart
    X = (shift[y] + rng.normal(size=(len(y), d))) * spread + 10 * spread
    return X, y


def dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    if name == "blobs":
        return make_blobs(n_samples=2000, centers=3, n_features=5, random_state=0)
    if name.startswith(("pct-", "wide-")):
        return synthetic(name)
    return load(name)


def ncut(X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    k = len(np.unique(y))
    labels = NCut(n_clusters=k, random_state=0).fit(X).labels_
    return clustering_error(y, labels), adjusted_rand_score(y, labels)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", default=",".join(REAL + ("mnist_test",) + SYNTHETIC))
    p.add_argument("--markdown", help="also write the table as Markdown to this file")
    args = p.parse_args(argv)
    rows = []
    head = (
        f"{'set':14s} {'ratio':>8s} {'raw err':>8s} {'std err':>8s} {'raw ARI':>8s} {'std ARI':>8s}"
    )
    print(head + "".join(f" {r:>18s}" for r in RULES))
    for name in args.datasets.split(","):
        t0 = time.perf_counter()
        X, y = dataset(name)
        X = np.asarray(X, dtype=np.float64)
        ratio = column_spread_ratio(X)
        raw = ncut(X, y)
        std = ncut(StandardScaler().fit_transform(X), y)
        picks = {r: ("standard" if ratio > t else "none") for r, t in RULES.items()}
        errors = {r: (std if picks[r] == "standard" else raw)[0] for r in RULES}
        rows.append((name, ratio, raw, std, picks, errors))
        cells = "".join(f" {picks[r][:4]:>8s} {errors[r]:9.3f}" for r in RULES)
        print(
            f"{name:14s} {ratio:8.1f} {raw[0]:8.3f} {std[0]:8.3f} {raw[1]:8.3f} {std[1]:8.3f}"
            f"{cells}   ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
    print("\nchecks per rule: [pixels no worse than raw] [real sets within 0.02 of standardised]")
    for r in RULES:
        pixels = all(e[r] <= raw[0] + 1e-12 for n, _, raw, _, _, e in rows if n in PIXELS)
        real = all(e[r] <= std[0] + 0.02 for n, _, _, std, _, e in rows if n in REAL)
        pct = [
            abs((std if p[r] == "standard" else raw)[1] - std[1])
            for n, _, raw, std, p, _ in rows
            if n == "pct-9"
        ]
        print(
            f"  {r:18s} pixels {'ok' if pixels else 'WORSE'}   eight sets "
            f"{'ok' if real else 'MISSED'}   pct-9 ARI off standardised by "
            f"{pct[0] if pct else float('nan'):.3f}"
        )
    if args.markdown:
        lines = [
            "| set | spread ratio | NCut error raw | standardised | ARI raw | standardised | "
            + " | ".join(RULES)
            + " |",
            "|---|---|---|---|---|---|" + "---|" * len(RULES),
        ]
        for name, ratio, raw, std, picks, errors in rows:
            lines.append(
                f"| {name} | {ratio:.1f} | {raw[0]:.3f} | {std[0]:.3f} | {raw[1]:.3f} | "
                f"{std[1]:.3f} | " + " | ".join(f"{picks[r]} {errors[r]:.3f}" for r in RULES) + " |"
            )
        with open(args.markdown, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
