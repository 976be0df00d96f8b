"""Choosing the next pairs to ask: :class:`PairSelector`, its strategies and :func:`select_pairs`.

The selector builds what a strategy needs once per data set (distances, the k-NN graph and its
spectral embedding) and then chooses batches in O(n k) or O(n d) time; every batch is a
:class:`~spectralink.active._closure.BatchForest`, so no chosen pair is known or decided. The
strategies are described in :mod:`spectralink.active`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.utils import check_random_state

from ..constraints import Constraints, as_constraints
from ..graph import check_affinity, knn_affinity
from ..model_selection import choose_n_clusters, default_k_range, eigengap_n_clusters
from ..spectral import kmeans_rows, laplacian_eigenvectors, normalize_rows
from ..utils import (
    POSITIVE,
    Int,
    StrOptions,
    check_features,
    check_n_clusters,
    check_params,
    validate_params,
)
from ._closure import BatchForest, Known, known_structure
from ._uncertainty import entropy, expected_queries, normalise_or_uniform

#: The strategy names :func:`select_pairs` and :func:`learn` accept (besides ``"auto"``).
STRATEGIES = ("random", "ffqs", "minmax", "npu", "spectral")
#: What ``strategy="auto"`` means (the measurements behind it: ``docs/results/active``).
AUTO_STRATEGY = "spectral"
#: Strategies that read the current partition (the estimator's ``labels_``).
PARTITION_STRATEGIES = frozenset({"npu", "spectral"})


def resolve_strategy(strategy: str) -> str:
    """The strategy name ``strategy`` stands for: one of :data:`STRATEGIES`.

    Case is ignored; ``"auto"`` resolves to :data:`AUTO_STRATEGY`.

    Raises
    ------
    ValueError
        If ``strategy`` is not one of :data:`STRATEGIES` or ``"auto"``.
    """
    if not isinstance(strategy, str) or strategy.lower() not in (*STRATEGIES, "auto"):
        raise ValueError(
            f"strategy must be one of {', '.join(STRATEGIES)} or 'auto', got {strategy!r}."
        )
    strategy = strategy.lower()
    return AUTO_STRATEGY if strategy == "auto" else strategy


class PairSelector:
    """Chooses the next pairs to ask, for one data set.

    ``fit(X)`` stores the data; what a strategy needs (squared norms for distances, the
    k-NN graph and its spectral embedding, a random forest on the partition) is computed
    on first use and kept, so that repeated :meth:`select` calls in a query loop cost
    O(n k) or O(n d) each. Nothing of size n x n is formed.

    Parameters
    ----------
    n_clusters : int or None
        Number of clusters k (the neighbourhood strategies look for k groups). ``None``:
        k by the eigengap of the selector's graph at ``fit``
        (:func:`~spectralink.model_selection.eigengap_n_clusters`, in
        :func:`~spectralink.model_selection.default_k_range`), until
        :meth:`use_n_clusters` gives another (the query loop passes the k its estimator
        chose from the answers).
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
    n_clusters_ : int
        The k the strategies use.
    strategy_ : str
        The resolved strategy name.
    embedding_ : ndarray of shape (n_samples, n_clusters)
        Row-normalised spectral embedding (computed on first use).
    """

    _parameter_constraints: dict = {
        "strategy": [str],
        "affinity": [StrOptions({"knn", "precomputed"})],
        "n_neighbors": [Int(1, None)],
        "n_trees": [Int(1, None)],
        "prior": [POSITIVE],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_clusters: int,
        *,
        strategy: str = "auto",
        affinity: str = "knn",
        n_neighbors: int = 20,
        n_trees: int = 50,
        prior: float = 1.0,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.strategy = strategy
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.n_trees = n_trees
        self.prior = prior
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def fit(self, X: ArrayLike) -> PairSelector:
        """Store the data (features, or an affinity with ``affinity="precomputed"``)."""
        params = {name: getattr(self, name) for name in self._parameter_constraints}
        check_params(self._parameter_constraints, params, type(self).__name__)
        self.strategy_ = resolve_strategy(self.strategy)
        if self.affinity == "precomputed":
            self._W = check_affinity(X)
            self._X = None
            n = self._W.shape[0]
        else:
            self._X = np.asarray(check_features(X), dtype=np.float64)
            self._W = None
            n = self._X.shape[0]
        self.n_samples_ = n
        self._rng = check_random_state(self.random_state)
        self._forest_key = None
        if self.n_clusters is None:
            self.use_n_clusters(self._eigengap_k())
        else:
            self.use_n_clusters(check_n_clusters(self.n_clusters, n))
        return self

    def use_n_clusters(self, k: int) -> PairSelector:
        """Let the strategies look for ``k`` groups from now on (what depends on k, the
        spectral embedding among them, is recomputed on next use); returns self."""
        self._check_fitted()
        k = check_n_clusters(k, self.n_samples_)
        if getattr(self, "n_clusters_", None) != k:
            self.n_clusters_ = k
            self._F = self._sq = self._mind = self._own_labels = None
            self._mind_seen = np.zeros(self.n_samples_, dtype=bool)
        return self

    def _eigengap_k(self) -> int:
        lo, hi = default_k_range(self.n_samples_)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a disconnected graph is still usable here
            vals, _ = laplacian_eigenvectors(self._graph(), hi + 1, random_state=self._seed())
        return eigengap_n_clusters(vals, (lo, hi))

    def _check_fitted(self) -> None:
        if not hasattr(self, "n_samples_"):
            raise ValueError("this PairSelector is not fitted; call fit(X) first.")

    # ------------------------------------------------------------------ geometry
    def _graph(self) -> sp.csr_matrix:
        if self._W is None:
            n_nb = min(self.n_neighbors, self.n_samples_ - 1)
            self._W = knn_affinity(self._X, n_neighbors=n_nb, random_state=self._seed())
        return self._W

    def _seed(self) -> int:
        return int(check_random_state(self.random_state).randint(2**31 - 1))

    @property
    def embedding_(self) -> np.ndarray:
        self._check_fitted()
        if self._F is None:
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
            self._own_labels = kmeans_rows(
                self.embedding_, self.n_clusters_, random_state=self._seed()
            )
        return self._own_labels

    # ------------------------------------------------------------------ select
    def rng_state(self) -> tuple:
        """The state of the selector's random stream (to save a session and resume it)."""
        return self._rng.get_state()

    def set_rng_state(self, state: tuple) -> None:
        """Resume the selector's random stream from :meth:`rng_state`."""
        self._rng.set_state(state)

    def select(
        self,
        n_pairs: int,
        constraints: Constraints | tuple | None = None,
        labels: ArrayLike | None = None,
        *,
        exclude: Iterable[tuple[int, int]] | None = None,
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
        check_params({"n_pairs": [Int(0, None)]}, {"n_pairs": n_pairs}, "PairSelector.select")
        cons = as_constraints(constraints, n)
        if labels is not None:
            labels = np.asarray(labels)
            if labels.shape != (n,):
                raise ValueError(f"labels has shape {labels.shape}, expected ({n},).")
        excl = set()
        if exclude is not None:
            ex = np.asarray(list(exclude), dtype=np.int64).reshape(-1, 2)
            excl = set((ex.min(axis=1) * n + ex.max(axis=1)).tolist())
        known = known_structure(cons, self.n_clusters_)
        forest = BatchForest(known, excl, n)
        if n_pairs:
            getattr(self, f"_select_{self.strategy_}")(known, forest, n_pairs, labels)
            if len(forest) < n_pairs:
                self._select_random(known, forest, n_pairs, labels)
        out = np.asarray(forest.pairs, dtype=np.int64).reshape(-1, 2)
        return out

    # ------------------------------------------------------------------ random
    def _select_random(self, known: Known, forest: BatchForest, n_pairs: int, labels):
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
    def _pending(self, known: Known) -> np.ndarray:
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

    def _allowed(self, known: Known, x: int) -> np.ndarray:
        return ~known.excluded[known.comp[x]]

    def _ask_in_order(self, known: Known, forest: BatchForest, x: int, order, partner) -> bool:
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

    def _first_pair(self, forest: BatchForest) -> None:
        """No constraint yet: a random point and the point farthest from it (FFQS)."""
        x0 = int(self._rng.randint(self.n_samples_))
        x1 = int(np.argmax(self._sqdist_to(x0)))
        if not forest.try_add(x0, x1):
            forest.try_add(x0, (x0 + 1) % self.n_samples_)

    def _farthest_first(self, known: Known):
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

    def _random_unconstrained(self, known: Known):
        free = np.flatnonzero(~known.constrained)
        yield from self._rng.permutation(free).tolist()

    def _centroid_order(self, known: Known):
        Z = self._features()
        cents = np.array([Z[m].mean(axis=0) for m in known.members])
        reps = [
            int(m[np.argmin(((Z[m] - c) ** 2).sum(axis=1))])
            for m, c in zip(known.members, cents, strict=True)
        ]

        def order_of(x):
            return np.argsort(((cents - Z[x]) ** 2).sum(axis=1), kind="stable")

        return order_of, (lambda h, x: reps[h])

    def _select_ffqs(self, known: Known, forest: BatchForest, n_pairs: int, labels):
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

    def _select_minmax(self, known: Known, forest: BatchForest, n_pairs: int, labels):
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

    def _select_npu(self, known: Known, forest: BatchForest, n_pairs: int, labels):
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
        P = normalise_or_uniform(P, ~known.excluded[known.comp])
        score = entropy(P) / expected_queries(P)
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
    def _select_spectral(self, known: Known, forest: BatchForest, n_pairs: int, labels):
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
        P = normalise_or_uniform(P, allowed)
        # sampling weight: NPU's normalised uncertainty; a sample without replacement with
        # probabilities proportional to it (Efraimidis & Spirakis keys u^(1/w))
        weight = entropy(P) / expected_queries(P, n_new=n_new)
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


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "n_pairs": [Int(0, None)],
        "n_clusters": [Int(2, None), None],
        "strategy": [str],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def select_pairs(
    X: ArrayLike,
    n_pairs: int,
    *,
    n_clusters: int,
    constraints: Constraints | tuple | None = None,
    estimator: object | None = None,
    strategy: str = "auto",
    random_state: int | np.random.RandomState | None = None,
) -> np.ndarray:
    """The next ``n_pairs`` pairs to ask a person about.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Features (or an affinity matrix when ``estimator`` has ``affinity="precomputed"``).
    n_pairs : int
        Number of pairs wanted.
    n_clusters : int or None
        Number of clusters k. ``None``: the estimator's ``n_clusters_`` when it chose one
        (``Auto(n_clusters=None)``), else chosen from ``constraints``
        (:func:`~spectralink.model_selection.choose_n_clusters`: held-out pairs, the
        eigengap without pairs of both kinds).
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
        n_clusters or 2, strategy=strategy, affinity=affinity, random_state=random_state
    ).fit(X)
    if n_clusters is None:
        selector.use_n_clusters(_k_for(selector, estimator, constraints, random_state))
    return selector.select(n_pairs, constraints, labels)


def _k_for(selector: PairSelector, estimator, constraints, random_state) -> int:
    """k when ``select_pairs`` is not given one: the estimator's choice, else the pairs'."""
    k = getattr(estimator, "n_clusters_", None)
    if k is not None:
        return int(k)
    cons, pre = as_constraints(constraints, selector.n_samples_), selector._X is None
    data, k_range = (selector._W if pre else selector._X), default_k_range(selector.n_samples_)
    return choose_n_clusters(
        data, cons, k_range, precomputed=pre, random_state=random_state
    ).n_clusters
