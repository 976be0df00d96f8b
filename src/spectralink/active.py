"""Active selection of pairwise constraints: which pairs to ask a person next.

Labelling pairs costs a person's time, and random pairs waste most of it (with 10 balanced
clusters about 90 % of them are cannot-links between points already far apart). This module
chooses the pairs to ask and runs the query loop, for any estimator of the library's
contract (``fit(X, constraints=...)`` then ``labels_``); it never looks inside a method.

* :class:`PairSelector` builds what a strategy needs once per data set (distances, the k-NN
  graph and its spectral embedding, from :mod:`spectralink.graph` and
  :mod:`spectralink.spectral`) and then chooses batches of pairs in O(n k) or O(n d) time.
* :func:`select_pairs` is the one-call form.
* :func:`learn` is the loop: choose a batch, ask the oracle, add the answers, refit.
* :func:`add_answers` adds answers to known constraints under the contradiction policy.
* :func:`implied_pairs` says which pairs the transitive closure of constraints decides.

Strategies (``strategy=``):

``"random"``
    Uniformly random pairs (the baseline of the papers' protocols).
``"ffqs"``
    Explore and consolidate, farthest-first query selection (Basu, Banerjee & Mooney 2004).
``"minmax"``
    FFQS with the min-max consolidation (Mallapragada, Jin & Jain 2008).
``"npu"``
    Normalized point-based uncertainty (Xiong, Azimi & Fern 2014).
``"spectral"``
    This library's: the partition's clusters are explored through their most central
    points in the spectral embedding; then points are sampled with probabilities
    proportional to how uncertain their group is (their partition cluster mixed in their
    graph neighbourhood, or the cluster's group not settled by the answers so far) and
    asked against the known group they most likely join first.
``"auto"``
    :data:`AUTO_STRATEGY`: ``"spectral"``, the lowest error at 200 queries in
    ``benchmarks/bench_active.py`` (below random, MinMax and NPU by several standard
    errors) and level with FFQS, whose difference to it changes sign from one number of
    queries to the next within the spread of the seeds; see ``docs/results/active``.

The neighbourhood strategies (all but ``"random"``) keep no hidden state: they read the
known groups off the constraints. The *neighbourhoods* are must-link components that are
pairwise cannot-linked (at most ``n_clusters`` of them, found greedily, largest first); a
point is asked against the neighbourhoods in turn, most likely first, until it joins one
(a must-link) or is cannot-linked to all of them (it starts a new one). A point that is
cannot-linked to all but one of ``n_clusters`` neighbourhoods is settled and not asked
again.

Every chosen pair is new: never a known pair nor a pair whose answer the transitive closure
of the known ones decides (same must-link component: must-link; a cannot-link between the
two components: cannot-link). Within one batch the pairs form a forest over the must-link
components that joins no two cannot-linked components, so no pair of a batch is decided by
the answers to the others either, whatever those answers are. As a consequence, answers to
the pairs this module chooses can never contradict each other; the contradiction policy of
:func:`add_answers` matters for answers gathered elsewhere (files, other tools).

References
----------
Basu, S., Banerjee, A., & Mooney, R. J. (2004). Active semi-supervision for pairwise
constrained clustering. Proceedings of the SIAM International Conference on Data Mining
(SDM), 333-344.
Mallapragada, P. K., Jin, R., & Jain, A. K. (2008). Active query selection for
semi-supervised clustering. 19th International Conference on Pattern Recognition (ICPR).
Xiong, S., Azimi, J., & Fern, X. Z. (2014). Active learning of constraints for
semi-supervised clustering. IEEE Transactions on Knowledge and Data Engineering, 26(1),
43-54.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from .constraints import Constraints, as_constraints
from .exceptions import ContradictoryAnswerWarning

__all__ = [
    "AUTO_STRATEGY",
    "STRATEGIES",
    "AnswerReport",
    "PairSelector",
    "add_answers",
    "ask_in_terminal",
    "implied_pairs",
    "learn",
    "select_pairs",
    "write_pairs_csv",
]

#: The strategy names :func:`select_pairs` and :func:`learn` accept (besides ``"auto"``).
STRATEGIES = ("random", "ffqs", "minmax", "npu", "spectral")
#: What ``strategy="auto"`` means (the measurements behind it: ``docs/results/active``).
AUTO_STRATEGY = "spectral"
#: Strategies that read the current partition (the estimator's ``labels_``).
PARTITION_STRATEGIES = frozenset({"npu", "spectral"})


def _check_strategy(strategy) -> str:
    if not isinstance(strategy, str) or strategy.lower() not in (*STRATEGIES, "auto"):
        raise ValueError(
            f"strategy must be one of {', '.join(STRATEGIES)} or 'auto', got {strategy!r}."
        )
    strategy = strategy.lower()
    return AUTO_STRATEGY if strategy == "auto" else strategy


def _check_positive_int(value, name: str, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


# --------------------------------------------------------------------------- closure
def _cl_component_keys(constraints: Constraints) -> np.ndarray:
    """Sorted unique keys ``a * C + b`` (a < b) of the cannot-linked component pairs."""
    comp = constraints.ml_components
    c = constraints.n_ml_components
    cl = constraints.cannot_link
    if len(cl) == 0:
        return np.empty(0, dtype=np.int64)
    a, b = comp[cl[:, 0]], comp[cl[:, 1]]
    return np.unique(np.minimum(a, b).astype(np.int64) * c + np.maximum(a, b))


def implied_pairs(constraints: Constraints, pairs) -> np.ndarray:
    """What the transitive closure of ``constraints`` says about each pair.

    Parameters
    ----------
    constraints : Constraints
    pairs : array-like of shape (m, 2)
        Point indices.

    Returns
    -------
    ndarray of shape (m,), int
        ``1``: the two points are in one must-link component (must-link implied, or the
        same point); ``-1``: a cannot-link joins their must-link components (cannot-link
        implied); ``0``: undecided.
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    out = np.zeros(len(pairs), dtype=np.int64)
    if len(pairs) == 0:
        return out
    n = constraints.n_samples
    if pairs.min() < 0 or pairs.max() >= n:
        raise ValueError(f"pair indices must be in [0, {n}).")
    comp = constraints.ml_components
    a, b = comp[pairs[:, 0]], comp[pairs[:, 1]]
    out[a == b] = 1
    keys = _cl_component_keys(constraints)
    if len(keys):
        c = constraints.n_ml_components
        q = np.minimum(a, b).astype(np.int64) * c + np.maximum(a, b)
        out[np.isin(q, keys) & (a != b)] = -1
    return out


