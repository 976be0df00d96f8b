"""Similarity graphs: k-NN Gaussian affinity, the sigma rule, precomputed checks, Laplacians.

The graph every method of the CCSR/CCSKL family starts from (Li, Liu & Tang 2009;
Li & Liu 2009) is the symmetric "or" k-NN graph with Gaussian weights

    w_ij = exp(-||x_i - x_j||^2 / (2 sigma^2))   if j in N_k(i) or i in N_k(j), else 0,

with zero diagonal and the default sigma = r, the mean distance to the k-th nearest
neighbour; the papers scan the 9 values of :func:`sigma_grid`. Neighbours are exact
(scikit-learn) up to ``ann_threshold`` points and approximate (PyNNDescent) above it.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .exceptions import DisconnectedGraphWarning

__all__ = [
    "ANN_THRESHOLD",
    "DisconnectedGraphWarning",
    "adaptive_knn_affinity",
    "check_affinity",
    "check_connectivity",
    "degrees",
    "gaussian_knn_graph",
    "kneighbors",
    "knn_affinity",
    "normalized_adjacency",
    "normalized_laplacian",
    "sigma_from_distances",
    "sigma_grid",
    "stable_kneighbors",
]

#: Above this many points :func:`kneighbors` uses approximate neighbours by default.
ANN_THRESHOLD = 50_000


def kneighbors(
    X: np.ndarray,
    n_neighbors: int,
    *,
    method: str = "auto",
    random_state=None,
    ann_threshold: int = ANN_THRESHOLD,
) -> tuple[np.ndarray, np.ndarray]:
    """Distances and indices of the ``n_neighbors`` nearest neighbours of every row.

    The point itself is excluded. ``method`` is ``"exact"`` (scikit-learn), ``"approximate"``
    (PyNNDescent) or ``"auto"`` (exact up to ``ann_threshold`` points).

    Returns
    -------
    dist : ndarray of shape (n_samples, n_neighbors), ascending along rows
    ind : ndarray of shape (n_samples, n_neighbors)
    """
    n = X.shape[0]
    if not 1 <= n_neighbors < n:
        raise ValueError(
            f"n_neighbors={n_neighbors} must be at least 1 and smaller than the number of "
            f"samples ({n})."
        )
    if method not in ("auto", "exact", "approximate"):
        raise ValueError(f"method must be 'auto', 'exact' or 'approximate', got {method!r}.")
    if method == "auto":
        method = "approximate" if n > ann_threshold else "exact"
    if method == "approximate":
        return _kneighbors_nndescent(X, n_neighbors, random_state)
    from sklearn.neighbors import NearestNeighbors

    # ask for one more neighbour and drop self; exact duplicates may put self second
    nn = NearestNeighbors(n_neighbors=n_neighbors + 1).fit(X)
    dist, ind = nn.kneighbors(X)
    return _drop_self(dist, ind, n_neighbors)


def _drop_self(dist: np.ndarray, ind: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    rows = np.arange(ind.shape[0])[:, None]
    is_self = ind == rows
    # rows where self was not returned (many duplicates): drop the last neighbour instead
    missing = ~is_self.any(axis=1)
    is_self[missing, -1] = True
    keep = ~is_self
    # exactly one True per row in is_self after the fix-up; boolean mask preserves order
    first = np.argmax(is_self, axis=1)
    if np.any(is_self.sum(axis=1) != 1):
        keep = np.ones_like(is_self)
        keep[rows[:, 0], first] = False
    dist = dist[keep].reshape(ind.shape[0], k)
    ind = ind[keep].reshape(ind.shape[0], k)
    return dist, ind


def _kneighbors_nndescent(X, n_neighbors, random_state):
    try:
        from pynndescent import NNDescent
    except ImportError as exc:  # pragma: no cover - pynndescent is a dependency
        raise ImportError(
            "approximate neighbours need the 'pynndescent' package: pip install pynndescent"
        ) from exc
    seed = None if random_state is None else int(np.random.RandomState(random_state).randint(2**31))
    index = NNDescent(
        np.ascontiguousarray(X, dtype=np.float32),
        n_neighbors=n_neighbors + 1,
        random_state=seed,
        n_jobs=-1 if seed is None else 1,
        low_memory=True,
        compressed=True,
    )
    ind, dist = index.neighbor_graph
    return _drop_self(dist.astype(np.float64), ind.astype(np.int64), n_neighbors)


def sigma_from_distances(dist: np.ndarray) -> float:
    """The papers' scale r: the mean over points of the distance to the k-th neighbour."""
    r = float(np.mean(dist[:, -1]))
    if not np.isfinite(r) or r <= 0:
        raise ValueError(
            "every point coincides with its k-th nearest neighbour (mean k-NN distance is 0); "
            "remove duplicate points or pass sigma explicitly."
        )
    return r


