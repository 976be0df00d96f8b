"""SL: Spectral Learning (Kamvar, Klein & Manning, IJCAI 2003).

Constraints act on the affinity matrix only, then ordinary spectral clustering runs:

1. Affinity modification: ``A_ij = A_ji = 1`` (the maximum affinity) for every must-link
   and ``A_ij = A_ji = 0`` for every cannot-link. On a sparse k-NN graph a must-link
   between two non-neighbours creates a new edge.
2. Normalisation: the NJW form ``D^{-1/2} A D^{-1/2}`` (``normalization="symmetric"``,
   the default), or the paper's additive normalisation ``N = (A + d_max I - D) / d_max``
   (``normalization="additive"``), whose top eigenvectors are those of ``A - D``, i.e.
   the smallest eigenvectors of the unnormalised Laplacian ``L = D - A``.
3. The top ``k`` eigenvectors of ``N``, rows scaled to unit length, k-means on the rows.

Weighted constraints: a weight ``w`` is a degree of belief ``b = min(w, 1)``. A must-link
raises the entry to ``max(A_ij, b * a_max)`` and a cannot-link scales it by ``1 - b``, so
``w = 1`` gives the paper's rule. ``a_max`` is 1, the largest Gaussian affinity (or the
largest entry of a precomputed affinity when that exceeds 1).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from scipy.sparse.linalg import ArpackNoConvergence, eigsh, lobpcg
from sklearn.utils import check_random_state

from ..constraints import Constraints
from ..graph import check_connectivity, degrees
from ..parallel import limit_threads
from ..spectral import (
    DENSE_EIGEN_MAX,
    amg_preconditioner,
    cluster_means,
    has_pyamg,
    kmeans_rows,
    laplacian_eigenvectors,
    normalize_rows,
    sign_flip,
)
from ..utils import StrOptions
from ._base import COMMON_CONSTRAINTS, GUARD_CONSTRAINT, with_guard_doc
from ._graph import ConstrainedClusteringMixin

__all__ = ["SpectralLearning", "modify_affinity", "additive_eigenvectors"]


def modify_affinity(W: sp.spmatrix, constraints: Constraints) -> sp.csr_matrix:
    """Kamvar et al.'s affinity modification: ML entries -> max affinity, CL entries -> 0.

    With weights, the belief ``b = min(w, 1)`` interpolates: ML ``A_ij = max(A_ij, b a_max)``,
    CL ``A_ij = (1 - b) A_ij``. Returns a new symmetric CSR matrix with zero diagonal.
    """
    W = sp.csr_matrix(W, dtype=np.float64, copy=True)
    if constraints.is_empty:
        return W
    n = W.shape[0]
    a_max = max(1.0, float(W.max()) if W.nnz else 1.0)

    def sym(pairs, vals):
        rows = np.concatenate([pairs[:, 0], pairs[:, 1]])
        cols = np.concatenate([pairs[:, 1], pairs[:, 0]])
        return sp.csr_matrix((np.concatenate([vals, vals]), (rows, cols)), shape=(n, n))

    ml, cl = constraints.must_link, constraints.cannot_link
    # CL: A_ij <- (1 - b) A_ij, i.e. subtract b * A_ij on the CL positions
    b_cl = np.minimum(constraints.cl_weights, 1.0)
    A = W - W.multiply(sym(cl, b_cl))
    # ML: A_ij <- max(A_ij, b a_max); ML and CL pairs are disjoint, so order is irrelevant
    b_ml = np.minimum(constraints.ml_weights, 1.0) * a_max
    A = A.maximum(sym(ml, b_ml))
    A = sp.csr_matrix(A)
    A.eliminate_zeros()
    A.sort_indices()
    return A


def additive_eigenvectors(
    W: sp.spmatrix,
    n_components: int,
    *,
    solver: str = "auto",
    tol: float = 1e-8,
    random_state: int | np.random.RandomState | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top eigenpairs of the additive normalisation ``N = (A + d_max I - D) / d_max``.

    ``N = I - L / d_max`` with ``L = D - A``, so its top eigenvectors are the smallest of
    the unnormalised Laplacian ``L`` (Kamvar et al. 2003, Section 3). ``solver`` is
    ``"dense"``, ``"arpack"`` (shift-invert Lanczos on ``L``, one sparse factorisation),
    ``"lobpcg"`` (smallest of ``L`` with an algebraic-multigrid preconditioner, falling back
    to ``"arpack"`` when it does not converge) or ``"auto"`` (dense up to
    ``spectral.DENSE_EIGEN_MAX`` nodes, then LOBPCG when PyAMG is installed, else ARPACK).

    Returns
    -------
    eigenvalues : ndarray of shape (m,)
        Eigenvalues of ``N`` in descending order (``1 - lambda(L) / d_max``).
    eigenvectors : ndarray of shape (n, m)
        Orthonormal columns with deterministic signs (:func:`spectral.sign_flip`).
    """
    n = W.shape[0]
    if not 1 <= n_components <= n:
        raise ValueError(f"n_components={n_components} must be in [1, n_samples={n}].")
    d = degrees(W)
    d_max = float(d.max()) if n else 0.0
    if d_max <= 0:
        d_max = 1.0  # empty graph: N = I, every vector is an eigenvector
    L = (sp.diags(d) - W).tocsr()
    if solver == "auto":
        if n <= DENSE_EIGEN_MAX or n_components >= n // 5:
            solver = "dense"
        else:
            solver = "lobpcg" if has_pyamg() else "arpack"
    if solver == "dense":
        with limit_threads(4.0 / 3.0 * n**3 + 4.0 * n * n * n_components):
            lam, V = la.eigh(L.toarray(), subset_by_index=[0, n_components - 1])
    elif solver == "arpack":
        lam, V = _arpack_shift_invert(L, d_max, n_components, tol, random_state)
    elif solver == "lobpcg":
        lam, V = _lobpcg_laplacian(L, d_max, n_components, tol, random_state)
        residual = np.linalg.norm(L @ V - V * lam, axis=0)
        if np.any(residual > 1e-4 * d_max):
            # clustered eigenvalues near 0 (a nearly disconnected graph) stall LOBPCG;
            # shift-invert usually converges there. If it does not either, keep LOBPCG's
            # basis: its vectors still span an almost-invariant subspace
            try:
                lam, V = _arpack_shift_invert(
                    L, d_max, n_components, tol, random_state, maxiter=20 * n_components
                )
            except ArpackNoConvergence:
                warnings.warn(
                    "the additive-normalisation eigenvectors did not converge (the graph "
                    "is nearly disconnected); increase sigma or n_neighbors.",
                    RuntimeWarning,
                    stacklevel=2,
                )
    else:
        raise ValueError(f"solver must be 'auto', 'dense', 'arpack' or 'lobpcg', got {solver!r}.")
    order = np.argsort(lam, kind="stable")
    mu = 1.0 - lam[order] / d_max
    return mu, sign_flip(V[:, order])


