"""COSC: constrained 1-spectral clustering.

Rangapuram, S. S., & Hein, M. (2012). Constrained 1-spectral clustering. AISTATS.

Implemented here (equation numbers of the paper; the solvers are in
:mod:`spectralink.solvers.lovasz` and :mod:`spectralink.solvers.ratio_dca`):

* must-link merging into a reduced graph with vertex weights (Section 2.2, Lemma 2.3), and
  for two clusters the derived must-links from 2-colouring the cannot-link graph;
* the penalised ratio ``F_gamma`` (eq. 1) and its tight relaxation (Theorems 2.2-2.3),
  minimised by RatioDCA (Algorithm 1) with the inner problem solved by FISTA (Lemmas 3.1-3.2);
* hard mode (gamma raised from 0 until no constraint is violated, then bisection), soft
  mode (a number of allowed violations, or a fixed gamma), and the guaranteed mode of
  Theorem 3.1 (start from a consistent partition with gamma above gvol(V) NCut / 4);
* k-way clustering by recursive soft-constrained bi-partitioning with the
  expected-violations rule (Section 5, eq. 6).

Speed (not from the paper): RatioDCA solves its inner problems only to a sufficient
decrease of the ratio and stops at a relative criticality tolerance (``crit_tol``), on
large graphs the gamma continuation drops starts that reached the same partition as a
better start, and the starts of one gamma value can run in threads (``n_jobs``). Quality
(not from the paper): the lowest-cut consistent splits found along the gamma path are
polished by a local search whose moves keep every cannot-link separated (``search``).
"""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor
from numbers import Integral
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Options, StrOptions

from ..graph import DisconnectedGraphWarning, degrees, positive_degrees
from ..metrics import normalized_cut
from ..parallel import limit_threads, resolve_n_jobs
from ..solvers.constraint_graph import (
    consistent_partition,
    merge_colour_classes,
    merge_vertices,
    reduce_cannot_links,
    restrict_cannot_links,
)
from ..solvers.lovasz import edge_list, optimal_threshold, penalised_ratio
from ..solvers.ratio_dca import make_problem, ratio_dca
from ..spectral import constrained_fiedler
from ..utils._validation import NON_NEGATIVE, POSITIVE, Int, RealRange
from ._base import COMMON_CONSTRAINTS, ConstrainedClusteringMixin

__all__ = ["COSC"]