def sigma_grid(r: float) -> np.ndarray:
    """The 9 bandwidths of CCSR/CCSKL: linspace(0.1r, r, 5) joined with linspace(r, 10r, 5)."""
    return np.unique(np.concatenate([np.linspace(0.1 * r, r, 5), np.linspace(r, 10 * r, 5)]))


def gaussian_knn_graph(dist: np.ndarray, ind: np.ndarray, sigma: float) -> sp.csr_matrix:
    """Symmetric "or" k-NN graph with weights exp(-d^2 / (2 sigma^2)) and zero diagonal."""
    if not (np.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be positive and finite, got {sigma!r}.")
    n, k = ind.shape
    rows = np.repeat(np.arange(n), k)
    vals = np.exp(-(dist.ravel() ** 2) / (2.0 * sigma**2))
    W = sp.csr_matrix((vals, (rows, ind.ravel())), shape=(n, n))
    # "or" symmetrisation: an edge found from either end gets the same Gaussian weight
    W = W.maximum(W.T).tocsr()
    W.setdiag(0)
    W.eliminate_zeros()
    W.sort_indices()
    return W


def knn_affinity(
    X: np.ndarray,
    n_neighbors: int = 20,
    sigma: float | None = None,
    *,
    method: str = "auto",
    random_state=None,
) -> sp.csr_matrix:
    """Symmetric "or" k-NN graph with Gaussian weights (sparse CSR, zero diagonal).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    n_neighbors : int, default=20
    sigma : float, default=None
        Gaussian bandwidth; ``None`` uses r, the mean distance to the k-th neighbour.
    method : {"auto", "exact", "approximate"}, default="auto"
        Neighbour search, see :func:`kneighbors`.
    random_state : int, RandomState or None
        Seed of the approximate search.

    References
    ----------
    Li, Z., Liu, J., & Tang, X. (2009). Constrained clustering via spectral regularization. CVPR.
    """
    dist, ind = kneighbors(X, n_neighbors, method=method, random_state=random_state)
    if sigma is None:
        sigma = sigma_from_distances(dist)
    return gaussian_knn_graph(dist, ind, sigma)


def check_affinity(A, *, name: str = "affinity") -> sp.csr_matrix:
    """Validate a precomputed affinity and return it as float64 CSR with zero diagonal.

    Raises ``ValueError`` unless ``A`` is square, finite, non-negative and symmetric.
    Self-loops are removed (the Laplacians here assume ``w_ii = 0``).
    """
    if sp.issparse(A):
        W = sp.csr_matrix(A, dtype=np.float64, copy=True)
        data = W.data
    else:
        W = np.asarray(A, dtype=np.float64) if not isinstance(A, np.ndarray) else A
        if W.ndim != 2:
            raise ValueError(f"a precomputed {name} must be a 2-d square matrix, got {W.ndim}-d.")
        data = W
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"a precomputed {name} must be square, got shape {W.shape}.")
    if not np.all(np.isfinite(data)):
        raise ValueError(f"the precomputed {name} contains NaN or infinite values.")
    if np.any(data < 0):
        raise ValueError(f"the precomputed {name} has negative entries; weights must be >= 0.")
    if not sp.issparse(W):
        W = sp.csr_matrix(W, dtype=np.float64)
    diff = abs(W - W.T)
    scale = max(abs(W).max() if W.nnz else 0.0, 1e-300)
    if diff.nnz and diff.max() > 1e-8 * scale:
        raise ValueError(
            f"the precomputed {name} is not symmetric (max |A - A.T| = {diff.max():.3g})."
        )
    W = ((W + W.T) * 0.5).tocsr()
    W.setdiag(0)
    W.eliminate_zeros()
    W.sort_indices()
    return W


