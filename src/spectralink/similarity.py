"""LSCP similarity learning: a constraint-aware local-reconstruction graph.

Implements step 1 of "Learning similarities for pairwise constraint propagation"
(Multimedia Tools and Applications 74, 2015), eqs. 2-10: every point ``x_i`` is
reconstructed from its k nearest neighbours in the feature space of a kernel, with
weights ``w_i`` on the probability simplex that also fit the pairwise constraints
among those neighbours,

    min_w  w' G_i w + lam ||H_i o (w - Y_i)||^2 + mu ||w||^2,   w >= 0, 1'w = 1   (eq. 6)

with the local Gram matrix ``G_i(j, l) = k_ii - k_il - k_ji + k_jl`` (eq. 4). The
learnt weights form the graph ``W_ij = w_i(x_j)`` (eq. 10), with zero diagonal,
symmetrised as ``(W + W') / 2``. All n problems are solved exactly at once by
:func:`spectralink.solvers.simplex_qp.simplex_qp`.

The result is an ordinary affinity: any estimator of the library can cluster it with
``affinity="precomputed"``.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from .constraints import Constraints, as_constraints
from .graph import sigma_from_distances
from .neighbors import kneighbors
from .solvers.simplex_qp import simplex_qp
from .utils import check_features

__all__ = ["learn_similarity", "local_gram", "pair_values"]

#: Points processed per batch (bounds the (batch, k, n_features) neighbour gather).
_BATCH_BYTES = 64 * 2**20


def pair_values(A: sp.spmatrix, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Entries ``A[rows[t], cols[t]]`` of a sparse matrix (0 where not stored), as a flat array."""
    if len(rows) == 0:
        return np.zeros(0)
    return np.asarray(sp.csr_matrix(A)[rows, cols], dtype=np.float64).ravel()


def local_gram(
    X: np.ndarray,
    ind: np.ndarray,
    dist: np.ndarray,
    *,
    centers: np.ndarray | None = None,
    kernel: str = "gaussian",
    sigma: float = 1.0,
) -> np.ndarray:
    """Local Gram matrices ``G_i(j, l) = k_ii - k_il - k_ji + k_jl`` over ``N_k(i)`` (eq. 4).

    Parameters
    ----------
    X : ndarray of shape (n_points, n_features)
        Feature rows, indexed by ``ind``.
    ind : ndarray of shape (m, k)
        Neighbour indices of the ``m`` centre points.
    dist : ndarray of shape (m, k)
        Distances from each centre to its neighbours (as returned by
        :func:`spectralink.neighbors.kneighbors`).
    centers : ndarray of shape (m,), default=None
        Row indices of the centre points ``x_i``; ``None`` means ``range(m)``.
    kernel : {"gaussian", "linear"}
        ``k(x, y) = exp(-||x - y||^2 / (2 sigma^2))`` or ``<x, y>``.
    sigma : float
        Gaussian bandwidth.

    Returns
    -------
    G : ndarray of shape (m, k, k)
        Positive semi-definite up to rounding.

    Notes
    -----
    The kernel is evaluated exactly between all members of ``{x_i} u N_k(x_i)``, so
    ``G_i`` is a true Gram matrix of the differences ``phi(x_i) - phi(x_j)``; the
    k-NN restriction only fixes which weights may be non-zero.
    """
    m, k = ind.shape
    Z = np.asarray(X[ind], dtype=np.float64)  # (m, k, d)
    inner = np.matmul(Z, Z.transpose(0, 2, 1))  # <x_j, x_l>
    if kernel == "linear":
        centers = np.arange(m) if centers is None else centers
        xi = np.asarray(X[centers], dtype=np.float64)[:, None, :]
        # (x_i - x_j)'(x_i - x_l) = <x_i,x_i> - <x_i,x_l> - <x_j,x_i> + <x_j,x_l>
        xz = np.einsum("mid,mkd->mk", xi, Z)
        xx = np.einsum("mid,mid->m", xi, xi)
        return xx[:, None, None] - xz[:, None, :] - xz[:, :, None] + inner
    sq = np.einsum("mkk->mk", inner)
    d2 = np.maximum(sq[:, :, None] + sq[:, None, :] - 2.0 * inner, 0.0)
    diag = np.arange(k)
    d2[:, diag, diag] = 0.0
    gamma = 1.0 / (2.0 * sigma**2)
    k_jl = np.exp(-gamma * d2)
    k_ij = np.exp(-gamma * np.asarray(dist, dtype=np.float64) ** 2)
    # k_ii = 1 for the Gaussian kernel
    return 1.0 - k_ij[:, None, :] - k_ij[:, :, None] + k_jl


def _check_positive(value, name: str, *, allow_zero: bool = False) -> float:
    kind = "non-negative" if allow_zero else "positive"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a {kind} number, got {value!r}.")
    if not (np.isfinite(value) and (value > 0 or (allow_zero and value == 0))):
        raise ValueError(f"{name} must be {kind} and finite, got {value!r}.")
    return float(value)


