"""Landmark (sparse-coding) graph of Chen & Cai's LSC, as used by SCACS.

Li, Xia, Shan & Liu (2015), Scalable constrained spectral clustering, eq. 3 and §5.2
(the graph), after Chen & Cai (2011), Large scale spectral clustering with
landmark-based representation:

* ``p`` landmarks ``u_1..u_p`` (random data points, or k-means centres);
* ``Z`` (p x n): column ``j`` holds the Gaussian kernel weights of ``x_j`` to its ``r``
  nearest landmarks, normalised to sum to one (eq. 3);
* landmark degrees ``d = Z 1_n``, ``Z_hat = D^{-1/2} Z`` and the p x p matrix
  ``S_hat = Z_hat Z_hat^T``. The n x n graph ``G_hat = Z_hat^T Z_hat`` has unit row sums
  and is never formed.

Everything runs over row chunks of ``X`` so that memory stays O(n r + p^2 + chunk * p):
the n x p distance matrix is never held at once, even for the SCACS bandwidth rule
(mean distance between all instances and all landmarks). A dask array ``X`` is
processed block by block on the dask cluster (see :mod:`spectralink._dask`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.utils import check_random_state

from ._dask import is_dask_array
from ._landmark_blocks import (
    DEFAULT_CHUNK,
    SIGMA_RULES,
    degree_block,
    embed_block,
    gaussian_code_weights,
    gram_block,
    nearest_block,
    sigma_from_rule,
    sparse_code,
)
from .neighbors import search
from .parallel import limit_threads
from .progress import stage

__all__ = [
    "SIGMA_RULES",
    "LandmarkGraph",
    "build_landmark_graph",
    "embed",
    "encode",
    "gaussian_code_weights",
    "landmark_degrees",
    "landmark_gram",
    "landmark_spectrum",
    "nearest_landmarks",
    "select_landmarks",
    "sigma_from_rule",
    "sparse_code",
]


@dataclass
class LandmarkGraph:
    """The landmark representation of ``n`` points (eq. 3 of SCACS).

    Attributes
    ----------
    landmarks : ndarray of shape (p, d)
        Landmarks with non-zero degree (zero-degree ones are dropped, §5.7).
    landmark_indices : ndarray of shape (p,) or None
        Rows of ``X`` the landmarks were taken from (``None`` for k-means centres).
    nearest : ndarray of shape (n, r), int
        Indices (into ``landmarks``) of every point's ``r`` nearest landmarks.
    weights : ndarray of shape (n, r)
        The non-zero entries of ``Z``: ``Z[nearest[j, l], j] = weights[j, l]``.
    sigma : float
        Gaussian bandwidth used.
    sigma_rule : str
        How ``sigma`` was set (one of :data:`SIGMA_RULES`, or ``"given"``).
    degrees : ndarray of shape (p,)
        Landmark degrees ``d = Z 1_n`` (all > 0).
    S_hat : ndarray of shape (p, p)
        ``Z_hat Z_hat^T`` with ``Z_hat = D^{-1/2} Z``.
    n_dropped : int
        Landmarks removed because no point had them among its ``r`` nearest.

    With a dask ``X`` the ``nearest`` and ``weights`` are dask arrays (persisted on the
    cluster); every other field is a NumPy array.
    """

    landmarks: np.ndarray
    landmark_indices: np.ndarray | None
    nearest: np.ndarray
    weights: np.ndarray
    sigma: float
    sigma_rule: str
    degrees: np.ndarray
    S_hat: np.ndarray
    n_dropped: int = 0
    _spectrum: tuple | None = field(default=None, repr=False, compare=False)

    def spectrum(self) -> tuple[np.ndarray, np.ndarray]:
        """:func:`landmark_spectrum` of ``S_hat``, computed once per graph."""
        if self._spectrum is None:
            self._spectrum = landmark_spectrum(self.S_hat)
        return self._spectrum

    @property
    def n_landmarks(self) -> int:
        return self.landmarks.shape[0]

    @property
    def n_samples(self) -> int:
        return self.nearest.shape[0]

    def without_points(self) -> LandmarkGraph:
        """The same graph without its per-point code (``nearest``, ``weights`` keep their
        width and no row): all :func:`encode` needs, small enough to ship to workers."""
        r = self.nearest.shape[1]
        return replace(
            self,
            nearest=np.zeros((0, r), dtype=np.int64),
            weights=np.zeros((0, r), dtype=np.float64),
        )

    @property
    def Z(self) -> sp.csc_matrix:
        """The sparse code ``Z`` (p x n, each column sums to one); in-core graphs only."""
        return sparse_code(np.asarray(self.nearest), np.asarray(self.weights), self.n_landmarks)

    @property
    def Z_hat(self) -> sp.csc_matrix:
        """``D^{-1/2} Z`` (p x n)."""
        return sp.csc_matrix(sp.diags(1.0 / np.sqrt(self.degrees)) @ self.Z)

    @property
    def sqrt_degrees(self) -> np.ndarray:
        """``d^{1/2} = Z_hat 1_n``: the trivial direction (``S_hat d^{1/2} = d^{1/2}``)."""
        return np.sqrt(self.degrees)


# ------------------------------------------------------------------ landmark choice
def select_landmarks(
    X: ArrayLike,
    n_landmarks: int,
    *,
    init: str = "random",
    random_state: int | np.random.RandomState | None = None,
    kmeans_sample: int = 20_000,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Choose ``p`` landmarks: random data points (LSC-R, SCACS) or k-means centres (LSC-K).

    ``init="kmeans"`` runs one k-means (k-means++, 20 Lloyd iterations) on at most
    ``kmeans_sample`` random rows, so its cost does not grow with ``n``. ``X`` may be a
    NumPy or a dask array; only the chosen rows are read.

    Returns
    -------
    landmarks : ndarray of shape (p, d), float64
    indices : ndarray of shape (p,) (sorted row indices) or None for k-means centres
    """
    n = X.shape[0]
    rng = check_random_state(random_state)
    if init == "random":
        idx = np.sort(rng.choice(n, size=n_landmarks, replace=False))
        return _take_rows(X, idx), idx
    if init == "kmeans":
        from sklearn.cluster import KMeans

        m = min(n, max(kmeans_sample, n_landmarks))
        idx = np.sort(rng.choice(n, size=m, replace=False))
        sample = _take_rows(X, idx)
        km = KMeans(n_landmarks, n_init=1, max_iter=20, random_state=rng.randint(2**31 - 1))
        with limit_threads(60.0 * m * n_landmarks * sample.shape[1]):
            return km.fit(sample).cluster_centers_.astype(np.float64), None
    raise ValueError(f"landmark init must be 'random' or 'kmeans', got {init!r}.")


