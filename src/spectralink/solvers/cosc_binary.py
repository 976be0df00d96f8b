"""COSC's two-cluster search engine: RatioDCA runs along a gamma schedule, then polish.

Rangapuram, S. S., & Hein, M. (2012). Constrained 1-spectral clustering. AISTATS.

:func:`solve_binary` solves one must-link-reduced two-cluster problem (hard mode: gamma
raised from 0 until no constraint is violated, then bisection; soft mode; the guaranteed
mode of Theorem 3.1) with :class:`BinarySolver`, and polishes the lowest-cut consistent
splits with :func:`local_search`. It receives the search's settings
(:class:`COSCSettings`), never an estimator; :class:`spectralink.methods.cosc.COSC` is the
estimator over it, :mod:`spectralink.solvers.cosc_kway` the k-way recursion.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ..graph import degrees
from ..spectral import constrained_fiedler
from .constraint_graph import consistent_partition, merge_colour_classes
from .lovasz import edge_list, optimal_threshold, penalised_ratio
from .ratio_dca import make_problem, ratio_dca

__all__ = [
    "SMALL_GRAPH",
    "BinarySolver",
    "COSCSettings",
    "binary_starts",
    "distinct_states",
    "local_search",
    "map_threads",
    "polish",
    "solve_binary",
]

#: reduced two-cluster graphs up to this size get the fuller standard search (30 starts,
#: every start continued along the gamma path, Fiduccia-Mattheyses polish of every split)
SMALL_GRAPH = 2000


@dataclass(frozen=True)
class COSCSettings:
    """What COSC's search engines need of the estimator's parameters (see
    :class:`spectralink.methods.cosc.COSC` for their meaning); ``n_jobs`` is a thread count."""

    mode: str
    gamma: float | None
    max_violations: int
    search: str
    n_starts: int | None
    split_rule: str
    n_split_starts: int
    n_recursions: int
    max_gamma_runs: int
    max_outer: int
    max_inner: int
    tol: float
    crit_tol: float
    n_perturbations: int
    inner_step: str
    n_jobs: int

    def options(self, n_vertices: int | None = None) -> dict:
        """The search's effective options (``search`` applied to the parameters).

        ``n_vertices``: size of the reduced two-cluster graph; on graphs of up to
        :data:`SMALL_GRAPH` vertices the standard search uses 30 starts when ``n_starts`` is
        None and polishes every consistent split with Fiduccia-Mattheyses passes.
        """
        thorough = self.search == "thorough"
        small = n_vertices is not None and n_vertices <= SMALL_GRAPH
        if self.n_starts is not None:
            n_starts = self.n_starts * (3 if thorough else 1)
        else:
            n_starts = 30 if thorough or small else 10
        return {
            "max_outer": self.max_outer,
            "max_inner": self.max_inner,
            "tol": self.tol,
            "crit_tol": self.crit_tol,
            "n_jobs": self.n_jobs,
            "n_starts": n_starts,
            "n_split_starts": self.n_split_starts * (2 if thorough else 1),
            "n_perturbations": max(self.n_perturbations, 10 if thorough else 0),
            "continue_all": True if thorough else SMALL_GRAPH,  # up to this many vertices
            "polish_top": 10**9 if thorough or small else 10,
            "polish_patience": 20 if thorough or small else 0,
            "max_gamma_runs": self.max_gamma_runs,
            "inner_step": self.inner_step,
        }


class BinarySolver:
    """One reduced two-cluster problem: RatioDCA runs, gamma schedules, candidates.

    ``opts``: ``max_outer``, ``max_inner``, ``tol``, ``crit_tol`` (RatioDCA), ``n_jobs``
    (threads over starts), ``n_perturbations`` and ``continue_all`` (see
    :meth:`continuation`).
    """

    def __init__(
        self,
        W: sp.spmatrix,
        g: np.ndarray,
        cl: tuple,
        opts: dict,
        outside: np.ndarray | None = None,
        rng: np.random.RandomState | None = None,
        edges: tuple | None = None,
    ) -> None:
        self.rng = rng
        self.edges = edge_list(W) if edges is None else edges
        self.g = g
        self.cl = cl
        self.prob = make_problem(
            self.edges, g, cl, per_edge_step=opts.get("inner_step") == "per_edge"
        )
        self.opts = opts
        self.outside = outside
        self.best = None  # (ncut, mask, f, gamma) of the best feasible split seen
        self.feasible = {}  # every distinct feasible split seen: packed mask -> as best

    def run(self, state: tuple, gamma: float, seed: int | None = None) -> tuple:
        """One RatioDCA run at ``gamma`` from ``state``, then the perturbed restarts.

        ``opts["n_perturbations"]`` (as in the authors' reference code): re-solve
        from ``f + p range(f) N(0, I)``, ``p = 0.001, 0.011, ...``; keep a result whose
        thresholded ``F_gamma`` is lower, stop after 5 tries in a row that are not.
        """
        st, thr = self._solve(state, gamma)
        n_pert = self.opts.get("n_perturbations", 0)
        if not n_pert or thr is None:
            return st, thr
        rng = np.random.default_rng(seed)
        misses = 0
        for p in 0.001 + 0.01 * np.arange(n_pert):
            f = st[0]
            trial = f + p * np.ptp(f) * rng.standard_normal(len(f))
            st2, thr2 = self._solve((trial, None, None), gamma)
            if thr2 is not None and thr2.value < thr.value * (1 - 1e-12):
                st, thr, misses = st2, thr2, 0
            else:
                misses += 1
                if misses >= 5:
                    break
        return st, thr

    def _seeds(self, n):
        """Seeds of the perturbations, drawn in order so threads stay deterministic."""
        if not self.opts.get("n_perturbations", 0):
            return [None] * n
        return list(check_random_state(self.rng).randint(0, 2**31 - 1, size=n))

    def _solve(self, state, gamma):
        f, beta, v = state
        o = self.opts
        res = ratio_dca(
            self.prob,
            f,
            gamma,
            beta=beta,
            v=v,
            max_outer=o["max_outer"],
            max_inner=o["max_inner"],
            tol=o["tol"],
            crit_tol=o.get("crit_tol", 1e-2),
        )
        thr = optimal_threshold(res.f, self.edges, self.g, self.cl, gamma, outside=self.outside)
        return (res.f, res.beta, res.v), thr

    def run_many(
        self, states: Sequence[tuple], gamma: float, seeds: Sequence | None = None
    ) -> list[tuple]:
        """:meth:`run` on every state, in ``opts["n_jobs"]`` threads (results in order).

        The FISTA kernel releases the GIL, so the independent starts run in parallel.
        """
        seeds = self._seeds(len(states)) if seeds is None else seeds
        todo = [(st, gamma, sd) for st, sd in zip(states, seeds, strict=True)]
        return map_threads(lambda args: self.run(*args), todo, self.opts.get("n_jobs", 1))

    def sweep(
        self, states: Sequence[tuple], gamma: float, allowed: float
    ) -> tuple[list[tuple], bool]:
        """Run every start at ``gamma``; record feasible splits; is the best start feasible?"""
        out, thrs = [], []
        for st, thr in self.run_many(states, gamma):
            out.append(st)
            thrs.append(thr)
            if thr is None:
                continue
            # the lowest-cut level set within the allowed violations, for the final choice
            feas = optimal_threshold(
                st[0],
                self.edges,
                self.g,
                self.cl,
                0.0,
                outside=self.outside,
                max_violations=allowed,
            )
            if feas is not None:
                key = np.packbits(feas.mask).tobytes()
                if key not in self.feasible or feas.value < self.feasible[key][0]:
                    self.feasible[key] = (feas.value, feas.mask, st[0], gamma)
                if self.best is None or feas.value < self.best[0]:
                    self.best = (feas.value, feas.mask, st[0], gamma)
        vals = [np.inf if t is None else t.value for t in thrs]
        b = int(np.argmin(vals))
        ok = thrs[b] is not None and thrs[b].n_violated <= allowed + 1e-9
        cont = self.opts.get("continue_all", False)
        if cont is True or (cont and len(self.g) <= cont):
            kept = [st for st, t in zip(out, thrs, strict=True) if t is not None] or out
        else:
            kept = distinct_states(out, thrs, vals)
        return kept, ok

    def continuation(
        self,
        starts: Sequence[np.ndarray],
        allowed: float,
        *,
        gamma_cap: float,
        bisection_tol: float = 0.01,
        max_steps: int = 60,
    ) -> float | None:
        """Gamma from 0 (0, 0.2, doubling) until the best start is feasible, then bisection.

        Every start is warm-started from its own solution at the previous gamma. With
        ``opts["continue_all"]`` every start continues (as in the authors' code);
        otherwise one state per distinct partition does (:func:`distinct_states`).
        """
        states = [(f, None, None) for f in starts]
        gamma = 0.0
        new, ok = self.sweep(states, gamma, allowed)
        if ok or self.prob.c_cl == 0:
            return gamma
        steps = 0
        while not ok:
            lo, lo_states = gamma, new
            gamma = 0.2 if gamma == 0 else 2.0 * gamma
            steps += 1
            if gamma > gamma_cap or steps > max_steps:
                return None
            new, ok = self.sweep(lo_states, gamma, allowed)
        hi = gamma
        while (hi - lo) / hi >= bisection_tol and steps < max_steps:
            mid = 0.5 * (lo + hi)
            steps += 1
            st, ok = self.sweep(lo_states, mid, allowed)
            if ok:
                hi = mid
            else:
                lo, lo_states = mid, st
        return hi

    def guaranteed(self, start_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """Theorem 3.1: from a consistent ``A`` with gamma > gvol(V) NCut(A) / 4."""
        A = np.asarray(start_mask, dtype=bool)
        _, ncut_a, viol = penalised_ratio(A, self.edges, self.g, self.cl, 0.0)
        if viol > 0:
            raise ValueError("the guaranteed mode needs a consistent start partition.")
        gamma = 1.01 * self.g.sum() * ncut_a / 4.0 + 1e-12
        f0 = A.astype(float)
        (f, _, _), thr = self.run((f0, None, None), gamma, self._seeds(1)[0])
        fa, _, _ = penalised_ratio(A, self.edges, self.g, self.cl, gamma)
        if thr is not None and thr.value < fa:
            return thr.mask, f, gamma
        return A, f0, gamma


# PLR0915 (statements): the Fiduccia-Mattheyses passes: the gains, the locks and the moves
# share their state.
def local_search(  # noqa: PLR0915
    W: sp.spmatrix,
    g: np.ndarray,
    cl: tuple,
    mask: np.ndarray,
    patience: int = 0,
    max_passes: int = 50,
) -> np.ndarray:
    """Local search on the normalized cut of a consistent bipartition.

    Moves keep every cannot-link separated: one vertex outside every cannot-link changes
    side, or both ends of a cannot-link (a matching after the derived must-links) swap
    sides. ``patience=0``: best-improvement moves until none improves. ``patience > 0``:
    Fiduccia-Mattheyses passes, each moving the best unlocked candidate even uphill and
    locking what it moved, stopping ``patience`` moves after the best partition of the
    pass, which is then restored; passes repeat while they improve. Either way the result
    is no worse than ``mask`` and no single move improves it.
    """
    W = sp.csr_matrix(W)
    mask = np.asarray(mask, dtype=bool).copy()
    n = len(mask)
    ci, cj = np.asarray(cl[0], np.int64), np.asarray(cl[1], np.int64)
    free = np.ones(n, dtype=bool)
    free[ci] = free[cj] = False
    w_cl = np.asarray(W[ci, cj]).ravel() if len(ci) else np.zeros(0)
    to_a = W @ mask.astype(float)  # weight from every vertex to side A (mask True)
    deg = degrees(W)
    G = float(g.sum())
    state = {"cut": float(mask.astype(float) @ (deg - to_a)), "ga": float(g[mask].sum())}

    def value(cut, ga):
        return cut * (1.0 / ga + 1.0 / (G - ga))

    def flip(u):
        own = to_a[u] if mask[u] else deg[u] - to_a[u]
        state["cut"] += own - (deg[u] - own)
        state["ga"] += -g[u] if mask[u] else g[u]
        row = slice(W.indptr[u], W.indptr[u + 1])
        to_a[W.indices[row]] += -W.data[row] if mask[u] else W.data[row]
        mask[u] = not mask[u]

    def best_move(locked):
        """(value after the best allowed move, vertices it moves) or (inf, None)."""
        cut, ga = state["cut"], state["ga"]
        to_own = np.where(mask, to_a, deg - to_a)
        gain = 2.0 * to_own - deg  # change of the cut when one vertex moves
        dga = np.where(mask, -g, g)
        new_ga = ga + dga
        ok = free & ~locked & (new_ga > 0) & (new_ga < G)
        val = np.full(n, np.inf)
        val[ok] = value(cut + gain[ok], new_ga[ok])
        v = int(np.argmin(val))
        best, movers = val[v], [v]
        if len(ci):
            pga = ga + dga[ci] + dga[cj]
            okp = ~locked[ci] & ~locked[cj] & (pga > 0) & (pga < G)
            pv = np.full(len(ci), np.inf)
            # the edge between the two ends stays cut: add it back twice
            pv[okp] = value((cut + gain[ci] + gain[cj] + 2.0 * w_cl)[okp], pga[okp])
            b = int(np.argmin(pv))
            if pv[b] < best:
                best, movers = pv[b], [int(ci[b]), int(cj[b])]
        return (best, movers) if np.isfinite(best) else (np.inf, None)

    no_lock = np.zeros(n, dtype=bool)
    while True:  # greedy descent
        current = value(state["cut"], state["ga"])
        val, movers = best_move(no_lock)
        if movers is None or not val < current * (1 - 1e-12):
            break
        for u in movers:
            flip(u)
    if patience <= 0:
        return mask
    for _ in range(max_passes):
        start = value(state["cut"], state["ga"])
        best_val, best_len, moved = start, 0, []
        locked = np.zeros(n, dtype=bool)
        while len(moved) - best_len <= patience:
            val, movers = best_move(locked)
            if movers is None:
                break
            for u in movers:
                flip(u)
                locked[u] = True
            moved.append(movers)
            if val < best_val * (1 - 1e-12):
                best_val, best_len = val, len(moved)
        for movers in reversed(moved[best_len:]):
            for u in movers:
                flip(u)
        if not best_val < start * (1 - 1e-12):
            break
    return mask


def polish(
    W: sp.spmatrix, g: np.ndarray, cl: tuple, solver: BinarySolver, opts: dict, current: tuple
) -> tuple[np.ndarray, np.ndarray, float]:
    """Local search (:func:`local_search`) from the lowest-cut consistent splits found.

    The ``opts["polish_top"]`` lowest of ``solver.feasible`` are polished; the lowest
    result is returned as ``(mask, f, gamma)``, or ``current`` when nothing beats it. A
    polished split is no longer a level set of its RatioDCA solution, so ``f`` becomes its
    indicator vector, where the relaxation is tight (``F_gamma(1_C)`` is the cut of ``C``).
    """
    mask, f, gamma = current
    best = penalised_ratio(mask, solver.edges, g)[1]
    ranked = sorted(solver.feasible.values(), key=lambda c: c[0])[: opts["polish_top"]]
    for _, m0, f0, g0 in ranked:
        m1 = local_search(W, g, cl, m0, opts["polish_patience"])
        val = penalised_ratio(m1, solver.edges, g)[1]
        if val < best * (1 - 1e-12):
            best, mask, gamma = val, m1, g0
            f = m1.astype(float) if not np.array_equal(m1, m0) else f0
    return mask, f, gamma


def map_threads(fn: Callable, items: Sequence, n_jobs: int) -> list:
    """``[fn(x) for x in items]``, in up to ``n_jobs`` threads (results in order)."""
    n_jobs = min(n_jobs, len(items))
    if n_jobs <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(n_jobs) as pool:
        return list(pool.map(fn, items))


def distinct_states(states: Sequence, thrs: Sequence, vals: Sequence[float]) -> list:
    """The states whose optimal level sets differ, best first (drops duplicate starts).

    Starts that RatioDCA brought to the same partition would continue the gamma schedule
    from (nearly) the same point and reproduce the same candidates: only the one with the
    lowest ``F_gamma`` is kept. Constant solutions (no level set) are dropped too, unless
    nothing else is left.
    """
    kept, seen = [], set()
    for k in np.argsort(vals, kind="stable"):
        if thrs[k] is None:
            continue
        key = np.packbits(thrs[k].mask).tobytes()
        if key not in seen:
            seen.add(key)
            kept.append(states[k])
    return kept or states


def binary_starts(
    W: sp.spmatrix, g: np.ndarray, cl: tuple, n_starts: int, rng: np.random.RandomState
) -> list[np.ndarray]:
    """Starts of the two-cluster search: the second eigenvector of the graph, the one under
    the cannot-links as linear constraints (when any), then random vectors."""
    starts = [constrained_fiedler(W, g, random_state=rng)]
    if len(cl[0]) and n_starts > 1:
        starts.append(constrained_fiedler(W, g, cl, random_state=rng))
    while len(starts) < n_starts:
        starts.append(rng.standard_normal(W.shape[0]))
    return starts[:n_starts]


def solve_binary(
    Wr: sp.csr_matrix,
    gr: np.ndarray,
    clr: tuple,
    settings: COSCSettings,
    rng: np.random.RandomState,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Two-cluster COSC on a must-link-reduced graph: ``(labels, f, gamma)`` per vertex.

    ``Wr``, ``gr``, ``clr``: the reduced graph, its vertex weights and cannot-links
    ``(i, j, weight)``. ``f`` is the RatioDCA solution (``labels`` is a level set of it),
    or the indicator of ``labels`` when the local search changed the split.
    """
    exact = settings.mode != "soft" or settings.gamma is None and settings.max_violations == 0
    if exact and len(clr[0]):
        # derived must-links: each colour class of a cannot-link component is one side
        W2, g2, map2, cl2 = merge_colour_classes(Wr, gr, clr)
    else:
        W2, g2, map2, cl2 = Wr, gr, np.arange(Wr.shape[0]), clr
    m = W2.shape[0]
    if m == 2:
        mask = np.array([True, False])
        return mask.astype(np.int64)[map2], mask.astype(float)[map2], 0.0
    opts = settings.options(m)
    solver = BinarySolver(W2, g2, cl2, opts, rng=rng)
    starts = binary_starts(W2, g2, cl2, opts["n_starts"], rng)

    def consistent_start():
        base = optimal_threshold(starts[0], solver.edges, g2)
        mask0 = base.mask if base is not None else starts[0] > np.median(starts[0])
        return consistent_partition(mask0, cl2, g2)

    if settings.mode == "guaranteed":
        mask, f, gamma = solver.guaranteed(consistent_start())
    elif settings.mode == "soft" and settings.gamma is not None:
        gamma = float(settings.gamma)
        best = None
        for (f_, _, _), thr in solver.run_many([(st, None, None) for st in starts], gamma):
            if thr is not None and (best is None or thr.value < best[0]):
                best = (thr.value, thr.mask, f_)
        if best is None:
            raise ValueError("COSC failed: every RatioDCA run returned a constant vector.")
        _, mask, f = best
    else:
        allowed = 0 if settings.mode == "hard" else settings.max_violations
        cap = np.inf
        if len(cl2[0]) and settings.mode == "hard":
            ncut_a = penalised_ratio(consistent_start(), solver.edges, g2, cl2)[1]
            cap = max(10.0 * g2.sum() * ncut_a / 4.0, 1.0)
        solver.continuation(starts, allowed, gamma_cap=cap)
        if solver.best is None:
            if settings.mode != "hard":
                raise ValueError(
                    f"COSC found no split with at most {allowed} violated cannot-links."
                )
            mask, f, gamma = solver.guaranteed(consistent_start())
        else:
            _, mask, f, gamma = solver.best
        if settings.mode == "hard" and opts["polish_top"] > 0:
            mask, f, gamma = polish(W2, g2, cl2, solver, opts, (mask, f, gamma))
    return mask.astype(np.int64)[map2], f[map2], gamma
