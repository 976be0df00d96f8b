"""Batched exact solver for many small convex QPs on the probability simplex.

Solves, for every ``i`` independently,

    min_w  1/2 w^T A_i w + b_i^T w   subject to  w >= 0,  1^T w = 1,

with ``A_i`` symmetric positive definite (``k x k``, ``k`` small). This is the per-point
problem of LSCP similarity learning (eq. 9 of the LSCP paper). The method is the
primal active-set method (Nocedal & Wright, Algorithm 16.3) run in lock-step over all
problems: every iteration solves, for each unfinished problem, the equality-constrained
KKT system on its current free set with one batched LAPACK call. The returned point
is the solution of the KKT system on the optimal support, so it is exact to rounding
error, not merely "converged".
"""

from __future__ import annotations

import numpy as np

__all__ = ["simplex_qp", "simplex_qp_kkt_residual"]


def _kkt_solve(A: np.ndarray, b: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Minimiser of 1/2 w'Aw + b'w with w_j = 0 off ``free`` and 1'w = 1, and its multiplier.

    The fixed coordinates are eliminated by replacing their rows and columns with the
    identity, which keeps every system the same size so one batched solve covers all.
    """
    m, k = b.shape
    pair = free[:, :, None] & free[:, None, :]
    K = np.zeros((m, k + 1, k + 1))
    K[:, :k, :k] = np.where(pair, A, 0.0)
    diag = np.arange(k)
    K[:, diag, diag] = np.where(free, K[:, diag, diag], 1.0)
    K[:, :k, k] = free
    K[:, k, :k] = free
    rhs = np.empty((m, k + 1))
    rhs[:, :k] = np.where(free, -b, 0.0)
    rhs[:, k] = 1.0
    sol = np.linalg.solve(K, rhs[:, :, None])[:, :, 0]
    w = np.where(free, sol[:, :k], 0.0)
    return w, sol[:, k]


# PLR0915 (statements): an active-set loop over all the problems at once: the working sets
# and the solves are updated together.
def simplex_qp(  # noqa: PLR0915
    A: np.ndarray, b: np.ndarray, *, tol: float = 1e-12, max_iter: int | None = None
) -> np.ndarray:
    """Exact minimisers of ``1/2 w'A_i w + b_i'w`` over the simplex, for all ``i`` at once.

    Parameters
    ----------
    A : ndarray of shape (n_problems, k, k)
        Symmetric positive definite matrices.
    b : ndarray of shape (n_problems, k)
    tol : float, default=1e-12
        Relative tolerance on the sign of the Lagrange multipliers of the bounds
        (optimality test), scaled by the magnitude of ``A`` and ``b``.
    max_iter : int, default=None
        Active-set iterations; ``None`` means ``10 * k + 10``, far above what a
        non-degenerate problem needs (each iteration adds or releases one bound).

    Returns
    -------
    W : ndarray of shape (n_problems, k)
        Non-negative rows summing to 1.

    Raises
    ------
    ValueError
        On malformed, non-finite or non-symmetric input.
    RuntimeError
        If some problem did not reach optimality within ``max_iter`` iterations.

    References
    ----------
    Nocedal, J., & Wright, S. J. (2006). Numerical Optimization, 2nd ed., section 16.5.
    """
    A = np.asarray(A, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if A.ndim != 3 or A.shape[1] != A.shape[2]:
        raise ValueError(f"A must have shape (n_problems, k, k), got {A.shape}.")
    if b.shape != A.shape[:2]:
        raise ValueError(f"b must have shape {A.shape[:2]}, got {b.shape}.")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
        raise ValueError("A and b must be finite.")
    n, k = b.shape
    if n == 0 or k == 0:
        return np.zeros((n, k))
    scale = 1.0 + np.max(np.abs(A), axis=(1, 2)) + np.max(np.abs(b), axis=1)
    if np.any(np.abs(A - A.transpose(0, 2, 1)).max(axis=(1, 2)) > 1e-10 * scale):
        raise ValueError("every A_i must be symmetric.")
    if max_iter is None:
        max_iter = 10 * k + 10

    # feasible start: the barycentre, no bound in the working set
    w = np.full((n, k), 1.0 / k)
    free = np.ones((n, k), dtype=bool)
    todo = np.arange(n)
    for _ in range(max_iter):
        if len(todo) == 0:
            break
        At, bt, ft, wt = A[todo], b[todo], free[todo], w[todo]
        target, nu = _kkt_solve(At, bt, ft)
        step = target - wt
        # ratio test: the first free coordinate the step would drive below zero
        shrinking = ft & (step < 0)
        ratio = np.full_like(wt, np.inf)
        np.divide(wt, -step, out=ratio, where=shrinking)
        j_block = np.argmin(ratio, axis=1)
        alpha = ratio[np.arange(len(todo)), j_block]
        blocked = alpha < 1.0

        # blocked problems: move to the boundary and fix the blocking bound
        rows_b = np.flatnonzero(blocked)
        if len(rows_b):
            wb = wt[rows_b] + alpha[rows_b, None] * step[rows_b]
            wb[np.arange(len(rows_b)), j_block[rows_b]] = 0.0
            wt[rows_b] = np.maximum(wb, 0.0)
            ft[rows_b, j_block[rows_b]] = False

        # full steps: at the minimiser on the free set; test the bound multipliers
        rows_f = np.flatnonzero(~blocked)
        finished = np.zeros(len(todo), dtype=bool)
        if len(rows_f):
            wf = target[rows_f]
            wt[rows_f] = wf
            grad = np.einsum("mij,mj->mi", At[rows_f], wf) + bt[rows_f]
            mult = np.where(ft[rows_f], np.inf, grad + nu[rows_f, None])
            j_rel = np.argmin(mult, axis=1)
            worst = mult[np.arange(len(rows_f)), j_rel]
            optimal = worst >= -tol * scale[todo[rows_f]]
            finished[rows_f[optimal]] = True
            release = rows_f[~optimal]
            ft[release, j_rel[~optimal]] = True
        w[todo] = wt
        free[todo] = ft
        todo = todo[~finished]
    if len(todo):
        raise RuntimeError(
            f"simplex_qp: {len(todo)} problem(s) not solved in {max_iter} active-set iterations "
            "(degenerate input?)."
        )
    return w


def simplex_qp_kkt_residual(A: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Largest violation of the KKT conditions of the simplex QP, per problem.

    Combines primal feasibility (negativity, ``|1'w - 1|``), dual feasibility and
    complementary slackness; 0 at the exact optimum.
    """
    g = np.einsum("mij,mj->mi", A, w) + b
    # the multiplier of 1'w = 1 is minus the gradient on the support; use the
    # weighted mean so that it is exact whatever the support
    nu = -np.sum(w * g, axis=1)
    lam = g + nu[:, None]
    return np.maximum.reduce(
        [
            np.max(np.maximum(-w, 0.0), axis=1),
            np.abs(w.sum(axis=1) - 1.0),
            np.max(np.maximum(-lam, 0.0), axis=1),
            np.max(np.abs(w * lam), axis=1),
        ]
    )