def _arpack_shift_invert(L, d_max, m, tol, random_state, maxiter=None):
    # the top of N = I - L / d_max is tightly clustered at 1 when the graph is nearly
    # disconnected, where plain Lanczos on N stalls; shift-invert around a small negative
    # shift (L - shift I is positive definite) separates the smallest eigenvalues of L
    v0 = check_random_state(random_state).uniform(-1, 1, L.shape[0])
    return eigsh(L.tocsc(), k=m, sigma=-1e-3 * d_max, which="LM", tol=tol, v0=v0, maxiter=maxiter)


def _lobpcg_laplacian(L, d_max, m, tol, random_state):
    n = L.shape[0]
    # L is singular (constant null vector); the shift is relative to the degree scale
    M = amg_preconditioner(L, shift=1e-5 * d_max)
    X = check_random_state(random_state).standard_normal((n, m + 1))
    X[:, 0] = 1.0  # the trivial eigenvector of L is known exactly
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        _, V = lobpcg(L, X, M=M, tol=tol * d_max, largest=False, maxiter=300)
    # Rayleigh-Ritz on the returned block: an exactly orthonormal basis, sorted eigenvalues
    Q, _ = np.linalg.qr(V)
    H = Q.T @ (L @ Q)
    w, Z = la.eigh((H + H.T) / 2)
    return w[:m], (Q @ Z)[:, :m]