# --------------------------------------------------------------------------- binary COSC
class _Binary:
    """One reduced two-cluster problem: RatioDCA runs, gamma schedules, candidates.

    ``opts``: ``max_outer``, ``max_inner``, ``tol``, ``crit_tol`` (RatioDCA), ``n_jobs``
    (threads over starts), ``n_perturbations`` and ``continue_all`` (see
    :meth:`continuation`).
    """

    def __init__(self, W, g, cl, opts, outside=None, rng=None, edges=None):
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

    def run(self, state, gamma, seed=None):
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

    def run_many(self, states, gamma, seeds=None):
        """:meth:`run` on every state, in ``opts["n_jobs"]`` threads (results in order).

        The FISTA kernel releases the GIL, so the independent starts run in parallel.
        """
        seeds = self._seeds(len(states)) if seeds is None else seeds
        todo = [(st, gamma, sd) for st, sd in zip(states, seeds, strict=True)]
        return _map_threads(lambda args: self.run(*args), todo, self.opts.get("n_jobs", 1))

    def sweep(self, states, gamma, allowed):
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
            kept = _distinct_states(out, thrs, vals)
        return kept, ok

    def continuation(self, starts, allowed, *, gamma_cap, bisection_tol=0.01, max_steps=60):
        """Gamma from 0 (0, 0.2, doubling) until the best start is feasible, then bisection.

        Every start is warm-started from its own solution at the previous gamma. With
        ``opts["continue_all"]`` every start continues (as in the authors' code);
        otherwise one state per distinct partition does (:func:`_distinct_states`).
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

    def guaranteed(self, start_mask):
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


def _local_search(W, g, cl, mask, patience=0, max_passes=50):
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


def _polish(W, g, cl, solver, opts, current):
    """Local search (:func:`_local_search`) from the lowest-cut consistent splits found.

    The ``opts["polish_top"]`` lowest of ``solver.feasible`` are polished; the lowest
    result is returned as ``(mask, f, gamma)``, or ``current`` when nothing beats it. A
    polished split is no longer a level set of its RatioDCA solution, so ``f`` becomes its
    indicator vector, where the relaxation is tight (``F_gamma(1_C)`` is the cut of ``C``).
    """
    mask, f, gamma = current
    best = penalised_ratio(mask, solver.edges, g)[1]
    ranked = sorted(solver.feasible.values(), key=lambda c: c[0])[: opts["polish_top"]]
    for _, m0, f0, g0 in ranked:
        m1 = _local_search(W, g, cl, m0, opts["polish_patience"])
        val = penalised_ratio(m1, solver.edges, g)[1]
        if val < best * (1 - 1e-12):
            best, mask, gamma = val, m1, g0
            f = m1.astype(float) if not np.array_equal(m1, m0) else f0
    return mask, f, gamma


#: reduced two-cluster graphs up to this size get the fuller standard search (30 starts,
#: every start continued along the gamma path, Fiduccia-Mattheyses polish of every split)
_SMALL_GRAPH = 2000
#: k-way clusters from this size run the starts of a gamma value in threads; below it a
#: RatioDCA run takes about a millisecond and a thread pool would cost as much
_THREADED_STARTS = 500


def _map_threads(fn, items, n_jobs):
    """``[fn(x) for x in items]``, in up to ``n_jobs`` threads (results in order)."""
    n_jobs = min(n_jobs, len(items))
    if n_jobs <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(n_jobs) as pool:
        return list(pool.map(fn, items))


def _distinct_states(states, thrs, vals):
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


def _binary_starts(W, g, cl, n_starts, rng):
    starts = [constrained_fiedler(W, g, random_state=rng)]
    if len(cl[0]) and n_starts > 1:
        starts.append(constrained_fiedler(W, g, cl, random_state=rng))
    while len(starts) < n_starts:
        starts.append(rng.standard_normal(W.shape[0]))
    return starts[:n_starts]


# --------------------------------------------------------------------------- estimator
class COSC(ConstrainedClusteringMixin):
    """Constrained 1-spectral clustering (COSC).

    Minimises the normalized cut under must-link and cannot-link constraints through a
    tight continuous relaxation (RatioDCA on the penalised ratio ``F_gamma``). For two
    clusters the default hard mode satisfies every constraint whenever the constraints
    are consistent; more clusters use recursive soft-constrained bi-partitioning.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters k.
    mode : {"hard", "soft", "guaranteed"}, default="hard"
        Two-cluster problem. ``"hard"``: gamma = 0, 0.2, 0.4, ... until the best start
        violates no constraint, then bisection to 1 %, every start warm-started from its
        previous solution; the lowest cut among the consistent splits found, after the
        local search of ``search``, is kept. Every start continues along the schedule (as
        in the authors' code) when the reduced graph has at most ``2000`` vertices; on
        larger graphs, starts that reached the same partition as a better start do not
        (on USPS 0-vs-rest continuing them all tripled the time for a 0.25 % lower cut).
        ``"soft"``: at most ``max_violations`` violated cannot-links (same schedule), or a
        single run at ``gamma`` when given. ``"guaranteed"``: one run from a consistent
        partition obtained by 2-colouring, with gamma just above ``gvol(V) NCut / 4``
        (Theorem 3.1): the result is consistent and its cut no larger.
    search : {"standard", "thorough"}, default="standard"
        How hard the two-cluster problem (and, through its starts, each k-way split) is
        searched. ``"standard"``: ``n_starts`` starts; on a reduced graph of up to 2000
        vertices every consistent split found along the gamma path is polished by local
        search with Fiduccia-Mattheyses passes (20 moves of patience), on larger graphs
        the 10 lowest-cut ones by best-improvement moves (hard mode; a move changes the
        side of one point outside the cannot-links or swaps both ends of a cannot-link, so
        every cannot-link stays separated). ``"thorough"``: 3x ``n_starts`` (30 when
        None), 2x ``n_split_starts``, at least 10 perturbed restarts after every run
        (``n_perturbations``), every start continued at any size, and every consistent
        split found polished with Fiduccia-Mattheyses passes. On sonar, breast cancer and
        diabetes (70 runs, ``benchmarks/bench_cosc_search.py``) ``"standard"`` ended with
        a higher cut than ``"thorough"`` in 22 (0.49 % higher on average, at most 4.6 %),
        equal in 42 and lower in 6, at about 1/10 of its time; ``"thorough"`` itself, run
        with other seeds, ended higher than its first runs in 9 of the 70.
    gamma : float, default=None
        Soft mode: fixed penalty per violated cannot-link.
    max_violations : int, default=0
        Soft mode: allowed violated cannot-links (after merging).
    n_starts : int or None, default=None
        Two clusters: starts (second eigenvector of the reduced graph, the SCLC
        linear-constraint solution, then random vectors). None: 30 when the reduced graph
        has at most 2000 vertices, 10 on larger graphs (about 3x the time of 10 starts on
        small graphs, where a fit takes about a second; USPS 0-vs-rest keeps 10).
    affinity : {"adaptive_knn", "knn", "precomputed"}, default="adaptive_knn"
        ``"adaptive_knn"``: :func:`spectralink.graph.adaptive_knn_affinity`, the paper's graph;
        ``"knn"``: the Gaussian k-NN graph of the library; ``"precomputed"``: ``X`` is the
        affinity.
    n_neighbors : int, default=10
        Neighbours of the k-NN graph.
    sigma : float, default=None
        Bandwidth of ``affinity="knn"`` only.
    split_rule : {"reference", "min_cut"}, default="reference"
        k-way: which cluster to split. ``"min_cut"`` is the paper's rule (the split that
        minimises the normalized multi-cut) and reproduces the paper; ``"reference"`` is
        the heuristic of the authors' code, which favours splits separating many
        cannot-links. The paper's rule happily splits an already separated cluster again
        when that is cheaper than separating cannot-linked points (iris, 50 random pairs:
        setosa cut in two, error 0.47 in one draw of five); measured with 50-800 random
        pairs (``benchmarks/bench_defaults.py``, 5 draws), ``"reference"`` had a lower or
        equal mean error at every count on iris, wine, blobs and standardised
        segmentation (e.g. 0.35 against 0.52 at 200 pairs) and at four of five counts on
        digits.
    n_split_starts : int, default=2
        k-way: starts per split (second eigenvector + random).
    n_recursions : int, default=4
        k-way: full recursive runs; the lowest final multi-cut is kept. A run stops as
        soon as its multi-cut plus the smallest candidate split's increase reaches the
        best finished run's (a split never lowers the multi-cut). Measured with 5 draws
        on digits (400 pairs) and standardised segmentation, wine and iris (100-400
        pairs): 4 runs instead of 5 took 17-21 % less time (digits 3.37 -> 2.80 s CPU)
        and gave the same multi-cut in 18 of 20 draws, +14 % and +11 % in the other two
        (digits and segmentation; mean multi-cut +2.4 % and +2.1 %).
    max_gamma_runs : int, default=5
        k-way: gamma values per split (0, +0.1, increment doubling when the cut stalls).
    max_outer : int, default=1000
        Cap on RatioDCA steps per run.
    max_inner : int, default=2000
        Cap on the inner FISTA budget (100 iterations, doubled after a non-descent step).
        The authors' code uses 10000; a run ends with non-descent steps at growing budgets,
        and 2000 measured 1.8x faster on Sonar with cuts as low.
    tol : float, default=1e-6
        RatioDCA relative decrease that stops the descent.
    crit_tol : float, default=1e-2
        RatioDCA also stops when the inner dual certifies that the linearised objective
        cannot decrease by more than ``crit_tol`` relative to its size (the iterate is
        critical to that tolerance; the exact criterion is an inner optimum of 0). Each
        RatioDCA step stops its FISTA loop once the ratio decreased by 30 %, else at the
        inner budget. ``0`` proves criticality to the inner budget: on USPS 0-vs-rest
        ``1e-2`` needed 2.5x fewer FISTA iterations than ``3e-3``, for the same cut.
    n_perturbations : int, default=0
        Two clusters: after every RatioDCA run, up to this many restarts from the solution
        plus Gaussian noise of scale ``p * range(f)``, ``p = 0.001, 0.011, 0.021, ...``; a
        restart is kept when its thresholded ``F_gamma`` is lower, and the loop stops after
        5 that are not. The authors' code does this (10 tries) by default; here it is off
        by default because it multiplies the number of RatioDCA runs (see the COSC results
        README for its measured effect).
    inner_step : {"uniform", "per_edge"}, default="uniform"
        FISTA step of RatioDCA's inner problem. ``"uniform"``: every edge takes the step
        of the worst one, ``1 / max (deg_i + deg_j)``. ``"per_edge"``: edge ``(i, j)`` takes
        ``1 / (deg_i + deg_j)`` (a diagonal preconditioner, as safe; unweighted degrees),
        1.2-3.6x fewer FISTA iterations for the same inner duality gap and 1.1-1.6x faster
        fits (MNIST 70k 10-way, three draws: 79-162 s against 128-197 s on 2 cores; USPS
        0-vs-rest 3.8 s against 4.7 s). Each run then follows another path and may end in
        another local optimum: over many draws the cuts and errors move both ways (lower
        on digits and segmentation, higher on wine, where even rounding-level changes move
        the k-way result; ``docs/results/cosc/timing.md``), which is why it is not the
        default yet.
    n_jobs : int, default=None
        Threads running the starts of a gamma value and the candidate splits of a k-way
        level in parallel (``None``: the library's thread count,
        :func:`spectralink.set_config` or ``SPECTRALINK_NUM_THREADS``; ``-1``: all
        processors). The result does not depend on it: the random starts are seeded before
        the threads start, and BLAS runs on one thread inside the fit.
    random_state : int, RandomState or None
        Seeds the random starts of RatioDCA.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    cut_ : float
        Normalized (multi-)cut ``sum_l cut(C_l, V\\C_l) / vol(C_l)`` on ``affinity_matrix_``.
    n_violated_ : int
        Number of the given constraints the labels violate.
    continuous_ : ndarray of shape (n_samples,) or None
        Two clusters: the RatioDCA solution lifted to the points (labels are a level set),
        or the indicator of the labels when the local search changed the split.
    gamma_ : float or None
        Two clusters: the penalty of the returned solution.
    clusterings_ : list of ndarray
        k-way: the labelings with 2, ..., k clusters of the kept recursion.
    affinity_matrix_ : sparse matrix of shape (n_samples, n_samples)

    Notes
    -----
    ``predict`` gives a new point the weighted vote of its ``n_neighbors`` nearest
    training points' labels, weighted by the fitted graph's weights (for
    ``"adaptive_knn"``: ``max(s_x(j), s_j(x))`` with the new point's own scale and the
    fitted ``sigma_j``, :func:`spectralink.graph.adaptive_knn_cross_affinity`). The
    partition is a level set of a non-linear RatioDCA solution (recursively, for k > 2),
    not a linear eigen-embedding, so there is nothing for a Nyström extension to reach.
    With a feature affinity the model keeps a reference to the training features (n x
    n_features floats, also pickled); with ``"precomputed"`` ``predict`` takes
    affinities of shape (n_new, n_train).

    References
    ----------
    Rangapuram, S. S., & Hein, M. (2012). Constrained 1-spectral clustering. AISTATS.
    Hein, M., & Setzer, S. (2011). Beyond spectral clustering: tight relaxations of balanced
    graph cuts. NIPS.
    Bühler, T., & Hein, M. (2009). Spectral clustering based on the graph p-Laplacian. ICML.
    """

    _scale = "sparse graph; the k-way recursion refits per split (costly for large n, k)"
    _parameter_constraints = {
        **{k: v for k, v in COMMON_CONSTRAINTS.items() if k != "n_init"},
        "mode": [StrOptions({"hard", "soft", "guaranteed"})],
        "search": [StrOptions({"standard", "thorough"})],
        "gamma": [NON_NEGATIVE, None],
        "max_violations": [Int(0)],
        "n_starts": [Int(1), None],
        "affinity": [StrOptions({"adaptive_knn", "knn", "precomputed"})],
        "split_rule": [StrOptions({"reference", "min_cut"})],
        "n_split_starts": [Int(1)],
        "n_recursions": [Int(1)],
        "max_gamma_runs": [Int(1)],
        "max_outer": [Int(1)],
        "max_inner": [Int(1)],
        "tol": [POSITIVE],
        "crit_tol": [RealRange(0, 1, closed="left")],
        "n_perturbations": [Int(0)],
        "inner_step": [StrOptions({"uniform", "per_edge"})],
        "n_jobs": [Int(1), Options(Integral, {-1}), None],
    }

    def __init__(
        self,
        n_clusters: int = 2,
        *,
        mode: str = "hard",
        search: str = "standard",
        gamma: float | None = None,
        max_violations: int = 0,
        n_starts: int | None = None,
        affinity: str = "adaptive_knn",
        n_neighbors: int = 10,
        sigma: float | None = None,
        split_rule: str = "reference",
        n_split_starts: int = 2,
        n_recursions: int = 4,
        max_gamma_runs: int = 5,
        max_outer: int = 1000,
        max_inner: int = 2000,
        tol: float = 1e-6,
        crit_tol: float = 1e-2,
        n_perturbations: int = 0,
        inner_step: str = "uniform",
        n_jobs: int | None = None,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.mode = mode
        self.search = search
        self.gamma = gamma
        self.max_violations = max_violations
        self.n_starts = n_starts
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.split_rule = split_rule
        self.n_split_starts = n_split_starts
        self.n_recursions = n_recursions
        self.max_gamma_runs = max_gamma_runs
        self.max_outer = max_outer
        self.max_inner = max_inner
        self.tol = tol
        self.crit_tol = crit_tol
        self.n_perturbations = n_perturbations
        self.inner_step = inner_step
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _feature_affinities(self) -> set:
        return {"adaptive_knn", "knn"}

    def _settings(self, n_vertices: int | None = None) -> dict:
        """The search's effective settings (``search`` applied to the parameters).

        ``n_vertices``: size of the reduced two-cluster graph; on graphs of up to
        ``_SMALL_GRAPH`` vertices the standard search uses 30 starts when ``n_starts`` is
        None and polishes every consistent split with Fiduccia-Mattheyses passes.
        """
        thorough = self.search == "thorough"
        small = n_vertices is not None and n_vertices <= _SMALL_GRAPH
        if self.n_starts is not None:
            n_starts = self.n_starts * (3 if thorough else 1)
        else:
            n_starts = 30 if thorough or small else 10
        return {
            "max_outer": self.max_outer,
            "max_inner": self.max_inner,
            "tol": self.tol,
            "crit_tol": self.crit_tol,
            "n_jobs": resolve_n_jobs(self.n_jobs),
            "n_starts": n_starts,
            "n_split_starts": self.n_split_starts * (2 if thorough else 1),
            "n_perturbations": max(self.n_perturbations, 10 if thorough else 0),
            "continue_all": True if thorough else _SMALL_GRAPH,  # up to this many vertices
            "polish_top": 10**9 if thorough or small else 10,
            "polish_patience": 20 if thorough or small else 0,
            "max_gamma_runs": self.max_gamma_runs,
            "inner_step": self.inner_step,
        }

    def _fit(self, X, constraints):
        W = self._affinity(X)
        # BLAS on one thread: COSC's dense steps are small (parallel BLAS there mostly
        # waits, e.g. digits 10-way 3.2 s wall / 5.4 s CPU on 2 threads against 2.7 s on
        # one), and the result then does not depend on the machine's thread count; the
        # parallelism is the threads of the starts and splits (n_jobs)
        with limit_threads(0.0):
            self._fit_graph(W, constraints)

    def _fit_graph(self, W, constraints):
        d = positive_degrees(W, "COSC")
        rng = check_random_state(self.random_state)
        n = W.shape[0]
        # explicit must-links: merge once (Section 2.2)
        Wr, gr, mapping = merge_vertices(W, d, constraints.ml_components)
        clr = reduce_cannot_links(constraints.cannot_link, constraints.cl_weights, mapping)
        if Wr.shape[0] < self.n_clusters:
            raise ValueError(
                f"the must-links leave {Wr.shape[0]} groups of points, fewer than "
                f"n_clusters={self.n_clusters}."
            )
        self.affinity_matrix_ = W
        self.continuous_ = None
        self.gamma_ = None
        if self.n_clusters == 2:
            labels_r, f_r, gamma = self._fit_binary(Wr, gr, clr, rng)
            lab = labels_r[mapping]
            self.continuous_ = f_r[mapping]
            self.gamma_ = gamma
            self.clusterings_ = [lab]
        else:
            sizes = np.bincount(mapping, minlength=Wr.shape[0]).astype(float)
            ctx = _KwayContext(Wr, gr, clr, sizes, n, self.n_clusters, self, rng)
            labels_r, history = ctx.fit()
            lab = labels_r[mapping]
            self.clusterings_ = [h[mapping] for h in history]
        self.labels_ = lab
        self.cut_ = normalized_cut(W, lab)
        self.n_violated_ = int(constraints.violated(lab).sum()) if len(constraints) else 0

    # ------------------------------------------------------------------ k = 2
    def _fit_binary(self, Wr, gr, clr, rng):
        n_cc, _ = connected_components(Wr, directed=False)
        if n_cc > 1:
            warnings.warn(
                f"the (must-link reduced) graph has {n_cc} connected components: zero-cut "
                "bipartitions exist and COSC returns one of them when the constraints allow.",
                DisconnectedGraphWarning,
                stacklevel=4,
            )
        exact = self.mode != "soft" or self.gamma is None and self.max_violations == 0
        if exact and len(clr[0]):
            # derived must-links: each colour class of a cannot-link component is one side
            W2, g2, map2, cl2 = merge_colour_classes(Wr, gr, clr)
        else:
            W2, g2, map2, cl2 = Wr, gr, np.arange(Wr.shape[0]), clr
        m = W2.shape[0]
        if m == 2:
            mask = np.array([True, False])
            return mask.astype(np.int64)[map2], mask.astype(float)[map2], 0.0
        opts = self._settings(m)
        solver = _Binary(W2, g2, cl2, opts, rng=rng)
        starts = _binary_starts(W2, g2, cl2, opts["n_starts"], rng)

        def consistent_start():
            base = optimal_threshold(starts[0], solver.edges, g2)
            mask0 = base.mask if base is not None else starts[0] > np.median(starts[0])
            return consistent_partition(mask0, cl2, g2)

        if self.mode == "guaranteed":
            mask, f, gamma = solver.guaranteed(consistent_start())
        elif self.mode == "soft" and self.gamma is not None:
            gamma = float(self.gamma)
            best = None
            for (f_, _, _), thr in solver.run_many([(st, None, None) for st in starts], gamma):
                if thr is not None and (best is None or thr.value < best[0]):
                    best = (thr.value, thr.mask, f_)
            if best is None:
                raise ValueError("COSC failed: every RatioDCA run returned a constant vector.")
            _, mask, f = best
        else:
            allowed = 0 if self.mode == "hard" else self.max_violations
            cap = np.inf
            if len(cl2[0]) and self.mode == "hard":
                ncut_a = penalised_ratio(consistent_start(), solver.edges, g2, cl2)[1]
                cap = max(10.0 * g2.sum() * ncut_a / 4.0, 1.0)
            solver.continuation(starts, allowed, gamma_cap=cap)
            if solver.best is None:
                if self.mode != "hard":
                    raise ValueError(
                        f"COSC found no split with at most {allowed} violated cannot-links."
                    )
                mask, f, gamma = solver.guaranteed(consistent_start())
            else:
                _, mask, f, gamma = solver.best
            if self.mode == "hard" and opts["polish_top"] > 0:
                mask, f, gamma = _polish(W2, g2, cl2, solver, opts, (mask, f, gamma))
        return mask.astype(np.int64)[map2], f[map2], gamma


# --------------------------------------------------------------------------- k-way COSC
class _Split(NamedTuple):
    """A candidate split of one cluster."""

    delta: float  #: change of the normalized multi-cut (eq. 6)
    mask: np.ndarray  #: side of every vertex of the cluster
    separated: float  #: weight of the cluster's cannot-links the split separates


class _ClusterSub(NamedTuple):
    """A cluster's induced subgraph and its cut to the rest of the graph."""

    idx: np.ndarray
    W: sp.csr_matrix
    edges: tuple
    g: np.ndarray
    outside: np.ndarray  #: weight from every vertex to the vertices outside the cluster
    cl: tuple


