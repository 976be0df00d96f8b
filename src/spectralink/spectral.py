"""Spectral core: smallest eigenvectors of the normalized Laplacian and k-means on rows.

Every method of the library takes its spectral view of a graph from
:func:`laplacian_eigenvectors`: the ``m`` eigenvectors of ``L = I - D^{-1/2} W D^{-1/2}``
with the smallest eigenvalues, the trivial one ``D^{1/2} 1 / ||D^{1/2} 1||`` included,
with deterministic signs. Small graphs use a dense solver; large sparse graphs use ARPACK
on the normalized adjacency with the exact null space (one vector per connected component)
deflated; LOBPCG preconditioned by algebraic multigrid (PyAMG, optional) is available on request.
Inside :func:`shared_eigenvectors` a graph decomposed once is not decomposed again (model
selection fits many candidates and folds on one graph).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import (
    ArpackError,
    ArpackNoConvergence,
    LinearOperator,
    eigsh,
    factorized,
    lobpcg,
)
from sklearn import config_context
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from .graph import check_connectivity, degrees, normalized_adjacency
from .parallel import limit_threads
from .progress import current_stage, stage
from .utils import SHARED_MAX_BYTES, content_hash, register_cache, shared_scope, sharing

__all__ = [
    "DENSE_EIGEN_MAX",
    "amg_preconditioner",
    "cluster_means",
    "constrained_fiedler",
    "has_pyamg",
    "njw_clustering",
    "kmeans_rows",
    "laplacian_eigenvectors",
    "nearest_center",
    "normalize_rows",
    "nystrom_extension",
    "shared_eigenvectors",
    "sharing_eigenvectors",
    "sign_flip",
]

#: Graphs with at most this many nodes are decomposed densely: below it LAPACK's full
#: reduction costs less than ARPACK's start-up (crossover measured near 200 nodes on k-NN
#: graphs, ``benchmarks/bench_eigensolver.py``); above it ARPACK computes only the vectors used
DENSE_EIGEN_MAX = 200
#: Up to this many nodes a dense decomposition takes under a second: ARPACK failing to
#: converge there falls back to it silently (the result is exact either way)
DENSE_QUIET_MAX = 2000


def sign_flip(V: np.ndarray) -> np.ndarray:
    """Make every column's largest-magnitude entry positive (deterministic signs)."""
    idx = np.argmax(np.abs(V), axis=0)
    signs = np.sign(V[idx, np.arange(V.shape[1])])
    signs[signs == 0] = 1.0
    return V * signs


