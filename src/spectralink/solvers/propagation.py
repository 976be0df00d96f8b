"""E2CP pairwise constraint propagation and the similarity refinement, exact and scalable.

Implements Lu & Ip's exhaustive and efficient constraint propagation (ECCV 2010) in the
closed form used by the LSCP paper (Multimedia Tools and Applications 74, 2015):

    F = eta^2 (eta I + L)^-1 Y (eta I + L)^-1                                  (eq. 11)

with ``L = I - D^-1/2 W D^-1/2`` and the signed constraint matrix ``Y``, followed by the
similarity refinement

    W*_ij = 1 - (1 - F_ij)(1 - W_ij)   if F_ij >= 0,   (1 + F_ij) W_ij  otherwise   (eq. 12)

with ``F`` clipped to [-1, 1] first (eq. 12 maps [0, 1] into itself only for such F,
and the normalised propagation does not guarantee it when degrees vary).

Two exact evaluations of ``F``:

* :func:`propagate_dense`: ``F`` as an n x n array, through a dense Cholesky factor of
  ``eta I + L`` (the reference) or iterative solves for larger n.
* :func:`propagate_pairs`: ``F`` only on requested pairs. ``Y = E_P Y_PP E_P'`` for the
  constrained points ``P``, so ``F = eta^2 U Y_PP U'`` with ``(eta I + L) U = E_P``. The
  spectrum of ``eta I + L`` lies in ``[eta, 2 + eta]`` (condition number at most 9 for
  eta = 0.25), so a Chebyshev iteration on that interval solves a whole block of columns
  of ``U`` at a known rate (1/2 per step) with one sparse-times-block product per step;
  a block of constraints at a time, ``F_ij = eta^2 <U_i, (U Y_PP)_j>`` is accumulated on
  the pairs. Neither ``F`` nor the whole ``U`` is ever formed.

:func:`refine_dense` and :func:`refine_masked` apply eq. 12 on the full matrix (dense:
positive propagation creates edges everywhere) or on ``supp(W)`` plus the constrained
pairs only (sparse; exact for that masked variant).
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

from ..constraints import Constraints
from ..graph import normalized_adjacency
from . import compiled_module

__all__ = [
    "masked_pairs",
    "propagation_operator",
    "propagate_dense",
    "propagate_pairs",
    "refine_dense",
    "refine_masked",
    "refine_values",
    "solve_shifted_laplacian",
    "spectral_bounds",
    "chebyshev_steps",
]


def _check_eta(eta) -> float:
    if (
        isinstance(eta, bool)
        or not isinstance(eta, numbers.Real)
        or not (np.isfinite(eta) and eta > 0)
    ):
        raise ValueError(f"eta must be a positive finite number, got {eta!r}.")
    return float(eta)


def _check_graph(W, constraints) -> tuple[sp.csr_matrix, Constraints]:
    if not sp.issparse(W):
        W = sp.csr_matrix(np.asarray(W, dtype=np.float64))
    W = sp.csr_matrix(W, dtype=np.float64)
    if W.shape[0] != W.shape[1]:
        raise ValueError(f"W must be square, got shape {W.shape}.")
    if not isinstance(constraints, Constraints):
        raise ValueError(f"constraints must be a Constraints object, got {type(constraints)}.")
    if constraints.n_samples != W.shape[0]:
        raise ValueError(
            f"constraints are over {constraints.n_samples} points but W has {W.shape[0]}."
        )
    return W, constraints


def spectral_bounds(eta: float) -> tuple[float, float]:
    """``[eta, 2 + eta]``, an interval containing the spectrum of ``eta I + L``.

    The normalized Laplacian of a graph with non-negative weights has its spectrum in
    [0, 2] (0 is attained; 2 only for bipartite components).
    """
    return eta, 2.0 + eta


def propagation_operator(W: sp.spmatrix, eta: float = 0.25) -> sp.csr_matrix:
    """``eta I + L = (1 + eta) I - D^-1/2 W D^-1/2`` (sparse, SPD, eigenvalues in [eta, 2 + eta]).

    Isolated points get a unit degree (:func:`spectralink.graph.normalized_adjacency`).
    """
    eta = _check_eta(eta)
    S, _ = normalized_adjacency(W)
    n = S.shape[0]
    return ((1.0 + eta) * sp.identity(n, format="csr") - S).tocsr()


def _compiled_kernels():
    """The numba kernels module, or None when numba is not importable."""
    return compiled_module("_propagation_jit")


def _spmm(M: sp.csr_matrix, X: np.ndarray, out: np.ndarray) -> np.ndarray:
    jit = _compiled_kernels()
    if jit:
        jit.spmm(M.indptr, M.indices, M.data, X, out)
    else:
        out[...] = M @ X
    return out


def _column_norms(A: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("ij,ij->j", A, A, dtype=np.float64))


def chebyshev_steps(lo: float, hi: float, reduction: float) -> int:
    """Chebyshev iterations that reduce every residual by ``reduction`` on ``[lo, hi]``.

    After ``k`` steps the residual is ``p_k(M) r_0`` with ``max |p_k| = 1 / T_k(s)`` over
    the spectrum, ``s = (hi + lo) / (hi - lo)``: the smallest ``k`` with
    ``T_k(s) = cosh(k acosh s) >= reduction``. For ``[eta, 2 + eta]`` and ``eta = 0.25``
    the rate is ``1 / (s + sqrt(s^2 - 1)) = 1/2`` per step (18 steps for 1e-5).
    """
    if reduction <= 1.0:
        return 0
    s = (hi + lo) / (hi - lo)
    return int(np.ceil(np.arccosh(reduction) / np.arccosh(s)))


def _chebyshev(M, B, X, lo, hi, tol, max_iter):
    """Chebyshev cycles (Saad, Iterative Methods, Alg. 12.1) from ``X``, restarted on the
    true residual until every column meets ``tol``; ``None`` if a cycle fails to reduce
    the residual (``[lo, hi]`` does not contain the spectrum)."""
    jit = _compiled_kernels()
    b_norm = np.maximum(_column_norms(B), np.finfo(float).tiny)
    if X.any():
        R = B - _spmm(M, X, np.empty_like(X))
        rel = (_column_norms(R) / b_norm).max()
    else:  # solve_shifted_laplacian starts from zero: the first residual is B itself
        R, rel = B.copy(), 1.0
    theta, delta = 0.5 * (hi + lo), 0.5 * (hi - lo)
    sigma = theta / delta
    D, D_next = np.empty_like(X), np.empty_like(X)
    n_iter = 0
    while rel > tol:
        steps = min(chebyshev_steps(lo, hi, rel / tol), max_iter - n_iter)
        if steps <= 0:
            raise RuntimeError(
                f"the Chebyshev iteration did not reach tol={tol} in {max_iter} iterations."
            )
        np.multiply(R, 1.0 / theta, out=D)
        rho = 1.0 / sigma
        for _ in range(steps):
            rho_next = 1.0 / (2.0 * sigma - rho)
            c_d, c_r = rho_next * rho, 2.0 * rho_next / delta
            if jit:
                c_d, c_r = X.dtype.type(c_d), X.dtype.type(c_r)
                jit.chebyshev_step(M.indptr, M.indices, M.data, D, X, R, D_next, c_d, c_r)
            else:
                X += D
                R -= M @ D
                np.multiply(D, c_d, out=D_next)
                D_next += c_r * R
            D, D_next = D_next, D
            rho = rho_next
        n_iter += steps
        # the recurrence drifts from the true residual in floating point: recompute it
        np.subtract(B, _spmm(M, X, R), out=R)
        rel_next = (_column_norms(R) / b_norm).max()
        if not rel_next < rel:  # also catches an overflow to nan
            return None
        rel = rel_next
    return X


def _conjugate_gradients(M, B, X, tol, max_iter):
    """Conjugate gradients on every column at once (column-wise step sizes) from ``X``."""
    dtype = X.dtype
    R = B - _spmm(M, X, np.empty_like(X))
    P = R.copy()
    MP = np.empty_like(P)
    b_norm2 = np.einsum("ij,ij->j", B, B, dtype=np.float64)
    rr = np.einsum("ij,ij->j", R, R, dtype=np.float64)
    stop = (tol**2) * np.maximum(b_norm2, np.finfo(float).tiny)
    for _ in range(max_iter):
        if np.all(rr <= stop):
            return X
        _spmm(M, P, MP)
        pMp = np.einsum("ij,ij->j", P, MP, dtype=np.float64)
        alpha = np.divide(rr, pMp, out=np.zeros_like(rr), where=pMp > 0).astype(dtype)
        X += P * alpha
        MP *= alpha
        R -= MP
        rr_new = np.einsum("ij,ij->j", R, R, dtype=np.float64)
        beta = np.divide(rr_new, rr, out=np.zeros_like(rr), where=rr > 0).astype(dtype)
        P *= beta
        P += R
        rr = rr_new
    if np.all(rr <= stop):
        return X
    raise RuntimeError(f"conjugate gradients did not reach tol={tol} in {max_iter} iterations.")


def solve_shifted_laplacian(
    M: sp.spmatrix,
    B: np.ndarray,
    *,
    bounds: tuple[float, float] | None = None,
    tol: float = 1e-10,
    max_iter: int = 500,
    dtype=np.float64,
) -> np.ndarray:
    """Solve ``M U = B`` for a block of right-hand sides of the SPD operator ``eta I + L``.

    Parameters
    ----------
    M : sparse matrix of shape (n, n)
        Symmetric positive definite.
    B : ndarray of shape (n, b)
    bounds : (lo, hi), default=None
        An interval containing the spectrum of ``M``, ``[eta, 2 + eta]`` for
        ``eta I + L``. Given, the solver is the Chebyshev iteration on that interval:
        no inner products, one sparse-times-block product per step, a known rate
        (``1/2`` per step for ``eta = 0.25``), and restarts on the true residual
        ``B - M U`` until it meets ``tol``. ``None``: conjugate gradients on every
        column at once (also the fallback if the interval proves wrong).
    tol : float, default=1e-10
        Stop when every column's residual satisfies ``||b - M u|| <= tol ||b||``.
    max_iter : int, default=500
    dtype : {np.float64, np.float32}
        ``np.float32`` halves memory and time; its rounding floor (about 1e-6 relative)
        must stay below ``tol``.

    Returns
    -------
    U : ndarray of shape (n, b), C-contiguous, of ``dtype``

    Notes
    -----
    With numba, each Chebyshev step is one fused pass, parallel over rows, doing the
    product and every update (:mod:`spectralink.solvers._propagation_jit`).

    References
    ----------
    Saad, Y. (2003). Iterative Methods for Sparse Linear Systems, 2nd ed., SIAM,
    Algorithm 12.1 (Chebyshev acceleration).
    """
    dtype = np.dtype(dtype)
    M = sp.csr_matrix(M, dtype=dtype)
    M.sort_indices()
    B = np.ascontiguousarray(B, dtype=dtype)
    X = np.zeros(B.shape, dtype=dtype)
    if bounds is not None:
        lo, hi = (float(v) for v in bounds)
        if not 0 < lo < hi:
            raise ValueError(f"bounds must satisfy 0 < lo < hi, got {bounds!r}.")
        U = _chebyshev(M, B, X, lo, hi, tol, max_iter)
        if U is not None:
            return U
        # the iterate may have blown up outside the interval: start again from zero
        X[...] = 0
    return _conjugate_gradients(M, B, X, tol, max_iter)


def propagate_dense(
    W: sp.spmatrix,
    constraints: Constraints,
    eta: float = 0.25,
    *,
    max_n: int = 5000,
    solver: str = "auto",
    tol: float = 1e-10,
) -> np.ndarray:
    """Dense ``F = eta^2 (eta I + L)^-1 Y (eta I + L)^-1`` (eq. 11) as an n x n array.

    ``F = eta^2 U Y_PP U'`` with ``(eta I + L) U = E_P``; ``U`` comes from a dense
    Cholesky factor (``solver="cholesky"``, ``O(n^3)``, the exact reference) or from
    a block Chebyshev iteration on the sparse operator (``solver="cg"``, the
    name kept for compatibility; relative residual ``tol``, see
    :func:`solve_shifted_laplacian`);
    ``"auto"`` uses Cholesky up to 2000 points. Refused above ``max_n`` points.

    Returns
    -------
    F : ndarray of shape (n, n), symmetric
    """
    W, cons = _check_graph(W, constraints)
    n = W.shape[0]
    if n > max_n:
        raise ValueError(
            f"the dense propagation needs n x n matrices; n={n} exceeds max_n={max_n}. "
            "Raise max_n or use propagate_pairs (masked refinement)."
        )
    eta = _check_eta(eta)
    if solver not in ("auto", "cholesky", "cg"):
        raise ValueError(f"solver must be 'auto', 'cholesky' or 'cg', got {solver!r}.")
    if cons.is_empty:
        return np.zeros((n, n))
    M = propagation_operator(W, eta)
    P = cons.constrained_points
    E = np.zeros((n, len(P)))
    E[P, np.arange(len(P))] = 1.0
    if solver == "cholesky" or (solver == "auto" and n <= 2000):
        U = la.cho_solve(la.cho_factor(M.toarray(), lower=True), E)
    else:
        U = solve_shifted_laplacian(M, E, bounds=spectral_bounds(eta), tol=tol)
    del E
    V = np.asarray((cons.signed_matrix[P][:, P] @ U.T).T)
    F = U @ V.T
    F += F.T
    F *= 0.5 * eta**2
    return F


def _constraint_blocks(pairs: np.ndarray, max_points: int) -> list[np.ndarray]:
    """Split constraint indices into consecutive groups touching at most ``max_points`` points."""
    blocks, current, seen = [], [], set()
    for t, (a, b) in enumerate(pairs):
        new = {int(a), int(b)} - seen
        if current and len(seen) + len(new) > max_points:
            blocks.append(np.asarray(current))
            current, seen = [], set()
            new = {int(a), int(b)}
        current.append(t)
        seen |= new
    if current:
        blocks.append(np.asarray(current))
    return blocks


def propagate_pairs(
    W: sp.spmatrix,
    constraints: Constraints,
    rows: np.ndarray,
    cols: np.ndarray,
    eta: float = 0.25,
    *,
    tol: float = 1e-10,
    block_points: int | None = None,
    memory_limit: float = 1e9,
) -> np.ndarray:
    """``F_ij`` of eq. 11 on the pairs ``(rows[t], cols[t])`` only, without forming ``F``.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric affinity.
    constraints : Constraints
    rows, cols : ndarray of shape (n_pairs,)
        The requested pairs.
    eta : float, default=0.25
    tol : float, default=1e-10
        Relative residual of the solves ``(eta I + L) u = e_a``
        (:func:`solve_shifted_laplacian`, Chebyshev on ``[eta, 2 + eta]``). With
        ``tol >= 1e-5`` the solves run in float32 (half the memory and time; float32
        rounding stays well below such a tolerance).
    block_points : int, default=None
        Constrained points solved for at once; ``None`` picks the largest block, up to
        512, whose workspace (five n x block arrays) fits in ``memory_limit`` bytes.
    memory_limit : float, default=1e9
        Bytes, used only to choose ``block_points``.

    Returns
    -------
    f : ndarray of shape (n_pairs,)

    Notes
    -----
    ``F = eta^2 sum_{(a,b)} Y_ab (g_a g_b' + g_b g_a')`` over the constraints, with
    ``g_a = (eta I + L)^-1 e_a``. The constraints are processed in blocks whose
    endpoints are solved together (``U``, n x block), so only one block of ``U`` is
    ever in memory; with ``V = U Y_block`` the block adds ``<U_i, V_j>`` to every
    requested pair. The points are renumbered by reverse Cuthill-McKee first so that
    the rows a graph row touches are close in memory. Time
    ``O(p (nnz(W) * iters + n_pairs))`` and memory ``O(n * block_points + n_pairs)``
    for ``p`` constrained points; ``iters`` is 18 for ``tol = 1e-5`` and ``eta = 0.25``.
    """
    W, cons = _check_graph(W, constraints)
    n = W.shape[0]
    eta = _check_eta(eta)
    rows = np.asarray(rows, dtype=np.int64).ravel()
    cols = np.asarray(cols, dtype=np.int64).ravel()
    if rows.shape != cols.shape:
        raise ValueError("rows and cols must have the same length.")
    if len(rows) and (min(rows.min(), cols.min()) < 0 or max(rows.max(), cols.max()) >= n):
        raise ValueError(f"pair indices must lie in [0, {n}).")
    f = np.zeros(len(rows))
    if cons.is_empty or len(rows) == 0:
        return f
    dtype = np.dtype(np.float32 if tol >= 1e-5 else np.float64)
    M = propagation_operator(W, eta).astype(dtype)
    # bandwidth-reducing renumbering: a row's neighbours sit close together in memory
    # (sparse-times-block products about 1.2-1.4x faster on the MNIST 70k graph)
    perm = reverse_cuthill_mckee(M, symmetric_mode=True).astype(np.int64)
    new_index = np.empty(n, dtype=np.int64)
    new_index[perm] = np.arange(n)
    M = sp.csr_matrix(M[perm][:, perm])
    M.sort_indices()
    pairs = new_index[np.vstack([cons.must_link, cons.cannot_link])]
    y = np.concatenate([cons.ml_weights, -cons.cl_weights])
    # requested pairs sorted by (renumbered) row, for locality of the dot products
    r, c = new_index[rows], new_index[cols]
    order = np.lexsort((c, r))
    r, c = r[order], c[order]
    if block_points is None:
        block_points = int(min(512, max(32, memory_limit // (5 * dtype.itemsize * n))))
    jit = _compiled_kernels()
    pair_chunk = int(max(1024, memory_limit // (16 * 8 * max(block_points, 1))))
    f_sorted = np.zeros(len(rows))
    bounds = spectral_bounds(eta)
    for block in _constraint_blocks(pairs, block_points):
        pts, local = np.unique(pairs[block].ravel(), return_inverse=True)
        local = local.reshape(-1, 2)
        E = np.zeros((n, len(pts)), dtype=dtype)
        E[pts, np.arange(len(pts))] = 1.0
        U = solve_shifted_laplacian(M, E, bounds=bounds, tol=tol, dtype=dtype)
        del E
        # Y restricted to this block's constraints, symmetric, on the block's points
        Yb = sp.csr_matrix(
            (
                np.concatenate([y[block], y[block]]).astype(dtype),
                (
                    np.concatenate([local[:, 0], local[:, 1]]),
                    np.concatenate([local[:, 1], local[:, 0]]),
                ),
            ),
            shape=(len(pts), len(pts)),
        )
        if jit:
            V = np.empty_like(U)
            Yc = Yb.tocoo()
            jit.times_sparse(U, Yc.row.astype(np.int64), Yc.col.astype(np.int64), Yc.data, V)
            jit.add_pair_dots(r, c, U, V, f_sorted)
        else:
            V = np.ascontiguousarray((Yb @ U.T).T)
            for s in range(0, len(r), pair_chunk):
                rs, cs = r[s : s + pair_chunk], c[s : s + pair_chunk]
                f_sorted[s : s + pair_chunk] += np.einsum(
                    "ij,ij->i", U[rs], V[cs], dtype=np.float64
                )
        del U, V
    f[order] = f_sorted
    return eta**2 * f


def refine_values(w: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Eq. 12 elementwise, with ``F`` clipped to [-1, 1]; maps ``w`` in [0, 1] into [0, 1]."""
    f = np.clip(f, -1.0, 1.0)
    return np.where(f >= 0, 1.0 - (1.0 - f) * (1.0 - w), (1.0 + f) * w)


