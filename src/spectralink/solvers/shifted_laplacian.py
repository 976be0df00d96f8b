"""Block solves with the shifted normalized Laplacian ``eta I + L`` (E2CP's linear systems).

The spectrum of ``eta I + L`` lies in ``[eta, 2 + eta]`` (:func:`spectral_bounds`), so a
Chebyshev iteration on that interval solves a whole block of right-hand sides at a known
rate with one sparse-times-block product per step (:func:`solve_shifted_laplacian`);
conjugate gradients are the fallback. :mod:`spectralink.solvers.propagation` builds the
operator and the right-hand sides.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import DTypeLike

from . import compiled_module

__all__ = ["chebyshev_steps", "solve_shifted_laplacian", "spectral_bounds"]


def spectral_bounds(eta: float) -> tuple[float, float]:
    """``[eta, 2 + eta]``, an interval containing the spectrum of ``eta I + L``.

    The normalized Laplacian of a graph with non-negative weights has its spectrum in
    [0, 2] (0 is attained; 2 only for bipartite components).
    """
    return eta, 2.0 + eta


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
    dtype: DTypeLike = np.float64,
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
