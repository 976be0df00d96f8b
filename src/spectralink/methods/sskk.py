"""SSKK: semi-supervised kernel k-means, normalized-cut version.

Kulis, Basu, Dhillon & Mooney (ICML 2005), as used by CCSR/CCSKL as a baseline.

The constrained normalized cut of the graph ``A`` is a weighted kernel k-means problem
(Kulis et al. 2005, Sections 3-4) with

* penalty matrix ``W^c``: ``+w`` on must-links and ``-w`` on cannot-links, ``w = n / (k c)``
  with ``c`` the number of constraints (the setting of the CCSR/CCSKL experiments), times
  each constraint's own weight;
* kernel ``K = s D^{-1} + D^{-1} (A + W^c) D^{-1}`` and node weights ``alpha_i = d_i`` (the
  degrees of ``A``); ``s`` is a diagonal shift;
* initialisation by farthest-first traversal of the must-link neighbourhoods (connected
  components of the must-link graph) in kernel space, completed by farthest-first single
  points when there are fewer than ``k`` neighbourhoods; every other point joins its
  nearest seed, or a random one when it has no graph or constraint link to any seed
  (on a sparse graph kernel those distances carry no information).

The kernel is never formed. With ``P = A + W^c`` (sparse) and ``Z`` the cluster indicator
matrix, the kernel k-means distance of point ``i`` to cluster ``c`` is, up to a term that
depends only on ``i``,

    -2 (s [i in c] + (P Z)_ic / d_i) / s_c + (s s_c + z_c^T P z_c) / s_c^2,
    s_c = sum_{j in c} d_j,

so one assignment sweep costs ``O(nnz(P) k)``.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from scipy.sparse.linalg import ArpackNoConvergence, eigsh
from sklearn.utils import check_random_state

from ..constraints import Constraints
from ..graph import degrees
from ..utils import NON_NEGATIVE, Int, StrOptions
from ._base import COMMON_CONSTRAINTS, GUARD_CONSTRAINT, with_guard_doc
from ._graph import ConstrainedClusteringMixin

__all__ = [
    "SSKK",
    "kernel_kmeans_assign",
    "penalty_matrix",
    "psd_shift",
    "weighted_kernel_kmeans",
]


def penalty_matrix(
    constraints: Constraints, n_clusters: int, penalty: float | None = None
) -> sp.csr_matrix:
    """``W^c``: ``+w`` on must-links, ``-w`` on cannot-links, ``w = n / (k c)`` by default."""
    n = constraints.n_samples
    if constraints.is_empty:
        return sp.csr_matrix((n, n))
    if penalty is None:
        penalty = n / (n_clusters * len(constraints))
    return (penalty * constraints.signed_matrix).tocsr()


def _safe_degrees(A: sp.spmatrix) -> np.ndarray:
    d = degrees(A)
    # an isolated point has no affinity to spread; a unit weight keeps the kernel finite
    d[d <= 0] = 1.0
    return d


def psd_shift(
    P: sp.spmatrix, d: np.ndarray, *, random_state: int | np.random.RandomState | None = None
) -> float:
    """Smallest ``s >= 0`` making ``s D^{-1} + D^{-1} P D^{-1}`` PSD.

    That is ``-lambda_min(D^{-1/2} P D^{-1/2})`` (0 if already PSD).
    """
    r = 1.0 / np.sqrt(d)
    S = sp.csr_matrix(P.multiply(r[:, None]).multiply(r[None, :]))
    n = S.shape[0]
    if n <= 2000:
        lam = la.eigvalsh(S.toarray(), subset_by_index=[0, 0])[0]
    else:
        v0 = check_random_state(random_state).uniform(-1, 1, n)
        try:
            lam = eigsh(S, k=1, which="SA", tol=1e-6, v0=v0, maxiter=5000)[0][0]
        except ArpackNoConvergence as exc:
            if len(exc.eigenvalues) == 0:
                raise
            lam = float(np.min(exc.eigenvalues))
    # a tiny margin absorbs the eigensolver's error
    return max(0.0, -float(lam)) * (1.0 + 1e-6)


def _link_matrix(P, labels, k, member=None) -> np.ndarray:
    """``P Z`` for the (member-masked) one-hot cluster indicator ``Z`` (n x k, dense)."""
    n = len(labels)
    Z = np.zeros((n, k))
    # a dense one-hot block: sparse @ dense is several times faster than sparse @ sparse
    Z[np.arange(n), labels] = 1.0 if member is None else member
    return P @ Z


def _distances(P, d, shift, labels, k, member=None, PZ=None):
    """Kernel k-means distances up to a per-point constant (module docstring formula).

    Clusters are formed by the points with ``member`` True (all points by default).
    ``PZ`` is ``_link_matrix(P, labels, k, member)`` when the caller maintains it.
    """
    n = len(labels)
    member = np.ones(n, dtype=bool) if member is None else member
    if PZ is None:
        PZ = _link_matrix(P, labels, k, member)
    s = np.bincount(labels, weights=d * member, minlength=k)
    links = np.bincount(labels, weights=PZ[np.arange(n), labels] * member, minlength=k)
    own = np.zeros((n, k))
    own[np.flatnonzero(member), labels[member]] = shift
    with np.errstate(divide="ignore", invalid="ignore"):
        dist = -2.0 * (own + PZ / d[:, None]) / s + (shift * s + links) / s**2
    dist[:, s <= 0] = np.inf
    return dist, s, links


def _objective(s, links) -> float:
    """Weighted kernel k-means objective up to a constant: ``-sum_c z_c^T P z_c / s_c``."""
    nz = s > 0
    return -float(np.sum(links[nz] / s[nz]))


def _farthest_first(P, d, shift, constraints, k, rng) -> np.ndarray:
    """Initial labels: farthest-first over must-link neighbourhoods, then over points."""
    n = len(d)
    comp = constraints.ml_components
    sizes = np.bincount(comp)
    hoods = np.flatnonzero(sizes >= 2)
    seeds: list[np.ndarray] = [np.flatnonzero(comp == h) for h in hoods]
    if len(seeds) > k:
        Zn = sp.csr_matrix(
            (
                np.ones(sum(len(a) for a in seeds)),
                (np.concatenate(seeds), np.repeat(np.arange(len(seeds)), [len(a) for a in seeds])),
            ),
            shape=(n, len(seeds)),
        )
        Zd = sp.csr_matrix(Zn.multiply(d[:, None]))
        sn = np.asarray(Zd.sum(axis=0)).ravel()
        # centroid phi_a = sum_{j in a} d_j phi_j / s_a, so
        # <phi_a, phi_b> = (shift s_a [a = b] + 1_a^T P 1_b) / (s_a s_b)
        PZ = sp.csr_matrix(P @ Zn)
        self_ip = (shift * sn + np.asarray(Zn.multiply(PZ).sum(axis=0)).ravel()) / sn**2
        chosen = [int(rng.randint(len(seeds)))]
        mind = np.full(len(seeds), np.inf)
        while len(chosen) < k:
            b = chosen[-1]
            col = np.asarray((Zn.T @ PZ[:, b]).todense()).ravel() / (sn * sn[b])
            col[b] += shift / sn[b]
            mind = np.minimum(mind, self_ip + self_ip[b] - 2.0 * col)
            mind[chosen] = -np.inf
            top = np.flatnonzero(mind == mind.max())
            chosen.append(int(rng.choice(top)))
        seeds = [seeds[c] for c in chosen]
    # fewer neighbourhoods than clusters: add single points by farthest-first
    labels = np.full(n, -1)
    for c, a in enumerate(seeds):
        labels[a] = c
    while len(seeds) < k:
        taken = labels >= 0
        if len(seeds) == 0:
            pick = int(rng.randint(n))
        else:
            part = np.where(taken, labels, 0)
            dist, _, _ = _distances(P, d, shift, part, len(seeds), taken)
            # distance to the nearest seed, plus K_ii = s / d_i
            far = dist.min(axis=1) + shift / d
            far[taken] = -np.inf
            top = np.flatnonzero(far == far.max())
            pick = int(rng.choice(top))
        labels[pick] = len(seeds)
        seeds.append(np.array([pick]))
    taken = labels >= 0
    dist, _, _ = _distances(P, d, shift, np.where(taken, labels, 0), k, taken)
    out = np.argmin(dist, axis=1)
    # on a sparse graph kernel most points have no affinity to any seed; their distances
    # differ only by the seeds' self-similarity, which would send them all to one
    # cluster. Such points start in a random cluster instead.
    unlinked = (abs(P) @ taken.astype(np.float64)) == 0
    out[unlinked] = rng.randint(k, size=int(unlinked.sum()))
    out[taken] = labels[taken]
    return out


def weighted_kernel_kmeans(
    P: sp.spmatrix,
    d: np.ndarray,
    labels: np.ndarray,
    n_clusters: int,
    *,
    shift: float = 0.0,
    max_iter: int = 100,
) -> tuple[np.ndarray, float, int]:
    """Weighted kernel k-means on ``K = shift D^{-1} + D^{-1} P D^{-1}`` with weights ``d``.

    Batch assignment sweeps from ``labels`` until no point moves or ``max_iter``. An
    emptied cluster is re-seeded with the point farthest from its own cluster.

    Returns
    -------
    labels : ndarray of shape (n,)
    objective : float, ``-sum_c z_c^T P z_c / s_c`` (lower is better)
    n_iter : int
    """
    labels = np.asarray(labels, dtype=np.int64).copy()
    n = len(labels)
    best_obj, best_labels = np.inf, labels.copy()
    n_iter = 0
    Pc = sp.csc_matrix(P)
    PZ = _link_matrix(P, labels, n_clusters)
    for n_iter in range(1, max_iter + 1):  # noqa: B007 (returned)
        dist, s, links = _distances(P, d, shift, labels, n_clusters, PZ=PZ)
        obj = _objective(s, links)
        if obj < best_obj - 1e-12 * abs(best_obj):
            best_obj, best_labels = obj, labels.copy()
        new = np.argmin(dist, axis=1)
        for c in np.flatnonzero(np.bincount(new, minlength=n_clusters) == 0):
            # re-seed an emptied cluster with the worst-placed point of a non-singleton cluster
            own = dist[np.arange(n), new]
            own[np.bincount(new, minlength=n_clusters)[new] <= 1] = -np.inf
            new[int(np.argmax(own))] = c
        moved = np.flatnonzero(new != labels)
        if len(moved) == 0:
            break
        # after the first sweeps few points move: update P Z by their columns only
        if len(moved) > n // 8:
            PZ = _link_matrix(P, new, n_clusters)
        else:
            delta = np.zeros((len(moved), n_clusters))
            delta[np.arange(len(moved)), new[moved]] = 1.0
            delta[np.arange(len(moved)), labels[moved]] = -1.0
            PZ += Pc[:, moved] @ delta
        labels = new
    dist, s, links = _distances(P, d, shift, labels, n_clusters)
    obj = _objective(s, links)
    # an indefinite kernel (shift below the PSD bound) can make sweeps non-monotone
    if obj > best_obj:
        labels, obj = best_labels, best_obj
    return labels, obj, n_iter


def kernel_kmeans_assign(
    C: sp.spmatrix, labels: np.ndarray, volumes: np.ndarray, links: np.ndarray
) -> np.ndarray:
    """Nearest kernel-space centroid of new points under ``K = D^{-1} P D^{-1}``.

    A new point ``x`` with weights ``C`` (n_new x n) to the training points has
    ``K(x, j) = w(x, x_j) / (d(x) d_j)``; with centroids weighted by the degrees, its
    squared distance to cluster ``c`` is, up to a term of ``x`` alone,
    ``-2 w(x, c) / (d(x) s_c) + z_c^T P z_c / s_c^2`` (the module docstring's formula
    without the shift). ``volumes`` are the ``s_c``, ``links`` the ``z_c^T P z_c``.
    """
    k = len(volumes)
    n = len(labels)
    onehot = sp.csr_matrix((np.ones(n), (np.arange(n), labels)), shape=(n, k))
    W = (sp.csr_matrix(C) @ onehot).toarray()
    d = W.sum(axis=1)
    d[d <= 0] = 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        dist = -2.0 * W / (d[:, None] * volumes[None, :]) + links / volumes**2
    dist[:, volumes <= 0] = np.inf
    return np.argmin(dist, axis=1).astype(np.int64)


class SSKK(ConstrainedClusteringMixin):
    """Semi-supervised kernel k-means, normalized-cut version (SSKK).

    Parameters
    ----------
    n_clusters : int
        Number of clusters k.
    affinity : {"knn", "precomputed"}, default="knn"
        ``"knn"``: symmetric k-NN Gaussian graph from features; ``"precomputed"``: ``X``
        is a square affinity matrix.
    n_neighbors : int, default=20
        Neighbours of the k-NN graph.
    sigma : float, default=None
        Gaussian bandwidth of the graph; ``None`` is the mean distance to the k-th
        neighbour.
    penalty : float, default=None
        Constraint penalty ``w``; ``None`` is ``n / (k c)`` (``c`` = number of constraints).
    shift : float or {"auto"}, default="auto"
        Diagonal shift ``s`` of the kernel ``s D^{-1} + D^{-1}(A + W^c)D^{-1}``. This kernel
        is in general indefinite (cannot-links, and the graph itself, give it negative
        eigenvalues), and kernel k-means sweeps on an indefinite kernel need not decrease
        the objective. The shift does not change the objective's minimisers, but it makes
        points reluctant to leave their cluster, so a large shift from the start freezes the
        initialisation. ``"auto"`` therefore runs two phases: unshifted sweeps (keeping the
        best partition seen), then sweeps with the smallest PSD-making shift
        ``-lambda_min(D^{-1/2}(A + W^c)D^{-1/2})`` (one sparse eigensolve), which decrease
        the objective monotonically until convergence. A number uses that fixed shift
        throughout (``0.0`` = no shift, with a warning when constraints are present).
    n_init : int, default=10
        Restarts (the farthest-first traversal starts from a random neighbourhood); the
        partition with the lowest kernel k-means objective is kept.
    max_iter : int, default=100
        Maximum assignment sweeps per restart.
    random_state : int, RandomState or None
        Seeds the initialisations and the eigensolver.
    <guard>

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    affinity_matrix_ : sparse matrix of shape (n_samples, n_samples)
    shift_ : float
        Diagonal shift of the final sweeps.
    penalty_ : float
        Constraint penalty used (0 without constraints).
    objective_ : float
        ``-sum_c z_c^T (A + W^c) z_c / vol(c)`` of the returned partition.
    n_iter_ : int
        Sweeps of the kept restart (both phases).

    Notes
    -----
    Memory and time are linear in the number of graph edges plus constraints: the
    ``n x n`` kernel is never formed. Without constraints this is weighted kernel k-means
    for the normalized cut of ``A`` (Dhillon, Guan & Kulis 2004), initialised by
    farthest-first traversal over single points.

    ``predict`` is kernel k-means's assignment step for a point outside the training set:
    a new point ``x``, linked to its ``n_neighbors`` nearest training points with the
    graph's Gaussian weights ``w(x, x_j)`` (it has no constraint), goes to the cluster
    whose kernel-space centroid is nearest, ``argmin_c -2 w(x, c) / (d(x) s_c) + z_c^T P
    z_c / s_c^2`` (:func:`kernel_kmeans_assign`; ``s_c`` the cluster's volume,
    ``P = A + W^c``). The diagonal shift is left out: it only helps the sweeps converge,
    and a point outside the training set has no diagonal entry in the fitted kernel.
    With ``affinity="knn"`` the model keeps a reference to the training features (n x
    n_features floats, also pickled); with ``"precomputed"`` ``predict`` takes
    affinities of shape (n_new, n_train).

    References
    ----------
    Kulis, B., Basu, S., Dhillon, I., & Mooney, R. (2005). Semi-supervised graph clustering:
    a kernel approach. ICML, 457-464.
    Dhillon, I., Guan, Y., & Kulis, B. (2004). Kernel k-means, spectral clustering and
    normalized cuts. KDD, 551-556.
    """

    _parameter_constraints = {
        "guard": GUARD_CONSTRAINT,
        **COMMON_CONSTRAINTS,
        "affinity": [StrOptions({"knn", "precomputed"})],
        "penalty": [NON_NEGATIVE, None],
        "shift": [StrOptions({"auto"}), NON_NEGATIVE],
        "max_iter": [Int(1)],
    }

    def __init__(
        self,
        n_clusters: int = 2,
        *,
        affinity: str = "knn",
        n_neighbors: int = 20,
        sigma: float | None = None,
        penalty: float | None = None,
        shift: str | float = "auto",
        n_init: int = 10,
        max_iter: int = 100,
        random_state: int | np.random.RandomState | None = None,
        guard: str | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.penalty = penalty
        self.shift = shift
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state
        self.guard = guard

    def _fit(self, X, constraints):
        A = self._affinity(X)
        self.affinity_matrix_ = A
        self._fit_graph(A, constraints)
        return self

    def _fit_graph(self, A, constraints):
        """Everything after the graph (also used by the benchmarks to share it)."""
        k = self.n_clusters
        rng = check_random_state(self.random_state)
        d = _safe_degrees(A)
        Wc = penalty_matrix(constraints, k, self.penalty)
        self.penalty_ = (
            0.0
            if constraints.is_empty
            else float(
                self.penalty if self.penalty is not None else A.shape[0] / (k * len(constraints))
            )
        )
        P = (A + Wc).tocsr()
        if isinstance(self.shift, str):
            shift = psd_shift(P, d, random_state=rng.randint(2**31 - 1))
            phases = (0.0, shift)
        else:
            shift = float(self.shift)
            if shift == 0.0 and not constraints.is_empty:
                warnings.warn(
                    "SSKK with shift=0 runs kernel k-means on an indefinite kernel; sweeps may "
                    "not decrease the objective (the best partition seen is kept).",
                    RuntimeWarning,
                    stacklevel=3,
                )
            phases = (shift,)
        self.shift_ = shift
        best = (np.inf, None, 0)
        for _ in range(self.n_init):
            labels = _farthest_first(P, d, phases[0], constraints, k, rng)
            n_iter = 0
            for s in phases:
                labels, obj, it = weighted_kernel_kmeans(
                    P, d, labels, k, shift=s, max_iter=self.max_iter
                )
                n_iter += it
            if obj < best[0]:
                best = (obj, labels, n_iter)
        self.objective_, self.labels_, self.n_iter_ = best
        # the unshifted kernel-space centroids, for predict
        _, self._cluster_volumes_, self._cluster_links_ = _distances(P, d, 0.0, self.labels_, k)
        return self

    def _predict_from_affinity(self, C):
        return kernel_kmeans_assign(C, self.labels_, self._cluster_volumes_, self._cluster_links_)


SSKK.__doc__ = with_guard_doc(SSKK.__doc__, "NCut at its defaults")
