"""Synthetic data families and the raw / standardised real sets, for ``bench_defaults --families``.

Pure functions: :func:`family` draws one instance ``(X, y)`` from a family, given its seed and
parameters; :func:`grid` lists every instance of the seed grid with its parameters and the
part of the grid it belongs to. Nothing here fits a model.

The families (every synthetic one at n = 500, 2,000 and 20,000 points; the varied parameter
first, then the fixed ones):

* ``overlap``: ``std`` 1, 4, 8, 12, separable to heavy overlap;
  ``make_blobs(n, n_features=30, centers=10, cluster_std=std)``.
* ``anisotropic``: ``ratio`` 3, 10, 30, longest over shortest axis of each cluster's
  covariance (axis stds geometric from 12 down, a random rotation per cluster); 10 features,
  k = 5, centres uniform in [-10, 10].
* ``unequal``: ``smallest`` 0.25 (equal sizes), 0.10, 0.05, the smallest cluster's share of
  n (shares geometric from the largest down); 10 features, k = 4, std 3.
* ``many``: ``k`` 2, 5, 10, 15 clusters; 10 features, std 3.5.
* ``noise``: ``noise_dims`` 0, 10, 40 Gaussian columns without information, as spread as
  the informative ones; 5 informative features, k = 5, std 1.5.
* ``real``: wine, breast_cancer, segmentation, each ``raw`` and ``std``
  (``StandardScaler``).

**The split.** Every synthetic setting is drawn at data seeds 1 and 2:

* **tune** (defaults may be chosen on it): data seed 1 of every synthetic setting, and the
  six real variants (the standardised ones are already three of the eight sets the defaults
  were chosen on, so none of them could serve as an unseen check);
* **check** (reported only, never looked at while choosing defaults): data seed 2 of every
  synthetic setting, and the user-reported sample ``overlap-user``
  (``make_blobs(n_samples=20000, n_features=30, centers=10, cluster_std=12,
  random_state=0)``), which is ``overlap`` at ``std=12``, n = 20,000, seed 0.

Check instances differ from tuning ones by the data draw only: the check says whether
defaults chosen on one sample of each setting hold on another sample, not whether they hold
on a kind of data never seen.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sklearn.datasets import make_blobs
from sklearn.preprocessing import StandardScaler

from spectralink.datasets import load

#: synthetic families, their varied parameter and its values, and their fixed parameters
FAMILIES: dict[str, tuple[str, tuple, dict]] = {
    "overlap": ("std", (1, 4, 8, 12), {"d": 30, "k": 10}),
    "anisotropic": ("ratio", (3, 10, 30), {"d": 10, "k": 5, "std": 12.0}),
    "unequal": ("smallest", (0.25, 0.10, 0.05), {"d": 10, "k": 4, "std": 3.0}),
    "many": ("k", (2, 5, 10, 15), {"d": 10, "std": 3.5}),
    "noise": ("noise_dims", (0, 10, 40), {"d": 5, "k": 5, "std": 1.5}),
}
FAMILY_NAMES = (*FAMILIES, "real")
SIZES = (500, 2000, 20000)
TUNE_SEEDS = (1,)
CHECK_SEEDS = (2,)
REAL_SETS = ("wine", "breast_cancer", "segmentation")
GRID_PARTS = ("tune", "check")


@dataclass(frozen=True)
class Instance:
    """One data set of the grid: ``family(family, seed, **params)``, in ``part`` of it."""

    name: str
    family: str
    seed: int
    part: str
    params: dict = field(default_factory=dict, hash=False)

    @property
    def n(self) -> int | None:
        """Number of points (``None`` for a real set: known once loaded)."""
        return self.params.get("n")

    def load(self) -> tuple[np.ndarray, np.ndarray]:
        """``(X, y)`` of this instance."""
        return family(self.family, self.seed, **self.params)


# --------------------------------------------------------------------------- generators
def _blobs(n, d, k, std, seed, weights=None):
    rng = np.random.RandomState(seed)
    sizes = _sizes(n, weights if weights is not None else np.ones(k))
    X, y = make_blobs(
        n_samples=sizes, n_features=d, cluster_std=std, center_box=(-10.0, 10.0),
        random_state=rng,
    )  # fmt: skip
    return X, y


def _sizes(n: int, weights) -> list[int]:
    """Integer cluster sizes summing to ``n``, proportional to ``weights``."""
    w = np.asarray(weights, dtype=float) / np.sum(weights)
    sizes = np.floor(w * n).astype(int)
    sizes[np.argsort(-w)[: n - sizes.sum()]] += 1
    return sizes.tolist()


def geometric_shares(k: int, smallest: float) -> np.ndarray:
    """``k`` shares summing to 1, geometric from the largest down to ``smallest``."""
    if not 0 < smallest <= 1 / k:
        raise ValueError(f"smallest must be in (0, 1/k = {1 / k:.3f}], got {smallest}")
    lo, hi = 1.0, 1e6  # ratio largest / smallest, found by bisection
    for _ in range(200):
        r = np.sqrt(lo * hi)
        w = r ** (np.arange(k) / max(k - 1, 1))
        if w[0] / w.sum() > smallest:
            lo = r
        else:
            hi = r
    w = np.sqrt(lo * hi) ** (np.arange(k) / max(k - 1, 1))
    return w / w.sum()


def _anisotropic(n, d, k, std, ratio, seed):
    rng = np.random.RandomState(seed)
    centers = rng.uniform(-10.0, 10.0, size=(k, d))
    sizes = _sizes(n, np.ones(k))
    axes = std * ratio ** (-np.arange(d) / max(d - 1, 1))  # std down to std / ratio
    Xs, ys = [], []
    for c, m in enumerate(sizes):
        Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        Xs.append(centers[c] + (rng.standard_normal((m, d)) * axes) @ Q.T)
        ys.append(np.full(m, c))
    X, y = np.vstack(Xs), np.concatenate(ys)
    order = rng.permutation(n)
    return X[order], y[order]


def _noise(n, d, k, std, noise_dims, seed):
    X, y = _blobs(n, d, k, std, seed)
    if noise_dims:
        rng = np.random.RandomState(seed + 10_000)
        spread = float(np.mean(X.std(axis=0)))
        X = np.hstack([X, rng.normal(0.0, spread, size=(n, noise_dims))])
    return X, y


def family(name: str, seed: int, **params) -> tuple[np.ndarray, np.ndarray]:
    """One instance ``(X, y)`` of family ``name`` (see the module's table) at data seed ``seed``.

    Synthetic families take ``n`` and their parameters (missing ones take the family's fixed
    values); ``real`` takes ``dataset`` and ``variant`` (``"raw"`` or ``"std"``) and ignores
    ``seed``. Raises :class:`spectralink.datasets.DatasetNotFoundError` for a real set not
    on disk.
    """
    if name == "real":
        X, y = load(params["dataset"])
        X = np.asarray(X, dtype=np.float64)
        if params.get("variant", "raw") == "std":
            X = StandardScaler().fit_transform(X)
        return X, np.asarray(y)
    if name not in FAMILIES:
        raise ValueError(f"unknown family {name!r}; one of {FAMILY_NAMES}")
    p = {**FAMILIES[name][2], **params}
    n = int(p["n"])
    if name == "overlap":
        X, y = make_blobs(
            n_samples=n, n_features=p["d"], centers=p["k"], cluster_std=p["std"],
            random_state=seed,
        )  # fmt: skip
    elif name == "anisotropic":
        X, y = _anisotropic(n, p["d"], p["k"], p["std"], p["ratio"], seed)
    elif name == "unequal":
        X, y = _blobs(n, p["d"], p["k"], p["std"], seed, geometric_shares(p["k"], p["smallest"]))
    elif name == "many":
        X, y = _blobs(n, p["d"], p["k"], p["std"], seed)
    else:
        X, y = _noise(n, p["d"], p["k"], p["std"], p["noise_dims"], seed)
    return np.asarray(X, dtype=np.float64), np.asarray(y)


# --------------------------------------------------------------------------- the grid
def _label(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def grid(part: str = "all") -> list[Instance]:
    """Every instance of the seed grid in ``part`` (``"tune"``, ``"check"`` or ``"all"``).

    Names read ``<family>-<parameter><value>-n<n>-s<seed>`` (``real-<set>-<variant>``,
    ``overlap-user``); the list runs family by family, small n first.
    """
    if part not in (*GRID_PARTS, "all"):
        raise ValueError(f"part must be one of tune, check, all; got {part!r}")
    out: list[Instance] = []
    for fam, (key, values, _) in FAMILIES.items():
        for n in SIZES:
            for value in values:
                for seeds, which in ((TUNE_SEEDS, "tune"), (CHECK_SEEDS, "check")):
                    for s in seeds:
                        name = f"{fam}-{key}{_label(value)}-n{n}-s{s}"
                        out.append(Instance(name, fam, s, which, {key: value, "n": n}))
    out.append(Instance("overlap-user", "overlap", 0, "check", {"std": 12, "n": 20000}))
    for ds in REAL_SETS:
        for variant in ("raw", "std"):
            params = {"dataset": ds, "variant": variant}
            out.append(Instance(f"real-{ds}-{variant}", "real", 0, "tune", params))
    return [i for i in out if part == "all" or i.part == part]
