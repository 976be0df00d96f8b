"""FCSC: flexible constrained spectral clustering (Wang & Davidson, KDD 2010; DMKD 2014).

The relaxed constrained normalised cut ``min v^T L_bar v`` s.t. ``v^T Q_bar v >= alpha``,
``v^T v = vol``, ``v != D^{1/2} 1``, with ``L_bar = I - D^{-1/2} A D^{-1/2}`` and
``Q_bar = D^{-1/2} Q D^{-1/2}``. Its KKT conditions give the generalised eigenproblem

    L_bar v = lambda (Q_bar - (beta / vol) I) v,   lambda > 0.

* 2-way: ``beta / vol`` = half the largest singular value of ``Q_bar``; among the positive
  eigenpairs (normalised to ``||v||^2 = vol``) take the cheapest non-trivial cost
  ``v^T L_bar v > 1e-10`` and cut ``D^{-1/2} v`` by sign. As in ``csp.m`` no sign filter
  applies here: when that optimum is single-signed the cut is one-sided, with a warning.
* K-way: ``beta / vol`` = midpoint of the K-th and (K+1)-th largest singular values of
  ``Q_bar`` minus 1e-6; keep the K-1 cheapest non-trivial (not single-signed) feasible
  eigenvectors, weight each by ``sqrt(vol) (1 - cost)`` and run k-means on the rows of
  ``D^{-1/2} V``.

``beta`` is applied to the normalised ``Q_bar`` (consistent with ``L_bar``). That is the
code's rule (``beta="paper"``); the estimator's default ``beta="auto"`` instead asks for
the constraint value of a partition satisfying every constraint and keeps ``v`` exactly
orthogonal to ``D^{1/2} 1`` (see :class:`FCSC`).

Exact, and as fast as the dense problem allows: ``L_bar`` is diagonalised once
(O(n^3) time, O(n^2) memory, the only dense step), then ``Q_bar`` enters as a rank-r
factor and the at most r positive eigenpairs solve an r x r secular equation
(:func:`spectralink.solvers.constrained_pencil.lowrank_pencil_positive`). The dense step
limits ``n`` to ``max_samples`` (default 5000).
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass, replace

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..constraints import Constraints
from ..graph import check_connectivity
from ..neighbors import search
from ..parallel import limit_threads
from ..solvers.constrained_pencil import (
    constraint_block,
    definite_pencil_eigh,
    lowrank_pencil_positive,
    partition_constraint_value,
    q_factor,
)
from ..spectral import (
    cluster_means,
    kmeans_rows,
    nearest_center,
    normalize_rows,
    nystrom_extension,
)
from ..utils import Int, RealRange, StrOptions
from ._base import COMMON_CONSTRAINTS, GUARD_CONSTRAINT, with_guard_doc
from ._graph import NYSTROM_MIN_EIGENVALUE, ConstrainedClusteringMixin, weighted_vote
from ._guard import GuardPlan

__all__ = [
    "FCSC",
    "FCSCBasis",
    "connect_isolated",
    "fcsc_basis",
    "fcsc_beta",
    "fcsc_eigenpairs",
    "fcsc_extension",
    "fcsc_rbf_affinity",
    "fcsc_rbf_cross_affinity",
    "fcsc_solve",
]

COST_TOL = 1e-10
LOWRANK_MAX_ROOTS = 32
#: predict with ``affinity="rbf"``: entries of the dense (new x training) block at once
_RBF_BLOCK = 2**22


def fcsc_rbf_cross_affinity(X_fit: np.ndarray, X_new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The :func:`fcsc_rbf_affinity` weights of new points to the training points.

    Features are scaled by the training mean and standard deviation (constant training
    features dropped), as in the fitted graph.

    Returns
    -------
    A : ndarray of shape (n_new, n_fit)
    nearest : ndarray of shape (n_new,)
        Each new point's nearest training point in the scaled space.
    """
    X_fit = np.asarray(X_fit, dtype=np.float64)
    std = X_fit.std(axis=0)
    keep = std > 0
    mean = X_fit[:, keep].mean(axis=0)
    F = (X_fit[:, keep] - mean) / std[keep]
    N = (np.asarray(X_new, dtype=np.float64)[:, keep] - mean) / std[keep]
    D2 = (
        np.einsum("ij,ij->i", N, N)[:, None]
        + np.einsum("ij,ij->i", F, F)[None, :]
        - 2.0 * (N @ F.T)
    )
    np.maximum(D2, 0.0, out=D2)
    return np.exp(-D2 / 2.0), np.argmin(D2, axis=1)