def laplacian_eigenvectors(
    W: sp.spmatrix,
    n_components: int,
    *,
    solver: str = "auto",
    tol: float = 1e-8,
    random_state: int | np.random.RandomState | None = None,
    check_connected: bool = True,
    n_clusters: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_components`` smallest eigenpairs of the normalized Laplacian of ``W``.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric non-negative affinity with zero diagonal (see :func:`graph.check_affinity`).
    n_components : int
        Number of eigenvectors ``m`` (the trivial one included).
    solver : {"auto", "dense", "arpack", "lobpcg"}
        ``"auto"`` is dense up to ``DENSE_EIGEN_MAX`` nodes (or for many components),
        else ARPACK (fastest on k-NN graphs up to 10^6 nodes). Up to ``DENSE_QUIET_MAX``
        nodes ARPACK may use the products a dense solve would cost, then hands over to
        it. ``"lobpcg"`` uses an AMG preconditioner when PyAMG is installed
        (unpreconditioned otherwise). Both iterative solvers take the exact null
        space of ``L`` (one vector per connected component) as given.
    tol : float
        Convergence tolerance of the iterative solvers (residual norm).
    random_state : int, RandomState or None
        Seeds the iterative solvers' starting vectors (inside :func:`shared_eigenvectors`,
        the block's seed is used instead and a graph already decomposed is not again).
    check_connected : bool
        Warn (``DisconnectedGraphWarning``) when the graph has several components.
    n_clusters : int, default=None
        Clusters the caller will form from the vectors: with at most that many components
        the warning is information, not advice (see :func:`graph.check_connectivity`).

    Returns
    -------
    eigenvalues : ndarray of shape (m,), ascending, in [0, 2]
    eigenvectors : ndarray of shape (n, m), orthonormal columns, signs fixed by
        :func:`sign_flip`.
    """
    n = W.shape[0]
    if not 1 <= n_components <= n:
        raise ValueError(f"n_components={n_components} must be in [1, n_samples={n}].")
    with stage("eigenvectors", unit="matvecs") as st:
        st.detail = f"{n_components} of {n}, {_resolve_solver(solver, n, n_components)}"
        if check_connected:
            check_connectivity(W, n_clusters=n_clusters)
        shared = shared_scope()
        if shared is None:
            return _laplacian_eigenvectors(W, n_components, solver, tol, random_state)
        seed, max_bytes = shared
        key = (content_hash(W), n_components, solver, tol, seed)
        # the shared seed, not the caller's: the result must not depend on which fit of a
        # model search decomposes the graph first
        (vals, vecs), found = _CACHE.get_or_compute(
            key, lambda: _laplacian_eigenvectors(W, n_components, solver, tol, seed), max_bytes
        )
        if found:
            st.detail += " (shared)"
        return vals, vecs


def _resolve_solver(solver: str, n: int, n_components: int) -> str:
    """``"auto"``: dense up to ``DENSE_EIGEN_MAX`` nodes or for many components, else ARPACK."""
    if solver != "auto":
        return solver
    return "dense" if n <= DENSE_EIGEN_MAX or n_components >= n // 5 else "arpack"


def _laplacian_eigenvectors(W, n_components, solver, tol, random_state):
    n = W.shape[0]
    S, d = normalized_adjacency(W)
    solver = _resolve_solver(solver, n, n_components)
    if solver == "dense":
        mu, V = _dense(S, n_components)
    elif solver == "arpack":
        # on a small graph ARPACK may spend no more than the dense solve would cost: a nearly
        # disconnected graph (weights underflowing) crowds eigenvalues near 0 and stalls it
        budget = _dense_matvec_budget(S, n_components) if n <= DENSE_QUIET_MAX else None
        try:
            mu, V = _arpack(S, d, n_components, tol, random_state, max_matvecs=budget)
        except (ArpackError, _OverBudget):
            # many eigenvalues of L crowd near 0 when Gaussian weights underflow (a bandwidth
            # far below the neighbour distances): Lanczos would otherwise run for hours
            if n > DENSE_FALLBACK_MAX:
                raise ValueError(
                    f"the eigensolver did not converge in {ARPACK_MAXITER} restarts: the graph "
                    "is nearly disconnected (many eigenvalues of the Laplacian within the "
                    "tolerance of 0, typically because sigma is far below the neighbour "
                    "distances). Increase sigma or n_neighbors, or use solver='dense' "
                    f"(n = {n} is above the dense fallback limit {DENSE_FALLBACK_MAX})."
                ) from None
            if n > DENSE_QUIET_MAX:
                warnings.warn(
                    f"ARPACK did not converge in {ARPACK_MAXITER} restarts (graph nearly "
                    "disconnected); using the dense eigensolver.",
                    RuntimeWarning,
                    stacklevel=2,
                )
            mu, V = _dense(S, n_components)
    elif solver == "lobpcg":
        mu, V = _lobpcg_amg(S, d, n_components, tol, random_state)
    else:
        raise ValueError(f"solver must be 'auto', 'dense', 'arpack' or 'lobpcg', got {solver!r}.")
    lam = np.clip(1.0 - mu, 0.0, 2.0)
    order = np.argsort(lam, kind="stable")
    return lam[order], sign_flip(V[:, order])


# --------------------------------------------------------------------------- sharing
_CACHE = register_cache()
#: default memory bound of the eigenvector cache
SHARED_EIGEN_MAX_BYTES = SHARED_MAX_BYTES


@contextlib.contextmanager
def shared_eigenvectors(
    seed: int = 0, *, clear: bool = True, max_bytes: int = SHARED_EIGEN_MAX_BYTES
) -> Iterator[None]:
    """Reuse the eigenvectors of a graph already decomposed (and the neighbours of rows
    already searched, :func:`spectralink.neighbors.kneighbors`), inside the ``with`` block.

    Within the block :func:`laplacian_eigenvectors` keeps its results in a cache keyed by
    the graph's content (a hash of its arrays, so copies of one graph in other processes
    match too), ``n_components``, ``solver`` and ``tol``: a model search that fits many
    candidates and folds on one graph decomposes it once per ``n_components`` instead of
    once per fit. The iterative solvers are seeded with ``seed`` instead of the caller's
    ``random_state``, so a result never depends on which fit came first (the dense solver
    uses no seed). Callers get copies.

    Parameters
    ----------
    seed : int, default=0
        Start of the iterative eigensolvers inside the block.
    clear : bool, default=True
        Empty the cache when the block ends. Worker processes of a search pass False so
        that their later tasks reuse it; the cache then stays bounded by ``max_bytes``,
        least recently used entries dropped first.
    max_bytes : int, default=256 MiB
        Memory bound of the cache, applied when an entry is added in this block (an
        inner block's bound replaces the outer's while it lasts).
    """
    with sharing(seed, clear=clear, max_bytes=max_bytes):
        yield


def sharing_eigenvectors() -> bool:
    """Whether the caller runs inside :func:`shared_eigenvectors` (a model search, whose
    fits are scored on held-out pairs: diagnostics meant for a person can be skipped)."""
    return shared_scope() is not None


#: ARPACK restarts before giving up (a connected k-NN graph needs a few dozen at most)
ARPACK_MAXITER = 1000
#: largest n for which a non-converged ARPACK falls back to the dense solver (~0.7 GB at 10k)
DENSE_FALLBACK_MAX = 12000


def has_pyamg() -> bool:
    try:
        import pyamg  # noqa: F401
    except ImportError:
        return False
    return True


def _dense(S, m):
    """The m largest eigenpairs of S (smallest of L), largest first, by LAPACK."""
    n = S.shape[0]
    # tridiagonal reduction + back-transformation: one thread below about 2500 rows
    with limit_threads(4.0 / 3.0 * n**3 + 4.0 * n * n * m):
        vals, vecs = la.eigh(S.toarray(), subset_by_index=[n - m, n - 1])
    return vals[::-1], vecs[:, ::-1]


def _component_null_vectors(S, d):
    """Exact eigenvectors of eigenvalue 0 of L: D^{1/2} 1_C / ||.|| per connected component.

    Isolated points are left out: their row of L is e_i (eigenvalue 1, see ``graph.safe_degrees``).
    """
    n_comp, labels = connected_components(S, directed=False)
    U = np.zeros((S.shape[0], n_comp))
    U[np.arange(S.shape[0]), labels] = np.sqrt(d)
    U = U[:, np.bincount(labels, minlength=n_comp) > 1]
    return U / np.linalg.norm(U, axis=0)


class _OverBudget(Exception):
    """ARPACK used the matrix-vector products a dense solve would have cost."""


def _dense_matvec_budget(S, m: int) -> int:
    """Products of ARPACK that cost about as much as :func:`_dense` on the same graph.

    A dense solve is ``4/3 n^3`` flops at BLAS speed; one Lanczos step is a sparse product
    and an orthogonalisation against ``ncv`` vectors, at about 1/20 of that speed (both
    measured in ``benchmarks/bench_eigensolver.py``).
    """
    n = S.shape[0]
    ncv = min(n, max(2 * m + 1, 20))
    return max(100, int(4.0 / 3.0 * n**3 / (20.0 * (S.nnz + 2.0 * ncv * n))))


def _arpack(S, d, m, tol, random_state, max_matvecs=None):
    n = S.shape[0]
    # single-vector Lanczos finds a repeated eigenvalue only once: with c components it would
    # return one eigenvalue 0 instead of c and silently skip later eigenpairs. The null space is
    # known exactly, so put it in by hand and deflate it (moved to -2, below spec(S) in [-1, 1]).
    U = _component_null_vectors(S, d)
    c = U.shape[1]
    if c >= m:
        return np.ones(m), U[:, :m]
    rng = check_random_state(random_state)
    v0 = rng.uniform(-1, 1, n)
    v0 -= U @ (U.T @ v0)
    progress = current_stage()

    used = [0]

    def matvec(x):
        progress.update()
        used[0] += 1
        if max_matvecs is not None and used[0] > max_matvecs:
            raise _OverBudget
        return S @ x - 3.0 * (U @ (U.T @ x))

    op = LinearOperator((n, n), matvec=matvec, dtype=np.float64)
    # largest algebraic eigenvalues of S = smallest of L; matvecs only, no factorisation.
    # ARPACK's BLAS calls are matrix-vector products (n x ncv): threads only wait for each
    # other there (twice slower on two threads than on one, measured at n = 100,000): one
    with limit_threads(0):
        mu, V = eigsh(op, k=m - c, which="LA", tol=tol, v0=v0, maxiter=ARPACK_MAXITER)
    return np.concatenate([np.ones(c), mu[::-1]]), np.hstack([U, V[:, ::-1]])


def amg_preconditioner(L: sp.spmatrix, shift: float) -> object | None:
    """Smoothed-aggregation AMG preconditioner of ``L + shift I`` (``None`` without PyAMG).

    The shift keeps the hierarchy well defined on a singular Laplacian. "local" Jacobi
    weights avoid PyAMG's spectral-radius estimate, which draws from NumPy's global random
    generator and would make results irreproducible for a fixed ``random_state``.
    """
    if not has_pyamg():
        return None  # LOBPCG is still correct without it, only slower to converge
    import pyamg

    n = L.shape[0]
    ml = pyamg.smoothed_aggregation_solver(
        (L + shift * sp.identity(n, format="csr")).tocsr(),
        smooth=("jacobi", {"weighting": "local"}),
    )
    return ml.aspreconditioner()


def _lobpcg_amg(S, d, m, tol, random_state):
    n = S.shape[0]
    L = (sp.identity(n, format="csr") - S).tocsr()
    # the exact null space (one vector per component) is a constraint, not a target: a block
    # solver would find it, but deflating it shrinks the block and the iterations
    U = _component_null_vectors(S, d)
    c = U.shape[1]
    if c >= m:
        return np.ones(m), U[:, :m]
    M = amg_preconditioner(L, shift=1e-5)
    X = check_random_state(random_state).standard_normal((n, m - c + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        lam, V = lobpcg(L, X, M=M, Y=U, tol=tol, largest=False, maxiter=2000)
    V = np.hstack([U, V[:, : m - c]])
    # polish with Rayleigh-Ritz so the returned basis is exactly orthonormal
    Q, _ = np.linalg.qr(V)
    H = Q.T @ (L @ Q)
    w, Z = la.eigh((H + H.T) / 2)
    return 1.0 - w, Q @ Z


def normalize_rows(F: np.ndarray) -> np.ndarray:
    """Scale every row to unit Euclidean norm; all-zero rows stay zero."""
    norms = np.linalg.norm(F, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return F / norms


def kmeans_rows(
    F: np.ndarray,
    n_clusters: int,
    *,
    normalize: bool = False,
    n_init: int = 10,
    random_state: int | np.random.RandomState | None = None,
) -> np.ndarray:
    """k-means (scikit-learn, k-means++) on the rows of an embedding; returns labels.

    Runs on one thread unless the problem is large (about 20 Lloyd iterations of
    ``3 n k m`` operations per start, see :func:`spectralink.parallel.threads_for`).
    """
    if normalize:
        F = normalize_rows(F)
    km = KMeans(n_clusters=n_clusters, n_init=n_init, random_state=random_state)
    n, m = F.shape
    with stage("assignment") as st, limit_threads(60.0 * n * n_clusters * m * n_init):
        st.detail = f"k-means, {n_clusters} clusters, {n_init} starts"
        # the parameters are ours and valid: scikit-learn's per-call validation would cost
        # more than k-means itself on a few hundred rows
        with config_context(skip_parameter_validation=True):
            return km.fit_predict(np.ascontiguousarray(F)).astype(np.int64)


def cluster_means(F: np.ndarray, labels: np.ndarray, n_clusters: int) -> np.ndarray:
    """Mean row of ``F`` per cluster, shape (n_clusters, m); an empty cluster's mean is 0.

    These are the k-means centres at the fixed point the labels come from; out-of-sample
    points are assigned to them (:func:`nearest_center`).
    """
    centers = np.zeros((n_clusters, F.shape[1]))
    np.add.at(centers, labels, F)
    counts = np.bincount(labels, minlength=n_clusters)
    return centers / np.maximum(counts, 1)[:, None]


def nearest_center(F: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """Index of the nearest row of ``centers`` (Euclidean) for every row of ``F``."""
    d2 = (
        np.einsum("ij,ij->i", F, F)[:, None]
        - 2.0 * F @ centers.T
        + np.einsum("ij,ij->i", centers, centers)[None, :]
    )
    return np.argmin(d2, axis=1).astype(np.int64)


def nystrom_extension(
    C: sp.spmatrix, degrees_fit: np.ndarray, vectors: np.ndarray, eigenvalues: np.ndarray
) -> np.ndarray:
    """Nyström extension of eigenvectors of the normalized adjacency to new points.

    For eigenpairs ``S U = U diag(mu)`` of ``S = D^{-1/2} W D^{-1/2}`` and the weights
    ``C`` (n_new x n) of new points to the training points,

        u(x) = (1 / mu) sum_j w(x, x_j) / sqrt(d(x) d_j) U_j,   d(x) = sum_j w(x, x_j),

    the eigen-equation read at ``x`` (Bengio et al. 2004; Fowlkes et al. 2004). On a
    training point with its own row of ``W`` it returns its row of ``U`` exactly. Rows
    with ``d(x) = 0`` are returned as zeros.

    Parameters
    ----------
    C : sparse matrix of shape (n_new, n)
    degrees_fit : ndarray of shape (n,)
        Degrees ``d_j`` of the training graph (as in :func:`graph.normalized_adjacency`).
    vectors : ndarray of shape (n, m)
    eigenvalues : ndarray of shape (m,)
        The eigenvalues ``mu`` of ``S`` (``1 - lambda`` for the normalized Laplacian's
        ``lambda``); all must be non-zero.

    References
    ----------
    Bengio, Y., Paiement, J.-F., Vincent, P., Delalleau, O., Le Roux, N., & Ouimet, M.
    (2004). Out-of-sample extensions for LLE, Isomap, MDS, Eigenmaps, and spectral
    clustering. NIPS.
    Fowlkes, C., Belongie, S., Chung, F., & Malik, J. (2004). Spectral grouping using the
    Nyström method. IEEE TPAMI 26(2).
    """
    C = sp.csr_matrix(C)
    d_new = np.asarray(C.sum(axis=1)).ravel()
    inv = np.zeros_like(d_new)
    inv[d_new > 0] = 1.0 / np.sqrt(d_new[d_new > 0])
    scaled = vectors / np.sqrt(degrees_fit)[:, None]
    return inv[:, None] * (C @ scaled) / np.asarray(eigenvalues)[None, :]


def njw_clustering(
    W: sp.spmatrix,
    n_clusters: int,
    *,
    n_init: int = 10,
    random_state: int | np.random.RandomState | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ng-Jordan-Weiss clustering of ``W``: ``(eigenvalues, embedding, labels)``.

    The ``n_clusters`` smallest normalized-Laplacian eigenvectors, rows scaled to unit
    length, k-means on the rows. NCut is exactly this; E2CP and LSCP apply it to their
    refined graphs.
    """
    vals, V = laplacian_eigenvectors(
        W, n_clusters, random_state=random_state, n_clusters=n_clusters
    )
    labels = kmeans_rows(V, n_clusters, normalize=True, n_init=n_init, random_state=random_state)
    return vals, V, labels


