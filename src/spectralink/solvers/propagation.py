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
pairs only (sparse; exact for that masked variant). The block solves with ``eta I + L``
are in :mod:`spectralink.solvers.shifted_laplacian` (re-exported here).
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee
from sklearn.utils import check_random_state

from ..constraints import Constraints
from ..graph import normalized_adjacency
from . import compiled_module
from .shifted_laplacian import chebyshev_steps, solve_shifted_laplacian, spectral_bounds

__all__ = [
    "masked_pairs",
    "propagation_operator",
    "propagate_dense",
    "propagate_pairs",
    "propagate_sampled",
    "fill_values",
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


def _compiled_kernels():
    """The numba kernels module, or None when numba is not importable."""
    return compiled_module("_propagation_jit")


def propagation_operator(W: sp.spmatrix, eta: float = 0.25) -> sp.csr_matrix:
    """``eta I + L = (1 + eta) I - D^-1/2 W D^-1/2`` (sparse, SPD, eigenvalues in [eta, 2 + eta]).

    Isolated points get a unit degree (:func:`spectralink.graph.normalized_adjacency`).
    """
    eta = _check_eta(eta)
    S, _ = normalized_adjacency(W)
    n = S.shape[0]
    return ((1.0 + eta) * sp.identity(n, format="csr") - S).tocsr()


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


def _check_pairs(rows, cols, n: int) -> tuple[np.ndarray, np.ndarray]:
    rows = np.asarray(rows, dtype=np.int64).ravel()
    cols = np.asarray(cols, dtype=np.int64).ravel()
    if rows.shape != cols.shape:
        raise ValueError("rows and cols must have the same length.")
    if len(rows) and (min(rows.min(), cols.min()) < 0 or max(rows.max(), cols.max()) >= n):
        raise ValueError(f"pair indices must lie in [0, {n}).")
    return rows, cols


class _BlockPropagation:
    """The constraints of eq. 11 in blocks, each with its solved columns of ``U``.

    ``eta I + L`` is renumbered by reverse Cuthill-McKee (bandwidth reduction: the rows a
    graph row touches sit close in memory; sparse-times-block products about 1.2-1.4x
    faster on the MNIST 70k graph). Must-links and cannot-links are blocked apart, the
    must-link blocks first, so that the positive part of ``F`` is available on its own.
    All indices below are in the renumbered order (``new_index`` maps to it).
    """

    def __init__(self, W, cons, eta, tol, block_points, memory_limit):
        n = W.shape[0]
        self.n, self.eta, self.tol = n, eta, tol
        self.dtype = np.dtype(np.float32 if tol >= 1e-5 else np.float64)
        M = propagation_operator(W, eta).astype(self.dtype)
        perm = reverse_cuthill_mckee(M, symmetric_mode=True).astype(np.int64)
        self.new_index = np.empty(n, dtype=np.int64)
        self.new_index[perm] = np.arange(n)
        self.perm = perm
        self.M = sp.csr_matrix(M[perm][:, perm])
        self.M.sort_indices()
        if block_points is None:
            block_points = int(min(512, max(32, memory_limit // (5 * self.dtype.itemsize * n))))
        self.memory_limit = memory_limit
        ml, cl = self.new_index[cons.must_link], self.new_index[cons.cannot_link]
        self.blocks = [
            (ml[b], cons.ml_weights[b], True) for b in _constraint_blocks(ml, block_points)
        ] + [(cl[b], -cons.cl_weights[b], False) for b in _constraint_blocks(cl, block_points)]

    def solve(self, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(points, local pairs, U)``: the block's endpoints, its pairs as column indices
        of ``U``, and ``U = (eta I + L)^-1 E_points`` (n x points)."""
        pts, local = np.unique(pairs.ravel(), return_inverse=True)
        E = np.zeros((self.n, len(pts)), dtype=self.dtype)
        E[pts, np.arange(len(pts))] = 1.0
        U = solve_shifted_laplacian(
            self.M, E, bounds=spectral_bounds(self.eta), tol=self.tol, dtype=self.dtype
        )
        return pts, local.reshape(-1, 2), U

    def times_y(self, U: np.ndarray, local: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``V = U Y_block`` with the block's symmetric constraint matrix on its points."""
        m = U.shape[1]
        Yb = sp.coo_matrix(
            (
                np.concatenate([y, y]).astype(self.dtype),
                (
                    np.concatenate([local[:, 0], local[:, 1]]),
                    np.concatenate([local[:, 1], local[:, 0]]),
                ),
            ),
            shape=(m, m),
        )
        jit = _compiled_kernels()
        if jit:
            V = np.empty_like(U)
            jit.times_sparse(U, Yb.row.astype(np.int64), Yb.col.astype(np.int64), Yb.data, V)
            return V
        return np.ascontiguousarray((Yb.tocsr() @ U.T).T)

    def add_dots(
        self, r: np.ndarray, c: np.ndarray, U: np.ndarray, V: np.ndarray, out: np.ndarray
    ) -> None:
        """``out[t] += <U[r[t]], V[c[t]]>`` (float64 accumulation)."""
        jit = _compiled_kernels()
        if jit:
            jit.add_pair_dots(r, c, U, V, out)
            return
        chunk = int(max(1024, self.memory_limit // (16 * 8 * max(U.shape[1], 1))))
        for s in range(0, len(r), chunk):
            rs, cs = r[s : s + chunk], c[s : s + chunk]
            out[s : s + chunk] += np.einsum("ij,ij->i", U[rs], V[cs], dtype=np.float64)

    def pair_values(self, r, c, cached=None, ml_mark=None):
        """``F / eta^2`` on the renumbered pairs ``(r, c)`` (sorted by row for locality).

        ``cached`` maps a must-link block's position to its solved ``(points, local, U)``
        (not solved again). With ``ml_mark``, the values accumulated after the must-link
        blocks (``F_ML / eta^2``) on the pairs ``ml_mark`` are returned too.
        """
        cached = cached or {}
        out = np.zeros(len(r))
        f_ml = None
        for pos, (pairs, y, is_ml) in enumerate(self.blocks):
            if not is_ml and ml_mark is not None and f_ml is None:
                f_ml = out[ml_mark].copy()
            _, local, U = cached[pos] if pos in cached else self.solve(pairs)
            V = self.times_y(U, local, y)
            self.add_dots(r, c, U, V, out)
            del U, V
        if ml_mark is not None and f_ml is None:  # no cannot-link block
            f_ml = out[ml_mark].copy()
        return out, f_ml


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
    rows, cols = _check_pairs(rows, cols, n)
    f = np.zeros(len(rows))
    if cons.is_empty or len(rows) == 0:
        return f
    prop = _BlockPropagation(W, cons, eta, tol, block_points, memory_limit)
    # requested pairs sorted by (renumbered) row, for locality of the dot products
    r, c = prop.new_index[rows], prop.new_index[cols]
    order = np.lexsort((c, r))
    f[order], _ = prop.pair_values(r[order], c[order])
    return eta**2 * f


def _sample_rows(cum: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Per row ``i``, the indices ``t`` with ``cum[i, t-1] <= u[i, s] < cum[i, t]``.

    ``cum`` holds row-wise cumulative weights normalised to end at 1; shifting row ``i``
    by ``i`` makes the whole array one sorted sequence, so one ``searchsorted`` serves
    every row.
    """
    m, k = cum.shape
    shift = np.arange(m, dtype=np.float64)[:, None]
    flat = (cum + shift).ravel()
    idx = np.searchsorted(flat, (u + shift).ravel(), side="right")
    t = idx.reshape(u.shape) - np.arange(m)[:, None] * k
    return np.minimum(t, k - 1)


def _sample_fill_block(U, local, y, n_draws, rng, rows_per_chunk=4096):
    """Importance samples of one must-link block's share of ``F_ML`` (see
    :func:`propagate_sampled`): ``(i, j, weight)`` with ``j`` drawn for every row ``i``
    with probability ``F^b_ij / sum_j F^b_ij`` and weight ``sum_j F^b_ij / n_draws``
    (``F^b / eta^2``: the block's ``sum Y_ab (g_a g_b' + g_b g_a')``)."""
    n = U.shape[0]
    U = np.maximum(U, 0)  # (eta I + L)^-1 is entrywise non-negative; drop rounding noise
    col_sum = U.sum(axis=0, dtype=np.float64)
    # directed terms a -> b: row weight g_a(i) y_ab |g_b|_1, then j ~ g_b / |g_b|_1
    src = np.concatenate([local[:, 0], local[:, 1]])
    dst = np.concatenate([local[:, 1], local[:, 0]])
    coef = np.concatenate([y, y]) * col_sum[dst]
    keep = coef > 0
    src, dst, coef = src[keep], dst[keep], coef[keep]
    rows_out, terms, mass = [], [], np.zeros(n)
    for s in range(0, n, rows_per_chunk):
        T = U[s : s + rows_per_chunk][:, src].astype(np.float64) * coef
        cum = np.cumsum(T, axis=1)
        total = cum[:, -1].copy()
        live = np.flatnonzero(total > 0)
        if len(live) == 0:
            continue
        mass[s + live] = total[live]
        cum = cum[live] / total[live, None]
        terms.append(_sample_rows(cum, rng.random_sample((len(live), n_draws))).ravel())
        rows_out.append(np.repeat(s + live, n_draws))
    if not rows_out:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    rows_out, terms = np.concatenate(rows_out), np.concatenate(terms)
    target = dst[terms]
    cols_out = np.empty_like(rows_out)
    order = np.argsort(target, kind="stable")
    bounds = np.searchsorted(target[order], np.arange(U.shape[1] + 1))
    for q in range(U.shape[1]):
        sel = order[bounds[q] : bounds[q + 1]]
        if len(sel) == 0:
            continue
        cdf = np.cumsum(U[:, q], dtype=np.float64)
        u = rng.random_sample(len(sel)) * cdf[-1]
        cols_out[sel] = np.minimum(np.searchsorted(cdf, u, side="right"), n - 1)
    return rows_out, cols_out, mass[rows_out] / n_draws


# PLR0915 (statements): eq. 11 on the given pairs and the sampled fill-in in one pass over
# the blocks of solves, which share their state.
def propagate_sampled(  # noqa: PLR0915
    W: sp.spmatrix,
    constraints: Constraints,
    rows: np.ndarray,
    cols: np.ndarray,
    eta: float = 0.25,
    *,
    n_fill: int = 20,
    tol: float = 1e-10,
    random_state: int | np.random.RandomState | None = None,
    block_points: int | None = None,
    memory_limit: float = 1e9,
) -> tuple[np.ndarray, dict]:
    """``F`` (eq. 11) on the given pairs, plus an importance sample of its positive part
    elsewhere: the fill-in of the exact refinement (eq. 12) at ``O(n * n_fill)`` pairs.

    Off the given pairs eq. 12 gives ``W*_ij = max(F_ij, 0)`` (``W_ij = 0`` there), a
    dense matrix whose diffuse mass carries most of the propagation's effect on the
    clustering. ``F = F_ML - F_CL`` splits into the must-link and cannot-link parts,
    both entrywise non-negative (``(eta I + L)^-1`` is), so
    ``max(F, 0) <= F_ML`` and ``F_ML`` is a non-negative low-rank matrix,
    ``eta^2 sum_ML w_ab (g_a g_b' + g_b g_a')``. For every point ``i``, ``n_fill``
    partners ``j`` are drawn with probability ``F_ML,ij / m_i`` (``m_i`` the row sum of
    ``F_ML``; a must-link term with probability ``g_a(i) w_ab |g_b|_1 / m_i``, then
    ``j`` from ``g_b / |g_b|_1``), and the estimate of ``max(F_ij, 0)`` is
    ``(max(F_ij, 0) / F_ML,ij) * m_i / n_fill`` per draw: unbiased, and every draw's
    value is at most ``m_i / n_fill`` because the ratio lies in [0, 1]. Must-link
    blocks are sampled separately (strata, draws in proportion to their constraints).

    Parameters
    ----------
    W, constraints, rows, cols, eta, tol, block_points, memory_limit
        As in :func:`propagate_pairs`; ``(rows, cols)`` are the pairs evaluated exactly
        (upper triangle, e.g. :func:`masked_pairs`).
    n_fill : int, default=20
        Draws per point.
    random_state : int, RandomState or None

    Returns
    -------
    f : ndarray of shape (n_pairs,)
        ``F`` on ``(rows, cols)``.
    fill : dict
        The sampled pairs off ``(rows, cols)`` and the diagonal, each once with
        ``i < j``: ``"rows"``, ``"cols"``, ``"f"`` (``F_ij``), ``"f_ml"``
        (``F_ML,ij > 0``) and ``"weight"``: half the summed ``m / n_fill`` of the draws
        that hit the pair from either end, so that the symmetric estimate of
        ``max(F, 0)`` is ``max(f, 0) / f_ml * weight`` on ``(i, j)`` and ``(j, i)``
        (:func:`fill_values`).
    """
    W, cons = _check_graph(W, constraints)
    n = W.shape[0]
    eta = _check_eta(eta)
    rows, cols = _check_pairs(rows, cols, n)
    if isinstance(n_fill, bool) or not isinstance(n_fill, numbers.Integral) or n_fill < 0:
        raise ValueError(f"n_fill must be a non-negative integer, got {n_fill!r}.")
    empty = np.zeros(0, dtype=np.int64)
    fill = {
        "rows": empty,
        "cols": empty,
        "f": np.zeros(0),
        "f_ml": np.zeros(0),
        "weight": np.zeros(0),
    }
    if cons.is_empty:
        return np.zeros(len(rows)), fill
    prop = _BlockPropagation(W, cons, eta, tol, block_points, memory_limit)
    rng = check_random_state(random_state)
    # stratified draws: each must-link block samples its own part of F_ML
    ml_blocks = [pos for pos, (_, _, is_ml) in enumerate(prop.blocks) if is_ml]
    n_ml = max(cons.n_must_link, 1)
    cached, kept_bytes = {}, 0
    draws = []
    for pos in ml_blocks if n_fill else []:
        pairs, y, _ = prop.blocks[pos]
        solved = prop.solve(pairs)
        n_draws = max(1, int(round(n_fill * len(pairs) / n_ml)))
        draws.append(_sample_fill_block(solved[2], solved[1], y, n_draws, rng))
        if kept_bytes + solved[2].nbytes <= prop.memory_limit:  # else solved again below
            cached[pos] = solved
            kept_bytes += solved[2].nbytes
    # exact pairs, renumbered
    r_ex, c_ex = prop.new_index[rows], prop.new_index[cols]
    if draws:
        di = np.concatenate([d[0] for d in draws])
        dj = np.concatenate([d[1] for d in draws])
        dw = np.concatenate([d[2] for d in draws])
        # one entry per unordered pair, off the diagonal and off the exact pairs
        lo, hi = np.minimum(di, dj), np.maximum(di, dj)
        keys = lo * np.int64(n) + hi
        ex_keys = np.unique(np.minimum(r_ex, c_ex) * np.int64(n) + np.maximum(r_ex, c_ex))
        pos_in = np.searchsorted(ex_keys, keys)
        hit = (pos_in < len(ex_keys)) & (ex_keys[np.minimum(pos_in, len(ex_keys) - 1)] == keys)
        ok = (lo != hi) & ~hit
        ukeys, inv = np.unique(keys[ok], return_inverse=True)
        weight = 0.5 * np.bincount(inv, weights=dw[ok], minlength=len(ukeys))
        r_fill, c_fill = np.divmod(ukeys, np.int64(n))
    else:
        r_fill = c_fill = empty
        weight = np.zeros(0)
    r_all = np.concatenate([r_ex, r_fill])
    c_all = np.concatenate([c_ex, c_fill])
    order = np.lexsort((c_all, r_all))
    where = np.empty(len(order), dtype=np.int64)
    where[order] = np.arange(len(order))
    values, f_ml = prop.pair_values(r_all[order], c_all[order], cached, ml_mark=where[len(r_ex) :])
    f_all = np.empty(len(order))
    f_all[order] = values
    fill = {
        "rows": prop.perm[r_fill],
        "cols": prop.perm[c_fill],
        "f": eta**2 * f_all[len(r_ex) :],
        "f_ml": eta**2 * f_ml,
        "weight": eta**2 * weight,
    }
    lo, hi = np.minimum(fill["rows"], fill["cols"]), np.maximum(fill["rows"], fill["cols"])
    fill["rows"], fill["cols"] = lo, hi
    return eta**2 * f_all[: len(r_ex)], fill


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


def fill_values(f: np.ndarray, f_ml: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Importance-sampled fill-in of eq. 12 off the graph: ``clip(F, 0, 1) / F_ML * weight``.

    Off ``supp(W)`` eq. 12 is ``W*_ij = clip(F_ij, 0, 1)``; the pairs were drawn with
    probability proportional to ``F_ML,ij >= max(F_ij, 0)`` (:func:`propagate_sampled`),
    so the ratio lies in [0, 1] (clipped against rounding) and the estimate is unbiased.
    """
    f_ml = np.asarray(f_ml, dtype=np.float64)
    ratio = np.clip(f, 0.0, 1.0) / np.maximum(f_ml, np.finfo(float).tiny)
    return np.clip(ratio, 0.0, 1.0) * weight


def refine_masked(
    W: sp.spmatrix,
    rows: np.ndarray,
    cols: np.ndarray,
    f: np.ndarray,
    fill: dict | None = None,
) -> sp.csr_matrix:
    """Eq. 12 on the upper-triangular pairs ``(rows, cols)``, plus an optional sampled fill-in.

    ``f`` holds ``F`` on those pairs (:func:`propagate_pairs`). Without ``fill`` every
    other entry of the result is 0 (the masked refinement). ``fill`` (from
    :func:`propagate_sampled`, pairs disjoint from ``(rows, cols)``) adds the estimate
    :func:`fill_values` of ``W*_ij = max(F_ij, 0)`` on the sampled pairs. Returns a
    symmetric non-negative CSR matrix with zero diagonal.
    """
    W = sp.csr_matrix(W)
    n = W.shape[0]
    w = np.asarray(W[rows, cols], dtype=np.float64).ravel() if len(rows) else np.zeros(0)
    v = refine_values(w, np.asarray(f, dtype=np.float64))
    if fill is not None and len(fill["rows"]):
        rows = np.concatenate([rows, fill["rows"]])
        cols = np.concatenate([cols, fill["cols"]])
        v = np.concatenate([v, fill_values(fill["f"], fill["f_ml"], fill["weight"])])
    R = sp.csr_matrix(
        (np.concatenate([v, v]), (np.concatenate([rows, cols]), np.concatenate([cols, rows]))),
        shape=(n, n),
    )
    R.setdiag(0)
    R.eliminate_zeros()
    R.sort_indices()
    return R
