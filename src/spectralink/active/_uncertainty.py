"""What the NPU and spectral pair strategies score a point by: how uncertain its
neighbourhood is, per query it would cost (Xiong et al. 2014).

Pure functions of the rows ``P`` of neighbourhood probabilities.
"""

from __future__ import annotations

import numpy as np

__all__ = ["entropy", "expected_queries", "normalise_or_uniform"]


def normalise_or_uniform(P: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Rows of P scaled to sum 1; an all-zero row becomes uniform over its allowed entries."""
    s = P.sum(axis=1, keepdims=True)
    zero = s[:, 0] <= 0
    if np.any(zero):
        P = P.copy()
        P[zero] = allowed[zero].astype(float)
        s = P.sum(axis=1, keepdims=True)
    return P / np.maximum(s, 1e-300)


def entropy(P: np.ndarray) -> np.ndarray:
    """Shannon entropy of every row of P (natural log; 0 log 0 = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.where(P > 0, np.log(np.where(P > 0, P, 1.0)), 0.0)
    return -np.sum(P * logs, axis=1)


def expected_queries(P: np.ndarray, n_new: int = 0) -> np.ndarray:
    """Expected number of queries to place a point asked in decreasing order of p.

    ``sum_r r p_(r)`` over the known neighbourhoods (Xiong et al. 2014, eq. 8); with a
    "new group" column (``n_new=1``), a point of a new group costs one query per allowed
    neighbourhood.
    """
    l = P.shape[1] - n_new
    Ph = -np.sort(-P[:, :l], axis=1)
    cost = Ph @ np.arange(1, l + 1)
    if n_new:
        cost = cost + P[:, -1] * np.count_nonzero(P[:, :l] > 0, axis=1).clip(min=1)
    return np.maximum(cost, 1.0)