def fcsc_rbf_affinity(X: np.ndarray) -> np.ndarray:
    """Dense RBF of the FCSC code: ``exp(-sum_f (x_if - x_jf)^2 / (2 var_f))``, zero diagonal.

    Every feature is scaled by its standard deviation; constant features are dropped.
    """
    X = np.asarray(X, dtype=np.float64)
    std = X.std(axis=0)
    keep = std > 0
    if not keep.any():
        raise ValueError("every feature of X is constant; the FCSC RBF affinity is undefined.")
    Xs = (X[:, keep] - X[:, keep].mean(axis=0)) / std[keep]
    sq = np.einsum("ij,ij->i", Xs, Xs)
    D2 = sq[:, None] + sq[None, :] - 2.0 * (Xs @ Xs.T)
    np.maximum(D2, 0.0, out=D2)
    A = np.exp(-D2 / 2.0)
    np.fill_diagonal(A, 0.0)
    return A


@dataclass
class FCSCBasis:
    """Eigendecomposition of ``L_bar`` and the degrees: everything FCSC needs of the graph.

    It does not depend on the constraints, so several constraint sets on one graph can
    share it (see :func:`fcsc_solve`).
    """

    eigenvalues: np.ndarray  # (n,) ascending, of L_bar
    eigenvectors: np.ndarray  # (n, n)
    degrees: np.ndarray  # (n,)

    @property
    def volume(self) -> float:
        return float(self.degrees.sum())


