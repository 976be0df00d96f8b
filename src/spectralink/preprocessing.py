"""Features in their units: the scalers of ``--scale`` and the check of column spreads.

Every method measures Euclidean distances between rows, so a column whose spread is
hundreds of times that of the others (wine's proline, breast cancer's areas) decides the
neighbours alone. :func:`scale_features` applies one of scikit-learn's scalers by name;
:func:`spread_note` says, in one line, when unscaled columns differ that much. The default
(:data:`DEFAULT_SCALE`) was chosen by measurement: ``docs/results/scaling.md``.

In Python the same is scikit-learn's idiom::

    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(StandardScaler(), NCut(n_clusters=3))
    model.fit(X, ncut__constraints=cons)
    labels = model[-1].labels_
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import TransformerMixin

from .tables import KEYWORDS, Spelling

__all__ = [
    "DEFAULT_SCALE",
    "SCALES",
    "SPREAD_FACTOR",
    "spread_ratio",
    "column_spread_ratio",
    "make_scaler",
    "missing_value_hint",
    "resolve_scale",
    "scale_features",
    "scale_line",
    "spread_note",
]

#: The names ``--scale`` accepts: ``"none"`` (features as given), ``"standard"``
#: (:class:`~sklearn.preprocessing.StandardScaler`: zero mean, unit variance per column),
#: ``"robust"`` (:class:`~sklearn.preprocessing.RobustScaler`: median and interquartile
#: range) and ``"auto"`` (``"standard"`` when :func:`column_spread_ratio` exceeds
#: :data:`SPREAD_FACTOR`, else ``"none"``).
SCALES = ("auto", "none", "standard", "robust")

#: The default of ``--scale`` (measured: ``docs/results/scaling.md``).
DEFAULT_SCALE = "auto"

#: Column spreads "differ" when the widest column's standard deviation is more than this
#: many times the median column's (constant columns left out). Measured
#: (``benchmarks/bench_scale_default.py``, ``docs/results/scaling.md``): every set better
#: raw is at most 2.7 (pixel data 1.2-2.4, iris 2.2, segmentation 2.7), every table better
#: standardised at least 3.4 (mixed units 388 and more; columns in one unit that differ in
#: spread, 3.4 to 19); 3 lies between them.
SPREAD_FACTOR = 3.0


def column_spread_ratio(X: ArrayLike) -> float:
    """The widest column's standard deviation over the median column's (constant columns
    left out); ``1.0`` when fewer than two columns vary."""
    return spread_ratio(np.asarray(X, dtype=np.float64).std(axis=0))


def spread_ratio(std: ArrayLike) -> float:
    """:func:`column_spread_ratio` from the columns' standard deviations (computed
    elsewhere, such as over a table on a Dask cluster)."""
    std = np.asarray(std, dtype=np.float64)
    std = std[std > 0]
    if len(std) < 2:
        return 1.0
    return float(std.max() / np.median(std))


def resolve_scale(scale: str, X: ArrayLike) -> str:
    """The scaler ``scale`` means for ``X``: ``"auto"`` becomes ``"standard"`` or ``"none"``."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {', '.join(SCALES)}; got {scale!r}.")
    if scale != "auto":
        return scale
    return "standard" if column_spread_ratio(X) > SPREAD_FACTOR else "none"


def make_scaler(scale: str) -> TransformerMixin | None:
    """A new scikit-learn scaler for ``scale`` (``"standard"`` or ``"robust"``), or ``None``
    for ``"none"``."""
    from sklearn.preprocessing import RobustScaler, StandardScaler

    scalers = {"none": None, "standard": StandardScaler, "robust": RobustScaler}
    if scale not in scalers:
        raise ValueError(
            f"scale must be one of {', '.join(scalers)} (resolve 'auto' first); got {scale!r}."
        )
    cls = scalers[scale]
    return None if cls is None else cls()


def scale_features(X: ArrayLike, scale: str = DEFAULT_SCALE) -> tuple[np.ndarray, str]:
    """``(X scaled, the scaler used)``: ``X`` transformed by the scaler ``scale`` names
    (``"auto"`` resolved by :func:`resolve_scale`); ``X`` itself for ``"none"``."""
    X = np.asarray(X, dtype=np.float64)
    used = resolve_scale(scale, X)
    scaler = make_scaler(used)
    return (X if scaler is None else scaler.fit_transform(X)), used


def spread_note(X: ArrayLike, scale: str, *, option: str = "--scale") -> str | None:
    """One line when ``X`` is used unscaled (``scale`` ``"none"``) although its column
    spreads differ by more than :data:`SPREAD_FACTOR`; ``None`` otherwise."""
    if scale != "none":
        return None
    ratio = column_spread_ratio(X)
    if ratio <= SPREAD_FACTOR:
        return None
    return (
        f"features not scaled, and the widest column's spread is {ratio:.0f} times the median "
        f"column's (more than {SPREAD_FACTOR:g}x): distances follow that column; "
        f"{option} standard (or robust) puts the columns in comparable units"
    )


def scale_line(scale: str, used: str, ratio: float, spelling: Spelling = KEYWORDS) -> str:
    """The one line saying what the scale option ``scale`` did (``used``: the scaler it
    resolved to) to features whose :func:`column_spread_ratio` is ``ratio``; ``spelling``
    names the option as a keyword (``scale='auto'``) or as a command line's flag
    (:data:`spectralink.tables.FLAGS`: ``--scale auto``)."""
    spread = f"the widest column's spread is {ratio:.1f} times the median column's"
    what = {"none": "used as given", "standard": "standardised", "robust": "robust-scaled"}[used]
    if scale == "auto":
        if used == "none":
            return (
                f"features {what} ({spelling('scale', 'auto')}: {spread}, at most "
                f"{SPREAD_FACTOR:g}x); {spelling('scale', 'standard')} standardises them"
            )
        return (
            f"features {what} ({spelling('scale', 'auto')}: {spread}, more than "
            f"{SPREAD_FACTOR:g}x); {spelling('scale', 'none')} keeps them as given"
        )
    if used == "none" and ratio > SPREAD_FACTOR:
        return (
            f"features {what} ({spelling('scale', 'none')}), and {spread} (more than "
            f"{SPREAD_FACTOR:g}x): distances follow the widest columns; "
            f"{spelling('scale', 'standard')} (or robust) puts the columns in comparable units"
        )
    return f"features {what} ({spelling('scale', scale)})"


def missing_value_hint(column: str) -> str:
    """What a missing or non-finite numeric feature value in ``column`` (of an array, where
    ``--missing`` does not apply) can become: the row removed, the value imputed, or the
    column left out (the ``--drop`` option of tables)."""
    return (
        "remove that row, fill the value in (impute it, e.g. with the column's mean: "
        "sklearn.impute.SimpleImputer or pandas fillna), or leave the whole column out with "
        f"--drop {column}"
    )
