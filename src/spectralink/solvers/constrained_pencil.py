"""Constrained-cut generalised eigenproblems ``L v = lambda (Q - beta I) v`` (FCSC, SCACS).

Shared by FCSC (Wang & Davidson 2010, KKT system ``L_bar v = lambda (Q_bar - beta/vol I) v``)
and SCACS (Li et al. 2015, eq. 16 ``A u = lambda (Q_hat - beta S_hat) u``). The right-hand
matrix is indefinite, so a QZ solver returns round-off complex values; the routes here are
symmetric and exact:

* :func:`definite_pencil_eigh`: the symmetric-definite pencil ``B u = mu (A + delta I) u``
  (``eigh``), ``lambda = 1/mu``, keep ``mu > 0``;
* :func:`lowrank_pencil_positive`: when ``A = diag(s)`` (an eigenbasis of the Laplacian) and
  ``B = G J G^T - b I`` with a low-rank signed ``G J G^T`` and ``b > 0``, every positive
  ``lambda`` solves the r x r secular equation ``det(M(mu) - J) = 0`` with
  ``M(mu) = G^T (mu diag(s) + b I)^{-1} G``, found to machine precision by bracketing and
  Brent's method; cost O(n r^2) per evaluation instead of O(n^3).

The constraint matrix of both papers (``Q_ij = +1`` same label, ``-1`` different,
``Q_ii = 1`` on constrained points) is read from a :class:`~spectralink.Constraints` by
:func:`constraint_block` and factorised as ``Q_PP = R J R^T`` by :func:`q_factor`.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from scipy.optimize import brentq

from ..constraints import Constraints

__all__ = [
    "constraint_block",
    "definite_pencil_eigh",
    "labelled_classes",
    "lowrank_pencil_positive",
    "partition_constraint_value",
    "q_factor",
]


def labelled_classes(constraints: Constraints) -> tuple[np.ndarray, np.ndarray] | None:
    """``(P, y_P)`` when the constraints are all pairs among labelled points, else ``None``.

    That is the protocol of SCACS and FCSC (``Constraints.from_labeled_subset``); then
    ``Q_PP = 2 H H^T - 1 1^T`` with ``H`` the one-hot labels, a rank <= k matrix.
    """
    idx = getattr(constraints, "labeled_indices", None)
    y = getattr(constraints, "labeled_y", None)
    if idx is None or y is None or constraints.is_weighted:
        return None
    c = len(idx)
    if len(constraints) != c * (c - 1) // 2:
        return None
    return np.asarray(idx, dtype=np.int64), np.asarray(y)


def constraint_block(constraints: Constraints) -> tuple[np.ndarray, sp.csr_matrix]:
    """Constrained points ``P`` and ``Q_PP``: signed pairs (+w ML, -w CL) plus ``Q_ii = 1``."""
    P = constraints.constrained_points
    Q = constraints.signed_matrix[P][:, P]
    return P, (Q + sp.identity(len(P), format="csr")).tocsr()


def q_factor(
    constraints: Constraints, *, rtol: float = 1e-10
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``Q_PP = R J R^T`` with ``R`` (|P| x r) of orthogonal columns and ``J = diag(+-1)``.

    From labels (rank <= k, O(c k^2)) when :func:`labelled_classes` applies, otherwise a
    dense eigendecomposition of ``Q_PP`` (O(|P|^3)).

    Returns
    -------
    P : ndarray of shape (|P|,)
    R : ndarray of shape (|P|, r)
    J : ndarray of shape (r,), entries +1 / -1
    """
    lab = labelled_classes(constraints)
    if lab is not None:
        P, y = lab
        _, codes = np.unique(y, return_inverse=True)
        counts = np.bincount(codes).astype(float)
        k = len(counts)
        # H = Ht N^{1/2} with orthonormal Ht, so Q_PP = Ht (N^{1/2} (2I - 11^T) N^{1/2}) Ht^T
        Ht = np.zeros((len(P), k))
        Ht[np.arange(len(P)), codes] = 1.0 / np.sqrt(counts[codes])
        sq = np.sqrt(counts)
        core = 2.0 * np.diag(counts) - np.outer(sq, sq)
        vals, vecs = la.eigh(core)
        basis = Ht @ vecs
    else:
        P, Q = constraint_block(constraints)
        vals, basis = la.eigh(Q.toarray())
    keep = np.abs(vals) > rtol * max(np.abs(vals).max(), 1e-300)
    vals, basis = vals[keep], basis[:, keep]
    return P, basis * np.sqrt(np.abs(vals)), np.sign(vals)


