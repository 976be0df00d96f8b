"""Per-block kernels of the landmark graph, shared by the in-core and the dask code.

:mod:`spectralink.landmarks` runs them over row chunks of an in-memory ``X``,
:mod:`spectralink._dask` over the blocks of a dask array; both import them from here, so
neither imports the other at load time.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .neighbors import rerank

__all__ = [
    "DEFAULT_CHUNK",
    "SIGMA_RULES",
    "gaussian_code_weights",
    "sigma_from_rule",
    "sparse_code",
]

#: ``"mean_distance"``: SCACS (§5.2), sigma = mean ||x_j - u_i|| over all pairs.
#: ``"mean_squared_distance"``: Cai's LSC code, sigma = mean ||x_j - u_i||^2.
SIGMA_RULES = ("mean_distance", "mean_squared_distance")

#: Rows of X per chunk; 8192 x 500 float64 distances is 33 MB.
DEFAULT_CHUNK = 8192


def sigma_from_rule(mean_distance: float, mean_squared_distance: float, rule: str) -> float:
    """Bandwidth from one of :data:`SIGMA_RULES` (SCACS §5.2, or Cai's LSC code)."""
    if rule == "mean_distance":
        sigma = mean_distance
    elif rule == "mean_squared_distance":
        sigma = mean_squared_distance
    else:
        raise ValueError(f"sigma_rule must be one of {SIGMA_RULES}, got {rule!r}.")
    if not (np.isfinite(sigma) and sigma > 0):
        raise ValueError(
            "every point coincides with every landmark (mean distance 0); the landmark "
            "bandwidth is undefined. Pass sigma explicitly or remove duplicate points."
        )
    return float(sigma)


def gaussian_code_weights(sqdist: np.ndarray, sigma: float) -> np.ndarray:
    """Eq. 3: ``K_sigma(x_j, u_i) / sum_{i' in rNB(j)} K_sigma(x_j, u_i')`` per row.

    Computed relative to the nearest landmark (a common factor that cancels), so a
    tiny ``sigma`` cannot underflow every weight of a row to zero.
    """
    rel = sqdist - sqdist[:, :1]
    K = np.exp(-rel / (2.0 * sigma**2))
    return K / K.sum(axis=1, keepdims=True)


def sparse_code(nearest: np.ndarray, weights: np.ndarray, n_landmarks: int) -> sp.csc_matrix:
    """``Z`` as a CSC matrix (p x n) with ``r`` entries per column."""
    n, r = nearest.shape
    return sp.csc_matrix(
        (weights.ravel(), nearest.ravel(), np.arange(0, n * r + 1, r)), shape=(n_landmarks, n)
    )


def nearest_block(Xc: np.ndarray, U: np.ndarray, r: int) -> tuple:
    """r nearest landmarks of the rows of one chunk, plus sums of all n x p distances.

    Returns ``(ind (m, r), sqdist (m, r), sum of distances, sum of squared distances)``;
    the sums feed the bandwidth rules without keeping the chunk's m x p distances.
    """
    Xc = np.asarray(Xc)
    if not np.all(np.isfinite(Xc)):
        raise ValueError("X contains NaN or infinite values; remove or impute them first.")
    dt = Xc.dtype if Xc.dtype in (np.float32, np.float64) else np.float64
    Xc = Xc.astype(dt, copy=False)
    # ||x||^2 - 2 x.u + ||u||^2 in X's precision (float32 MNIST: one fast GEMM and half
    # the memory traffic); the r kept distances are recomputed exactly in float64 below
    D2 = Xc @ U.astype(dt).T
    D2 *= -2.0
    D2 += np.einsum("ij,ij->i", Xc, Xc)[:, None]
    D2 += np.einsum("ij,ij->i", U, U).astype(dt)[None, :]
    np.maximum(D2, 0.0, out=D2)
    total_sq = float(D2.sum(dtype=np.float64))
    np.sqrt(D2, out=D2)
    total = float(D2.sum(dtype=np.float64))
    if r <= 8:
        # r argmin passes (masking each winner) beat a per-row argpartition for small r
        rows = np.arange(D2.shape[0])
        ind = np.empty((D2.shape[0], r), dtype=np.int64)
        for col in range(r):
            ind[:, col] = D2.argmin(axis=1)
            D2[rows, ind[:, col]] = np.inf
    else:
        ind = np.argpartition(D2, r - 1, axis=1)[:, :r]
    # float64 distances, ascending, ties by the smaller landmark index (as every search)
    sq, ind = rerank(Xc, U, ind.astype(np.int64))
    return ind, sq, total, total_sq


def gram_block(ind: np.ndarray, w: np.ndarray, p: int) -> np.ndarray:
    """``Z_c Z_c^T`` (p x p) of one chunk of columns of Z."""
    Zc = sparse_code(ind, w, p)
    return np.asarray((Zc @ Zc.T).toarray())


def degree_block(ind: np.ndarray, w: np.ndarray, p: int) -> np.ndarray:
    return np.bincount(ind.ravel(), weights=w.ravel(), minlength=p)


def embed_block(ind: np.ndarray, w: np.ndarray, M: np.ndarray) -> np.ndarray:
    """Rows ``sum_l w[j, l] M[ind[j, l]]``: ``Z_c^T M`` without forming ``Z_c``."""
    out = np.zeros((ind.shape[0], M.shape[1]))
    for col in range(ind.shape[1]):
        out += w[:, col : col + 1] * M[ind[:, col]]
    return out
