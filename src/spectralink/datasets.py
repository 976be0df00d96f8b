"""Named datasets: scikit-learn's bundled sets and the papers' benchmark files.

``load(name)`` returns ``(X, y)`` with ``y`` integer labels 0..k-1. The bundled sets
(iris, wine, breast_cancer, digits) ship with scikit-learn and are always available.
The real benchmark sets are read as ``<name>.npz`` (arrays ``X`` and ``y``) from the data
directory: the ``data_home`` argument, else the ``SPECTRALINK_DATA`` environment variable,
else a per-user cache (``~/.cache/spectralink`` or ``$XDG_CACHE_HOME/spectralink``).
Nothing is downloaded: a missing file raises :class:`DatasetNotFoundError` naming the file
and the directory searched.

The bundled names always mean scikit-learn's data: ``breast_cancer`` is the Wisconsin
diagnostic set (= ``wdbc``). The Ljubljana breast-cancer data of the COSC paper is
``breast_cancer_dedup`` (263 rows), or ``breast_cancer_ljubljana`` for the 277-row file
stored as ``breast_cancer.npz``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

__all__ = [
    "BENCHMARK_DATASETS",
    "BUNDLED_DATASETS",
    "DatasetNotFoundError",
    "data_home",
    "list_datasets",
    "load",
    "load_subset",
]

BUNDLED_DATASETS = ("iris", "wine", "breast_cancer", "digits")

#: Names whose file on disk has another stem.
_FILE_ALIASES = {"breast_cancer_ljubljana": "breast_cancer"}

#: The benchmark sets of the papers, with (n, d, k) as documented in their manifests.
BENCHMARK_DATASETS: dict[str, tuple[int, int, int]] = {
    "usps": (9298, 256, 10),
    "mnist": (70000, 784, 10),
    "mnist_test": (10000, 784, 10),
    "sonar": (208, 60, 2),
    "ionosphere": (351, 34, 2),
    "glass": (214, 9, 6),
    "wdbc": (569, 30, 2),
    "segmentation": (2310, 19, 7),
    "pendigits": (10992, 16, 10),
    "letter": (20000, 16, 26),
    "spambase": (4601, 57, 2),
    "spambase_dedup": (4207, 57, 2),
    "shuttle": (58000, 9, 7),
    "breast_cancer_dedup": (263, 9, 2),
    "breast_cancer_ljubljana": (277, 9, 2),
    "diabetes": (768, 8, 2),
}


class DatasetNotFoundError(FileNotFoundError):
    """A benchmark dataset file is not in the data directory."""


def data_home(data_home: str | os.PathLike | None = None) -> Path:
    """The directory benchmark ``.npz`` files are read from (not created)."""
    if data_home is not None:
        return Path(data_home).expanduser()
    env = os.environ.get("SPECTRALINK_DATA")
    if env:
        return Path(env).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    return Path(cache).expanduser() / "spectralink"


def list_datasets(data_home_: str | os.PathLike | None = None) -> dict[str, bool]:
    """Every known dataset name -> whether it can be loaded now.

    Extra ``<name>.npz`` files found in the data directory are listed too.
    """
    home = data_home(data_home_)
    out = {name: True for name in BUNDLED_DATASETS}
    names = set(BENCHMARK_DATASETS)
    if home.is_dir():
        names |= {p.stem for p in home.glob("*.npz")}
    for name in sorted(names - set(_FILE_ALIASES.values())):
        out.setdefault(name, _file_for(name, home).is_file())
    return out


def _load_bundled(name: str) -> tuple[np.ndarray, np.ndarray]:
    from sklearn import datasets as skd

    loader = {
        "iris": skd.load_iris,
        "wine": skd.load_wine,
        "breast_cancer": skd.load_breast_cancer,
        "digits": skd.load_digits,
    }[name]
    X, y = loader(return_X_y=True)
    return np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.int64)


def load(name: str, data_home: str | os.PathLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Load a dataset by name as ``(X, y)``.

    Parameters
    ----------
    name : str
        One of :data:`BUNDLED_DATASETS`, or the stem of an ``.npz`` file in the data
        directory (see :func:`data_home`).
    data_home : path, default=None
        Directory holding the ``.npz`` files; overrides ``SPECTRALINK_DATA``.

    Raises
    ------
    DatasetNotFoundError
        When the file is missing; the message names it and the directory searched.
    ValueError
        When the file does not hold arrays ``X`` (2-d) and ``y`` (1-d) of matching length.
    """
    key = name.lower()
    if key in BUNDLED_DATASETS:
        return _load_bundled(key)
    path = _file_for(key, data_home)
    if not path.is_file():
        known = ", ".join(sorted(set(BUNDLED_DATASETS) | set(BENCHMARK_DATASETS)))
        hint = "" if key in BENCHMARK_DATASETS else f" (known names: {known})"
        raise DatasetNotFoundError(
            f"dataset {name!r} not found: {path.name} is not in {path.parent}{hint}. "
            f"Put {path.name} (arrays X and y) there, or point SPECTRALINK_DATA (or data_home) "
            "at the directory that holds it."
        )
    with np.load(path, allow_pickle=False) as data:
        if "X" not in data or "y" not in data:
            raise ValueError(f"{path} must contain arrays 'X' and 'y', found {sorted(data.files)}.")
        X, y = data["X"], data["y"]
    if X.ndim != 2 or y.ndim != 1 or len(X) != len(y):
        raise ValueError(
            f"{path}: X must be 2-d and y 1-d with one label per row, got X {X.shape}, y {y.shape}."
        )
    return X, y.astype(np.int64)


def _file_for(name: str, data_home_) -> Path:
    return data_home(data_home_) / f"{_FILE_ALIASES.get(name, name)}.npz"


def load_subset(
    name: str,
    *,
    classes: Sequence | None = None,
    per_class: int | None = None,
    data_home: str | os.PathLike | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """A dataset restricted to some classes and/or the first ``per_class`` points of each.

    Labels are re-indexed 0..k'-1 in the order of ``classes`` (sorted if not given).
    Used for the papers' subsets: MNIST test digits 0-4 (``classes=range(5)``), USPS with
    the first 300 points per class (``per_class=300``).
    """
    X, y = load(name, data_home)
    keep_classes = np.unique(y) if classes is None else np.asarray(list(classes))
    missing = np.setdiff1d(keep_classes, np.unique(y))
    if len(missing):
        raise ValueError(f"dataset {name!r} has no class {missing.tolist()}.")
    idx = []
    for c in keep_classes:
        members = np.flatnonzero(y == c)
        idx.append(members if per_class is None else members[:per_class])
    idx = np.sort(np.concatenate(idx))
    remap = {int(c): i for i, c in enumerate(keep_classes)}
    return X[idx], np.array([remap[int(v)] for v in y[idx]], dtype=np.int64)