@dataclass
class _Known:
    """The known structure of a constraint set, as the neighbourhood strategies see it."""

    comp: np.ndarray  # (n,) must-link component of every point
    n_comp: int
    cl_keys: np.ndarray  # sorted keys of cannot-linked component pairs
    constrained: np.ndarray  # (n,) bool: the point appears in a pair
    hoods: np.ndarray  # (l,) component ids of the neighbourhoods
    hood_of_comp: np.ndarray  # (n_comp,) index into hoods, -1 elsewhere
    excluded: np.ndarray  # (n_comp, l) bool: component cannot-linked to neighbourhood h
    members: list = field(default_factory=list)  # point indices of every neighbourhood

    @property
    def n_hoods(self) -> int:
        return len(self.hoods)


def _known_structure(constraints: Constraints, n_clusters: int) -> _Known:
    n = constraints.n_samples
    comp = constraints.ml_components
    n_comp = constraints.n_ml_components
    keys = _cl_component_keys(constraints)
    constrained = np.zeros(n, dtype=bool)
    constrained[constraints.constrained_points] = True
    # greedy clique of the cannot-link graph over components, largest components first
    adj: dict[int, set] = {}
    a, b = np.divmod(keys, n_comp) if len(keys) else (np.empty(0, int), np.empty(0, int))
    for u, v in zip(a.tolist(), b.tolist(), strict=True):
        adj.setdefault(u, set()).add(v)
        adj.setdefault(v, set()).add(u)
    sizes = np.bincount(comp, minlength=n_comp)
    cand = np.unique(comp[constrained])
    order = cand[np.lexsort((cand, -sizes[cand]))]
    hoods: list[int] = []
    for c in order.tolist():
        if len(hoods) >= n_clusters:
            break
        if all(h in adj.get(c, ()) for h in hoods):
            hoods.append(c)
    hoods_arr = np.asarray(hoods, dtype=np.int64)
    hood_of_comp = np.full(n_comp, -1, dtype=np.int64)
    hood_of_comp[hoods_arr] = np.arange(len(hoods))
    excluded = np.zeros((n_comp, len(hoods)), dtype=bool)
    for u, v in zip(a.tolist(), b.tolist(), strict=True):
        if hood_of_comp[v] >= 0:
            excluded[u, hood_of_comp[v]] = True
        if hood_of_comp[u] >= 0:
            excluded[v, hood_of_comp[u]] = True
    members = [np.flatnonzero(comp == h) for h in hoods] if hoods else []
    return _Known(comp, n_comp, keys, constrained, hoods_arr, hood_of_comp, excluded, members)


class _BatchForest:
    """Accepts a pair only if the batch stays a forest over the must-link components
    that never joins two cannot-linked components (so no pair of the batch is decided by
    the known constraints plus any answers to the other pairs of the batch)."""

    def __init__(self, known: _Known, exclude: set | None, n: int):
        self.comp = known.comp
        self.n_comp = known.n_comp
        self.cl = set(known.cl_keys.tolist())
        self.parent: dict[int, int] = {}
        self.trees: dict[int, list[int]] = {}
        self.exclude = exclude or set()
        self.n = n
        self.pairs: list[tuple[int, int]] = []

    def _find(self, c: int) -> int:
        root = c
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while self.parent.get(c, c) != root:
            self.parent[c], c = root, self.parent[c]
        return root

    def try_add(self, i: int, j: int) -> bool:
        i, j = int(i), int(j)
        if i == j:
            return False
        lo, hi = min(i, j), max(i, j)
        if lo * self.n + hi in self.exclude:
            return False
        ra, rb = self._find(int(self.comp[i])), self._find(int(self.comp[j]))
        if ra == rb:
            return False
        ta, tb = self.trees.get(ra, [ra]), self.trees.get(rb, [rb])
        C = self.n_comp
        if self.cl:
            for u in ta:
                for v in tb:
                    if min(u, v) * C + max(u, v) in self.cl:
                        return False
        self.parent[rb] = ra
        self.trees[ra] = ta + tb
        self.trees.pop(rb, None)
        self.pairs.append((lo, hi))
        return True

    def __len__(self) -> int:
        return len(self.pairs)


