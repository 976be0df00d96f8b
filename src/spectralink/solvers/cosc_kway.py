"""COSC's k-way engine: recursive soft-constrained bi-partitioning (Section 5, eq. 6).

Rangapuram, S. S., & Hein, M. (2012). Constrained 1-spectral clustering. AISTATS.

:class:`KwaySearch` splits the must-link-reduced graph recursively, one cluster at a time,
each split a soft-constrained two-cluster COSC run (:class:`~.cosc_binary.BinarySolver`)
allowed the expected number of violations. It receives the search's settings
(:class:`~.cosc_binary.COSCSettings`), never an estimator.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ..graph import degrees
from ..spectral import constrained_fiedler
from .constraint_graph import restrict_cannot_links
from .cosc_binary import BinarySolver, COSCSettings, map_threads
from .lovasz import edge_list

__all__ = ["KwaySearch"]

#: k-way clusters from this size run the starts of a gamma value in threads; below it a
#: RatioDCA run takes about a millisecond and a thread pool would cost as much
_THREADED_STARTS = 500


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


class KwaySearch:
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

    def __init__(
        self,
        W: sp.spmatrix,
        g: np.ndarray,
        cl: tuple,
        sizes: np.ndarray,
        n_points: int,
        k: int,
        settings: COSCSettings,
        rng: np.random.RandomState,
    ) -> None:
        self.W = sp.csr_matrix(W)
        self.d = degrees(self.W)
        self.g = g
        self.cl = cl
        self.sizes = sizes
        self.n_points = n_points
        self.k = k
        self.settings = settings
        self.rng = rng
        self.opts = settings.options()
        self.n_cl = float(np.sum(cl[2]))
        self.edges = edge_list(self.W)
        self._fiedler = {}  # cluster key -> (start vector, {gamma path: (state, threshold)})

    # -------------------------------------------------------------- objective
    def multicut(self, labels: np.ndarray) -> float:
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

    def best_split(self, idx: np.ndarray, seed: int) -> _Split | None:
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
        solver = BinarySolver(
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
            fresh = map_threads(lambda args: solver.run(*args), todo, n_jobs)
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
        if self.settings.split_rule == "min_cut" or self.n_cl == 0:
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
        return map_threads(lambda args: self.best_split(*args), todo, self.opts["n_jobs"])

    def recursive_split(
        self, rng: np.random.Generator, bound: float = np.inf
    ) -> tuple[np.ndarray, list[np.ndarray]] | None:
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

    def fit(self) -> tuple[np.ndarray, list[np.ndarray]]:
        """``n_recursions`` recursive runs; the lowest final multi-cut is kept."""
        seeds = self.rng.randint(0, 2**31 - 1, size=self.settings.n_recursions)
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