class _KwayContext:
    """Recursive soft-constrained bi-partitioning (Section 5).

    Work shared across the ``n_recursions`` recursive runs: the second-eigenvector start
    of a cluster and its whole gamma path (they do not depend on the run) are computed
    once per distinct cluster; only the random starts are new in every run. Runs whose
    multi-cut already reaches the best finished run's stop (a split never lowers the
    multi-cut). The two clusters created by a split are examined in parallel threads
    (``n_jobs``), and so are the starts of a gamma value on clusters of
    ``_THREADED_STARTS`` or more vertices; every split draws its random start from a seed
    fixed before the threads start, so the result does not depend on ``n_jobs``.
    """

    def __init__(self, W, g, cl, sizes, n_points, k, est, rng):
        self.W = sp.csr_matrix(W)
        self.d = degrees(self.W)
        self.g = g
        self.cl = cl
        self.sizes = sizes
        self.n_points = n_points
        self.k = k
        self.est = est
        self.rng = rng
        self.opts = est._settings()
        self.n_cl = float(np.sum(cl[2]))
        self.edges = edge_list(self.W)
        self._fiedler = {}  # cluster key -> (start vector, {gamma path: (state, threshold)})

    # -------------------------------------------------------------- objective
    def multicut(self, labels):
        """Normalized multi-cut with vertex weights (eq. 6)."""
        i, j, w = self.edges
        cross = labels[i] != labels[j]
        m = int(labels.max()) + 1
        cut = np.bincount(labels[i][cross], w[cross], m) + np.bincount(
            labels[j][cross], w[cross], m
        )
        vol = np.bincount(labels, self.g, m)
        used = vol > 0
        return float(np.sum(cut[used] / vol[used]))

    @staticmethod
    def _delta(sub, mask):
        """Change of the multi-cut when the cluster splits into ``mask`` / ``~mask``."""
        i, j, w = sub.edges
        between = float(w[mask[i] != mask[j]].sum())
        oa, ob = float(sub.outside[mask].sum()), float(sub.outside[~mask].sum())
        ga, gb = float(sub.g[mask].sum()), float(sub.g[~mask].sum())
        return (between + oa) / ga + (between + ob) / gb - (oa + ob) / (ga + gb)

    def _allowed(self, idx, n_cl_inside):
        """Expected violations when one class is split off: c (k' - 2) / k' (Section 5)."""
        kp = max(2, int(np.floor(self.sizes[idx].sum() * self.k / self.n_points)))
        return int(np.floor(n_cl_inside * (kp - 2) / kp)), kp

    # -------------------------------------------------------------- one cluster
    def _sub(self, idx, W=None):
        W = self.W[idx][:, idx].tocsr() if W is None else W
        return _ClusterSub(
            idx,
            W,
            edge_list(W),
            self.g[idx],
            self.d[idx] - degrees(W),
            restrict_cannot_links(self.cl, idx, len(self.g)),
        )

    def _candidate(self, sub, mask):
        ci, cj, w = sub.cl
        sep = float(w[mask[ci] != mask[cj]].sum()) if len(ci) else 0.0
        return _Split(self._delta(sub, mask), mask, sep)

    def best_split(self, idx, seed):
        """Best split of cluster ``idx`` (None for a single vertex)."""
        if len(idx) < 2:
            return None
        sub = self._sub(idx)
        if len(idx) == 2:
            return self._candidate(sub, np.array([True, False]))
        n_cc, lab = connected_components(sub.W, directed=False)
        if n_cc > 1:
            return self._split_disconnected(sub, lab, seed)
        return self._soft_split(sub, float(np.sum(sub.cl[2])), seed)

    def _split_disconnected(self, sub, lab, seed):
        """Component versus rest, or a COSC split of a large component with the rest on a side.

        A component-versus-rest split that leaves the multi-cut unchanged (the cluster is
        a union of components with no edge to the rest of the graph, or both sides have
        the same cut per volume) cannot be beaten, since no split lowers the multi-cut: the
        COSC splits are then skipped.
        """
        n = len(sub.idx)
        counts = np.bincount(lab)
        order = np.argsort(counts, kind="stable")[::-1]
        cands = [self._candidate(sub, lab == c) for c in order[:20]]
        best = min(cands, key=lambda c: c.delta)
        scale = (sub.outside.sum() + sub.edges[2].sum()) / sub.g.sum()
        if best.delta <= 1e-12 * max(scale, 1e-300):
            return best
        n_cl_inside = float(np.sum(sub.cl[2]))
        for c in order[:3]:
            if counts[c] < 3:
                continue
            comp = np.flatnonzero(lab == c)
            comp_sub = self._sub(sub.idx[comp], sub.W[comp][:, comp].tocsr())
            m = self._soft_split(comp_sub, n_cl_inside, seed).mask
            for rest_side in (True, False):
                mask = np.full(n, rest_side)
                mask[comp] = m
                if 0 < mask.sum() < n:
                    cands.append(self._candidate(sub, mask))
        return min(cands, key=lambda c: c.delta)

    def _fiedler_path(self, sub, solver, seed):
        """The second-eigenvector start of a cluster and its cache of gamma runs."""
        key = sub.idx.tobytes()
        if key not in self._fiedler:
            f0 = constrained_fiedler(sub.W, sub.g, random_state=np.random.RandomState(seed))
            self._fiedler[key] = (f0, {})
        return self._fiedler[key]

    def _soft_split(self, sub, n_cl_inside, seed):
        """Soft-constrained COSC split of a connected cluster (per-split gamma schedule).

        Gamma = 0, then +0.1 (the increment doubles when the best cut stalls), at most
        ``max_gamma_runs`` values, until the best start violates at most the expected
        number of cannot-links; every start is warm-started from its previous solution.
        The split is the lowest multi-cut run from the first gamma that met the budget on
        (all runs if none did).
        """
        o = self.opts
        allowed, _ = self._allowed(sub.idx, n_cl_inside)
        rng = np.random.default_rng(seed)
        solver = _Binary(
            sub.W, sub.g, sub.cl, {**o, "n_jobs": 1}, outside=sub.outside, edges=sub.edges
        )
        f0, cache = self._fiedler_path(sub, solver, int(rng.integers(2**31 - 1)))
        n_rand = max(o["n_split_starts"] - 1, 0)
        starts = [rng.standard_normal(len(sub.idx)) for _ in range(n_rand)]
        pert_seeds = rng.integers(2**31 - 1, size=(o["max_gamma_runs"], 1 + n_rand))
        states = [(f0, None, None)] + [(f, None, None) for f in starts]
        gamma, inc = 0.0, 0.1
        path = ()
        runs = []
        prev_cut = None
        n_jobs = o["n_jobs"] if len(sub.idx) >= _THREADED_STARTS else 1
        for step in range(o["max_gamma_runs"]):
            path = (*path, round(gamma, 12))
            cached = cache.get(path)
            # the starts of one gamma value are independent and seeded in advance, so
            # running them in threads (the kernel releases the GIL) leaves the result
            # unchanged; it keeps both cores busy while the other cluster of a split is small
            todo = [
                (states[r], gamma, int(pert_seeds[step, r]))
                for r in range(len(states))
                if r or cached is None
            ]
            fresh = _map_threads(lambda args: solver.run(*args), todo, n_jobs)
            results = ([cached] if cached is not None else []) + fresh
            if cached is None:
                cache[path] = results[0]
            states = [st for st, _ in results]
            thrs = [thr for _, thr in results if thr is not None]
            if not thrs:
                break
            best = min(thrs, key=lambda t: t.value)
            runs.append(thrs)
            if best.n_violated <= allowed + 1e-9 or len(sub.cl[0]) == 0:
                break
            if prev_cut is not None and abs(best.ncut - prev_cut) < 1e-8:
                inc *= 2.0
            prev_cut = best.ncut
            gamma += inc
        if not runs:
            return self._candidate(sub, f0 > np.median(f0))
        # the runs of the first gamma whose best start met the budget, and all later ones
        first = next(
            (
                s
                for s, thrs in enumerate(runs)
                if min(thrs, key=lambda t: t.value).n_violated <= allowed + 1e-9
            ),
            0,
        )
        pool = [t for thrs in runs[first:] for t in thrs]
        ok = [t for t in pool if t.n_violated <= allowed + 1e-9] or pool
        cands = [self._candidate(sub, t.mask) for t in ok]
        return min(cands, key=lambda c: c.delta)

    # -------------------------------------------------------------- recursion
    def _choose(self, clusters, splits, labels):
        """Index of the cluster to split next."""
        avail = [c for c in range(len(clusters)) if splits[c] is not None]
        if not avail:
            return None
        if self.est.split_rule == "min_cut" or self.n_cl == 0:
            return min(avail, key=lambda c: splits[c].delta)
        k, n_cl = self.k, self.n_cl
        l_next = len(clusters) + 1
        satisfied = self.n_cl - self._violated(labels)
        nsat = {c: splits[c].separated for c in avail}
        eligible = []
        for c in avail:
            kp = max(2, int(np.floor(self.sizes[clusters[c]].sum() * k / self.n_points)))
            exp_m = kp * (kp - 1) * n_cl / (k * (k - 1))
            if nsat[c] >= np.floor(2 * exp_m / kp):
                eligible.append(c)
        if l_next == k or not eligible:
            pool = avail if not eligible else eligible
            return max(pool, key=lambda c: (nsat[c], -splits[c].delta))
        top = max(nsat[c] for c in eligible)
        need = (2 * k - l_next) * (l_next - 1) * n_cl / (k * (k - 1))
        pool = [c for c in eligible if nsat[c] >= top or satisfied + nsat[c] >= need]
        return min(pool, key=lambda c: splits[c].delta)

    def _violated(self, labels):
        ci, cj, w = self.cl
        return float(w[labels[ci] == labels[cj]].sum()) if len(ci) else 0.0

    def _best_splits(self, clusters, seeds):
        """:meth:`best_split` of several clusters, in ``n_jobs`` threads (results in order)."""
        todo = list(zip(clusters, seeds, strict=True))
        return _map_threads(lambda args: self.best_split(*args), todo, self.opts["n_jobs"])

    def recursive_split(self, rng, bound=np.inf):
        """One recursive run; None once its multi-cut is certain to reach ``bound``.

        A split never lowers the multi-cut (``_delta >= 0``), and the next split is one of
        the candidates at hand, so the run stops when its multi-cut plus the smallest
        candidate's change reaches ``bound``.
        """
        nv = len(self.g)
        labels = np.zeros(nv, dtype=np.int64)
        clusters = [np.arange(nv)]
        splits = self._best_splits(clusters, [int(rng.integers(2**31 - 1))])
        history = []
        while len(clusters) < self.k:
            c = self._choose(clusters, splits, labels)
            if c is None:
                break
            idx = clusters[c]
            mask = splits[c].mask
            clusters[c], new = idx[mask], idx[~mask]
            clusters.append(new)
            labels[new] = len(clusters) - 1
            history.append(labels.copy())
            mc = self.multicut(labels)
            if mc >= bound - 1e-12 * max(bound, 1.0):
                return None
            if len(clusters) == self.k:
                break
            fresh = [c, len(clusters) - 1]
            seeds = [int(x) for x in rng.integers(2**31 - 1, size=2)]
            new_splits = self._best_splits([clusters[f] for f in fresh], seeds)
            splits[c] = new_splits[0]
            splits.append(new_splits[1])
            # the next split is one of these and adds its delta (>= 0) to the multi-cut
            nxt = min((s.delta for s in splits if s is not None), default=0.0)
            if mc + nxt >= bound - 1e-12 * max(bound, 1.0):
                return None
        return labels, history

    def fit(self):
        """``n_recursions`` recursive runs; the lowest final multi-cut is kept."""
        seeds = self.rng.randint(0, 2**31 - 1, size=self.est.n_recursions)
        best = None
        for sd in seeds:
            out = self.recursive_split(
                np.random.default_rng(sd), np.inf if best is None else best[0]
            )
            if out is None:
                continue
            labels, history = out
            mc = self.multicut(labels)
            if best is None or mc < best[0] - 1e-12:
                best = (mc, labels, history)
        return best[1], best[2]
