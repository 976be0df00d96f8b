"""Similarity graphs: k-NN Gaussian affinity, the sigma rule, precomputed checks, Laplacians.

The graph every method of the CCSR/CCSKL family starts from (Li, Liu & Tang 2009;
Li & Liu 2009) is the symmetric "or" k-NN graph with Gaussian weights

    w_ij = exp(-||x_i - x_j||^2 / (2 sigma^2))   if j in N_k(i) or i in N_k(j), else 0,

with zero diagonal and the default sigma = r, the mean distance to the k-th nearest
neighbour; the papers scan the 9 values of :func:`sigma_grid`. Neighbours come from
:func:`spectralink.neighbors.kneighbors` (re-exported here): exact up to ``ANN_THRESHOLD``
points, approximate with a calibrated recall above it.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.sparse.csgraph import connected_components

from .exceptions import DisconnectedGraphWarning, import_extra, one_line
from .neighbors import ANN_THRESHOLD, kneighbors

__all__ = [
    "ANN_THRESHOLD",
    "DisconnectedGraphWarning",
    "adaptive_knn_affinity",
    "adaptive_knn_cross_affinity",
    "adaptive_knn_graph",
    "adaptive_scales",
    "check_affinity",
    "check_cross_affinity",
    "check_connectivity",
    "degrees",
    "gaussian_knn_graph",
    "gaussian_weights",
    "kneighbors",
    "kneighbors_query",
    "knn_affinity",
    "knn_cross_affinity",
    "normalized_adjacency",
    "normalized_laplacian",
    "safe_degrees",
    "sigma_from_distances",
    "sigma_grid",
]


def kneighbors_query(
    X_fit: np.ndarray,
    X_new: np.ndarray,
    n_neighbors: int,
    *,
    method: str = "auto",
    random_state: int | np.random.RandomState | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Distances and indices of the ``n_neighbors`` rows of ``X_fit`` nearest to each row of
    ``X_new`` (the out-of-sample counterpart of :func:`kneighbors`).

    Nothing is excluded: a row of ``X_new`` equal to a row of ``X_fit`` finds it at
    distance 0. ``method`` is ``"auto"`` or ``"exact"`` (faiss brute force with float64
    re-ranking and ties by the smaller index, :func:`spectralink.neighbors.search`) or
    ``"nndescent"`` (a PyNNDescent index of ``X_fit`` built on every call; optional extra
    ``spectralink[pynndescent]``, compiled by numba in every new process). ``random_state``
    only seeds ``"nndescent"``.

    Returns
    -------
    dist : ndarray of shape (n_new, n_neighbors), ascending along rows
    ind : ndarray of shape (n_new, n_neighbors), indices into ``X_fit``
    """
    n = X_fit.shape[0]
    if not 1 <= n_neighbors <= n:
        raise ValueError(
            f"n_neighbors={n_neighbors} must be at least 1 and at most the number of "
            f"fitted samples ({n})."
        )
    if method not in ("auto", "exact", "nndescent"):
        raise ValueError(f"method must be 'auto', 'exact' or 'nndescent', got {method!r}.")
    if method == "nndescent":
        NNDescent = import_extra("pynndescent", "pynndescent", "method='nndescent'").NNDescent
        seed = (
            None if random_state is None
            else int(np.random.RandomState(random_state).randint(2**31))
        )  # fmt: skip
        index = NNDescent(
            np.ascontiguousarray(X_fit, dtype=np.float32),
            n_neighbors=min(max(n_neighbors + 1, 15), n - 1),
            random_state=seed,
            low_memory=True,
        )
        ind, dist = index.query(np.ascontiguousarray(X_new, dtype=np.float32), k=n_neighbors)
        return dist.astype(np.float64), ind.astype(np.int64)
    from .neighbors import search

    return search(X_new, X_fit, n_neighbors)


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


def gaussian_weights(dist: np.ndarray, sigma: float) -> np.ndarray:
    """The Gaussian weights ``exp(-d^2 / (2 sigma^2))`` of distances ``d``."""
    return np.exp(-(dist**2) / (2.0 * sigma**2))


