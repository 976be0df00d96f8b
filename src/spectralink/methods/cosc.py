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
decrease of the ratio and stops at a relative criticality tolerance (``crit_tol``), the
gamma continuation drops starts that reached the same partition as a better start, and the
starts of one gamma value can run in threads (``n_jobs``).
"""

from __future__ import annotations

import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, connected_components
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Options, StrOptions

from ..graph import DisconnectedGraphWarning, degrees, positive_degrees
from ..metrics import normalized_cut
from ..solvers.lovasz import edge_list, optimal_threshold, penalised_ratio
from ..solvers.ratio_dca import make_problem, ratio_dca
from ..spectral import constrained_fiedler
from ._base import (
    COMMON_CONSTRAINTS,
    NON_NEGATIVE,
    POSITIVE,
    ConstrainedClusteringMixin,
    Int,
    RealRange,
)

__all__ = [
    "COSC",
    "consistent_partition",
    "merge_vertices",
    "reduce_cannot_links",
    "two_colouring",
]

_EMPTY_CL = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))


# --------------------------------------------------------------------------- merging
def merge_vertices(
    W: sp.spmatrix, g: np.ndarray, groups: np.ndarray
) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Contract every group of vertices into one super-vertex (Section 2.2, Lemma 2.3).

    ``w_{tau l} = sum_{i in T} w_il``, ``g_tau = sum_{i in T} g_i``, edges inside a group
    are dropped. New ids follow the first occurrence of each group, so singletons keep
    their relative order. Cut and gvol, hence NCut and ``F_gamma``, are unchanged for every
    partition that does not split a group.

    Returns
    -------
    W_reduced : CSR matrix, g_reduced : ndarray, mapping : ndarray (old id -> new id)
    """
    groups = np.asarray(groups)
    _, first, inverse = np.unique(groups, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    mapping = rank[inverse.ravel()]
    m = len(first)
    n = len(groups)
    P = sp.csr_matrix((np.ones(n), (np.arange(n), mapping)), shape=(n, m))
    Wr = (P.T @ sp.csr_matrix(W) @ P).tocsr()
    Wr.setdiag(0)
    Wr.eliminate_zeros()
    Wr.sort_indices()
    return Wr, np.bincount(mapping, g, minlength=m), mapping


def reduce_cannot_links(
    cl: np.ndarray, weights: np.ndarray, mapping: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cannot-links re-indexed through a merge ``mapping`` and de-duplicated (max weight).

    Raises ``ValueError`` when a cannot-link falls inside one merged group (inconsistent).
    """
    if len(cl) == 0:
        return _EMPTY_CL
    pairs = np.sort(mapping[cl], axis=1)
    bad = np.flatnonzero(pairs[:, 0] == pairs[:, 1])
    if len(bad):
        a, b = cl[bad[0]]
        raise ValueError(
            f"inconsistent constraints: cannot-link ({a}, {b}) joins two points that must be "
            "in the same cluster."
        )
    uniq, inv = np.unique(pairs, axis=0, return_inverse=True)
    w = np.zeros(len(uniq))
    np.maximum.at(w, inv.ravel(), weights)
    return uniq[:, 0].astype(np.int64), uniq[:, 1].astype(np.int64), w


def two_colouring(n: int, ci: np.ndarray, cj: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2-colour the cannot-link graph; ``(colour, component)``, -1 for unconstrained vertices.

    Raises ``ValueError`` on an odd cycle: the cannot-links are then inconsistent for two
    clusters.
    """
    colour = np.full(n, -1, dtype=np.int64)
    comp = np.full(n, -1, dtype=np.int64)
    if len(ci) == 0:
        return colour, comp
    Q = sp.csr_matrix((np.ones(len(ci)), (ci, cj)), shape=(n, n))
    Q = (Q + Q.T).tocsr()
    _, lab = connected_components(Q, directed=False)
    touched = np.zeros(n, dtype=bool)
    touched[ci] = touched[cj] = True
    for root in np.unique(np.concatenate([ci, cj])):
        if colour[root] >= 0:
            continue
        order, pred = breadth_first_order(Q, root, directed=False, return_predecessors=True)
        colour[root] = 0
        for node in order[1:]:
            colour[node] = 1 - colour[pred[node]]
        comp[order] = lab[root]
    clash = np.flatnonzero(colour[ci] == colour[cj])
    if len(clash):
        raise ValueError(
            "inconsistent constraints for 2 clusters: the cannot-links contain an odd cycle "
            f"(through the pair ({ci[clash[0]]}, {cj[clash[0]]}) of the reduced graph), so no "
            "bipartition satisfies them all. Use mode='soft' or more clusters."
        )
    return colour, comp


def consistent_partition(mask: np.ndarray, cl: tuple, g: np.ndarray) -> np.ndarray:
    """Repair a bipartition so every cannot-link is separated (a consistent start, Thm 3.1).

    Valid when the cannot-links form a matching, as after the 2-colouring merge: for every
    violated pair the lighter endpoint (by vertex weight) changes side.
    """
    mask = np.asarray(mask, dtype=bool).copy()
    ci, cj, _ = cl
    for a, b in zip(ci, cj, strict=True):
        if mask[a] == mask[b]:
            mask[a if g[a] <= g[b] else b] = not mask[a]
    if mask.all() or not mask.any():
        mask[int(np.argmin(g))] = not mask[int(np.argmin(g))]
    return mask


# --------------------------------------------------------------------------- binary COSC
class _Binary:
    """One reduced two-cluster problem: RatioDCA runs, gamma schedules, candidates."""

    def __init__(self, W, g, cl, opts, outside=None, rng=None):
        self.W = W
        self.rng = rng
        self.edges = edge_list(W)
        self.g = g
        self.cl = cl
        self.prob = make_problem(self.edges, g, cl)
        self.opts = opts
        self.outside = outside
        self.best = None  # (ncut, mask, f, gamma) of the best feasible split seen

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

    def run_many(self, states, gamma):
        """:meth:`run` on every state, in ``opts["n_jobs"]`` threads (results in order).

        The FISTA kernel releases the GIL, so the independent starts run in parallel.
        """
        n_jobs = min(self.opts.get("n_jobs", 1), len(states))
        seeds = self._seeds(len(states))
        if n_jobs <= 1:
            return [self.run(st, gamma, sd) for st, sd in zip(states, seeds, strict=True)]
        with ThreadPoolExecutor(n_jobs) as pool:
            return list(pool.map(lambda st, sd: self.run(st, gamma, sd), states, seeds))

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
            if feas is not None and (self.best is None or feas.value < self.best[0]):
                self.best = (feas.value, feas.mask, st[0], gamma)
        vals = [np.inf if t is None else t.value for t in thrs]
        b = int(np.argmin(vals))
        ok = thrs[b] is not None and thrs[b].n_violated <= allowed + 1e-9
        return _distinct_states(out, thrs, vals), ok

    def continuation(self, starts, allowed, *, gamma_cap, bisection_tol=0.01, max_steps=60):
        """Gamma from 0 (0, 0.2, doubling) until the best start is feasible, then bisection.

        Every sweep keeps one state per distinct partition (:func:`_distinct_states`).
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


def _effective_jobs(n_jobs):
    if n_jobs is None:
        return 1
    return (os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)


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
    mode : {"hard", "soft", "guaranteed"}, default="hard"
        Two-cluster problem. ``"hard"``: gamma = 0, 0.2, 0.4, ... until the best start
        violates no constraint, then bisection to 1 %, every start warm-started from its
        previous solution; the lowest cut among the consistent splits found is kept.
        Starts that reach the same partition as a better start are not continued (they
        would repeat its candidates), unlike the authors' code.
        ``"soft"``: at most ``max_violations`` violated cannot-links (same schedule), or a
        single run at ``gamma`` when given. ``"guaranteed"``: one run from a consistent
        partition obtained by 2-colouring, with gamma just above ``gvol(V) NCut / 4``
        (Theorem 3.1): the result is consistent and its cut no larger.
    gamma : float, default=None
        Soft mode: fixed penalty per violated cannot-link.
    max_violations : int, default=0
        Soft mode: allowed violated cannot-links (after merging).
    n_starts : int, default=10
        Two clusters: starts (second eigenvector of the reduced graph, the SCLC
        linear-constraint solution, then random vectors).
    affinity : {"adaptive_knn", "knn", "precomputed"}, default="adaptive_knn"
        ``"adaptive_knn"``: :func:`spectralink.graph.adaptive_knn_affinity`, the paper's graph;
        ``"knn"``: the Gaussian k-NN graph of the library; ``"precomputed"``: ``X`` is the
        affinity.
    n_neighbors : int, default=10
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
    n_recursions : int, default=5
        k-way: full recursive runs; the lowest final multi-cut is kept.
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
    n_jobs : int, default=None
        Threads running the starts of a gamma value in parallel (``None``: 1, ``-1``: all
        processors). The result does not depend on it.
    random_state : int, RandomState or None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    cut_ : float
        Normalized (multi-)cut ``sum_l cut(C_l, V\\C_l) / vol(C_l)`` on ``affinity_matrix_``.
    n_violated_ : int
        Number of the given constraints the labels violate.
    continuous_ : ndarray of shape (n_samples,) or None
        Two clusters: the RatioDCA solution lifted to the points (labels are a level set).
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

    _parameter_constraints = {
        **{k: v for k, v in COMMON_CONSTRAINTS.items() if k != "n_init"},
        "mode": [StrOptions({"hard", "soft", "guaranteed"})],
        "gamma": [NON_NEGATIVE, None],
        "max_violations": [Int(0)],
        "n_starts": [Int(1)],
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
        "n_jobs": [Int(1), Options(Integral, {-1}), None],
    }

    def __init__(
        self,
        n_clusters: int = 2,
        *,
        mode: str = "hard",
        gamma: float | None = None,
        max_violations: int = 0,
        n_starts: int = 10,
        affinity: str = "adaptive_knn",
        n_neighbors: int = 10,
        sigma: float | None = None,
        split_rule: str = "reference",
        n_split_starts: int = 2,
        n_recursions: int = 5,
        max_gamma_runs: int = 5,
        max_outer: int = 1000,
        max_inner: int = 2000,
        tol: float = 1e-6,
        crit_tol: float = 1e-2,
        n_perturbations: int = 0,
        n_jobs: int | None = None,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.mode = mode
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
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _feature_affinities(self) -> set:
        return {"adaptive_knn", "knn"}

    def _opts(self):
        return {
            "max_outer": self.max_outer,
            "max_inner": self.max_inner,
            "tol": self.tol,
            "crit_tol": self.crit_tol,
            "n_jobs": _effective_jobs(self.n_jobs),
        }

    def _fit(self, X, constraints):
        W = self._affinity(X)
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
            labels_r, history = self._fit_kway(Wr, gr, clr, sizes, n, rng)
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
            colour, comp = two_colouring(Wr.shape[0], clr[0], clr[1])
            groups = np.where(colour >= 0, Wr.shape[0] + 2 * comp + colour, np.arange(Wr.shape[0]))
            W2, g2, map2 = merge_vertices(Wr, gr, groups)
            cl2 = reduce_cannot_links(np.column_stack(clr[:2]), clr[2], map2)
            cl2 = (cl2[0], cl2[1], np.ones(len(cl2[0])))  # unweighted after de-duplication
        else:
            W2, g2, map2, cl2 = Wr, gr, np.arange(Wr.shape[0]), clr
        m = W2.shape[0]
        if m == 2:
            mask = np.array([True, False])
            return mask.astype(np.int64)[map2], mask.astype(float)[map2], 0.0
        opts = {**self._opts(), "n_perturbations": self.n_perturbations}
        solver = _Binary(W2, g2, cl2, opts, rng=rng)
        starts = _binary_starts(W2, g2, cl2, self.n_starts, rng)

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
        return mask.astype(np.int64)[map2], f[map2], gamma

    # ------------------------------------------------------------------ k > 2
    def _fit_kway(self, Wr, gr, clr, sizes, n_points, rng):
        k = self.n_clusters
        ctx = _KwayContext(Wr, gr, clr, sizes, n_points, k, self, rng)
        best = None
        for _ in range(self.n_recursions):
            labels, history = ctx.recursive_split()
            mc = ctx.multicut(labels)
            if best is None or mc < best[0] - 1e-12:
                best = (mc, labels, history)
        return best[1], best[2]


class _KwayContext:
    """Recursive soft-constrained bi-partitioning (Section 5)."""

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
        self.n_cl = float(np.sum(cl[2]))
        self._fiedler_cache = {}

    def multicut(self, labels):
        """Normalized multi-cut with vertex weights (eq. 6)."""
        total = 0.0
        for c in np.unique(labels):
            m = labels == c
            total += self._cut(m) / self.g[m].sum()
        return total

    def _cut(self, mask):
        idx = np.flatnonzero(mask)
        return float(self.d[idx].sum() - self.W[idx][:, idx].sum())

    def _delta(self, idx, mask):
        """Change of the multi-cut when cluster ``idx`` splits into ``mask`` / ``~mask``."""
        full = np.zeros(len(self.g), dtype=bool)
        full[idx] = True
        a = np.zeros_like(full)
        a[idx[mask]] = True
        b = full & ~a
        return (
            self._cut(a) / self.g[a].sum()
            + self._cut(b) / self.g[b].sum()
            - self._cut(full) / self.g[full].sum()
        )

    def _allowed(self, idx, n_cl_inside):
        """Expected violations when one class is split off: c (k' - 2) / k' (Section 5)."""
        kp = max(2, int(np.floor(self.sizes[idx].sum() * self.k / self.n_points)))
        return int(np.floor(n_cl_inside * (kp - 2) / kp)), kp

    def best_split(self, idx):
        """Best split of cluster ``idx``: (delta multi-cut, mask over idx, #separated CLs)."""
        if len(idx) < 2:
            return None
        cl_loc = _restrict(self.cl, idx, len(self.g))
        if len(idx) == 2:
            mask = np.array([True, False])
            return self._candidate(idx, mask, cl_loc)
        sub = self.W[idx][:, idx].tocsr()
        n_cc, lab = connected_components(sub, directed=False)
        if n_cc > 1:
            return self._split_disconnected(idx, sub, lab, cl_loc)
        mask = self._soft_split(idx, sub, cl_loc, float(np.sum(cl_loc[2])))
        return self._candidate(idx, mask, cl_loc)

    def _candidate(self, idx, mask, cl_loc):
        ci, cj, w = cl_loc
        sep = float(w[mask[ci] != mask[cj]].sum()) if len(ci) else 0.0
        return self._delta(idx, mask), mask, sep

    def _split_disconnected(self, idx, sub, lab, cl_loc):
        """Component versus rest, or a COSC split of a large component with the rest on a side."""
        cands = []
        counts = np.bincount(lab)
        for c in np.argsort(counts)[::-1][:20]:
            cands.append(self._candidate(idx, lab == c, cl_loc))
        n_cl_inside = float(np.sum(cl_loc[2]))
        for c in np.argsort(counts)[::-1][:3]:
            if counts[c] < 3:
                continue
            comp = np.flatnonzero(lab == c)
            sub_c = sub[comp][:, comp].tocsr()
            cl_c = _restrict(cl_loc, comp, len(idx))
            m = self._soft_split(idx[comp], sub_c, cl_c, n_cl_inside)
            for rest_side in (True, False):
                mask = np.full(len(idx), rest_side)
                mask[comp] = m
                if 0 < mask.sum() < len(idx):
                    cands.append(self._candidate(idx, mask, cl_loc))
        return min(cands, key=lambda c: c[0])

    def _soft_split(self, idx, sub, cl_loc, n_cl_inside):
        """Soft-constrained COSC split of a connected cluster (per-split gamma schedule)."""
        g = self.g[idx]
        outside = self.d[idx] - degrees(sub)
        allowed, _ = self._allowed(idx, n_cl_inside)
        solver = _Binary(sub, g, cl_loc, self.est._opts(), outside=outside)
        key = hash(idx.tobytes())
        if key not in self._fiedler_cache:
            self._fiedler_cache[key] = constrained_fiedler(sub, g, random_state=self.rng)
        starts = [self._fiedler_cache[key]]
        while len(starts) < self.est.n_split_starts:
            starts.append(self.rng.standard_normal(len(idx)))
        states = [(f, None, None) for f in starts]
        gamma, inc = 0.0, 0.1
        runs = []
        prev_cut = None
        for _ in range(self.est.max_gamma_runs):
            new = []
            best = None
            for st, thr in solver.run_many(states, gamma):
                new.append(st)
                if thr is not None and (best is None or thr.value < best.value):
                    best = thr
            states = new
            if best is None:
                break
            runs.append(best)
            if best.n_violated <= allowed + 1e-9 or len(cl_loc[0]) == 0:
                break
            if prev_cut is not None and abs(best.ncut - prev_cut) < 1e-8:
                inc *= 2.0
            prev_cut = best.ncut
            gamma += inc
        if not runs:
            return constrained_fiedler(sub, g, random_state=self.rng) > 0
        ok = [r for r in runs if r.n_violated <= allowed + 1e-9] or runs
        return min(ok, key=lambda r: self._delta(idx, r.mask)).mask

    def _choose(self, clusters, splits, labels):
        """Index of the cluster to split next."""
        avail = [c for c in range(len(clusters)) if splits[c] is not None]
        if not avail:
            return None
        if self.est.split_rule == "min_cut" or self.n_cl == 0:
            return min(avail, key=lambda c: splits[c][0])
        k, n_cl = self.k, self.n_cl
        l_next = len(clusters) + 1
        satisfied = self.n_cl - self._violated(labels)
        nsat = {c: splits[c][2] for c in avail}
        eligible = []
        for c in avail:
            kp = max(2, int(np.floor(self.sizes[clusters[c]].sum() * k / self.n_points)))
            exp_m = kp * (kp - 1) * n_cl / (k * (k - 1))
            if nsat[c] >= np.floor(2 * exp_m / kp):
                eligible.append(c)
        if l_next == k or not eligible:
            pool = avail if not eligible else eligible
            return max(pool, key=lambda c: (nsat[c], -splits[c][0]))
        top = max(nsat[c] for c in eligible)
        need = (2 * k - l_next) * (l_next - 1) * n_cl / (k * (k - 1))
        pool = [c for c in eligible if nsat[c] >= top or satisfied + nsat[c] >= need]
        return min(pool, key=lambda c: splits[c][0])

    def _violated(self, labels):
        ci, cj, w = self.cl
        return float(w[labels[ci] == labels[cj]].sum()) if len(ci) else 0.0

    def recursive_split(self):
        nv = len(self.g)
        labels = np.zeros(nv, dtype=np.int64)
        clusters = [np.arange(nv)]
        splits = [None]
        fresh = [True]
        history = []
        while len(clusters) < self.k:
            for c in range(len(clusters)):
                if fresh[c]:
                    splits[c] = self.best_split(clusters[c])
                    fresh[c] = False
            c = self._choose(clusters, splits, labels)
            if c is None:
                break
            _, mask, _ = splits[c]
            idx = clusters[c]
            clusters[c], new = idx[mask], idx[~mask]
            clusters.append(new)
            splits.append(None)
            fresh[c] = True
            fresh.append(True)
            labels[new] = len(clusters) - 1
            history.append(labels.copy())
        return labels, history


def _restrict(cl, idx, n):
    pos = np.full(n, -1, dtype=np.int64)
    pos[idx] = np.arange(len(idx))
    ci, cj, w = cl
    if len(ci) == 0:
        return _EMPTY_CL
    a, b = pos[ci], pos[cj]
    keep = (a >= 0) & (b >= 0)
    return a[keep], b[keep], w[keep]