_NO_ADMISSIBLE = (
    "the linear constraints admit only v = 0 (balance g^T v = 0 together with v_i = -v_j "
    "for the cannot-links): no SCLC partition exists for these constraints."
)


def constrained_fiedler(
    W: sp.spmatrix,
    g: np.ndarray,
    cl: tuple | None = None,
    *,
    random_state: int | np.random.RandomState | None = None,
    tol: float = 1e-4,
    maxiter: int = 2000,
    strict: bool = False,
) -> np.ndarray:
    """Second eigenvector of ``(D - W) v = lambda diag(g) v``, optionally under SCLC constraints.

    Minimises ``v^T L v / v^T D_g v`` subject to ``g^T v = 0`` and, with ``cl`` (a tuple
    ``(i, j, weights)``), ``v_i + v_j = 0`` for every cannot-link (SCLC, Xu, Li & Schuurmans
    2009, their linear encoding). Works on ``w = D_g^{1/2} v`` with
    the projected operator ``Pi (l_max I - D_g^{-1/2} L D_g^{-1/2}) Pi`` and its top
    eigenvector (Lanczos), ``l_max = 2 max d / min g``; the projector onto the null space of
    the constraint rows ``B`` uses one sparse factorisation of ``B B^T``.

    ``strict=False`` (a start for COSC) accepts an unconverged vector and replaces a zero one
    by a random vector; ``strict=True`` (the SCLC baseline) warns with a
    ``ConvergenceWarning`` and raises ``ValueError`` when the constraints force ``v = 0``.
    """
    n = W.shape[0]
    d = degrees(W)
    isg = 1.0 / np.sqrt(g)
    rows = sp.csr_matrix(np.sqrt(g)[None, :])
    if cl is not None and len(cl[0]):
        ci, cj = np.asarray(cl[0]), np.asarray(cl[1])
        k = len(ci)
        C = sp.csr_matrix(
            (
                np.concatenate([isg[ci], isg[cj]]),
                (np.tile(np.arange(k), 2), np.concatenate([ci, cj])),
            ),
            shape=(k, n),
        )
        Bt = sp.vstack([rows, C]).tocsr()
    else:
        Bt = rows
    gram = (Bt @ Bt.T).tocsc()
    # even cannot-link cycles make the rows of B dependent; the tiny ridge keeps B B^T
    # factorable and does not change the projection of vectors in the range of B
    gram = gram + 1e-12 * gram.diagonal().max() * sp.identity(gram.shape[0], format="csc")
    solve = factorized(gram)

    def proj(x):
        return x - Bt.T @ solve(Bt @ x)

    lmax = 2.0 * d.max() / g.min()
    Wcsr = sp.csr_matrix(W)

    def op(x):
        x = proj(x)
        y = isg * x
        Mx = isg * (d * y - Wcsr @ y)
        return proj(lmax * x - Mx)

    rng = check_random_state(random_state)
    r = rng.uniform(-1, 1, n)
    v0 = proj(r)
    if np.linalg.norm(v0) < 1e-8 * np.linalg.norm(r):
        # a random vector has no admissible component: the null space of B is {0}
        if strict:
            raise ValueError(_NO_ADMISSIBLE)
        return rng.standard_normal(n)
    A = LinearOperator((n, n), matvec=op, dtype=float)
    try:
        _, V = eigsh(A, k=1, which="LA", v0=v0, tol=tol, maxiter=maxiter)
        u = V[:, 0]
    except ArpackNoConvergence as exc:
        if strict:
            warnings.warn(
                f"the constrained eigenvector did not converge in {maxiter} Lanczos "
                "restarts; the partition comes from the last iterate.",
                ConvergenceWarning,
                stacklevel=2,
            )
        u = exc.eigenvectors[:, 0] if exc.eigenvectors.shape[1] else v0
    w = proj(u)
    v = isg * w
    if not strict:
        return v if np.ptp(v) > 0 else rng.standard_normal(n)
    # u has unit norm: a vanishing projection means the constraints leave no admissible v
    if np.linalg.norm(w) < 1e-8:
        raise ValueError(_NO_ADMISSIBLE)
    return v