def degrees(W: sp.spmatrix) -> np.ndarray:
    """Row sums of ``W`` as a flat float array."""
    return np.asarray(W.sum(axis=1)).ravel()


def positive_degrees(W: sp.spmatrix, method: str) -> np.ndarray:
    """Degrees of ``W``; ``ValueError`` naming ``method`` when a point has no edge.

    For the methods whose normalized cut divides by every vertex's degree (no self-loop
    substitute, unlike :func:`normalized_adjacency`).
    """
    d = degrees(W)
    if np.any(d <= 0):
        raise ValueError(
            f"{int(np.sum(d <= 0))} point(s) have no edge in the affinity graph; {method} needs "
            "every vertex weight (degree) positive. Connect or remove them."
        )
    return d


def check_connectivity(W: sp.spmatrix, *, warn: bool = True) -> tuple[int, np.ndarray]:
    """Connected components of ``W``; warn (``DisconnectedGraphWarning``) if more than one.

    Returns ``(n_components, labels)``.
    """
    n_comp, labels = connected_components(W, directed=False)
    if warn and n_comp > 1:
        sizes = np.bincount(labels)
        n_iso = int(np.sum(degrees(W) == 0))
        iso = f", {n_iso} isolated point(s) given a unit self-loop" if n_iso else ""
        warnings.warn(
            f"the affinity graph has {n_comp} connected components (largest {sizes.max()}, "
            f"smallest {sizes.min()}){iso}; the spectral embedding keeps the components "
            "apart (eigenvalue 0 is repeated). Increase n_neighbors or sigma to connect it.",
            DisconnectedGraphWarning,
            stacklevel=3,
        )
    return n_comp, labels


def _safe_degrees(W: sp.spmatrix) -> np.ndarray:
    d = degrees(W)
    # an isolated point gets a unit self-loop: its row of L is then e_i, it keeps its own
    # eigenvector instead of dividing by zero
    d[d <= 0] = 1.0
    return d


def normalized_adjacency(W: sp.spmatrix) -> tuple[sp.csr_matrix, np.ndarray]:
    """``S = D^{-1/2} W D^{-1/2}`` and the degrees ``d`` (isolated points: d = 1)."""
    d = _safe_degrees(W)
    s = 1.0 / np.sqrt(d)
    S = sp.csr_matrix(W.multiply(s[:, None]).multiply(s[None, :]))
    return S, d


def normalized_laplacian(W: sp.spmatrix) -> sp.csr_matrix:
    """The symmetric normalized Laplacian ``I - D^{-1/2} W D^{-1/2}`` (sparse CSR)."""
    S, _ = normalized_adjacency(W)
    return (sp.identity(S.shape[0], format="csr") - S).tocsr()


