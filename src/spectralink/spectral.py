"""Spectral core: smallest eigenvectors of the normalized Laplacian and k-means on rows.

Every method of the library takes its spectral view of a graph from
:func:`laplacian_eigenvectors`: the ``m`` eigenvectors of ``L = I - D^{-1/2} W D^{-1/2}``
with the smallest eigenvalues, the trivial one ``D^{1/2} 1 / ||D^{1/2} 1||`` included,
with deterministic signs. Small graphs use a dense solver; large sparse graphs use
LOBPCG preconditioned by algebraic multigrid (PyAMG) when it is installed, else ARPACK
on the normalized adjacency.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh, lobpcg
from sklearn.cluster import KMeans
from sklearn.utils import check_random_state

from .graph import check_connectivity, normalized_adjacency

__all__ = [
    "DENSE_EIGEN_MAX",
    "kmeans_rows",
    "laplacian_eigenvectors",
    "normalize_rows",
    "sign_flip",
]

#: Graphs with at most this many nodes are decomposed densely (exact, fast enough).
DENSE_EIGEN_MAX = 2000


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
    random_state=None,
    check_connected: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_components`` smallest eigenpairs of the normalized Laplacian of ``W``.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric non-negative affinity with zero diagonal (see :func:`graph.check_affinity`).
    n_components : int
        Number of eigenvectors ``m`` (the trivial one included).
    solver : {"auto", "dense", "arpack", "lobpcg"}
        ``"auto"`` is dense up to ``DENSE_EIGEN_MAX`` nodes, then LOBPCG with an AMG
        preconditioner when PyAMG is importable, else ARPACK.
    tol : float
        Convergence tolerance of the iterative solvers (residual norm).
    random_state : int, RandomState or None
        Seeds the iterative solvers' starting vectors.
    check_connected : bool
        Warn (``DisconnectedGraphWarning``) when the graph has several components.

    Returns
    -------
    eigenvalues : ndarray of shape (m,), ascending, in [0, 2]
    eigenvectors : ndarray of shape (n, m), orthonormal columns, signs fixed by
        :func:`sign_flip`.
    """
    n = W.shape[0]
    if not 1 <= n_components <= n:
        raise ValueError(f"n_components={n_components} must be in [1, n_samples={n}].")
    if check_connected:
        check_connectivity(W)
    S, d = normalized_adjacency(W)
    if solver == "auto":
        if n <= DENSE_EIGEN_MAX or n_components >= n // 5:
            solver = "dense"
        else:
            solver = "lobpcg" if _has_pyamg() else "arpack"
    if solver == "dense":
        vals, vecs = la.eigh(S.toarray(), subset_by_index=[n - n_components, n - 1])
        mu, V = vals[::-1], vecs[:, ::-1]
    elif solver == "arpack":
        mu, V = _arpack(S, d, n_components, tol, random_state)
    elif solver == "lobpcg":
        mu, V = _lobpcg_amg(S, d, n_components, tol, random_state)
    else:
        raise ValueError(f"solver must be 'auto', 'dense', 'arpack' or 'lobpcg', got {solver!r}.")
    lam = np.clip(1.0 - mu, 0.0, 2.0)
    order = np.argsort(lam, kind="stable")
    return lam[order], sign_flip(V[:, order])


def _has_pyamg() -> bool:
    try:
        import pyamg  # noqa: F401
    except ImportError:
        return False
    return True


def _start_block(d: np.ndarray, m: int, random_state) -> np.ndarray:
    rng = check_random_state(random_state)
    X = rng.standard_normal((len(d), m))
    # the trivial eigenvector is known exactly: put it in the start block
    X[:, 0] = np.sqrt(d)
    return X


def _arpack(S, d, m, tol, random_state):
    rng = check_random_state(random_state)
    v0 = rng.uniform(-1, 1, S.shape[0])
    # largest algebraic eigenvalues of S = smallest of L; matvecs only, no factorisation
    mu, V = eigsh(S, k=m, which="LA", tol=tol, v0=v0)
    return mu[::-1], V[:, ::-1]


def _lobpcg_amg(S, d, m, tol, random_state):
    import pyamg

    n = S.shape[0]
    L = (sp.identity(n, format="csr") - S).tocsr()
    # a tiny diagonal shift keeps the AMG hierarchy well defined on the singular L
    ml = pyamg.smoothed_aggregation_solver(L + 1e-5 * sp.identity(n, format="csr"))
    M = ml.aspreconditioner()
    X = _start_block(d, m + 1, random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        lam, V = lobpcg(L, X, M=M, tol=tol, largest=False, maxiter=2000)
    lam, V = lam[:m], V[:, :m]
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
    random_state=None,
) -> np.ndarray:
    """k-means (scikit-learn, k-means++) on the rows of an embedding; returns labels."""
    if normalize:
        F = normalize_rows(F)
    km = KMeans(n_clusters=n_clusters, n_init=n_init, random_state=random_state)
    return km.fit_predict(np.ascontiguousarray(F)).astype(np.int64)
