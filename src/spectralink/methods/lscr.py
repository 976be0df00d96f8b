"""LSC-R: landmark-based spectral clustering with random landmarks (Chen & Cai, AAAI 2011).

The unconstrained baseline of SCACS (Li et al., TKDE 2015, §5): the landmark graph
``G_hat = Z_hat^T Z_hat`` of eq. 3 (:mod:`spectralink.landmarks`), whose leading
eigenvectors are the left singular vectors of ``Z_hat^T``, computed from the p x p
eigenproblem ``S_hat a = s a`` as ``b = Z_hat^T a / sqrt(s)``. As in Cai's code the first
(trivial, constant) vector is dropped, ``k`` are kept, rows are normalised and k-means
clusters them.

The estimator machinery it shares with SCACS is in :mod:`._landmark`.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as la

from .. import landmarks as lm
from ..constraints import Constraints
from ..spectral import sign_flip
from ._landmark import CLUSTER_DOC, LandmarkClustering

__all__ = ["LSCR", "lscr_embedding"]


def lscr_embedding(graph: lm.LandmarkGraph, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """The LSC p x k map ``M`` (``Z^T M`` is the embedding) and its eigenvalues.

    Top ``k + 1`` eigenpairs ``(s, a)`` of ``S_hat``; the first (trivial) is dropped and
    ``M = D^{-1/2} a / sqrt(s)`` so that ``Z^T M = Z_hat^T a / sqrt(s)``: unit left
    singular vectors of ``Z_hat^T``. When eigenvalue 1 is repeated (disconnected landmark
    graph) exactly the trivial direction ``d^{1/2}`` is removed from its eigenspace.
    """
    vals, vecs = graph.spectrum()
    m = min(n_clusters + 1, len(vals))
    if m < 2:
        raise ValueError("S_hat has rank 1: the landmark graph cannot separate any cluster.")
    vals, vecs = vals[:m], vecs[:, :m]
    unit = int(np.sum(vals > 1.0 - 1e-9))
    if unit > 1:
        # disconnected landmark graph: eigenvalue 1 is repeated and "the first" vector is an
        # arbitrary mix; remove exactly the trivial direction d^{1/2} from that eigenspace
        t = vecs[:, :unit].T @ graph.sqrt_degrees
        block = vecs[:, :unit] @ la.null_space(t[None, :] / np.linalg.norm(t))
        vals, vecs = vals[1:], np.column_stack([block, vecs[:, unit:]])
    else:
        vals, vecs = vals[1:], vecs[:, 1:]
    vecs = sign_flip(vecs)
    M = vecs / np.sqrt(vals)[None, :] / np.sqrt(graph.degrees)[:, None]
    return M, vals


class LSCR(LandmarkClustering):
    """Landmark-based spectral clustering with random landmarks (LSC-R), unconstrained.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters k.
    n_landmarks : int, default=500
        Number of landmarks ``p`` (capped at ``n_samples``).
    n_nearest : int, default=3
        Nearest landmarks per point ``r`` (non-zeros per column of ``Z``).
    landmark_init : {"random", "kmeans"}, default="random"
        Random data points (LSC-R) or k-means centres (LSC-K).
    sigma : float, default=None
        Gaussian bandwidth of eq. 3; ``None`` applies ``sigma_rule``.
    sigma_rule : {"mean_distance", "mean_squared_distance"}, default="mean_distance"
        ``"mean_distance"`` is SCACS's rule (the graph SCACS uses, so the two compare on
        one graph); ``"mean_squared_distance"`` is Cai's LSC code.
    affinity : {"landmark"}, default="landmark"
        The only graph: the landmark graph (a precomputed affinity is not accepted).
    n_init : int, default=10
        k-means restarts.
    backend : {"auto", "numpy", "dask"}, default="auto"
        ``"auto"`` runs on Dask when ``X`` is a dask array.
    chunk_size : int, default=8192
        Rows per chunk (in-core, and when wrapping NumPy input for Dask).
    random_state : int, RandomState or None
        Seeds the landmarks and k-means.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    embedding_ : ndarray of shape (n_samples, n_clusters)
        ``Z_hat^T a / sqrt(s)`` before row normalisation.
    eigenvalues_ : ndarray of shape (n_clusters,)
        Eigenvalues of ``S_hat`` of the kept vectors (trivial one excluded).
    components_ : ndarray of shape (p, n_clusters)
        The map ``M`` with ``embedding_ = Z^T M``.
    cluster_centers_ : ndarray of shape (n_clusters, n_clusters)
        Means of the row-normalised embedding per cluster (used by :meth:`predict`).
    landmarks_ : ndarray of shape (p, n_features)
    landmark_graph_ : LandmarkGraph
    sigma_ : float
    n_landmarks_dropped_ : int
        Landmarks no point had among its nearest (removed).

    Notes
    -----
    %s
    References
    ----------
    Chen, X., & Cai, D. (2011). Large scale spectral clustering with landmark-based
    representation. AAAI.
    """

    _uses_constraints = False

    def __init__(
        self,
        n_clusters: int = 2,
        *,
        n_landmarks: int = 500,
        n_nearest: int = 3,
        landmark_init: str = "random",
        sigma: float | None = None,
        sigma_rule: str = "mean_distance",
        affinity: str = "landmark",
        n_init: int = 10,
        backend: str = "auto",
        chunk_size: int = lm.DEFAULT_CHUNK,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.n_landmarks = n_landmarks
        self.n_nearest = n_nearest
        self.landmark_init = landmark_init
        self.sigma = sigma
        self.sigma_rule = sigma_rule
        self.affinity = affinity
        self.n_init = n_init
        self.backend = backend
        self.chunk_size = chunk_size
        self.random_state = random_state

    def _fit(self, X, constraints):
        self._fit_graph(self._build_graph(X), constraints)

    def _fit_graph(self, graph: lm.LandmarkGraph, constraints: Constraints) -> LSCR:
        """Everything after the graph (unconstrained: ``constraints`` is not used)."""
        self._set_graph(graph)
        M, vals = lscr_embedding(graph, self.n_clusters)
        self.components_ = M
        self.eigenvalues_ = vals
        self._cluster(self._embed(graph.nearest, graph.weights, M))
        return self


LSCR.__doc__ = LSCR.__doc__ % CLUSTER_DOC