def stable_kneighbors(
    X: np.ndarray, n_neighbors: int, *, max_block_elements: int = 1 << 23
) -> tuple[np.ndarray, np.ndarray]:
    """Exact neighbours in the order of a stable sort of each point's distance column.

    Among equal distances the smaller index comes first; the point itself is excluded
    (its exact duplicates are neighbours at distance 0). Distances are float64 from
    direct differences, so duplicate rows and integer-valued features tie exactly.
    Rows are processed in blocks of at most ``max_block_elements`` distances: a BLAS
    distance block locates the candidates (every point within the k-th distance plus the
    rounding error of the expanded formula), which are then re-measured and sorted by
    (distance, index). Cost O(n^2 d) time, O(n + block) memory.

    Returns
    -------
    dist : ndarray of shape (n_samples, n_neighbors), ascending along rows
    ind : ndarray of shape (n_samples, n_neighbors)
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    k = int(n_neighbors)
    if not 1 <= k < n:
        raise ValueError(
            f"n_neighbors={k} must be at least 1 and smaller than the number of samples ({n})."
        )
    Xc = X - X.mean(axis=0)  # distances are unchanged; centring shrinks rounding errors
    sq = np.einsum("ij,ij->i", Xc, Xc)
    # within a row, ||x_i - x_j||^2 - ||x_i||^2 = ||x_j||^2 - 2 <x_i, x_j>: one matrix product
    left = np.hstack([Xc, np.ones((n, 1))])
    right = np.hstack([-2.0 * Xc, sq[:, None]]).T.copy()
    # twice a bound on the rounding error of the expanded form (see the candidate test)
    err = 8.0 * (d + 2) * np.finfo(np.float64).eps
    dist = np.empty((n, k))
    ind = np.empty((n, k), dtype=np.int64)
    step = max(1, min(n, max_block_elements // n))
    m = min(k + 1, n - 1)  # one more than needed: is the k-th distance tied beyond k?
    for s in range(0, n, step):
        e = min(n, s + step)
        rows = np.arange(s, e)
        key = left[s:e] @ right
        key[rows - s, rows] = np.inf
        part = np.argpartition(key, m - 1, axis=1)[:, :m]
        vals = np.take_along_axis(key, part, axis=1)
        srt = np.sort(vals, axis=1)
        tol = err * (sq[s:e] + sq.max()) + 1e-300
        # rows whose (k+1)-th key may tie the k-th under rounding: take every candidate
        slow = srt[:, m - 1] <= srt[:, k - 1] + tol if m > k else np.zeros(e - s, bool)
        r = np.repeat(rows[~slow], k)
        c = part[~slow, :k].ravel()
        for i in np.flatnonzero(slow):
            cand = np.flatnonzero(key[i] <= srt[i, k - 1] + tol[i])
            r = np.concatenate([r, np.full(len(cand), s + i)])
            c = np.concatenate([c, cand])
        diff = X[r] - X[c]
        exact = np.einsum("ij,ij->i", diff, diff)
        order = np.lexsort((c, exact, r))  # by row, then distance, then index
        r, c, exact = r[order], c[order], exact[order]
        pos = np.searchsorted(r, rows)[:, None] + np.arange(k)[None, :]
        ind[s:e] = c[pos]
        dist[s:e] = np.sqrt(exact[pos])
    return dist, ind


def adaptive_knn_affinity(
    X: np.ndarray,
    n_neighbors: int = 10,
    *,
    method: str = "auto",
    random_state=None,
    ann_threshold: int = ANN_THRESHOLD,
) -> sp.csr_matrix:
    """Symmetric k-NN graph with adaptive Gaussian weights (Bühler & Hein 2009).

    ``w_ij = max(s_i(j), s_j(i))`` where ``s_i(j) = exp(-4 ||x_i - x_j||^2 / sigma_i^2)``
    for ``j`` among the ``n_neighbors`` nearest neighbours of ``i`` (0 otherwise) and
    ``sigma_i`` is the distance from ``x_i`` to its ``n_neighbors``-th neighbour. Zero
    diagonal. This is the graph of COSC (Rangapuram & Hein 2012).

    With exact neighbours (``method="exact"``, or ``"auto"`` up to ``ann_threshold``
    points) it is exactly the paper's construction, ties included: the neighbours of
    ``i`` are the first ``n_neighbors`` points of a stable sort of ``i``'s distance
    column (equal distances: smaller index first, :func:`stable_kneighbors`), then
    max-symmetrisation. Above the threshold the neighbours are approximate
    (:func:`kneighbors`).

    References
    ----------
    Bühler, T., & Hein, M. (2009). Spectral clustering based on the graph p-Laplacian. ICML.
    """
    if method not in ("auto", "exact", "approximate"):
        raise ValueError(f"method must be 'auto', 'exact' or 'approximate', got {method!r}.")
    n = X.shape[0]
    if method == "exact" or (method == "auto" and n <= ann_threshold):
        dist, ind = stable_kneighbors(X, n_neighbors)
    else:
        dist, ind = kneighbors(
            X, n_neighbors, method=method, random_state=random_state, ann_threshold=ann_threshold
        )
    sig = dist[:, -1].copy()
    if np.any(sig <= 0):
        pos = sig[sig > 0]
        if pos.size == 0:
            raise ValueError(
                "every point coincides with its k-th nearest neighbour; remove duplicate "
                "points or increase n_neighbors."
            )
        # a point with >= k exact duplicates: borrow the smallest positive scale
        sig[sig <= 0] = pos.min()
    n, k = ind.shape
    vals = np.exp(-4.0 * dist**2 / sig[:, None] ** 2).ravel()
    W = sp.csr_matrix((vals, (np.repeat(np.arange(n), k), ind.ravel())), shape=(n, n))
    W = W.maximum(W.T).tocsr()
    W.setdiag(0)
    W.eliminate_zeros()
    W.sort_indices()
    return W