def learn_similarity(
    X: ArrayLike,
    constraints: Constraints = None,
    n_neighbors: int = 10,
    lam: float = 0.1,
    mu: float = 0.1,
    sigma: float | None = None,
    kernel: str = "gaussian",
    random_state: int | np.random.RandomState | None = None,
    *,
    neighbors: tuple[np.ndarray, np.ndarray] | None = None,
) -> sp.csr_matrix:
    """The LSCP learnt similarity graph (eqs. 2-10), as a sparse symmetric affinity.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    constraints : Constraints, (must_link, cannot_link) pair or None
        Pairs that enter the local constraint error (eq. 5): only pairs ``(i, j)``
        with ``x_j`` among the neighbours of ``x_i`` affect the result. Their targets are
        the signed constraint matrix ``Y`` (+1 must-link, -1 cannot-link, times the
        pair weight).
    n_neighbors : int, default=10
        Neighbourhood size k (the paper's k = 10).
    lam : float, default=0.1
        Weight lambda of the local constraint error (0 ignores the constraints).
    mu : float, default=0.1
        Ridge weight mu; keeps every QP strictly convex.
    sigma : float, default=None
        Bandwidth of the Gaussian kernel. The paper does not state it; ``None`` uses the
        library's graph rule ``r`` = mean distance to the k-th nearest neighbour
        (:func:`spectralink.graph.sigma_from_distances`), which makes the kernel values
        between neighbours of order ``exp(-1/2)`` whatever the units of ``X``.
    kernel : {"gaussian", "linear"}, default="gaussian"
        ``"linear"`` reconstructs in input space (LNP's Gram matrix); then ``sigma`` is
        ignored.
    random_state : int, RandomState or None
        Seed of the approximate neighbour search used for large ``n``.
    neighbors : (dist, ind) pair, default=None
        Precomputed neighbours (``spectralink.neighbors.kneighbors`` output, self excluded),
        to reuse one search across several calls.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Symmetric, entries in [0, 1], zero diagonal; every row of the unsymmetrised
        matrix sums to 1, so all degrees are at least 1/2.

    References
    ----------
    Learning similarities for pairwise constraint propagation. Multimedia Tools and
    Applications 74 (2015), eqs. 2-10.
    Wang, F., & Zhang, C. (2008). Label propagation through linear neighborhoods.
    IEEE TKDE 20(1).
    """
    X = check_features(X)
    n = X.shape[0]
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, numbers.Integral):
        raise ValueError(f"n_neighbors must be an integer, got {n_neighbors!r}.")
    if not 1 <= n_neighbors < n:
        raise ValueError(
            f"n_neighbors={n_neighbors} must be at least 1 and smaller than n_samples={n}."
        )
    lam = _check_positive(lam, "lam", allow_zero=True)
    mu = _check_positive(mu, "mu")
    if kernel not in ("gaussian", "linear"):
        raise ValueError(f"kernel must be 'gaussian' or 'linear', got {kernel!r}.")
    cons = as_constraints(constraints, n)

    if neighbors is None:
        dist, ind = kneighbors(X, n_neighbors, random_state=random_state)
    else:
        dist, ind = (np.asarray(a) for a in neighbors)
        if dist.shape != (n, n_neighbors) or ind.shape != (n, n_neighbors):
            raise ValueError(
                f"neighbors must be two arrays of shape ({n}, {n_neighbors}), got "
                f"{dist.shape} and {ind.shape}."
            )
    if kernel == "gaussian":
        sigma = sigma_from_distances(dist) if sigma is None else _check_positive(sigma, "sigma")
    k = n_neighbors

    # targets Y_i(j) and indicators H_i(j) of the constraints inside each neighbourhood
    rows = np.repeat(np.arange(n), k)
    if cons.is_empty:
        y_nb = np.zeros((n, k))
    else:
        y_nb = pair_values(cons.signed_matrix, rows, ind.ravel()).reshape(n, k)
    h_nb = (y_nb != 0).astype(np.float64)

    weights = np.empty((n, k))
    batch = max(1, int(_BATCH_BYTES // (8 * k * max(X.shape[1], k))))
    eye = np.eye(k)
    for start in range(0, n, batch):
        sl = slice(start, min(start + batch, n))
        G = local_gram(
            X,
            ind[sl],
            dist[sl],
            centers=np.arange(sl.start, sl.stop),
            kernel=kernel,
            sigma=sigma if sigma else 1.0,
        )
        # eq. 8 without the common factor 2, which leaves the minimiser unchanged
        A = G + lam * h_nb[sl, :, None] * eye + mu * eye
        A = 0.5 * (A + A.transpose(0, 2, 1))
        b = -lam * h_nb[sl] * y_nb[sl]
        weights[sl] = simplex_qp(A, b)

    W = sp.csr_matrix((weights.ravel(), (rows, ind.ravel())), shape=(n, n))
    W.setdiag(0)
    W = ((W + W.T) * 0.5).tocsr()
    W.eliminate_zeros()
    W.sort_indices()
    return W