def connect_isolated(W: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Link every zero-degree point of the dense ``W`` to its nearest neighbour in ``X``.

    The new edge gets the neighbour's largest affinity (the point is taken to be as close
    to it as its closest other point), with a warning. Returns ``W`` (modified in place).
    """
    iso = np.flatnonzero(W.sum(axis=1) <= 0)
    if iso.size == 0:
        return W
    # two nearest rows: the point itself (or a duplicate of it) and its neighbour
    _, ind = search(X[iso], X, 2)
    nb = np.where(ind[:, 0] == iso, ind[:, 1], ind[:, 0])
    w = W[nb].max(axis=1)
    w[w <= 0] = 1.0  # the neighbour is isolated too: a unit edge
    W[iso, nb] = np.maximum(W[iso, nb], w)
    W[nb, iso] = W[iso, nb]
    warnings.warn(
        f"{iso.size} point(s) have zero degree in the FCSC RBF affinity (every affinity "
        "underflowed); each is linked to its nearest neighbour with that neighbour's "
        "largest affinity.",
        UserWarning,
        stacklevel=3,
    )
    return W


def fcsc_basis(W: ArrayLike) -> FCSCBasis:
    """Diagonalise ``L_bar = I - D^{-1/2} W D^{-1/2}`` (dense, O(n^3)).

    A zero-degree point gets a unit self-loop (as :func:`spectralink.graph.
    normalized_adjacency` does), with a warning: it becomes its own component (its
    ``L_bar`` row is zero) instead of an undefined ``D^{-1/2}``.
    """
    Wd = W.toarray() if sp.issparse(W) else np.array(W, dtype=np.float64)
    d = Wd.sum(axis=1)
    if np.any(d <= 0):
        iso = np.flatnonzero(d <= 0)
        Wd[iso, iso] = 1.0
        d[iso] = 1.0
        warnings.warn(
            f"{iso.size} point(s) have zero degree; each is given a unit self-loop and "
            "forms its own component of the FCSC graph.",
            UserWarning,
            stacklevel=2,
        )
    s = 1.0 / np.sqrt(d)
    L = np.eye(len(d)) - Wd * s[:, None] * s[None, :]
    with limit_threads(9.0 * len(d) ** 3):  # all eigenpairs: about 9 n^3 operations
        vals, vecs = la.eigh((L + L.T) / 2.0)
    return FCSCBasis(np.clip(vals, 0.0, 2.0), vecs, d)


def fcsc_beta(singular_values: np.ndarray, n_clusters: int) -> float:
    """``beta / vol``: half the largest singular value of ``Q_bar`` (2-way, csp.m), or the
    midpoint of its K-th and (K+1)-th largest minus 1e-6 (K-way, csp_K.m)."""
    sv = np.sort(np.abs(singular_values))[::-1]
    sv = np.concatenate([sv, np.zeros(max(0, n_clusters + 1 - len(sv)))])
    if n_clusters == 2:
        return 0.5 * sv[0]
    return 0.5 * (sv[n_clusters - 1] + sv[n_clusters]) - 1e-6


def _trivial_complement(basis: FCSCBasis, tol: float = 1e-9) -> np.ndarray:
    """Orthonormal coordinates (n x (n-1)), in the eigenbasis of ``L_bar``, of the complement
    of the trivial vector ``D^{1/2} 1``.

    ``D^{1/2} 1`` lies in the null space of ``L_bar``; rotating only that block keeps
    ``L_bar`` diagonal, so the coordinates are the identity outside it. With several
    components the other null directions (zero-cost cuts between components) stay.
    """
    n = len(basis.eigenvalues)
    t = np.sqrt(basis.degrees)
    t /= np.linalg.norm(t)
    null = np.flatnonzero(basis.eigenvalues <= tol)
    if null.size == 0:
        null = np.array([int(np.argmin(basis.eigenvalues))])
    c = basis.eigenvectors[:, null].T @ t
    Rt = np.zeros((n, n - 1))
    Rt[np.ix_(null, np.arange(null.size - 1))] = la.null_space(c[None, :])
    rest = np.setdiff1d(np.arange(n), null)
    Rt[rest, null.size - 1 + np.arange(rest.size)] = 1.0
    return Rt


def fcsc_eigenpairs(
    basis: FCSCBasis,
    P: np.ndarray,
    R: np.ndarray,
    J: np.ndarray,
    b: float,
    *,
    exclude_trivial: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """All ``lambda > 0`` eigenpairs of ``L_bar v = lambda (Q_bar - b I) v``, unit ``v``.

    ``Q_bar = Rb J Rb^T`` with ``Rb`` = ``D^{-1/2} R`` on the rows ``P`` (zero elsewhere).
    ``exclude_trivial=True`` solves on the complement of ``D^{1/2} 1`` (``v`` orthogonal
    to it, as SCACS's step 9) instead of the whole space.
    """
    Rb = R / np.sqrt(basis.degrees[P])[:, None]
    G = basis.eigenvectors[P].T @ Rb  # U^T Rb, (n, r)
    s = basis.eigenvalues
    Rt = None
    if exclude_trivial:
        Rt = _trivial_complement(basis)
        G = Rt.T @ G
        s = (Rt * Rt).T @ s  # a rotation of the null block only: L_bar stays diagonal
    n, r = G.shape
    # hundreds of O(n r^2) steps (the secular solver's root brackets): threads by the size
    # of one step, as multi-threaded BLAS spends small steps waiting on busy cores
    with limit_threads(2.0 * n * r * r + 9.0 * r**3):
        _, T = np.linalg.qr(G)
        n_roots = int(np.sum(la.eigvalsh((T * J) @ T.T) > b))  # positive lambda (inertia)
        lowrank = b > 0 and n_roots <= LOWRANK_MAX_ROOTS
        if lowrank:
            lam, Y = lowrank_pencil_positive(s, G, J, b)
    if not lowrank:
        # b <= 0 (mu L_bar + b I not definite) or many roots (the secular solver costs
        # O(roots r^3)): the dense definite pencil, O(n^3) like the basis itself
        B = (G * J) @ G.T - b * np.eye(len(s))
        with limit_threads(9.0 * n**3):  # all eigenpairs: about 9 n^3 operations
            lam, Y = definite_pencil_eigh(B, s)
        Y = Y / np.linalg.norm(Y, axis=0)
    if Rt is not None:
        Y = Rt @ Y
    return lam, basis.eigenvectors @ Y


def fcsc_solve(
    basis: FCSCBasis,
    constraints: Constraints,
    n_clusters: int,
    *,
    beta: float | None = None,
    normalize: bool = False,
    n_init: int = 10,
    random_state: int | np.random.RandomState | None = None,
) -> dict:
    """FCSC on a diagonalised graph: 2-way by sign, K-way by k-means (module docstring).

    ``beta`` is ``beta / vol`` (a threshold on ``v^T Q_bar v`` for unit ``v``):

    * ``None`` or ``"paper"``: the rule of the FCSC code (:func:`fcsc_beta`) with its
      trivial-vector filters (cost > 1e-10; K-way also drops single-signed vectors);
    * ``"auto"``: the constraint value of a partition that satisfies every constraint,
      :func:`~spectralink.solvers.constrained_pencil.partition_constraint_value` with the
      volume as scale, capped at half the largest eigenvalue of ``Q_bar``; the trivial direction
      ``D^{1/2} 1`` is then removed exactly (``v`` orthogonal to it), so zero-cost cuts
      between graph components are kept;
    * a float: that value, with the paper's filters.

    ``normalize=True`` scales the rows of the K-way embedding to unit length before
    k-means (NJW style; not in the FCSC code).

    Returns a dict with ``labels``, ``embedding``, ``beta`` (= beta/vol), ``eigenvalues``
    and ``costs`` of the selected vectors, and ``vectors`` (unit ``v``).

    Raises
    ------
    ValueError
        If no constraint is given, or no non-trivial feasible eigenvector exists
        (``beta`` at or above the largest eigenvalue of ``Q_bar``).
    """
    if constraints.is_empty:
        raise ValueError("FCSC needs constraints (at least one must-link or cannot-link).")
    P, R, J = q_factor(constraints)
    Rb = R / np.sqrt(basis.degrees[P])[:, None]
    # non-zero eigenvalues of Rb J Rb^T = those of J^(1/2)-weighted Gram (r x r)
    _, T = np.linalg.qr(Rb)
    qeig = la.eigvalsh((T * J) @ T.T)
    auto = isinstance(beta, str) and beta == "auto"
    if beta is None or (isinstance(beta, str) and beta == "paper"):
        b = fcsc_beta(qeig, n_clusters)
    elif auto:
        # what the true partition attains: the paper's rule asks every vector to keep
        # about half of the largest constraint value, reachable only by concentrating on
        # the constrained (low-degree) points, hence 1998/1/1 partitions with few of them
        b = min(partition_constraint_value(constraints, n_clusters, basis.volume), 0.5 * qeig.max())
    elif isinstance(beta, numbers.Real) and np.isfinite(beta):
        b = float(beta)
    else:
        raise ValueError(f"beta must be 'auto', 'paper', None or a finite number, got {beta!r}.")
    if b >= qeig.max():
        raise ValueError(
            f"beta/vol={b:.4g} is not below the largest eigenvalue of Q_bar ({qeig.max():.4g}): "
            "no feasible solution (v^T Q_bar v >= beta has no non-trivial v)."
        )
    lam, V = fcsc_eigenpairs(basis, P, R, J, b, exclude_trivial=auto)
    C = basis.eigenvectors.T @ V
    costs = basis.eigenvalues @ (C * C)
    single_sign = np.all(V >= -1e-12, axis=0) | np.all(V <= 1e-12, axis=0)
    if not auto:
        ok = costs > COST_TOL  # csp.m: the cost test alone skips the trivial vector
        if n_clusters > 2:
            ok &= ~single_sign  # csp_K.m also drops single-signed (trivial-cut) vectors
    else:
        ok = np.ones(len(lam), dtype=bool)  # v orthogonal to D^{1/2} 1 has both signs
    if not ok.any():
        raise ValueError(
            "FCSC found no eigenvector with a positive eigenvalue and a non-trivial "
            f"{'cost' if n_clusters == 2 else 'cost and sign pattern'}; lower beta or give "
            "more constraints."
        )
    order = np.flatnonzero(ok)[np.argsort(costs[ok], kind="stable")]
    vol = basis.volume
    s = 1.0 / np.sqrt(basis.degrees)
    if n_clusters == 2:
        i = order[0]
        if single_sign[i]:
            warnings.warn(
                "the cheapest feasible FCSC vector has a single sign, so its sign cut puts "
                "every point in one cluster; lower beta or give more constraints "
                "(cannot-links).",
                UserWarning,
                stacklevel=2,
            )
        u = s * V[:, i] * np.sqrt(vol)
        labels = (u > 0).astype(np.int64)
        sel = order[:1]
        emb = u[:, None]
    else:
        sel = order[: n_clusters - 1]
        emb = s[:, None] * V[:, sel] * np.sqrt(vol) * (1.0 - costs[sel])
        labels = kmeans_rows(
            emb, n_clusters, normalize=normalize, n_init=n_init, random_state=random_state
        )
    return {
        "labels": labels,
        "embedding": emb,
        "beta": b,
        "eigenvalues": lam[sel],
        "costs": costs[sel],
        "vectors": V[:, sel],
    }


def fcsc_extension(
    C: sp.spmatrix,
    degrees: np.ndarray,
    vectors: np.ndarray,
    eigenvalues: np.ndarray,
    b: float,
    c: np.ndarray,
) -> np.ndarray:
    """FCSC's KKT condition read at new points: the Nyström extension of its vectors.

    A new point ``x`` carries no constraint (its row of ``Q_bar`` is 0), so row ``x`` of
    ``L_bar v = lambda (Q_bar - b I) v - lambda c t`` gives

        v(x) = (sum_j w(x, x_j) / sqrt(d(x) d_j) v_j - lambda c t(x)) / (1 + lambda b),

    with ``t = D^{1/2} 1 / sqrt(vol)`` the trivial direction and ``c = t^T Q_bar v`` the
    multiplier of ``v`` orthogonal to ``t`` (``beta="auto"``; 0 otherwise). On an
    unconstrained training point with its own row of ``W`` this returns ``v`` exactly.

    Parameters
    ----------
    C : sparse matrix of shape (n_new, n)
        Weights of the new points to the training points.
    degrees : ndarray of shape (n,)
    vectors : ndarray of shape (n, m)
        The selected unit vectors ``v``.
    eigenvalues : ndarray of shape (m,)
        Their ``lambda > 0``.
    b : float
        ``beta / vol``.
    c : ndarray of shape (m,)

    Returns
    -------
    ndarray of shape (n_new, m)
    """
    m = vectors.shape[1]
    Sv = nystrom_extension(C, degrees, vectors, np.ones(m))
    d_new = np.asarray(sp.csr_matrix(C).sum(axis=1)).ravel()
    t = np.sqrt(d_new / degrees.sum())
    lam = np.asarray(eigenvalues, dtype=np.float64)
    return (Sv - t[:, None] * (lam * c)[None, :]) / (1.0 + lam * b)[None, :]


class FCSC(ConstrainedClusteringMixin):
    """Flexible constrained spectral clustering (Wang & Davidson), exact 2-way and K-way.

    Parameters
    ----------
    n_clusters : int, default=2
        ``2`` uses the 2-way sign cut, ``K > 2`` the K-way embedding + k-means.
    affinity : {"knn", "rbf", "precomputed"}, default="knn"
        ``"knn"`` is the k-NN Gaussian graph (that of :class:`~spectralink.NCut`);
        ``"rbf"`` the dense RBF of the FCSC code (per-feature variance, see
        :func:`fcsc_rbf_affinity`; the paper's graph), where a point whose affinities
        all underflow is linked to its nearest neighbour (:func:`connect_isolated`);
        ``"precomputed"`` takes ``X`` as a square affinity, where a zero-degree point
        gets a unit self-loop and forms its own component (both with a warning).
    n_neighbors : int, default=20
        Neighbours of the ``"knn"`` graph.
    sigma : float, default=None
        Bandwidth of the ``"knn"`` graph.
    beta : "auto", "paper", None or float, default="auto"
        Threshold ``beta / vol`` on ``v^T Q_bar v`` (unit ``v``). ``"paper"`` (or
        ``None``) applies the rule of the FCSC code (module docstring); ``"auto"`` the
        value a partition satisfying every constraint attains, with ``v`` kept exactly
        orthogonal to the trivial ``D^{1/2} 1`` (:func:`fcsc_solve`); a float is used as
        given.
    normalize : bool, default=True
        K-way only: scale the embedding rows to unit length before k-means. The FCSC
        code does not (``False``); with few constraints its vectors concentrate on the
        constrained points and the unconstrained rows collapse near 0, which row scaling
        undoes.
    max_samples : int, default=5000
        Largest ``n`` accepted: FCSC diagonalises a dense n x n matrix (O(n^2) memory,
        O(n^3) time; 5000 points need 200 MB per matrix). Raise it knowingly.
    n_init : int, default=10
        k-means restarts (K-way).
    random_state : int, RandomState or None
        Seeds the eigensolver start and k-means.
    <guard>

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    embedding_ : ndarray of shape (n_samples, m)
        ``D^{-1/2} v sqrt(vol)`` (2-way) or the weighted K-way embedding.
    eigenvalues_ : ndarray of shape (m,)
        ``lambda`` of the selected vectors (> 0).
    costs_ : ndarray of shape (m,)
        ``v^T L_bar v`` of the selected unit vectors.
    beta_ : float
        ``beta / vol`` used.
    fallback_ : bool
        Whether the held-out guard returned the unconstrained normalized cut of the same
        graph (NJW on its ``n_clusters`` smoothest eigenvectors) instead of FCSC's
        partition (``guard``). With a handful of constraints that the unconstrained cut
        already satisfies, the relaxed constrained vectors can be pulled away from the
        cluster structure (standardised wine, 50 random pairs), and with many
        cannot-links and outlying points they can concentrate on a few points
        (standardised segmentation, k = 7: one cluster of 2297 of 2310 points).
    guard_ : GuardReport or None
        The guard's counts (``None`` when it did not run).
        ``embedding_``, ``eigenvalues_``, ``costs_`` and ``beta_`` always describe FCSC's
        solution.
    affinity_matrix_ : ndarray or sparse matrix of shape (n_samples, n_samples)

    Notes
    -----
    ``FCSC(affinity="rbf", beta="paper", normalize=False)`` reproduces the FCSC code
    (``csp.m`` / ``csp_K.m``) and the previous defaults. Its K-way beta asks every
    selected ``v`` to keep about half of the largest constraint value, which only
    vectors concentrated on a few constrained points reach: with few constraints the
    partitions degenerate (e.g. 1998 / 1 / 1 points on three separated blobs) and most
    constraints end violated. The defaults (k-NN graph, ``beta="auto"``, row
    normalisation) ask for what the true partition attains instead.

    The dense RBF scales each feature by its variance, so typical affinities decay like
    ``exp(-n_features)``: on 256-dimensional USPS nearly all of them underflow and the
    degrees span many orders of magnitude, which makes ``Q_bar`` extremely
    ill-conditioned. The K-way beta rule also asks every selected ``v`` to carry about
    half of its norm on the constrained points. Both explain weak FCSC accuracy with few
    constraints; ``affinity="knn"`` and ``normalize=True`` are the usual remedies.

    ``predict`` links each new point to the training points with the fitted graph's
    weights (its ``n_neighbors`` nearest with the k-NN Gaussian weights; every training
    point with the RBF weights of ``"rbf"``, in blocks of rows) and reads the KKT
    condition at it (:func:`fcsc_extension`, a Nyström extension of the selected
    vectors): 2-way labels by the sign of ``D^{-1/2} v``, K-way by the nearest k-means
    centre of the (row-normalised) embedding. When the labels are the normalized cut's
    (``fallback_``), new points get the weighted vote of their neighbours. The model
    keeps the training features for a feature affinity (n x n_features floats, also
    pickled) and the selected vectors; with ``"precomputed"`` ``predict`` takes affinities of shape
    (n_new, n_train).

    References
    ----------
    Wang, X., & Davidson, I. (2010). Flexible constrained spectral clustering. KDD.
    Wang, X., Qian, B., & Davidson, I. (2014). On constrained spectral clustering and its
    applications. Data Mining and Knowledge Discovery 28(1).
    """

    _requires_constraints = True
    _max_samples_param = "max_samples"
    _scale = "dense n x n eigenproblem: O(n^2) memory, O(n^3) time"
    _parameter_constraints = {
        "guard": GUARD_CONSTRAINT,
        **COMMON_CONSTRAINTS,
        "affinity": [StrOptions({"knn", "rbf", "precomputed"})],
        "beta": [StrOptions({"auto", "paper"}), RealRange(-np.inf, np.inf), None],
        "normalize": ["boolean"],
        "max_samples": [Int(2)],
    }

    def __init__(
        self,
        n_clusters: int = 2,
        *,
        affinity: str = "knn",
        n_neighbors: int = 20,
        sigma: float | None = None,
        beta: float | str | None = "auto",
        normalize: bool = True,
        max_samples: int = 5000,
        n_init: int = 10,
        random_state: int | np.random.RandomState | None = None,
        guard: str | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.beta = beta
        self.normalize = normalize
        self.max_samples = max_samples
        self.n_init = n_init
        self.random_state = random_state
        self.guard = guard

    def _feature_affinities(self) -> set:
        return {"rbf", "knn"}

    def _fit(self, X, constraints):
        n = X.shape[0]
        if n > self.max_samples:
            raise ValueError(
                f"FCSC solves a dense {n} x {n} eigenproblem (O(n^3) time, O(n^2) memory); "
                f"n_samples={n} exceeds max_samples={self.max_samples}. Raise max_samples "
                "if you have the memory and time, or use SCACS for large data."
            )
        if self.affinity == "rbf":
            W = connect_isolated(fcsc_rbf_affinity(X), np.asarray(X, dtype=np.float64))
            self._fit_X_, self._graph_spec_ = X, {"kind": "rbf"}
        else:
            W = self._affinity(X)
            check_connectivity(W, n_clusters=self.n_clusters)
        basis = fcsc_basis(W)
        out = fcsc_solve(
            basis,
            constraints,
            self.n_clusters,
            beta=self.beta,
            normalize=self.normalize,
            n_init=self.n_init,
            random_state=self.random_state,
        )
        labels = out["labels"]
        if self.guard is not None and not constraints.is_empty:
            self._basis_ = basis  # for the guard's refits only; its plan takes it
        self.affinity_matrix_ = W
        self.labels_ = labels
        self.embedding_ = out["embedding"]
        self.eigenvalues_ = out["eigenvalues"]
        self.costs_ = out["costs"]
        self.beta_ = out["beta"]
        self._set_extension(basis, out, constraints)
        return self

    def _guard_plan(self, X) -> GuardPlan:
        basis = self.__dict__.pop("_basis_")  # kept by _fit for the guard only

        def refit(constraints):
            out = fcsc_solve(
                basis, constraints, self.n_clusters, beta=self.beta, normalize=self.normalize,
                n_init=self.n_init, random_state=self.random_state,
            )  # fmt: skip
            return out["labels"]

        return replace(super()._guard_plan(X), refit=refit)

    def _set_extension(self, basis: FCSCBasis, out: dict, constraints) -> None:
        """What :meth:`predict` needs: the vectors behind ``labels_`` and their centres."""
        k = self.n_clusters
        self._degrees_ = basis.degrees
        V, lam = out["vectors"], out["eigenvalues"]
        c = np.zeros(V.shape[1])
        if isinstance(self.beta, str) and self.beta == "auto":
            # the multiplier of v orthogonal to t (fcsc_extension): c = t^T Q_bar v, and
            # t^T D^{-1/2} = 1^T / sqrt(vol)
            P, Q = constraint_block(constraints)
            Vp = V[P] / np.sqrt(basis.degrees[P])[:, None]
            c = np.asarray(Q @ Vp).sum(axis=0) / np.sqrt(basis.volume)
        scale = np.sqrt(basis.volume) * (1.0 if k == 2 else 1.0 - out["costs"])
        self._extension_ = {
            "kind": "fcsc", "vectors": V, "eigenvalues": lam, "b": out["beta"], "c": c,
            "scale": scale,
        }  # fmt: skip
        if k > 2:
            emb = normalize_rows(self.embedding_) if self.normalize else self.embedding_
            self._centers_ = cluster_means(emb, self.labels_, k)

    def predict(self, X: ArrayLike) -> np.ndarray:
        if getattr(self, "_graph_spec_", {}).get("kind") != "rbf":
            return super().predict(X)
        # the RBF links every new point to every training point: bound the dense block
        X = self._check_new_features(X)
        step = max(1, _RBF_BLOCK // len(self.labels_))
        return np.concatenate(
            [super(FCSC, self).predict(X[i : i + step]) for i in range(0, X.shape[0], step)]
        )

    predict.__doc__ = ConstrainedClusteringMixin.predict.__doc__

    def _new_point_affinity(self, X):
        if self._graph_spec_["kind"] != "rbf":
            return super()._new_point_affinity(X)
        A, nearest = fcsc_rbf_cross_affinity(self._fit_X_, self._check_new_features(X))
        return sp.csr_matrix(A), nearest

    def _embed_new(self, C):
        ext = self._extension_
        lam = ext["eigenvalues"]
        if np.any(1.0 + lam * ext["b"] < NYSTROM_MIN_EIGENVALUE):
            return None
        v = fcsc_extension(C, self._degrees_, ext["vectors"], lam, ext["b"], ext["c"])
        d_new = np.asarray(C.sum(axis=1)).ravel()
        inv = np.zeros_like(d_new)
        inv[d_new > 0] = 1.0 / np.sqrt(d_new[d_new > 0])
        emb = v * inv[:, None] * ext["scale"]
        if self.n_clusters == 2 or not self.normalize:
            return emb
        return normalize_rows(emb)

    def _predict_from_affinity(self, C):
        F = self._embed_new(C)
        if F is None:
            return weighted_vote(C, self.labels_, self.n_clusters)
        if self.n_clusters == 2:
            return (F[:, 0] > 0).astype(np.int64)  # the sign cut of the fit
        return nearest_center(F, self._centers_)


FCSC.__doc__ = with_guard_doc(FCSC.__doc__, "NCut at its defaults")
