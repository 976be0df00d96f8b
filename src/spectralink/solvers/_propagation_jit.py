"""Compiled kernels of :mod:`spectralink.solvers.propagation` (numba, parallel over rows).

SciPy's sparse-times-dense product is single-threaded and every NumPy update of the
Chebyshev iteration is one more pass over ``n x b`` arrays; here one pass per iteration
does the product and all the updates, parallel over blocks of rows. Same iterates as the
NumPy path up to rounding.
"""

import numba
import numpy as np

#: Rows per parallel task (amortises the per-task scratch row).
_ROWS_PER_TASK = 256


@numba.njit(inline="always")
def _row_product(indptr, indices, data, D, i, acc):
    """``acc = (M D)[i]``; four neighbour rows per pass over ``acc`` (measured about 20%
    faster than one at 70,000 x 512: fewer loads and stores of ``acc``)."""
    b = D.shape[1]
    acc[:] = 0
    jj = indptr[i]
    end = indptr[i + 1]
    while jj + 3 < end:
        a0, a1, a2, a3 = data[jj], data[jj + 1], data[jj + 2], data[jj + 3]
        d0, d1 = D[indices[jj]], D[indices[jj + 1]]
        d2, d3 = D[indices[jj + 2]], D[indices[jj + 3]]
        for k in range(b):
            acc[k] += a0 * d0[k] + a1 * d1[k] + a2 * d2[k] + a3 * d3[k]
        jj += 4
    while jj < end:
        a0, d0 = data[jj], D[indices[jj]]
        for k in range(b):
            acc[k] += a0 * d0[k]
        jj += 1


@numba.njit(parallel=True, cache=True)
def chebyshev_step(indptr, indices, data, D, X, R, D_next, c_d, c_r):
    """``X += D; R -= M D; D_next = c_d D + c_r R`` for the CSR matrix ``M``."""
    n, b = D.shape
    n_tasks = (n + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK
    for task in numba.prange(n_tasks):
        acc = np.empty(b, dtype=D.dtype)
        for i in range(task * _ROWS_PER_TASK, min(n, (task + 1) * _ROWS_PER_TASK)):
            _row_product(indptr, indices, data, D, i, acc)
            for k in range(b):
                X[i, k] += D[i, k]
                r = R[i, k] - acc[k]
                R[i, k] = r
                D_next[i, k] = c_d * D[i, k] + c_r * r


@numba.njit(parallel=True, cache=True)
def spmm(indptr, indices, data, X, out):
    """``out = M X`` for the CSR matrix ``M``."""
    n, b = X.shape
    n_tasks = (n + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK
    for task in numba.prange(n_tasks):
        acc = np.empty(b, dtype=X.dtype)
        for i in range(task * _ROWS_PER_TASK, min(n, (task + 1) * _ROWS_PER_TASK)):
            _row_product(indptr, indices, data, X, i, acc)
            out[i] = acc


@numba.njit(parallel=True, cache=True)
def times_sparse(X, y_row, y_col, y_val, out):
    """``out = X Y`` for ``Y`` given as COO triplets (one row of ``X`` in cache at a time)."""
    n = X.shape[0]
    m = y_row.shape[0]
    n_tasks = (n + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK
    for task in numba.prange(n_tasks):
        for i in range(task * _ROWS_PER_TASK, min(n, (task + 1) * _ROWS_PER_TASK)):
            x = X[i]
            o = out[i]
            o[:] = 0
            for t in range(m):
                o[y_col[t]] += y_val[t] * x[y_row[t]]


@numba.njit(parallel=True, cache=True, fastmath=True)
def add_pair_dots(rows, cols, U, V, f):
    """``f[t] += <U[rows[t]], V[cols[t]]>``, accumulated in float64."""
    m = rows.shape[0]
    b = U.shape[1]
    for t in numba.prange(m):
        r = rows[t]
        c = cols[t]
        s = 0.0
        for k in range(b):
            s += np.float64(U[r, k]) * np.float64(V[c, k])
        f[t] += s