def gaussian_knn_graph(dist: np.ndarray, ind: np.ndarray, sigma: float) -> sp.csr_matrix:
    """Symmetric "or" k-NN graph with weights exp(-d^2 / (2 sigma^2)) and zero diagonal."""
    if not (np.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be positive and finite, got {sigma!r}.")
    n, k = ind.shape
    rows = np.repeat(np.arange(n), k)
    cols = ind.ravel()
    # a point found among its own neighbours is no edge; dropped before the matrix is built
    # (setdiag on a CSR matrix changes its sparsity structure, which older SciPy warns about)
    off = rows != cols
    vals = gaussian_weights(dist.ravel()[off], sigma)
    W = sp.csr_matrix((vals, (rows[off], cols[off])), shape=(n, n))
    # "or" symmetrisation: an edge found from either end gets the same Gaussian weight
    W = W.maximum(W.T).tocsr()
    W.eliminate_zeros()
    W.sort_indices()
    return W


def knn_affinity(
    X: np.ndarray,
    n_neighbors: int = 20,
    sigma: float | None = None,
    *,
    method: str = "auto",
    random_state: int | np.random.RandomState | None = None,
) -> sp.csr_matrix:
    """Symmetric "or" k-NN graph with Gaussian weights (sparse CSR, zero diagonal).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    n_neighbors : int, default=20
    sigma : float, default=None
        Gaussian bandwidth; ``None`` uses r, the mean distance to the k-th neighbour.
    method : {"auto", "exact", "approximate", "nndescent", "sklearn"}, default="auto"
        Neighbour search, see :func:`spectralink.neighbors.kneighbors`.
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


def check_affinity(A: ArrayLike, *, name: str = "affinity") -> sp.csr_matrix:
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


def check_connectivity(
    W: sp.spmatrix, *, n_clusters: int | None = None, warn: bool = True
) -> tuple[int, np.ndarray]:
    """Connected components of ``W``; warn (``DisconnectedGraphWarning``) if more than one.

    With at most ``n_clusters`` components the warning is information (each component
    will lie in clusters of its own: well separated clusters are often exactly this);
    with more, or ``n_clusters`` unknown, it advises connecting the graph.

    Returns ``(n_components, labels)``.
    """
    n_comp, labels = connected_components(W, directed=False)
    if warn and n_comp > 1:
        sizes = np.bincount(labels)
        n_iso = int(np.sum(degrees(W) == 0))
        iso = f", {n_iso} isolated point(s) given a unit self-loop" if n_iso else ""
        found = (
            f"the affinity graph has {n_comp} connected components (largest {sizes.max()}, "
            f"smallest {sizes.min()}){iso}"
        )
        if n_clusters is not None and n_comp <= n_clusters:
            message = (
                f"{found}, at most the {n_clusters} clusters asked for: no cluster will "
                "span two components."
            )
        else:
            more = f", more than the {n_clusters} clusters asked for" if n_clusters else ""
            message = (
                f"{found}{more}; the embedding keeps them apart: increase n_neighbors or "
                "sigma to connect it."
            )
        warnings.warn(one_line(message), DisconnectedGraphWarning, stacklevel=3)
    return n_comp, labels


def safe_degrees(W: sp.spmatrix) -> np.ndarray:
    """Degrees of ``W`` with isolated points given 1 (a unit self-loop), as used by
    :func:`normalized_adjacency`."""
    d = degrees(W)
    # an isolated point gets a unit self-loop: its row of L is then e_i, it keeps its own
    # eigenvector instead of dividing by zero
    d[d <= 0] = 1.0
    return d


def normalized_adjacency(W: sp.spmatrix) -> tuple[sp.csr_matrix, np.ndarray]:
    """``S = D^{-1/2} W D^{-1/2}`` and the degrees ``d`` (isolated points: d = 1)."""
    d = safe_degrees(W)
    s = 1.0 / np.sqrt(d)
    S = sp.csr_matrix(W.multiply(s[:, None]).multiply(s[None, :]))
    return S, d


def normalized_laplacian(W: sp.spmatrix) -> sp.csr_matrix:
    """The symmetric normalized Laplacian ``I - D^{-1/2} W D^{-1/2}`` (sparse CSR)."""
    S, _ = normalized_adjacency(W)
    return (sp.identity(S.shape[0], format="csr") - S).tocsr()


def adaptive_knn_affinity(
    X: np.ndarray,
    n_neighbors: int = 10,
    *,
    method: str = "auto",
    random_state: int | np.random.RandomState | None = None,
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
    column (equal distances: smaller index first, :func:`kneighbors`'s exact search), then
    max-symmetrisation. Above the threshold the neighbours are approximate
    (:func:`kneighbors`).

    References
    ----------
    Bühler, T., & Hein, M. (2009). Spectral clustering based on the graph p-Laplacian. ICML.
    """
    dist, ind = kneighbors(
        X, n_neighbors, method=method, random_state=random_state, ann_threshold=ann_threshold
    )
    return adaptive_knn_graph(dist, ind, adaptive_scales(dist))


def adaptive_scales(dist: np.ndarray) -> np.ndarray:
    """The per-point scales ``sigma_i`` of :func:`adaptive_knn_affinity`: the distance to
    the k-th neighbour (the last column of ``dist``)."""
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
    return sig


def adaptive_knn_graph(dist: np.ndarray, ind: np.ndarray, scales: np.ndarray) -> sp.csr_matrix:
    """The graph of :func:`adaptive_knn_affinity` from neighbours and per-point scales."""
    n, k = ind.shape
    vals = np.exp(-4.0 * dist**2 / scales[:, None] ** 2).ravel()
    W = sp.csr_matrix((vals, (np.repeat(np.arange(n), k), ind.ravel())), shape=(n, n))
    W = W.maximum(W.T).tocsr()
    W.setdiag(0)
    W.eliminate_zeros()
    W.sort_indices()
    return W


# ------------------------------------------------------------------ out-of-sample graphs
def _cross_csr(vals: np.ndarray, ind: np.ndarray, n_fit: int) -> sp.csr_matrix:
    n_new, k = ind.shape
    C = sp.csr_matrix(
        (vals.ravel(), (np.repeat(np.arange(n_new), k), ind.ravel())), shape=(n_new, n_fit)
    )
    C.sort_indices()
    return C


def knn_cross_affinity(
    X_fit: np.ndarray,
    X_new: np.ndarray,
    n_neighbors: int,
    sigma: float,
    *,
    method: str = "auto",
    random_state: int | np.random.RandomState | None = None,
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Edges from new points to the training points of a :func:`knn_affinity` graph.

    Every row of ``X_new`` is linked to its ``n_neighbors`` nearest rows of ``X_fit`` with
    the graph's Gaussian weights ``exp(-d^2 / (2 sigma^2))`` (``sigma`` the fitted graph's
    bandwidth, not re-estimated).

    Returns
    -------
    C : scipy.sparse.csr_matrix of shape (n_new, n_fit)
    nearest : ndarray of shape (n_new,)
        Index of each new point's nearest training point.
    """
    dist, ind = kneighbors_query(
        X_fit, X_new, n_neighbors, method=method, random_state=random_state
    )
    return _cross_csr(gaussian_weights(dist, sigma), ind, X_fit.shape[0]), ind[:, 0]


def adaptive_knn_cross_affinity(
    X_fit: np.ndarray,
    X_new: np.ndarray,
    n_neighbors: int,
    scales: np.ndarray,
    *,
    method: str = "auto",
    random_state: int | np.random.RandomState | None = None,
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Edges from new points to the training points of an :func:`adaptive_knn_affinity` graph.

    ``w(x, x_j) = max(s_x(j), s_j(x))`` over the ``n_neighbors`` nearest training points
    ``x_j`` of ``x``, as in the fitted graph: ``s_x(j) = exp(-4 d^2 / sigma_x^2)`` with
    ``sigma_x`` the distance from ``x`` to its ``n_neighbors``-th training neighbour, and
    ``s_j(x) = exp(-4 d^2 / sigma_j^2)`` (``scales``, the fitted ``sigma_j``) when ``x``
    would be among the neighbours of ``x_j`` (``d <= sigma_j``), else 0.

    Returns ``(C, nearest)`` as :func:`knn_cross_affinity`.
    """
    dist, ind = kneighbors_query(
        X_fit, X_new, n_neighbors, method=method, random_state=random_state
    )
    sig_new = dist[:, -1].copy()
    # a new point with n_neighbors training duplicates: the smallest fitted scale
    sig_new[sig_new <= 0] = scales.min()
    own = np.exp(-4.0 * dist**2 / sig_new[:, None] ** 2)
    sig_fit = scales[ind]
    theirs = np.where(dist <= sig_fit, np.exp(-4.0 * dist**2 / sig_fit**2), 0.0)
    return _cross_csr(np.maximum(own, theirs), ind, X_fit.shape[0]), ind[:, 0]


def check_cross_affinity(A: ArrayLike, n_fit: int) -> sp.csr_matrix:
    """Validate precomputed affinities of new points to ``n_fit`` training points.

    ``A`` is dense or sparse of shape ``(n_new, n_fit)``, finite and non-negative; it is
    returned as float64 CSR.
    """
    if A is None:
        raise ValueError(
            "X is None; with affinity='precomputed' predict takes the affinities of the new "
            f"points to the {n_fit} training points, shape (n_new, {n_fit})."
        )
    if sp.issparse(A):
        C = sp.csr_matrix(A, dtype=np.float64, copy=True)
        data = C.data
    else:
        try:
            C = np.asarray(A, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"the precomputed affinities are not numeric: {exc}") from None
        data = C
    if C.ndim != 2 or C.shape[1] != n_fit or C.shape[0] < 1:
        raise ValueError(
            "with affinity='precomputed' predict takes the affinities of the new points to "
            f"the {n_fit} training points, an array of shape (n_new, {n_fit}); got shape "
            f"{C.shape}."
        )
    if not np.all(np.isfinite(data)):
        raise ValueError("the precomputed affinities contain NaN or infinite values.")
    if np.any(data < 0):
        raise ValueError("the precomputed affinities have negative entries; weights must be >= 0.")
    C = sp.csr_matrix(C)
    C.eliminate_zeros()
    C.sort_indices()
    return C
