"""CCSR: Constrained Clustering via Spectral Regularization (Li, Liu & Tang, CVPR 2009).

The spectral embedding ``F_m`` (the ``m`` smoothest eigenvectors of the normalized
Laplacian, trivial one included, rows ``u_i``) is adapted by a PSD matrix ``M`` so that the
inner products ``u_i^T M u_j`` fit the targets (eq. 11-17): 1 for every point with itself
and for must-links, 0 for cannot-links. The least squares over the PSD cone (eq. 17, the
paper's SDP eq. 20) is convex and is solved exactly by
:func:`spectralink.solvers.psd_lstsq.psd_least_squares`; k-means then clusters the rows of
``F_m M^{1/2}`` (Algorithm 1).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.linalg as la
from sklearn.exceptions import ConvergenceWarning

from ..constraints import Constraints
from ..solvers.psd_lstsq import PSDLstsqResult, accumulate_gram, psd_least_squares
from ..spectral import kmeans_rows, laplacian_eigenvectors
from ._base import ConstrainedClusteringMixin

__all__ = ["CCSR", "ccsr_metric", "check_n_components", "diagonal_gram", "psd_sqrt"]


def check_n_components(n_components, n_samples: int) -> int:
    """Validate the embedding order ``m`` (1 <= m <= n_samples)."""
    if isinstance(n_components, bool) or not isinstance(n_components, numbers.Integral):
        raise ValueError(f"n_components must be a positive integer, got {n_components!r}.")
    if not 1 <= n_components <= n_samples:
        raise ValueError(
            f"n_components={n_components} must be between 1 and n_samples={n_samples}."
        )
    return int(n_components)


def diagonal_gram(F: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """The part of eq. 18-19 from the ``n`` diagonal terms ``(u_i^T M u_i - 1)^2``.

    It depends on the embedding only, so it can be shared by every constraint set.
    """
    n = F.shape[0]
    diag = np.arange(n)
    return accumulate_gram(F, diag, diag, np.ones(n))


def ccsr_metric(
    F: np.ndarray,
    constraints: Constraints,
    *,
    diag_gram: tuple | None = None,
    **solver_params,
) -> PSDLstsqResult:
    """The PSD matrix ``M`` of eq. 17 for the embedding ``F`` (rows ``u_i``).

    The terms are ``constraints.targets``: the ``n`` diagonal pairs and the must-links with
    target 1, the cannot-links with target 0; a constraint's weight multiplies its squared
    residual. ``diag_gram`` is :func:`diagonal_gram` of ``F`` when already computed.
    """
    i, j, t, w = constraints.targets
    n = constraints.n_samples
    if diag_gram is None:
        diag_gram = diagonal_gram(F)
    # targets lists the n diagonal terms first
    G, h, c = accumulate_gram(F, i[n:], j[n:], t[n:], w[n:])
    return psd_least_squares(G + diag_gram[0], h + diag_gram[1], c + diag_gram[2], **solver_params)


def psd_sqrt(M: np.ndarray) -> np.ndarray:
    """Principal square root of a PSD matrix, rounding-level negative eigenvalues clipped."""
    vals, vecs = la.eigh((M + M.T) / 2)
    return (vecs * np.sqrt(np.clip(vals, 0.0, None))) @ vecs.T


def unconstrained_projector(m: int, n_clusters: int) -> np.ndarray:
    """``diag(1, .., 1, 0, .., 0)`` keeping the ``n_clusters`` smoothest eigenvectors.

    With no constraints CCSR and CCSKL fall back to plain normalized spectral clustering,
    which this matrix expresses in their parametrisation.
    """
    return np.diag((np.arange(m) < n_clusters).astype(np.float64))


class CCSR(ConstrainedClusteringMixin):
    """Constrained clustering via spectral regularization (CCSR).

    Parameters
    ----------
    n_clusters : int
        Number of clusters k.
    n_components : int, default=15
        Order m of the spectral embedding (the paper uses 15).
    affinity : {"knn", "precomputed"}, default="knn"
        ``"knn"``: symmetric k-NN Gaussian graph from features; ``"precomputed"``: ``X``
        is a square affinity matrix.
    n_neighbors : int, default=20
        Neighbours of the k-NN graph.
    sigma : float, default=None
        Gaussian bandwidth; ``None`` is the mean distance to the k-th neighbour.
    n_init : int, default=10
        k-means restarts.
    tol : float, default=1e-10
        Stopping tolerance of the PSD least-squares solver.
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
        ``F_m``.
    M_ : ndarray of shape (n_components, n_components)
        The learnt PSD matrix (with no constraints: the projector on the ``n_clusters``
        smoothest eigenvectors, i.e. plain normalized spectral clustering).
    embedding_ : ndarray of shape (n_samples, n_components)
        ``F_m M^{1/2}``, the rows clustered by k-means.
    objective_ : float
        Value of eq. 17 at ``M_``.
    kkt_ : dict
        KKT residuals of the solve (``grad_min_eig``, ``M_min_eig``, ``complementarity``,
        ``stationarity``, ``scale``); empty with no constraints.
    n_iter_ : int
        Iterations of the PSD solver.

    Notes
    -----
    The problem is a convex quadratic over the PSD cone, so the solution is the global
    optimum of eq. 17. After one pass over the ``n + |constraints|`` terms the solver cost
    depends only on ``m``. With no constraints the fit is NCut's: k-means on the unit-norm
    rows of the ``n_clusters`` smoothest eigenvectors.

    References
    ----------
    Li, Z., Liu, J., & Tang, X. (2009). Constrained clustering via spectral regularization.
    CVPR, 421-428.
    """

    def __init__(
        self,
        n_clusters: int = 2,
        *,
        n_components: int = 15,
        affinity: str = "knn",
        n_neighbors: int = 20,
        sigma: float | None = None,
        n_init: int = 10,
        tol: float = 1e-10,
        normalize_rows: bool = False,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.n_components = n_components
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.n_init = n_init
        self.tol = tol
        self.normalize_rows = normalize_rows
        self.random_state = random_state

    def _fit(self, X, constraints):
        m = check_n_components(self.n_components, X.shape[0])
        if not (isinstance(self.tol, numbers.Real) and self.tol > 0):
            raise ValueError(f"tol must be a positive number, got {self.tol!r}.")
        W = self._affinity(X)
        vals, F = laplacian_eigenvectors(W, m, random_state=self.random_state)
        self.affinity_matrix_ = W
        self.eigenvalues_ = vals
        self.eigenvectors_ = F
        self._fit_embedding(F, constraints)
        return self

    def _fit_embedding(self, F, constraints, diag_gram=None):
        """Everything after the eigenvectors (also used by the benchmarks to share them)."""
        if constraints.is_empty:
            self.M_ = unconstrained_projector(F.shape[1], self.n_clusters)
            self.objective_, self.kkt_, self.n_iter_ = float("nan"), {}, 0
            normalize = True
        else:
            res = ccsr_metric(F, constraints, diag_gram=diag_gram, tol=self.tol)
            self.M_, self.objective_, self.kkt_, self.n_iter_ = (
                res.M,
                res.objective,
                res.kkt,
                res.n_iter,
            )
            normalize = bool(self.normalize_rows)
            if not res.converged:
                warnings.warn(
                    f"CCSR: the PSD least-squares solver stopped after {res.n_iter} iterations "
                    f"without a KKT certificate (min eigenvalue of the gradient "
                    f"{res.kkt['grad_min_eig']:.2e}, scale {res.kkt['scale']:.2e}); the "
                    "embedding is likely degenerate (nearly disconnected graph).",
                    ConvergenceWarning,
                    stacklevel=3,
                )
        self.embedding_ = F @ psd_sqrt(self.M_)
        self.labels_ = kmeans_rows(
            self.embedding_,
            self.n_clusters,
            normalize=normalize,
            n_init=self.n_init,
            random_state=self.random_state,
        )
        return self