def definite_pencil_eigh(
    B: np.ndarray, A: np.ndarray, *, delta: float | None = None, mu_tol: float = 1e-12
) -> tuple[np.ndarray, np.ndarray]:
    """Positive eigenpairs of ``A u = lambda B u`` (``A`` PSD, ``B`` symmetric indefinite).

    ``A`` may be given as a 1-D array: its diagonal (solved as a scaled standard problem).

    Solved as the symmetric-definite pencil ``B u = mu (A + delta I) u`` with ``eigh``
    (``delta = 1e-10 ||A||`` by default) and ``lambda = 1 / mu`` for ``mu > mu_tol * max|mu|``.

    Returns
    -------
    lam : ndarray of shape (m,), ascending, > 0
    U : ndarray of shape (p, m), ``(A + delta I)``-orthonormal columns
    """
    B = (B + B.T) / 2.0
    if np.ndim(A) == 1:
        # diagonal A: the scaled standard problem, about 3x cheaper than the general one
        a = np.asarray(A, dtype=np.float64)
        if delta is None:
            delta = 1e-10 * max(np.abs(a).max(), 1e-300)
        r = 1.0 / np.sqrt(a + delta)
        mu, W = la.eigh(B * r[:, None] * r[None, :])
        U = W * r[:, None]
    else:
        A = (A + A.T) / 2.0
        if delta is None:
            delta = 1e-10 * max(np.abs(A).max(), 1e-300)
        mu, U = la.eigh(B, A + delta * np.eye(A.shape[0]))
    keep = mu > mu_tol * max(np.abs(mu).max(), 1e-300)
    mu, U = mu[keep], U[:, keep]
    order = np.argsort(-mu)
    return 1.0 / mu[order], U[:, order]


def lowrank_pencil_positive(
    s: np.ndarray, G: np.ndarray, J: np.ndarray, b: float
) -> tuple[np.ndarray, np.ndarray]:
    """Every positive eigenpair of ``diag(s) y = lambda (G J G^T - b I) y``.

    Parameters
    ----------
    s : ndarray of shape (n,), >= 0
        Diagonal of the left matrix (eigenvalues of a Laplacian).
    G : ndarray of shape (n, r)
    J : ndarray of shape (r,), entries +1 / -1
    b : float, > 0

    Returns
    -------
    lam : ndarray of shape (m,), ascending, > 0 (at most the number of +1 in ``J``)
    Y : ndarray of shape (n, m), unit columns

    Notes
    -----
    For ``mu = 1/lambda > 0``, ``mu diag(s) + b I`` is positive definite, so
    ``y = (mu diag(s) + b I)^{-1} G z`` with ``(M(mu) - J) z = 0``. The eigenvalues of
    ``M(mu) - J`` decrease with ``mu`` (``M`` decreases in the Loewner order), so the
    roots are counted by the number of positive eigenvalues and bracketed one by one.
    """
    if not b > 0:
        raise ValueError(f"the low-rank pencil needs b > 0, got {b!r}.")
    s = np.asarray(s, dtype=np.float64)
    G = np.asarray(G, dtype=np.float64)
    J = np.asarray(J, dtype=np.float64)
    Jm = np.diag(J)

    def shifted(mu: float) -> np.ndarray:
        Mm = (G / (mu * s + b)[:, None]).T @ G
        return (Mm + Mm.T) / 2.0 - Jm

    def n_pos(mu: float) -> int:
        return int(np.sum(la.eigvalsh(shifted(mu)) > 0))

    pos = s[s > 0]
    if pos.size == 0:
        return np.empty(0), np.empty((len(s), 0))
    scale = float(np.sum(G * G)) / b + 1.0
    # below lo every non-trivial term is ~ its mu = 0 value; above hi they vanish
    lo = 1e-12 * b / pos.max()
    hi = 1e12 * scale * b / pos.min()
    top, bottom = n_pos(lo), n_pos(hi)
    mus, vecs = [], []
    r = len(J)
    for j in range(bottom, top):
        # the (j+1)-th largest eigenvalue of M(mu) - J crosses zero once on (lo, hi)
        idx = r - 1 - j

        def f(log_mu, idx=idx):
            return la.eigvalsh(shifted(np.exp(log_mu)))[idx]

        a, c = np.log(lo), np.log(hi)
        if f(a) <= 0 or f(c) > 0:
            continue
        root = np.exp(brentq(f, a, c, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=400))
        w, Zv = la.eigh(shifted(root))
        z = Zv[:, np.argmin(np.abs(w))]
        y = (G @ z) / (root * s + b)
        mus.append(root)
        vecs.append(y / np.linalg.norm(y))
    if not mus:
        return np.empty(0), np.empty((len(s), 0))
    mus = np.asarray(mus)
    order = np.argsort(-mus)
    return 1.0 / mus[order], np.column_stack(vecs)[:, order]


def partition_constraint_value(constraints: Constraints, n_clusters: int, scale: float) -> float:
    """Mean ``v^T Q v`` over the k-1 unit directions of a partition that satisfies every
    constraint: ``(|P| + 2 w_ML + 2 w_CL / (k-1)) / scale``.

    For k balanced clusters the centred, orthonormalised indicators ``V`` have
    ``V V^T = 1/n_a - 1/n`` (same cluster a) and ``-1/n`` (different clusters), so the
    diagonal of ``Q`` (``|P|`` ones), each must-link and each cannot-link add
    ``(k-1)/n``, ``2(k-1)/n`` and ``2/n`` to ``trace(V^T Q V)``; divide by ``k-1``.
    ``scale`` is ``n`` for unit ``v`` (SCACS) and the volume for FCSC's ``D^{1/2}``-scaled
    ``v``. With c labelled points this is about ``(c / n) gamma_{k-1}``.
    """
    w = len(constraints.constrained_points) + 2.0 * float(np.sum(constraints.ml_weights))
    w += 2.0 * float(np.sum(constraints.cl_weights)) / max(n_clusters - 1, 1)
    return w / scale
