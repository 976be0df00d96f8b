"""The pair strategies, one function each, and the table :class:`PairSelector` picks them
from (:data:`STRATEGY_FUNCTIONS`): random, FFQS (Basu et al. 2004), MinMax (Mallapragada et
al. 2008), NPU (Xiong et al. 2014) and this library's spectral strategy.

Each strategy is ``strategy(geo, known, forest, n_pairs, labels)``: it adds pairs to the
batch ``forest`` (:class:`~spectralink.active._closure.BatchForest`, which refuses a pair
known or decided) until it holds ``n_pairs`` or the strategy has nothing left to ask,
reading the data set's :class:`~spectralink.active._geometry.SelectionGeometry` ``geo``,
the known structure ``known`` of the answers and the current partition ``labels``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from ._closure import BatchForest, Known
from ._geometry import SelectionGeometry
from ._uncertainty import entropy, expected_queries, normalise_or_uniform

__all__ = ["STRATEGY_FUNCTIONS", "Strategy"]

#: ``(geo, known, forest, n_pairs, labels) -> None``
Strategy = Callable[[SelectionGeometry, Known, BatchForest, int, "np.ndarray | None"], None]


# ------------------------------------------------------------------ random
def select_random(geo: SelectionGeometry, known: Known, forest: BatchForest, n_pairs: int, labels):
    n, rng = geo.n_samples, geo.rng
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
def _pending(geo: SelectionGeometry, known: Known) -> np.ndarray:
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
    settled = (left == 0) | ((left == 1) & (l >= geo.n_clusters))
    comps, reps, n_excl = comps[~settled], reps[~settled], n_excl[~settled]
    return reps[np.lexsort((reps, -n_excl))]


def _allowed(geo: SelectionGeometry, known: Known, x: int) -> np.ndarray:
    return ~known.excluded[known.comp[x]]


def _ask_in_order(
    geo: SelectionGeometry, known: Known, forest: BatchForest, x: int, order, partner
) -> bool:
    """Pair ``x`` with the first allowed neighbourhood of ``order`` the forest accepts."""
    allowed = _allowed(geo, known, x)
    for h in order:
        if allowed[h] and forest.try_add(x, partner(h, x)):
            return True
    return False


def _fill(geo: SelectionGeometry, known, forest, n_pairs, candidates, order_of, partner) -> None:
    """Pending points first, then ``candidates`` (an iterator of new points)."""
    for x in _pending(geo, known).tolist():
        if len(forest) >= n_pairs:
            return
        _ask_in_order(geo, known, forest, x, order_of(x), partner)
    for x in candidates:
        if len(forest) >= n_pairs:
            return
        _ask_in_order(geo, known, forest, x, order_of(x), partner)


def _first_pair(geo: SelectionGeometry, forest: BatchForest) -> None:
    """No constraint yet: a random point and the point farthest from it (FFQS)."""
    x0 = int(geo.rng.randint(geo.n_samples))
    x1 = int(np.argmax(geo.squared_distances_to(x0)))
    if not forest.try_add(x0, x1):
        forest.try_add(x0, (x0 + 1) % geo.n_samples)


def _farthest_first(geo: SelectionGeometry, known: Known):
    """Unconstrained points in farthest-first order from the constrained ones."""
    mind = geo.min_squared_distance(known.constrained).copy()
    mind[known.constrained] = -np.inf
    while True:
        x = int(np.argmax(mind))
        if not np.isfinite(mind[x]) or mind[x] < 0:
            return
        yield x
        np.minimum(mind, geo.squared_distances_to(x), out=mind)
        mind[x] = -np.inf


def _random_unconstrained(geo: SelectionGeometry, known: Known):
    free = np.flatnonzero(~known.constrained)
    yield from geo.rng.permutation(free).tolist()


def _centroid_order(geo: SelectionGeometry, known: Known):
    Z = geo.features()
    cents = np.array([Z[m].mean(axis=0) for m in known.members])
    reps = [
        int(m[np.argmin(((Z[m] - c) ** 2).sum(axis=1))])
        for m, c in zip(known.members, cents, strict=True)
    ]

    def order_of(x):
        return np.argsort(((cents - Z[x]) ** 2).sum(axis=1), kind="stable")

    return order_of, (lambda h, x: reps[h])


def select_ffqs(geo: SelectionGeometry, known: Known, forest: BatchForest, n_pairs: int, labels):
    """Basu, Banerjee & Mooney (2004), explore then consolidate.

    Explore (fewer than k neighbourhoods): farthest-first traversal, each new point
    asked against the neighbourhoods until it joins one or starts a new one.
    Consolidate: random points, asked against the neighbourhoods in order of
    increasing distance to their centroids.
    """
    if known.n_hoods == 0:
        return _first_pair(geo, forest)
    order_of, partner = _centroid_order(geo, known)
    if known.n_hoods < geo.n_clusters:
        cands = _farthest_first(geo, known)
    else:
        cands = _random_unconstrained(geo, known)
    _fill(geo, known, forest, n_pairs, cands, order_of, partner)


def select_minmax(geo: SelectionGeometry, known: Known, forest: BatchForest, n_pairs: int, labels):
    """Mallapragada, Jin & Jain (2008): FFQS whose consolidation asks the point of
    least maximum similarity to the points already asked (the skeleton), against the
    neighbourhoods in decreasing order of their largest similarity to it.

    With the Gaussian similarity of the paper, least maximum similarity is largest
    distance to the nearest skeleton point, so both phases are a farthest-first
    traversal and the kernel width plays no part in the choice.
    """
    if known.n_hoods == 0:
        return _first_pair(geo, forest)
    Z = geo.features()
    sq = geo.squared_norms()

    def nearest_member(h, x):
        m = known.members[h]
        return int(m[np.argmin(sq[m] - 2.0 * (Z[m] @ Z[x]))])

    def order_of(x):
        d = [float(np.min(sq[m] - 2.0 * (Z[m] @ Z[x]))) for m in known.members]
        return np.argsort(d, kind="stable")

    _fill(geo, known, forest, n_pairs, _farthest_first(geo, known), order_of, nearest_member)


# ------------------------------------------------------------------ NPU
def select_npu(geo: SelectionGeometry, known: Known, forest: BatchForest, n_pairs: int, labels):
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
        return select_random(geo, known, forest, 1, labels)
    if l == 1:
        _fill(
            geo,
            known,
            forest,
            n_pairs,
            _random_unconstrained(geo, known),
            lambda x: np.zeros(1, dtype=np.int64),
            lambda h, x: int(known.members[0][0]),
        )
        return
    if labels is None:
        labels = geo.fallback_labels()
    leaves = geo.forest_leaves(np.asarray(labels))
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
    _fill_by_score(geo, known, forest, n_pairs, score, P, lambda h, x: reps[h])


def _fill_by_score(geo: SelectionGeometry, known, forest, n_pairs, score, P, partner, first=()):
    """Pending points, then the points ``first``, then unconstrained points by
    decreasing score (ties at random); each asked against the neighbourhoods in
    decreasing order of its row of ``P``."""

    def order_of(x):
        return np.argsort(-P[x], kind="stable")

    for x in [*_pending(geo, known).tolist(), *first]:
        if len(forest) >= n_pairs:
            return
        _ask_in_order(geo, known, forest, x, order_of(x), partner)
    s = score + 1e-9 * np.abs(score).max(initial=1.0) * geo.rng.uniform(size=len(score))
    s[known.constrained] = -np.inf
    for x in np.argsort(-s, kind="stable").tolist():
        if len(forest) >= n_pairs or not np.isfinite(s[x]):
            return
        _ask_in_order(geo, known, forest, x, order_of(x), partner)


# ------------------------------------------------------------------ spectral
def select_spectral(
    geo: SelectionGeometry, known: Known, forest: BatchForest, n_pairs: int, labels
):
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
    F = geo.embedding
    if labels is None:
        labels = geo.fallback_labels()
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
            _first_pair(geo, forest)
        return
    W = geo.graph()
    deg = np.asarray(W.sum(axis=1)).ravel()
    deg[deg <= 0] = 1.0
    Q = 0.5 * onehot.toarray() + 0.5 * (W @ onehot).toarray() / deg[:, None]
    k = geo.n_clusters
    n_new = 1 if l < k else 0
    counts = np.zeros((K, l + n_new))
    for h, m in enumerate(known.members):
        counts[:, h] = np.bincount(L[m], minlength=K)
    rho = np.full(l + n_new, 1.0 / k)
    if n_new:
        rho[-1] = (k - l) / k
    ident = (counts + geo.prior * rho) / (counts.sum(axis=1, keepdims=True) + geo.prior)
    P = Q @ ident
    allowed = np.ones((len(L), l + n_new), dtype=bool)
    allowed[:, :l] = ~known.excluded[known.comp]
    P[~allowed] = 0.0
    P = normalise_or_uniform(P, allowed)
    # sampling weight: NPU's normalised uncertainty; a sample without replacement with
    # probabilities proportional to it (Efraimidis & Spirakis keys u^(1/w))
    weight = entropy(P) / expected_queries(P, n_new=n_new)
    key = np.log(geo.rng.uniform(1e-300, 1.0, size=len(weight))) / np.maximum(weight, 1e-12)
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
    _fill_by_score(
        geo, known, forest, n_pairs, key, P[:, :l], lambda h, x: hood_reps[h], first=explore
    )


#: The strategy functions by name (:data:`spectralink.active.STRATEGIES`).
STRATEGY_FUNCTIONS: dict[str, Strategy] = {
    "random": select_random,
    "ffqs": select_ffqs,
    "minmax": select_minmax,
    "npu": select_npu,
    "spectral": select_spectral,
}