def refine_dense(
    W: sp.spmatrix | np.ndarray, F: np.ndarray, *, overwrite_F: bool = False
) -> np.ndarray:
    """Exact refinement (eq. 12) of the whole matrix: a dense (n, n) array, zero diagonal.

    ``overwrite_F=True`` reuses the memory of ``F`` for the result (large n).
    """
    if W.shape != F.shape:
        raise ValueError(f"W {W.shape} and F {F.shape} must have the same shape.")
    R = F if overwrite_F else F.copy()
    np.clip(R, -1.0, 1.0, out=R)
    Wd = W.toarray() if sp.issparse(W) else np.asarray(W, dtype=np.float64)
    pos = R >= 0
    # eq. 12 written as updates of R = F: 1 - (1 - F)(1 - W) = F + W (1 - F); (1 + F) W
    Wd *= np.where(pos, 1.0 - R, 1.0 + R)
    R[~pos] = 0.0
    R += Wd
    np.fill_diagonal(R, 0.0)
    return R


def masked_pairs(W: sp.spmatrix, constraints: Constraints) -> tuple[np.ndarray, np.ndarray]:
    """Upper-triangular pairs of ``supp(W)`` union the constrained pairs (sorted, unique)."""
    Wu = sp.triu(sp.csr_matrix(W), k=1).tocoo()
    # constraint pairs are stored with i < j already
    pairs = np.vstack([constraints.must_link, constraints.cannot_link])
    n = np.int64(W.shape[0])
    keys = np.concatenate([Wu.row.astype(np.int64) * n + Wu.col, pairs[:, 0] * n + pairs[:, 1]])
    return np.divmod(np.unique(keys), n)


def refine_masked(
    W: sp.spmatrix, rows: np.ndarray, cols: np.ndarray, f: np.ndarray
) -> sp.csr_matrix:
    """Masked refinement (eq. 12) on the upper-triangular pairs ``(rows, cols)`` only.

    ``f`` holds ``F`` on those pairs (:func:`propagate_pairs`); every other entry of the
    result is 0. Returns a symmetric CSR matrix with zero diagonal.
    """
    W = sp.csr_matrix(W)
    n = W.shape[0]
    w = np.asarray(W[rows, cols], dtype=np.float64).ravel() if len(rows) else np.zeros(0)
    v = refine_values(w, np.asarray(f, dtype=np.float64))
    R = sp.csr_matrix(
        (np.concatenate([v, v]), (np.concatenate([rows, cols]), np.concatenate([cols, rows]))),
        shape=(n, n),
    )
    R.setdiag(0)
    R.eliminate_zeros()
    R.sort_indices()
    return R
