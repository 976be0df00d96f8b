"""The ground floor of checks: parameter constraints and the input checks every floor shares.

Estimators declare ``_parameter_constraints`` (scikit-learn's mechanism, checked at the start of
``fit``); public functions and the library's non-estimator classes declare theirs with
:func:`validate_params` (a function decorator) or :func:`check_params` (a constructor's or
method's arguments), so that one message format names the parameter, the expected type or range
and the value received. Nothing here imports the rest of the package.
"""

from __future__ import annotations

import numbers
from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    InvalidParameterError,
    Options,
    StrOptions,
    validate_parameter_constraints,
    validate_params,
)
from sklearn.utils.validation import check_array

__all__ = [
    "HasMethods",
    "Int",
    "Interval",
    "InvalidParameterError",
    "NON_NEGATIVE",
    "Options",
    "POSITIVE",
    "RealRange",
    "StrOptions",
    "check_features",
    "check_n_clusters",
    "check_params",
    "validate_params",
]


class Int(Interval):
    """An integer range constraint that, unlike ``Interval(Integral, ...)``, refuses
    booleans (``n_init=True`` is a mistake, not 1)."""

    def __init__(
        self, left: float | None, right: float | None = None, *, closed: str = "left"
    ) -> None:
        super().__init__(Integral, left, right, closed=closed)

    def is_satisfied_by(self, val: object) -> bool:
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


class RealRange(Interval):
    """A real range constraint that refuses booleans (see :class:`Int`)."""

    def __init__(
        self, left: float | None, right: float | None = None, *, closed: str = "neither"
    ) -> None:
        super().__init__(Real, left, right, closed=closed)

    def is_satisfied_by(self, val: object) -> bool:
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


#: A finite number > 0.
POSITIVE = RealRange(0, np.inf, closed="neither")
#: A finite number >= 0.
NON_NEGATIVE = RealRange(0, np.inf, closed="left")


def check_params(constraints: dict, params: dict, caller: str) -> None:
    """Check ``params`` against ``constraints`` (scikit-learn's format); raises
    :class:`InvalidParameterError` (a ``ValueError``) naming ``caller`` and the parameter."""
    validate_parameter_constraints(constraints, params, caller_name=caller)


def check_n_clusters(n_clusters: int, n_samples: int) -> int:
    """``n_clusters`` as an int >= 2 that ``n_samples`` points can form."""
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, numbers.Integral):
        raise ValueError(f"n_clusters must be an integer >= 2, got {n_clusters!r}.")
    if n_clusters < 2:
        raise ValueError(f"n_clusters must be >= 2, got {n_clusters}.")
    if n_samples < n_clusters:
        raise ValueError(
            f"n_samples={n_samples} is smaller than n_clusters={n_clusters}: cannot form "
            "that many clusters."
        )
    return int(n_clusters)


def check_features(
    X: ArrayLike, *, accept_sparse: bool = False, ensure_min_samples: int = 2
) -> np.ndarray:
    """Feature matrix as a finite float array of shape (n_samples, n_features).

    ``ensure_min_samples=1`` suits ``predict``, where one new point is valid input.
    """
    if X is None:
        raise ValueError("X is None; expected an array of shape (n_samples, n_features).")
    try:
        return check_array(
            X,
            accept_sparse=accept_sparse,
            dtype=[np.float64, np.float32],
            ensure_all_finite=True,
            ensure_min_samples=ensure_min_samples,
        )
    except ValueError as exc:
        msg = str(exc)
        if "NaN" in msg or "infinity" in msg:
            raise ValueError(
                "X contains NaN or infinite values; remove or impute them before clustering."
            ) from None
        raise ValueError(f"invalid X: {msg}") from None