# --------------------------------------------------------------------------- selector
class PairSelector:
    """Chooses the next pairs to ask, for one data set.

    ``fit(X)`` stores the data; what a strategy needs (squared norms for distances, the
    k-NN graph and its spectral embedding, a random forest on the partition) is computed
    on first use and kept, so that repeated :meth:`select` calls in a query loop cost
    O(n k) or O(n d) each. Nothing of size n x n is formed.

    Parameters
    ----------
    n_clusters : int
        Number of clusters k (the neighbourhood strategies look for k groups).
    strategy : str, default="auto"
        One of :data:`STRATEGIES` or ``"auto"`` (:data:`AUTO_STRATEGY`).
    affinity : {"knn", "precomputed"}, default="knn"
        ``"precomputed"``: ``X`` is a square affinity matrix; the feature-space
        strategies (``"ffqs"``, ``"minmax"``, ``"npu"``) then work on its spectral
        embedding.
    n_neighbors : int, default=20
        Neighbours of the k-NN graph of the spectral embedding (the library's default).
    n_trees : int, default=50
        Trees of NPU's random forest (the paper's setting).
    prior : float, default=1.0
        ``"spectral"``: weight, in points, of the uniform prior on which group a partition
        cluster is, against the answers seen for its points.
    random_state : int, RandomState or None
        Seeds every random choice; a fitted selector draws from one generator, so a
        sequence of :meth:`select` calls is reproducible.

    Attributes
    ----------
    n_samples_ : int
    strategy_ : str
        The resolved strategy name.
    embedding_ : ndarray of shape (n_samples, n_clusters)
        Row-normalised spectral embedding (computed on first use).
    """

    def __init__(
        self,
        n_clusters: int,
        *,
        strategy: str = "auto",
        affinity: str = "knn",
        n_neighbors: int = 20,
        n_trees: int = 50,
        prior: float = 1.0,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.strategy = strategy
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.n_trees = n_trees
        self.prior = prior
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def fit(self, X) -> PairSelector:
        """Store the data (features, or an affinity with ``affinity="precomputed"``)."""
        from .graph import check_affinity
        from .utils._validation import check_features, check_n_clusters

        self.strategy_ = _check_strategy(self.strategy)
        if self.affinity == "precomputed":
            self._W = check_affinity(X)
            self._X = None
            n = self._W.shape[0]
        elif self.affinity == "knn":
            self._X = np.asarray(check_features(X), dtype=np.float64)
            self._W = None
            n = self._X.shape[0]
        else:
            raise ValueError(f"affinity must be 'knn' or 'precomputed', got {self.affinity!r}.")
        self.n_clusters_ = check_n_clusters(self.n_clusters, n)
        _check_positive_int(self.n_neighbors, "n_neighbors")
        _check_positive_int(self.n_trees, "n_trees")
        prior = self.prior
        if not (isinstance(prior, numbers.Real) and np.isfinite(prior) and prior > 0):
            raise ValueError(f"prior must be a positive number, got {self.prior!r}.")
        self.n_samples_ = n
        self._rng = check_random_state(self.random_state)
        self._F = None
        self._sq = None
        self._mind = None
        self._mind_seen = np.zeros(n, dtype=bool)
        self._forest_key = None
        return self

    def _check_fitted(self):
        if not hasattr(self, "n_samples_"):
            raise ValueError("this PairSelector is not fitted; call fit(X) first.")

    # ------------------------------------------------------------------ geometry
    def _graph(self) -> sp.csr_matrix:
        if self._W is None:
            from .graph import knn_affinity

            n_nb = min(self.n_neighbors, self.n_samples_ - 1)
            self._W = knn_affinity(self._X, n_neighbors=n_nb, random_state=self._seed())
        return self._W

    def _seed(self) -> int:
        return int(check_random_state(self.random_state).randint(2**31 - 1))

    @property
    def embedding_(self) -> np.ndarray:
        self._check_fitted()
        if self._F is None:
            from .spectral import laplacian_eigenvectors, normalize_rows

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a disconnected graph is still usable here
                _, V = laplacian_eigenvectors(
                    self._graph(), self.n_clusters_, random_state=self._seed()
                )
            self._F = normalize_rows(V)
        return self._F

    def _features(self) -> np.ndarray:
        """Features for the feature-space strategies (the embedding if precomputed)."""
        return self._X if self._X is not None else self.embedding_

    def _sqnorms(self) -> np.ndarray:
        if self._sq is None:
            Z = self._features()
            self._sq = np.einsum("ij,ij->i", Z, Z)
        return self._sq

    def _sqdist_to(self, p: int) -> np.ndarray:
        Z = self._features()
        sq = self._sqnorms()
        return np.maximum(sq + sq[p] - 2.0 * (Z @ Z[p]), 0.0)

    def _min_dist(self, constrained: np.ndarray) -> np.ndarray:
        """Squared distance of every point to the nearest constrained point (incremental)."""
        new = np.flatnonzero(constrained & ~self._mind_seen)
        if self._mind is None or np.any(self._mind_seen & ~constrained):
            # the constrained set shrank (a different constraint set): start over
            self._mind = np.full(self.n_samples_, np.inf)
            self._mind_seen = np.zeros(self.n_samples_, dtype=bool)
            new = np.flatnonzero(constrained)
        Z, sq = self._features(), self._sqnorms()
        for start in range(0, len(new), 256):  # blocks of points: one BLAS product each
            b = new[start : start + 256]
            D = sq[:, None] + sq[b][None, :] - 2.0 * (Z @ Z[b].T)
            np.minimum(self._mind, np.maximum(D.min(axis=1), 0.0), out=self._mind)
        self._mind_seen |= constrained
        return self._mind

    def _fallback_labels(self) -> np.ndarray:
        """NCut's partition of the selector's own graph when no estimator is given."""
        if getattr(self, "_own_labels", None) is None:
            from .spectral import kmeans_rows

            self._own_labels = kmeans_rows(
                self.embedding_, self.n_clusters_, random_state=self._seed()
            )
        return self._own_labels

    # ------------------------------------------------------------------ select
    def select(
        self,
        n_pairs: int,
        constraints=None,
        labels=None,
        *,
        exclude=None,
    ) -> np.ndarray:
        """The next ``n_pairs`` pairs to ask.

        Parameters
        ----------
        n_pairs : int
            Batch size. Fewer pairs are returned only when no undecided pair is left.
        constraints : Constraints, (must_link, cannot_link) or None
            The answers known so far.
        labels : array-like of shape (n_samples,), default=None
            The current partition (``estimator.labels_``), read by ``"npu"`` and
            ``"spectral"``; ``None``: NCut's partition of the selector's own graph.
        exclude : iterable of (i, j), default=None
            Pairs not to ask (e.g. asked and skipped).

        Returns
        -------
        ndarray of shape (m, 2), int64, m <= n_pairs
            One pair per row, ``i < j``.
        """
        self._check_fitted()
        n = self.n_samples_
        n_pairs = _check_positive_int(n_pairs, "n_pairs", minimum=0)
        cons = as_constraints(constraints, n)
        if labels is not None:
            labels = np.asarray(labels)
            if labels.shape != (n,):
                raise ValueError(f"labels has shape {labels.shape}, expected ({n},).")
        excl = set()
        if exclude is not None:
            ex = np.asarray(list(exclude), dtype=np.int64).reshape(-1, 2)
            excl = set((ex.min(axis=1) * n + ex.max(axis=1)).tolist())
        known = _known_structure(cons, self.n_clusters_)
        forest = _BatchForest(known, excl, n)
        if n_pairs:
            getattr(self, f"_select_{self.strategy_}")(known, forest, n_pairs, labels)
            if len(forest) < n_pairs:
                self._select_random(known, forest, n_pairs, labels)
        out = np.asarray(forest.pairs, dtype=np.int64).reshape(-1, 2)
        return out

    # ------------------------------------------------------------------ random
    def _select_random(self, known: _Known, forest: _BatchForest, n_pairs: int, labels):
        n, rng = self.n_samples_, self._rng
        tries = 0
        while len(forest) < n_pairs and tries < 50:
            need = n_pairs - len(forest)
            i = rng.randint(0, n, size=4 * need + 16)
            j = rng.randint(0, n, size=4 * need + 16)
            before = len(forest)
            for a, b in zip(i.tolist(), j.tolist(), strict=True):
                if forest.try_add(a, b) and len(forest) == n_pairs:
                    return
            tries = 0 if len(forest) > before else tries + 1
        if len(forest) < n_pairs and n <= 3000:
            # nearly everything is decided: enumerate what is left (small n only)
            a, b = np.triu_indices(n, k=1)
            perm = rng.permutation(len(a))
            for p in perm.tolist():
                if forest.try_add(a[p], b[p]) and len(forest) == n_pairs:
                    return

    # ------------------------------------------------------------------ neighbourhoods
    def _pending(self, known: _Known) -> np.ndarray:
        """One point per unsettled constrained component, most cannot-links first.

        A component outside the neighbourhoods is settled when it is cannot-linked to
        all neighbourhoods but one and all k neighbourhoods are known (it must join the
        last), or to all of them.
        """
        l = known.n_hoods
        if l == 0:
            return np.empty(0, dtype=np.int64)
        pts = np.flatnonzero(known.constrained)
        comps, first = np.unique(known.comp[pts], return_index=True)
        reps = pts[first]
        keep = known.hood_of_comp[comps] < 0
        comps, reps = comps[keep], reps[keep]
        n_excl = known.excluded[comps].sum(axis=1)
        left = l - n_excl
        settled = (left == 0) | ((left == 1) & (l >= self.n_clusters_))
        comps, reps, n_excl = comps[~settled], reps[~settled], n_excl[~settled]
        return reps[np.lexsort((reps, -n_excl))]

    def _allowed(self, known: _Known, x: int) -> np.ndarray:
        return ~known.excluded[known.comp[x]]

    def _ask_in_order(self, known: _Known, forest: _BatchForest, x: int, order, partner) -> bool:
        """Pair ``x`` with the first allowed neighbourhood of ``order`` the forest accepts."""
        allowed = self._allowed(known, x)
        for h in order:
            if allowed[h] and forest.try_add(x, partner(h, x)):
                return True
        return False

    def _fill(self, known, forest, n_pairs, candidates, order_of, partner) -> None:
        """Pending points first, then ``candidates`` (an iterator of new points)."""
        for x in self._pending(known).tolist():
            if len(forest) >= n_pairs:
                return
            self._ask_in_order(known, forest, x, order_of(x), partner)
        for x in candidates:
            if len(forest) >= n_pairs:
                return
            self._ask_in_order(known, forest, x, order_of(x), partner)

    def _first_pair(self, forest: _BatchForest) -> None:
        """No constraint yet: a random point and the point farthest from it (FFQS)."""
        x0 = int(self._rng.randint(self.n_samples_))
        x1 = int(np.argmax(self._sqdist_to(x0)))
        if not forest.try_add(x0, x1):
            forest.try_add(x0, (x0 + 1) % self.n_samples_)

    def _farthest_first(self, known: _Known):
        """Unconstrained points in farthest-first order from the constrained ones."""
        mind = self._min_dist(known.constrained).copy()
        mind[known.constrained] = -np.inf
        while True:
            x = int(np.argmax(mind))
            if not np.isfinite(mind[x]) or mind[x] < 0:
                return
            yield x
            np.minimum(mind, self._sqdist_to(x), out=mind)
            mind[x] = -np.inf

    def _random_unconstrained(self, known: _Known):
        free = np.flatnonzero(~known.constrained)
        yield from self._rng.permutation(free).tolist()

    def _centroid_order(self, known: _Known):
        Z = self._features()
        cents = np.array([Z[m].mean(axis=0) for m in known.members])
        reps = [
            int(m[np.argmin(((Z[m] - c) ** 2).sum(axis=1))])
            for m, c in zip(known.members, cents, strict=True)
        ]

        def order_of(x):
            return np.argsort(((cents - Z[x]) ** 2).sum(axis=1), kind="stable")

        return order_of, (lambda h, x: reps[h])

    def _select_ffqs(self, known: _Known, forest: _BatchForest, n_pairs: int, labels):
        """Basu, Banerjee & Mooney (2004), explore then consolidate.

        Explore (fewer than k neighbourhoods): farthest-first traversal, each new point
        asked against the neighbourhoods until it joins one or starts a new one.
        Consolidate: random points, asked against the neighbourhoods in order of
        increasing distance to their centroids.
        """
        if known.n_hoods == 0:
            return self._first_pair(forest)
        order_of, partner = self._centroid_order(known)
        if known.n_hoods < self.n_clusters_:
            cands = self._farthest_first(known)
        else:
            cands = self._random_unconstrained(known)
        self._fill(known, forest, n_pairs, cands, order_of, partner)

    def _select_minmax(self, known: _Known, forest: _BatchForest, n_pairs: int, labels):
        """Mallapragada, Jin & Jain (2008): FFQS whose consolidation asks the point of
        least maximum similarity to the points already asked (the skeleton), against the
        neighbourhoods in decreasing order of their largest similarity to it.

        With the Gaussian similarity of the paper, least maximum similarity is largest
        distance to the nearest skeleton point, so both phases are a farthest-first
        traversal and the kernel width plays no part in the choice.
        """
        if known.n_hoods == 0:
            return self._first_pair(forest)
        Z = self._features()
        sq = self._sqnorms()

        def nearest_member(h, x):
            m = known.members[h]
            return int(m[np.argmin(sq[m] - 2.0 * (Z[m] @ Z[x]))])

        def order_of(x):
            d = [float(np.min(sq[m] - 2.0 * (Z[m] @ Z[x]))) for m in known.members]
            return np.argsort(d, kind="stable")

        self._fill(known, forest, n_pairs, self._farthest_first(known), order_of, nearest_member)

    # ------------------------------------------------------------------ NPU
    def _forest_leaves(self, labels: np.ndarray) -> np.ndarray:
        from sklearn.ensemble import RandomForestClassifier

        key = hash(labels.tobytes())
        if self._forest_key != key:
            rf = RandomForestClassifier(n_estimators=self.n_trees, random_state=self._seed())
            rf.fit(self._features(), labels)
            self._leaves = rf.apply(self._features())
            self._forest_key = key
        return self._leaves

    def _select_npu(self, known: _Known, forest: _BatchForest, n_pairs: int, labels):
        """Xiong, Azimi & Fern (2014), normalized point-based uncertainty.

        A random forest learns the current partition; the similarity of two points is the
        fraction of trees in which they share a leaf. ``p(x in N_i)`` is the mean
        similarity of x to the members of neighbourhood i, normalised over i; the point
        asked maximises the entropy of p divided by the expected number of queries to
        place it, ``sum_r r p_(r)`` over p sorted in decreasing order, and is asked
        against the neighbourhoods in decreasing order of p. With fewer than two
        neighbourhoods the point is random (the paper's start).
        """
        l = known.n_hoods
        if l == 0:
            return self._select_random(known, forest, 1, labels)
        if l == 1:
            self._fill(
                known,
                forest,
                n_pairs,
                self._random_unconstrained(known),
                lambda x: np.zeros(1, dtype=np.int64),
                lambda h, x: int(known.members[0][0]),
            )
            return
        if labels is None:
            labels = self._fallback_labels()
        leaves = self._forest_leaves(np.asarray(labels))
        n, T = leaves.shape
        P = np.zeros((n, l))
        for t in range(T):
            leaf = leaves[:, t]
            n_leaves = int(leaf.max()) + 1
            for h, m in enumerate(known.members):
                share = np.bincount(leaf[m], minlength=n_leaves) / len(m)
                P[:, h] += share[leaf]
        P[known.excluded[known.comp]] = 0.0
        P = _normalise_or_uniform(P, ~known.excluded[known.comp])
        score = _entropy(P) / _expected_queries(P)
        reps = [int(m[0]) for m in known.members]
        self._fill_by_score(known, forest, n_pairs, score, P, lambda h, x: reps[h])

    def _fill_by_score(self, known, forest, n_pairs, score, P, partner, first=()):
        """Pending points, then the points ``first``, then unconstrained points by
        decreasing score (ties at random); each asked against the neighbourhoods in
        decreasing order of its row of ``P``."""

        def order_of(x):
            return np.argsort(-P[x], kind="stable")

        for x in [*self._pending(known).tolist(), *first]:
            if len(forest) >= n_pairs:
                return
            self._ask_in_order(known, forest, x, order_of(x), partner)
        s = score + 1e-9 * np.abs(score).max(initial=1.0) * self._rng.uniform(size=len(score))
        s[known.constrained] = -np.inf
        for x in np.argsort(-s, kind="stable").tolist():
            if len(forest) >= n_pairs or not np.isfinite(s[x]):
                return
            self._ask_in_order(known, forest, x, order_of(x), partner)

    # ------------------------------------------------------------------ spectral
    def _select_spectral(self, known: _Known, forest: _BatchForest, n_pairs: int, labels):
        """This library's strategy: the current partition, read in the spectral embedding.

        1. Soft membership of every point in the partition's clusters: half its own
           cluster, half the clusters of its neighbours in the k-NN graph (weighted), so
           points on a cluster boundary are mixed.
        2. Which known group (neighbourhood) each partition cluster is: the answers seen
           for its points, with a prior of ``prior`` points spread uniformly over the k
           groups (the groups not found yet lumped into a "new" one).
        3. ``p(x in N_i)`` = membership times identity, and the weight of a point is the
           entropy of p divided by the expected number of queries to place it (NPU's
           normalised uncertainty).
        4. While fewer than k groups are known, the partition clusters with no answered
           point are explored first, through their most central point in the embedding
           (largest clusters first). Then points are **sampled** with probabilities
           proportional to their weight: uncertain points are favoured, but the sample
           stays spread over the data as a random one is, which the methods need to
           generalise (taking only the most uncertain points, as NPU does, asks about
           atypical boundary points and measured worse).
        5. A point is asked against the neighbourhoods in decreasing order of p, paired
           with the neighbourhood's most central member in the embedding, so that most
           answers are must-links and a point costs few queries.
        """
        F = self.embedding_
        if labels is None:
            labels = self._fallback_labels()
        _, L = np.unique(np.asarray(labels), return_inverse=True)
        L = L.ravel()
        K = int(L.max()) + 1
        onehot = sp.csr_matrix((np.ones(len(L)), (np.arange(len(L)), L)), shape=(len(L), K))
        cent = np.asarray(onehot.T @ F) / np.maximum(np.bincount(L, minlength=K), 1)[:, None]
        cent /= np.maximum(np.linalg.norm(cent, axis=1, keepdims=True), 1e-12)
        centrality = np.einsum("ij,ij->i", F, cent[L])
        l = known.n_hoods
        if l == 0:
            sizes = np.bincount(L, minlength=K)
            reps = []
            for c in np.argsort(-sizes, kind="stable")[:2].tolist():
                pts = np.flatnonzero(L == c)
                reps.append(int(pts[np.argmax(centrality[pts])]))
            if len(reps) < 2 or not forest.try_add(reps[0], reps[1]):
                self._first_pair(forest)
            return
        W = self._graph()
        deg = np.asarray(W.sum(axis=1)).ravel()
        deg[deg <= 0] = 1.0
        Q = 0.5 * onehot.toarray() + 0.5 * (W @ onehot).toarray() / deg[:, None]
        k = self.n_clusters_
        n_new = 1 if l < k else 0
        counts = np.zeros((K, l + n_new))
        for h, m in enumerate(known.members):
            counts[:, h] = np.bincount(L[m], minlength=K)
        rho = np.full(l + n_new, 1.0 / k)
        if n_new:
            rho[-1] = (k - l) / k
        ident = (counts + self.prior * rho) / (counts.sum(axis=1, keepdims=True) + self.prior)
        P = Q @ ident
        allowed = np.ones((len(L), l + n_new), dtype=bool)
        allowed[:, :l] = ~known.excluded[known.comp]
        P[~allowed] = 0.0
        P = _normalise_or_uniform(P, allowed)
        # sampling weight: NPU's normalised uncertainty; a sample without replacement with
        # probabilities proportional to it (Efraimidis & Spirakis keys u^(1/w))
        weight = _entropy(P) / _expected_queries(P, n_new=n_new)
        key = np.log(self._rng.uniform(1e-300, 1.0, size=len(weight))) / np.maximum(weight, 1e-12)
        hood_reps = []
        for m in known.members:
            mc = F[m].mean(axis=0)
            hood_reps.append(int(m[np.argmax(F[m] @ mc)]))

        explore = []
        if l < k:
            # explore: the most central point of every cluster without an answered point
            answered = np.zeros(K, dtype=bool)
            answered[L[known.constrained]] = True
            sizes = np.bincount(L, minlength=K)
            for c in np.argsort(-sizes, kind="stable").tolist():
                if not answered[c] and sizes[c]:
                    pts = np.flatnonzero(L == c)
                    explore.append(int(pts[np.argmax(centrality[pts])]))
        self._fill_by_score(
            known, forest, n_pairs, key, P[:, :l], lambda h, x: hood_reps[h], first=explore
        )


def _normalise_or_uniform(P: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Rows of P scaled to sum 1; an all-zero row becomes uniform over its allowed entries."""
    s = P.sum(axis=1, keepdims=True)
    zero = s[:, 0] <= 0
    if np.any(zero):
        P = P.copy()
        P[zero] = allowed[zero].astype(float)
        s = P.sum(axis=1, keepdims=True)
    return P / np.maximum(s, 1e-300)


def _entropy(P: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.where(P > 0, np.log(np.where(P > 0, P, 1.0)), 0.0)
    return -np.sum(P * logs, axis=1)


def _expected_queries(P: np.ndarray, n_new: int = 0) -> np.ndarray:
    """Expected number of queries to place a point asked in decreasing order of p.

    ``sum_r r p_(r)`` over the known neighbourhoods (Xiong et al. 2014, eq. 8); with a
    "new group" column (``n_new=1``), a point of a new group costs one query per allowed
    neighbourhood.
    """
    l = P.shape[1] - n_new
    Ph = -np.sort(-P[:, :l], axis=1)
    cost = Ph @ np.arange(1, l + 1)
    if n_new:
        cost = cost + P[:, -1] * np.count_nonzero(P[:, :l] > 0, axis=1).clip(min=1)
    return np.maximum(cost, 1.0)


# --------------------------------------------------------------------------- answers
@dataclass
class AnswerReport:
    """What happened to the answers given to a query loop or to :func:`add_answers`.

    Attributes
    ----------
    asked : list of (i, j)
        Every pair put to the oracle, in order.
    answers : list of bool or None
        The answers (True: same group, False: different groups, None: skipped).
    dropped : list of dict
        Answers dropped by the contradiction policy: ``pair``, ``answer`` and ``reason``.
    stopped : str
        Why a terminal session ended (:func:`ask_in_terminal`): ``"done"``, ``"quit"``,
        ``"eof"`` or ``"exhausted"``; empty elsewhere.
    """

    asked: list = field(default_factory=list)
    answers: list = field(default_factory=list)
    dropped: list = field(default_factory=list)
    stopped: str = ""

    @property
    def n_asked(self) -> int:
        return len(self.asked)

    @property
    def n_skipped(self) -> int:
        return sum(a is None for a in self.answers)


def add_answers(constraints, pairs, answers, *, warn: bool = True):
    """Add answered pairs to known constraints under the contradiction policy.

    Policy: answers are taken in order; an answer is **kept** unless it contradicts the
    transitive closure of the constraints kept so far (the known ones, then the earlier
    kept answers): "same group" for two points whose must-link components are
    cannot-linked, or "different groups" for two points of one must-link component. A
    contradicting answer is **dropped** (the earlier, consistent set wins), recorded in the
    report and, with ``warn=True``, reported by one
    :class:`~spectralink.exceptions.ContradictoryAnswerWarning`. An answer the closure
    already implies is kept (it is consistent). ``None`` (skipped) adds nothing.

    Parameters
    ----------
    constraints : Constraints
        The known constraints (consistent, as every :class:`Constraints` is).
    pairs : array-like of shape (m, 2)
    answers : sequence of bool or None, length m
        True: same group (must-link); False: different groups (cannot-link).
    warn : bool, default=True

    Returns
    -------
    constraints : Constraints
        The known constraints plus the kept answers (weights of the known pairs kept,
        weight 1 for the new ones).
    report : AnswerReport
    """
    n = constraints.n_samples
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    if len(answers) != len(pairs):
        raise ValueError(f"{len(pairs)} pairs but {len(answers)} answers.")
    if len(pairs) and (pairs.min() < 0 or pairs.max() >= n):
        raise ValueError(f"pair indices must be in [0, {n}).")
    parent = np.arange(n)

    def find(a):
        root = a
        while parent[root] != root:
            root = parent[root]
        while parent[a] != root:
            parent[a], a = root, parent[a]
        return root

    for a, b in constraints.must_link.tolist():
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra
    cl_adj: dict[int, set] = {}
    for a, b in constraints.cannot_link.tolist():
        ra, rb = find(a), find(b)
        cl_adj.setdefault(ra, set()).add(rb)
        cl_adj.setdefault(rb, set()).add(ra)

    report = AnswerReport()
    new_ml, new_cl = [], []
    for (i, j), ans in zip(pairs.tolist(), answers, strict=True):
        report.asked.append((i, j))
        ans = None if ans is None else bool(ans)
        report.answers.append(ans)
        if ans is None:
            continue
        if i == j:
            report.dropped.append({"pair": (i, j), "answer": ans, "reason": "a point with itself"})
            continue
        ri, rj = find(i), find(j)
        if ans and rj in cl_adj.get(ri, ()):
            report.dropped.append(
                {
                    "pair": (i, j),
                    "answer": ans,
                    "reason": "same group, but earlier answers put the two in different groups",
                }
            )
            continue
        if not ans and ri == rj:
            report.dropped.append(
                {
                    "pair": (i, j),
                    "answer": ans,
                    "reason": "different groups, but earlier answers put the two in one group",
                }
            )
            continue
        if ans:
            new_ml.append((i, j))
            if ri != rj:
                parent[rj] = ri
                moved = cl_adj.pop(rj, set())
                for s in moved:
                    cl_adj[s].discard(rj)
                    cl_adj[s].add(ri)
                cl_adj.setdefault(ri, set()).update(moved)
        else:
            new_cl.append((i, j))
            cl_adj.setdefault(ri, set()).add(rj)
            cl_adj.setdefault(rj, set()).add(ri)
    if report.dropped and warn:
        first = report.dropped[0]
        warnings.warn(
            f"{len(report.dropped)} answer(s) contradicted earlier answers and were dropped "
            f"(first: pair {first['pair']}: {first['reason']}); the earlier answers are kept.",
            ContradictoryAnswerWarning,
            stacklevel=2,
        )
    ml = np.vstack([constraints.must_link, np.asarray(new_ml, dtype=np.int64).reshape(-1, 2)])
    cl = np.vstack([constraints.cannot_link, np.asarray(new_cl, dtype=np.int64).reshape(-1, 2)])
    weights = np.concatenate(
        [constraints.ml_weights, np.ones(len(new_ml)), constraints.cl_weights, np.ones(len(new_cl))]
    )
    return Constraints(ml, cl, n_samples=n, weights=weights), report


def _as_oracle(oracle, n: int) -> Callable[[int, int], bool | None]:
    if callable(oracle):
        return oracle
    y = np.asarray(oracle)
    if y.ndim != 1 or len(y) != n:
        raise ValueError(
            "oracle must be a callable (i, j) -> bool or an array of n_samples labels; "
            f"got an array of shape {y.shape} for {n} samples."
        )
    return lambda i, j: bool(y[i] == y[j])


# --------------------------------------------------------------------------- API
def select_pairs(
    X,
    n_pairs: int,
    *,
    n_clusters: int,
    constraints=None,
    estimator=None,
    strategy: str = "auto",
    random_state=None,
) -> np.ndarray:
    """The next ``n_pairs`` pairs to ask a person about.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Features (or an affinity matrix when ``estimator`` has ``affinity="precomputed"``).
    n_pairs : int
        Number of pairs wanted.
    n_clusters : int
        Number of clusters k.
    constraints : Constraints, (must_link, cannot_link) or None
        The pairs answered so far.
    estimator : fitted estimator, default=None
        Its ``labels_`` are the current partition read by ``"npu"`` and ``"spectral"``
        (``None``: NCut's partition of the selector's graph). Only ``labels_`` and the
        ``affinity`` parameter are read.
    strategy : str, default="auto"
        One of :data:`STRATEGIES`, or ``"auto"`` (:data:`AUTO_STRATEGY`).
    random_state : int, RandomState or None

    Returns
    -------
    ndarray of shape (m, 2), int64
        ``m <= n_pairs`` pairs ``i < j``, none known or decided by the transitive closure
        of ``constraints`` (nor by the answers to the other returned pairs). ``m <
        n_pairs`` only when fewer undecided pairs are left.

    Notes
    -----
    Each call builds what the strategy needs (for ``"spectral"``: a k-NN graph and its
    spectral embedding); in a loop, fit a :class:`PairSelector` once and call its
    :meth:`~PairSelector.select`.
    """
    labels = None
    affinity = "knn"
    if estimator is not None:
        labels = getattr(estimator, "labels_", None)
        if getattr(estimator, "affinity", None) == "precomputed":
            affinity = "precomputed"
    selector = PairSelector(
        n_clusters, strategy=strategy, affinity=affinity, random_state=random_state
    ).fit(X)
    return selector.select(n_pairs, constraints, labels)


def learn(
    estimator,
    X,
    oracle,
    n_queries: int,
    *,
    batch_size: int = 10,
    strategy: str = "auto",
    refit_every: int | str = "auto",
    random_state=None,
    verbose: int = 0,
):
    """The query loop: ask ``n_queries`` pairs in batches, then fit the estimator.

    Each round chooses a batch (:class:`PairSelector`), asks the oracle every pair, adds
    the answers under the contradiction policy of :func:`add_answers`, and refits the
    estimator when the strategy reads the partition and ``refit_every`` queries have
    passed since the last fit. The estimator is fitted once more at the end on all kept
    answers (unless the last refit already saw them).

    Parameters
    ----------
    estimator : estimator of the library's contract
        Fitted in place (``fit(X, constraints=...)``); ``n_clusters`` is read from it.
    X : array-like
        Features, or an affinity when the estimator has ``affinity="precomputed"``.
    oracle : callable (i, j) -> bool or None, or array-like of shape (n_samples,)
        True when i and j belong together, False when not, None to skip the pair (it
        counts as a query and is not asked again). An array of labels answers
        ``y[i] == y[j]``.
    n_queries : int
        Budget: the number of pairs put to the oracle.
    batch_size : int, default=10
        Pairs chosen per round.
    strategy : str, default="auto"
        One of :data:`STRATEGIES` or ``"auto"`` (:data:`AUTO_STRATEGY`).
    refit_every : int or "auto", default="auto"
        Queries between refits for the strategies that read the partition (``"auto"``:
        every batch, as the papers refit after every answer); the other strategies fit
        only at the end.
    random_state : int, RandomState or None
        Seeds the selection (not the estimator, which keeps its own ``random_state``).
    verbose : int, default=0
        1: one line per round.

    Returns
    -------
    estimator : the fitted estimator
    constraints : Constraints
        Exactly the answered, kept pairs (at most ``n_queries``). Its attribute
        ``report`` is the :class:`AnswerReport` of the loop (pairs asked, answers,
        dropped answers).

    Warns
    -----
    ContradictoryAnswerWarning
        When answers were dropped by the contradiction policy (only possible with an
        oracle whose answers depend on more than the pair; the pairs chosen here are
        never decided by earlier answers).
    UserWarning
        When every pair is decided before the budget is spent (the loop stops early).
    """
    from .utils._validation import check_n_clusters

    n_queries = _check_positive_int(n_queries, "n_queries", minimum=0)
    batch_size = _check_positive_int(batch_size, "batch_size")
    strat = _check_strategy(strategy)
    if refit_every != "auto":
        refit_every = _check_positive_int(refit_every, "refit_every")
    if not hasattr(estimator, "fit") or not hasattr(estimator, "get_params"):
        raise TypeError("estimator must be an estimator of the library's contract.")
    k = getattr(estimator, "n_clusters", None)
    affinity = "precomputed" if getattr(estimator, "affinity", None) == "precomputed" else "knn"
    selector = PairSelector(k, strategy=strat, affinity=affinity, random_state=random_state).fit(X)
    n = selector.n_samples_
    check_n_clusters(k, n)
    ask = _as_oracle(oracle, n)
    uses_partition = strat in PARTITION_STRATEGIES
    step = batch_size if refit_every == "auto" else refit_every

    cons = Constraints(n_samples=n)
    report = AnswerReport()
    skipped: list[tuple[int, int]] = []
    fitted_on = -1
    if uses_partition and n_queries:
        estimator.fit(X, constraints=cons)
        fitted_on = 0
    last_fit_at = 0
    while report.n_asked < n_queries:
        b = min(batch_size, n_queries - report.n_asked)
        labels = estimator.labels_ if uses_partition else None
        pairs = selector.select(b, cons, labels, exclude=skipped)
        if len(pairs) == 0:
            warnings.warn(
                f"every pair is decided by the {len(cons)} kept answers; stopping after "
                f"{report.n_asked} of {n_queries} queries.",
                UserWarning,
                stacklevel=2,
            )
            break
        answers = [_check_answer(ask(int(i), int(j)), i, j) for i, j in pairs]
        cons, rep = add_answers(cons, pairs, answers, warn=False)
        report.asked += rep.asked
        report.answers += rep.answers
        report.dropped += rep.dropped
        skipped += [tuple(p) for p, a in zip(pairs.tolist(), answers, strict=True) if a is None]
        if uses_partition and report.n_asked - last_fit_at >= step and report.n_asked < n_queries:
            estimator.fit(X, constraints=cons)
            fitted_on, last_fit_at = len(cons), report.n_asked
        if verbose:
            print(
                f"[active] {report.n_asked}/{n_queries} queries, {cons.n_must_link} must-link, "
                f"{cons.n_cannot_link} cannot-link, {len(report.dropped)} dropped, "
                f"{report.n_skipped} skipped"
            )
    if fitted_on != len(cons) or not hasattr(estimator, "labels_"):
        estimator.fit(X, constraints=cons)
    if report.dropped:
        first = report.dropped[0]
        warnings.warn(
            f"{len(report.dropped)} answer(s) contradicted earlier answers and were dropped "
            f"(first: pair {first['pair']}: {first['reason']}); see constraints.report.",
            ContradictoryAnswerWarning,
            stacklevel=2,
        )
    cons.report = report
    return estimator, cons


def _check_answer(ans, i, j):
    if ans is None or isinstance(ans, (bool, np.bool_)):
        return None if ans is None else bool(ans)
    if isinstance(ans, numbers.Integral) and ans in (0, 1):
        return bool(ans)
    raise ValueError(
        f"the oracle answered {ans!r} for pair ({i}, {j}); expected True, False or None."
    )


# --------------------------------------------------------------------------- files
def write_pairs_csv(path, pairs, kinds=None, weights=None, ids=None) -> None:
    """Write pairs in the constraints CSV format (``i,j,kind[,weight]``), atomically.

    ``kinds`` (``"ml"``/``"cl"`` per pair) ``None`` leaves the ``kind`` column empty: a
    file of questions that a person fills with ``ml`` or ``cl``. ``weights`` adds the
    weight column. ``ids`` (one per row of the data) names the rows by ID instead of
    index, as :func:`spectralink.constraints.read_constraints_csv` reads them back with
    the same ``ids``. The file is written whole or not at all.
    """
    import csv

    from .experiments import atomic_write

    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    kinds = [""] * len(pairs) if kinds is None else list(kinds)
    if len(kinds) != len(pairs):
        raise ValueError(f"{len(pairs)} pairs but {len(kinds)} kinds.")
    names = pairs.tolist() if ids is None else [[str(ids[i]), str(ids[j])] for i, j in pairs]
    with atomic_write(path, "w", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")  # quotes an ID holding a comma
        writer.writerow(["i", "j", "kind"] + (["weight"] if weights is not None else []))
        for r, ((i, j), kind) in enumerate(zip(names, kinds, strict=True)):
            extra = [f"{float(weights[r]):g}"] if weights is not None else []
            writer.writerow([i, j, kind, *extra])


def _constraint_rows(constraints: Constraints):
    """``(pairs, kinds, weights or None)`` of ``constraints`` in file order."""
    pairs = np.vstack([constraints.must_link, constraints.cannot_link])
    kinds = ["ml"] * constraints.n_must_link + ["cl"] * constraints.n_cannot_link
    weights = np.concatenate([constraints.ml_weights, constraints.cl_weights])
    return pairs, kinds, (weights if constraints.is_weighted else None)


def _row_text(X, i: int, n_values: int = 8) -> str:
    row = np.asarray(X[i]).ravel()
    vals = " ".join(f"{v:.4g}" for v in row[:n_values])
    more = f" ... ({len(row)} values)" if len(row) > n_values else ""
    return f"  row {i}: {vals}{more}"


_PROMPT = "same group? [y/n/s(kip)/q(uit)] "


def ask_in_terminal(
    X,
    n_pairs: int,
    *,
    n_clusters: int,
    output,
    constraints=None,
    estimator=None,
    strategy: str = "auto",
    refit_every: int = 10,
    random_state=None,
    input_fn: Callable[[str], str] | None = None,
    print_fn: Callable[..., None] | None = None,
    ids=None,
) -> AnswerReport:
    """Ask up to ``n_pairs`` pairs one by one in a terminal; save every answer at once.

    Each question shows the two rows' first feature values and reads ``y`` (same group),
    ``n`` (different groups), ``s`` (skip; not asked again in this run) or ``q`` (quit).
    After every ``y``/``n`` the file ``output`` is rewritten atomically with the known
    ``constraints`` followed by the answers so far, so quitting, closing the input or
    Ctrl-C loses nothing. Nothing is written until the first answer.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_pairs : int
        Questions at most (skips included).
    n_clusters : int
    output : path
        The constraints file written (columns ``i,j,kind[,weight]``).
    constraints : Constraints, default=None
        Known answers; they are copied into ``output``.
    estimator : estimator, default=None
        Refitted every ``refit_every`` answers when the strategy reads the partition.
    strategy, random_state
        As in :func:`select_pairs`.
    input_fn, print_fn : callable, default=None
        How questions are read and printed (``None``: the built-in ``input`` and
        ``print``).
    ids : sequence of str, default=None
        Row IDs: shown in the questions and written in ``output`` instead of indices.

    Returns
    -------
    AnswerReport
        ``stopped`` says why the session ended.

    Raises
    ------
    KeyboardInterrupt
        Re-raised after the answers given so far are saved.
    """
    input_fn = input if input_fn is None else input_fn
    print_fn = print if print_fn is None else print_fn
    strat = _check_strategy(strategy)
    refit_every = _check_positive_int(refit_every, "refit_every")
    n_pairs = _check_positive_int(n_pairs, "n_pairs", minimum=0)
    selector = PairSelector(n_clusters, strategy=strat, random_state=random_state).fit(X)
    n = selector.n_samples_
    cons = as_constraints(constraints, n)
    Xv = np.asarray(X)
    known_pairs, known_kinds, known_w = _constraint_rows(cons)
    rows_p, rows_k = [tuple(p) for p in known_pairs.tolist()], list(known_kinds)
    rows_w = None if known_w is None else list(known_w)
    uses_partition = strat in PARTITION_STRATEGIES and estimator is not None
    if uses_partition:
        estimator.fit(X, constraints=cons)
    report = AnswerReport()
    report.stopped = "done"
    skipped: list[tuple[int, int]] = []
    since_fit = 0

    def save():
        write_pairs_csv(output, rows_p, rows_k, rows_w, ids=ids)

    try:
        while report.n_asked < n_pairs:
            labels = estimator.labels_ if uses_partition else None
            pair = selector.select(1, cons, labels, exclude=skipped)
            if len(pair) == 0:
                print_fn("every pair is decided by the answers so far.")
                report.stopped = "exhausted"
                break
            i, j = (int(v) for v in pair[0])
            named = "" if ids is None else f" (IDs {ids[i]} and {ids[j]})"
            print_fn(f"pair {report.n_asked + 1}/{n_pairs}: rows {i} and {j}{named}")
            print_fn(_row_text(Xv, i))
            print_fn(_row_text(Xv, j))
            while True:
                try:
                    reply = input_fn(_PROMPT).strip().lower()
                except EOFError:
                    reply = "eof"
                if reply in ("y", "yes", "n", "no", "s", "skip", "q", "quit", "eof"):
                    break
                print_fn("please answer y, n, s or q.")
            if reply in ("q", "quit", "eof"):
                report.stopped = "quit" if reply != "eof" else "eof"
                break
            ans = None if reply in ("s", "skip") else reply in ("y", "yes")
            report.asked.append((i, j))
            report.answers.append(ans)
            if ans is None:
                skipped.append((i, j))
                continue
            cons, rep = add_answers(cons, [(i, j)], [ans], warn=False)
            if rep.dropped:
                report.dropped += rep.dropped
                print_fn(f"  not kept: {rep.dropped[0]['reason']}.")
                continue
            rows_p.append((i, j))
            rows_k.append("ml" if ans else "cl")
            if rows_w is not None:
                rows_w.append(1.0)
            save()
            since_fit += 1
            if uses_partition and since_fit >= refit_every:
                estimator.fit(X, constraints=cons)
                since_fit = 0
    except KeyboardInterrupt:
        print_fn(f"\ninterrupted; {len(rows_p) - len(known_pairs)} answer(s) saved in {output}.")
        raise
    return report