def _take_rows(X, idx: np.ndarray) -> np.ndarray:
    rows = X[idx]
    if hasattr(rows, "compute"):
        rows = rows.compute()
    return np.asarray(rows, dtype=np.float64)


def _chunks(n: int, chunk_size: int):
    for start in range(0, n, chunk_size):
        yield slice(start, min(n, start + chunk_size))


# ------------------------------------------------------------------ in-core pieces
def nearest_landmarks(
    X: np.ndarray, landmarks: np.ndarray, n_nearest: int, *, chunk_size: int = DEFAULT_CHUNK
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """The ``r`` nearest landmarks of every row of ``X`` (chunked over rows).

    Returns
    -------
    nearest : ndarray of shape (n, r), ascending distance
    sqdist : ndarray of shape (n, r), squared distances
    mean_distance : float
        Mean Euclidean distance over all n x p (point, landmark) pairs (SCACS sigma).
    mean_squared_distance : float
        Mean squared distance over all pairs (LSC sigma).
    """
    n, p = X.shape[0], landmarks.shape[0]
    ind = np.empty((n, n_nearest), dtype=np.int64)
    sq = np.empty((n, n_nearest))
    s1 = s2 = 0.0
    for sl in _chunks(n, chunk_size):
        ind[sl], sq[sl], a, b = nearest_block(X[sl], landmarks, n_nearest)
        s1 += a
        s2 += b
    return ind, sq, s1 / (n * p), s2 / (n * p)


def landmark_degrees(
    nearest: np.ndarray, weights: np.ndarray, n_landmarks: int, *, chunk_size: int = 1 << 20
) -> np.ndarray:
    """``d = Z 1_n``: every landmark's total weight."""
    d = np.zeros(n_landmarks)
    for sl in _chunks(nearest.shape[0], chunk_size):
        d += degree_block(nearest[sl], weights[sl], n_landmarks)
    return d


def landmark_gram(
    nearest: np.ndarray, weights: np.ndarray, n_landmarks: int, *, chunk_size: int = 1 << 18
) -> np.ndarray:
    """``Z Z^T`` (p x p, dense), accumulated over chunks of points."""
    G = np.zeros((n_landmarks, n_landmarks))
    for sl in _chunks(nearest.shape[0], chunk_size):
        G += gram_block(nearest[sl], weights[sl], n_landmarks)
    return G


def embed(
    nearest: np.ndarray, weights: np.ndarray, M: np.ndarray, *, chunk_size: int = 1 << 16
) -> np.ndarray:
    """``Z^T M`` (n x m) for a p x m matrix ``M``, chunked over points.

    With ``M = D^{-1/2} V`` this is ``Z_hat^T V``: how SCACS (step 11) and LSC-R map
    p-dimensional solutions back to the points.
    """
    M = np.asarray(M, dtype=np.float64)
    out = np.empty((nearest.shape[0], M.shape[1]))
    for sl in _chunks(nearest.shape[0], chunk_size):
        out[sl] = embed_block(nearest[sl], weights[sl], M)
    return out


def encode(
    X: ArrayLike, graph: LandmarkGraph, *, chunk_size: int = DEFAULT_CHUNK
) -> tuple[np.ndarray, np.ndarray]:
    """Sparse code (nearest landmarks, eq. 3 weights) of new points with a fitted graph."""
    if is_dask_array(X):
        from ._dask import dask_encode

        return dask_encode(X, graph, chunk_size=chunk_size)
    r = graph.nearest.shape[1]
    sq, ind = search(X, graph.landmarks, r, squared=True)
    return ind, gaussian_code_weights(sq, graph.sigma)


# ------------------------------------------------------------------ the graph
def build_landmark_graph(
    X: ArrayLike,
    n_landmarks: int = 500,
    n_nearest: int = 3,
    *,
    init: str = "random",
    sigma: float | None = None,
    sigma_rule: str = "mean_distance",
    random_state: int | np.random.RandomState | None = None,
    chunk_size: int = DEFAULT_CHUNK,
) -> LandmarkGraph:
    """Landmarks, sparse code ``Z`` (eq. 3), degrees and ``S_hat`` in one chunked pass.

    Parameters
    ----------
    X : ndarray or dask array of shape (n_samples, n_features)
    n_landmarks : int, default=500
        Number of landmarks ``p`` (at most ``n_samples``).
    n_nearest : int, default=3
        Non-zeros per column of ``Z`` (``r``), at most ``p``.
    init : {"random", "kmeans"}, default="random"
        Landmark choice, see :func:`select_landmarks`.
    sigma : float, default=None
        Gaussian bandwidth; ``None`` applies ``sigma_rule``.
    sigma_rule : {"mean_distance", "mean_squared_distance"}
        SCACS's rule (mean distance between all instances and all landmarks) or Cai's
        LSC code (mean squared distance).
    random_state : int, RandomState or None
    chunk_size : int
        Rows of ``X`` per chunk (in-core). Dask arrays keep their own row chunks.

    Returns
    -------
    LandmarkGraph
        Zero-degree landmarks are dropped and the indices renumbered (§5.7), so every
        degree is positive and ``D^{-1/2}`` is finite.

    References
    ----------
    Chen, X., & Cai, D. (2011). Large scale spectral clustering with landmark-based
    representation. AAAI.
    Li, J., Xia, Y., Shan, Z., & Liu, Y. (2015). Scalable constrained spectral clustering.
    IEEE TKDE 27(2).
    """
    n = X.shape[0]
    p, r = _check_sizes(n, n_landmarks, n_nearest)
    if sigma is not None and not (np.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be positive and finite, got {sigma!r}.")
    if sigma is None and sigma_rule not in SIGMA_RULES:
        raise ValueError(f"sigma_rule must be one of {SIGMA_RULES}, got {sigma_rule!r}.")
    with stage("graph") as st:
        st.detail = f"landmarks: {p} ({init}), {r} nearest per point"
        U, idx = select_landmarks(X, p, init=init, random_state=random_state)
        if is_dask_array(X):
            from ._dask import dask_landmark_code

            ind, w, d, G, sig = dask_landmark_code(X, U, r, sigma, sigma_rule)
        else:
            ind, sq, mean_d, mean_sq = nearest_landmarks(X, U, r, chunk_size=chunk_size)
            sig = sigma if sigma is not None else sigma_from_rule(mean_d, mean_sq, sigma_rule)
            w = gaussian_code_weights(sq, sig)
            d = landmark_degrees(ind, w, p)
            G = landmark_gram(ind, w, p)
        rule = "given" if sigma is not None else sigma_rule
        return _finish_graph(U, idx, ind, w, d, G, sig, rule)


def _check_sizes(n: int, n_landmarks, n_nearest) -> tuple[int, int]:
    for name, value in (("n_landmarks", n_landmarks), ("n_nearest", n_nearest)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    p = min(int(n_landmarks), n)
    if n_nearest > p:
        raise ValueError(f"n_nearest={n_nearest} exceeds the number of landmarks ({p}).")
    return p, int(n_nearest)


def _finish_graph(U, idx, ind, w, d, G, sigma, rule) -> LandmarkGraph:
    """Drop zero-degree landmarks (§5.7), then ``S_hat = D^{-1/2} Z Z^T D^{-1/2}``."""
    keep = d > 0
    n_dropped = int((~keep).sum())
    if n_dropped:
        remap = np.cumsum(keep) - 1
        U, d, G = U[keep], d[keep], G[np.ix_(keep, keep)]
        idx = idx[keep] if idx is not None else None
        ind = _remap(ind, remap)
    s = 1.0 / np.sqrt(d)
    S_hat = G * s[:, None] * s[None, :]
    S_hat = (S_hat + S_hat.T) / 2.0
    return LandmarkGraph(U, idx, ind, w, float(sigma), rule, d, S_hat, n_dropped)


def _remap(ind, remap: np.ndarray):
    if is_dask_array(ind):
        return ind.map_blocks(lambda b: remap[b], dtype=ind.dtype)
    return remap[ind]


def landmark_spectrum(S_hat: np.ndarray, *, rtol: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
    """Eigenpairs of ``S_hat`` restricted to its range (§5.7, singular ``S_hat``).

    Eigenvalues below ``rtol * max`` are dropped. With ``E`` the kept eigenvectors and
    ``Lambda`` their eigenvalues, ``B = Z_hat^T E Lambda^{-1/2}`` is an orthonormal basis
    of ``range(Z_hat^T)``, the space SCACS and LSC-R search (``v = Z_hat^T u``).

    Returns
    -------
    eigenvalues : ndarray of shape (q,), descending, in (0, 1]
    eigenvectors : ndarray of shape (p, q)
    """
    with limit_threads(9.0 * S_hat.shape[0] ** 3):  # all eigenpairs: about 9 p^3 operations
        vals, vecs = la.eigh(S_hat)
    vals, vecs = vals[::-1], vecs[:, ::-1]
    keep = vals > rtol * max(vals[0], 0.0)
    if not keep.any():
        raise ValueError("S_hat is zero: the landmark graph carries no information.")
    return np.minimum(vals[keep], 1.0), vecs[:, keep]