class SpectralLearning(ConstrainedClusteringMixin):
    """Spectral Learning: spectral clustering on a constraint-modified affinity.

    Parameters
    ----------
    n_clusters : int
        Number of clusters k.
    affinity : {"knn", "precomputed"}, default="knn"
        ``"knn"`` builds the symmetric k-NN Gaussian graph from features;
        ``"precomputed"`` takes ``X`` as a square affinity matrix.
    n_neighbors : int, default=20
        Neighbours of the k-NN graph.
    sigma : float, default=None
        Gaussian bandwidth; ``None`` is the mean distance to the k-th neighbour.
    normalization : {"symmetric", "additive"}, default="symmetric"
        ``"symmetric"`` is NJW's ``D^{-1/2} A D^{-1/2}``; ``"additive"`` is Kamvar et
        al.'s ``(A + d_max I - D) / d_max`` and reproduces the paper. The additive form
        clusters by the unnormalised Laplacian, whose smallest eigenvectors isolate
        weakly connected points: with a handful of constraints on a k-NN graph it often
        returns one giant cluster plus singletons (standardised segmentation, 1000 pairs:
        error 0.855 against NCut's 0.574), so it is not the default.
    n_init : int, default=10
        k-means restarts.
    random_state : int, RandomState or None
        Seeds the eigensolver start and k-means.
    <guard>

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    affinity_matrix_ : sparse matrix of shape (n_samples, n_samples)
        The affinity after the constraint modification.
    embedding_ : ndarray of shape (n_samples, n_clusters)
        The top-k eigenvectors of the normalised affinity (before row normalisation).
    eigenvalues_ : ndarray of shape (n_clusters,)
        Their eigenvalues: of ``N`` (descending) for ``"additive"``, of the normalized
        Laplacian (ascending) for ``"symmetric"``.

    Notes
    -----
    A constraint weight ``w`` is read as a degree of belief ``b = min(w, 1)``: a must-link
    sets ``A_ij = max(A_ij, b)``, a cannot-link sets ``A_ij = (1 - b) A_ij``. Unit weights
    give the paper's hard rule. For precomputed affinities with entries above 1, the
    must-link value is the largest entry instead of 1.

    ``predict``: with ``normalization="symmetric"`` new points are mapped into the
    embedding by the Nyström extension through the constraint-modified affinity (each new
    point linked to its ``n_neighbors`` nearest training points with the graph's Gaussian
    weights; it has no constraint of its own), rows normalised, nearest k-means centre.
    With ``"additive"`` the extension of the unnormalised Laplacian's eigenvectors divides
    by ``d(x) - lambda``, unstable for weakly linked points, so a new point gets the
    weighted vote of its neighbours' labels instead. With ``affinity="knn"`` the model
    keeps a reference to the training features (n x n_features floats, also pickled);
    with ``"precomputed"`` ``predict`` takes affinities of shape (n_new, n_train).

    References
    ----------
    Kamvar, S. D., Klein, D., & Manning, C. D. (2003). Spectral learning. IJCAI, 561-566.
    Ng, A., Jordan, M., & Weiss, Y. (2002). On spectral clustering: analysis and an algorithm.
    NIPS.
    """

    _parameter_constraints = {
        "guard": GUARD_CONSTRAINT,
        **COMMON_CONSTRAINTS,
        "affinity": [StrOptions({"knn", "precomputed"})],
        "normalization": [StrOptions({"symmetric", "additive"})],
    }

    def __init__(
        self,
        n_clusters: int = 2,
        *,
        affinity: str = "knn",
        n_neighbors: int = 20,
        sigma: float | None = None,
        normalization: str = "symmetric",
        n_init: int = 10,
        random_state: int | np.random.RandomState | None = None,
        guard: str | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.normalization = normalization
        self.n_init = n_init
        self.random_state = random_state
        self.guard = guard

    def _fit(self, X, constraints):
        A = modify_affinity(self._affinity(X), constraints)
        k = self.n_clusters
        if self.normalization == "additive":
            check_connectivity(A, n_clusters=k)
            vals, F = additive_eigenvectors(A, k, random_state=self.random_state)
        else:
            vals, F = laplacian_eigenvectors(A, k, random_state=self.random_state, n_clusters=k)
        self.affinity_matrix_ = A
        self.eigenvalues_ = vals
        self.embedding_ = F
        self.labels_ = kmeans_rows(
            F, k, normalize=True, n_init=self.n_init, random_state=self.random_state
        )
        self._centers_ = cluster_means(normalize_rows(F), self.labels_, k)
        return self

    def _embed_new(self, C):
        if self.normalization == "additive":
            return None
        F = self._njw_embed_new(C, self.embedding_, self.eigenvalues_)
        return None if F is None else normalize_rows(F)


SpectralLearning.__doc__ = with_guard_doc(SpectralLearning.__doc__, "NCut at its defaults")
