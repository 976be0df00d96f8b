"""CCSKL: Constrained Clustering by Spectral Kernel Learning (Li & Liu, ICCV 2009).

The kernel ``K = sum_l beta_l v_l v_l^T`` over the ``m`` smoothest eigenvectors of the
normalized Laplacian (eq. 5, 11) keeps the eigenvectors and learns their order-preserving
spectrum ``beta_1 >= ... >= beta_m >= 0`` from the targets (eq. 6-12: 1 on the diagonal
and must-links, 0 on cannot-links, weighted by ``c_ij^2``). The QP (eq. 13-16) is solved
exactly as a non-negative least-squares problem
(:func:`spectralink.solvers.ordered_nnls.ordered_nnls`); k-means clusters the rows of
``F Lambda^{1/2}`` (section 4.3).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..constraints import Constraints
from ..solvers.ordered_nnls import OrderedNNLSResult, ordered_design, ordered_nnls
from ..spectral import kmeans_rows, laplacian_eigenvectors
from ._base import ConstrainedClusteringMixin
from .ccsr import check_n_components

__all__ = ["CCSKL", "ccskl_spectrum"]


def ccskl_spectrum(F: np.ndarray, constraints: Constraints) -> OrderedNNLSResult:
    """The ordered spectrum ``beta`` of eq. 13-16 for the eigenvectors ``F``.

    The terms are ``constraints.targets``; a constraint's weight replaces ``c_ij`` (section
    4.4), so it multiplies the squared residual as ``c_ij^2``. Diagonal terms have weight 1.
    """
    i, j, t, w = constraints.targets
    B, r = ordered_design(F, i, j, t, w)
    return ordered_nnls(B, r)


class CCSKL(ConstrainedClusteringMixin):
    """Constrained clustering by spectral kernel learning (CCSKL).

    Parameters
    ----------
    n_clusters : int
        Number of clusters k.
    n_components : int, default=20
        Number m of eigenvectors whose eigenvalues are learnt (the paper uses 20).
    affinity : {"knn", "precomputed"}, default="knn"
        ``"knn"``: symmetric k-NN Gaussian graph from features; ``"precomputed"``: ``X``
        is a square affinity matrix.
    n_neighbors : int, default=20
        Neighbours of the k-NN graph.
    sigma : float, default=None
        Gaussian bandwidth; ``None`` is the mean distance to the k-th neighbour.
    n_init : int, default=10
        k-means restarts.
    normalize_rows : bool, default=False
        Scale the embedding's rows to unit length before k-means, as NCut does. The paper
        clusters the raw rows (False). The trivial eigenvector ``D^{1/2} 1`` is part of the
        embedding and often gets the largest weight, so raw rows also encode the degree;
        normalising removes that.
    random_state : int, RandomState or None
        Seeds the eigensolver start and k-means.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    affinity_matrix_ : sparse matrix of shape (n_samples, n_samples)
    eigenvalues_ : ndarray of shape (n_components,)
        Smallest eigenvalues of the normalized Laplacian.
    eigenvectors_ : ndarray of shape (n_samples, n_components)
    betas_ : ndarray of shape (n_components,)
        Learnt kernel eigenvalues, non-increasing and non-negative (with no constraints:
        1 for the ``n_clusters`` smoothest eigenvectors, 0 after).
    embedding_ : ndarray of shape (n_samples, n_components)
        ``F diag(betas_)^{1/2}``, the rows clustered by k-means.
    objective_ : float
        Weighted squared error of eq. 12 at ``betas_``.
    kkt_ : dict
        KKT residuals of the NNLS (``grad_min``, ``complementarity``).

    Notes
    -----
    With no constraints the fit is NCut's: k-means on the unit-norm rows of the
    ``n_clusters`` smoothest eigenvectors.

    References
    ----------
    Li, Z., & Liu, J. (2009). Constrained clustering by spectral kernel learning. ICCV,
    421-427.
    """

    def __init__(
        self,
        n_clusters: int = 2,
        *,
        n_components: int = 20,
        affinity: str = "knn",
        n_neighbors: int = 20,
        sigma: float | None = None,
        n_init: int = 10,
        normalize_rows: bool = False,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.n_components = n_components
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.n_init = n_init
        self.normalize_rows = normalize_rows
        self.random_state = random_state

    def _fit(self, X, constraints):
        m = check_n_components(self.n_components, X.shape[0])
        W = self._affinity(X)
        vals, F = laplacian_eigenvectors(W, m, random_state=self.random_state)
        self.affinity_matrix_ = W
        self.eigenvalues_ = vals
        self.eigenvectors_ = F
        self._fit_embedding(F, constraints)
        return self

    def _fit_embedding(self, F, constraints):
        """Everything after the eigenvectors (also used by the benchmarks to share them)."""
        m = F.shape[1]
        if constraints.is_empty:
            self.betas_ = (np.arange(m) < self.n_clusters).astype(np.float64)
            self.objective_, self.kkt_ = float("nan"), {}
            normalize = True
        else:
            res = ccskl_spectrum(F, constraints)
            self.betas_, self.objective_, self.kkt_ = res.beta, res.objective, res.kkt
            normalize = bool(self.normalize_rows)
            if not np.any(res.beta > 0):
                warnings.warn(
                    "CCSKL learnt an all-zero spectrum (degenerate constraints); falling back "
                    "to the unconstrained spectral embedding.",
                    RuntimeWarning,
                    stacklevel=3,
                )
                self.betas_ = (np.arange(m) < self.n_clusters).astype(np.float64)
                normalize = True
        self.embedding_ = F * np.sqrt(self.betas_)
        self.labels_ = kmeans_rows(
            self.embedding_,
            self.n_clusters,
            normalize=normalize,
            n_init=self.n_init,
            random_state=self.random_state,
        )
        return self
