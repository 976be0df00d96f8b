"""Nearest-neighbour search: exact, or approximate with a recall calibrated on a sample.

:func:`kneighbors` returns the ``k`` nearest neighbours of every row of ``X`` (the point
itself excluded), in ascending Euclidean distance; :func:`search` the ``k`` nearest rows of
a data set to each of a set of queries. Both run on faiss (``faiss-cpu``: prebuilt wheels,
nothing compiled on first use):

* **exact** (``method="exact"``, the default up to :data:`ANN_THRESHOLD` points): brute force
  (``faiss.knn``, the search of an ``IndexFlatL2``).
* **approximate** (``"approximate"``, the default above the threshold): an inverted file
  (IVF) whose cells are faiss k-means cells. The points of one cell are searched together
  against the union of the ``p`` cells whose centroids are nearest to their cell's
  centroid, as one BLAS product per cell, which is several times faster per distance than
  probing the cells query by query (faiss's ``IndexIVFFlat``), for about 1.3 times as many
  candidates. ``p`` is calibrated before the search: for a random sample of
  :data:`CALIBRATION_SAMPLE` points the exact neighbours are computed, and the smallest
  ``p`` whose cells hold a fraction ``target_recall`` of them (the recall the search will
  reach on the sample, since a true neighbour among the candidates is always returned) is
  taken. When that ``p`` would cost half a brute-force search, the search is exact instead.

faiss computes in float32. Both methods ask it for :data:`MARGIN` more candidates than
needed, recompute their distances in float64 and sort them, breaking ties by the smaller
index; distances are first rounded to a relative 1e-12 (:func:`round_distances`), so that
distances equal in exact arithmetic also compare equal in floating point. The exact method
thus returns the float64 brute-force neighbours, ties by index, unless more than ``MARGIN``
candidates fall within float32 rounding of the k-th distance. Results do not depend on the
number of threads: faiss and its BLAS split the work over queries and database rows, not
over the coordinates of one dot product.

``"nndescent"`` (PyNNDescent, the optional extra ``spectralink[pynndescent]``; compiled by
numba in every new process) and ``"sklearn"`` (scikit-learn's exact search, the reference
the library used before, with its own order among ties) stay available. None of the three
libraries is imported before a search asks for it.

References
----------
Jégou, H., Douze, M., & Schmid, C. (2011). Product quantization for nearest neighbor
search. IEEE TPAMI 33(1) (the inverted file with k-means cells).
Douze, M. et al. (2024). The Faiss library. arXiv:2401.08281.
"""

from __future__ import annotations

import contextlib
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .exceptions import import_extra
from .parallel import limit_threads, n_threads
from .progress import current_stage, stage
from .utils import content_hash, register_cache, shared_scope

__all__ = [
    "ANN_THRESHOLD",
    "CALIBRATION_SAMPLE",
    "MARGIN",
    "METHODS",
    "SearchInfo",
    "TARGET_RECALL",
    "kneighbors",
    "rerank",
    "round_distances",
    "search",
]

#: Above this many points :func:`kneighbors` uses approximate neighbours by default.
ANN_THRESHOLD = 50_000
#: Recall@k the approximate search is calibrated to reach.
TARGET_RECALL = 0.95
#: Points whose exact neighbours calibrate the approximate search.
CALIBRATION_SAMPLE = 1000
#: Extra float32 candidates re-ranked in float64.
MARGIN = 8
#: Low mantissa bits rounded off squared distances before sorting (see round_distances).
TIE_BITS = 12
#: Approximate search costing more than this fraction of brute force runs exact instead.
EXACT_COST_FRACTION = 0.5
METHODS = ("auto", "exact", "approximate", "nndescent", "sklearn")

_QUERY_CHUNK = 8192  # queries per faiss call in the exact search (progress granularity)
_RERANK_CHUNK = 4096  # rows per block of the float64 re-ranking


@dataclass(frozen=True)
class SearchInfo:
    """How a neighbour search ran (``kneighbors(..., return_info=True)``).

    Attributes
    ----------
    method : str
        ``"exact"``, ``"approximate"``, ``"nndescent"`` or ``"sklearn"``.
    recall : float or None
        Recall@k: 1.0 for exact methods; for ``"approximate"`` the fraction of the exact
        neighbours of the calibration sample that the search returns; None for
        ``"nndescent"`` (not measured).
    n_threads : int
        Threads the search ran on.
    n_lists, n_probe : int or None
        Approximate search: number of IVF cells, and cells searched per cell of queries.
    candidates : float or None
        Approximate search: mean number of candidates per query, as a fraction of ``n``.
    sample_size : int or None
        Approximate search: points of the calibration sample.
    """

    method: str
    recall: float | None
    n_threads: int
    n_lists: int | None = None
    n_probe: int | None = None
    candidates: float | None = None
    sample_size: int | None = None

    def describe(self) -> str:
        if self.method == "approximate":
            return (
                f"approximate (faiss IVF: {self.n_lists} cells, {self.n_probe} searched per "
                f"cell, {self.candidates:.1%} of the points per query), recall {self.recall:.3f} "
                f"on {self.sample_size} sampled points, {self.n_threads} thread(s)"
            )
        return f"{self.method}, {self.n_threads} thread(s)"


# --------------------------------------------------------------------------- public API
def kneighbors(
    X: ArrayLike,
    n_neighbors: int,
    *,
    method: str = "auto",
    random_state: int | np.random.RandomState | None = None,
    ann_threshold: int = ANN_THRESHOLD,
    target_recall: float = TARGET_RECALL,
    return_info: bool = False,
) -> tuple:
    """Distances and indices of the ``n_neighbors`` nearest neighbours of every row.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_neighbors : int
        ``k``, between 1 and ``n_samples - 1``. The point itself is excluded.
    method : {"auto", "exact", "approximate", "nndescent", "sklearn"}, default="auto"
        ``"auto"`` is exact up to ``ann_threshold`` points, approximate above; see the
        module docstring.
    random_state : int, RandomState or None
        Seeds the approximate search (calibration sample, k-means cells); ``None``: NumPy's
        global generator.
    ann_threshold : int, default=ANN_THRESHOLD
    target_recall : float, default=TARGET_RECALL
        Recall@k the approximate search is calibrated to reach (in (0, 1]).
    return_info : bool, default=False
        Also return a :class:`SearchInfo` (method, threads, reached recall).

    Returns
    -------
    dist : ndarray of shape (n_samples, n_neighbors)
        Euclidean distances (not squared), ascending along rows.
    ind : ndarray of shape (n_samples, n_neighbors), int64
        Ties in distance are ordered by the smaller index (``"sklearn"``: its own order).
    info : SearchInfo
        Only with ``return_info=True``.
    """
    X = _check_X(X)
    n = X.shape[0]
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, (int, np.integer)):
        raise ValueError(f"n_neighbors must be an integer, got {n_neighbors!r}.")
    if not 1 <= n_neighbors < n:
        raise ValueError(
            f"n_neighbors={n_neighbors} must be at least 1 and smaller than the number of "
            f"samples ({n})."
        )
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}.")
    if not 0 < target_recall <= 1:
        raise ValueError(f"target_recall must be in (0, 1], got {target_recall!r}.")
    k = int(n_neighbors)
    if method == "auto":
        method = "approximate" if n > ann_threshold else "exact"
    with stage("neighbours", total=n, unit="points") as st:
        dist, ind, info, found = _search_shared(X, k, method, random_state, target_recall)
        st.detail = f"{n} points, k={k}: {info.describe()}" + (" (shared)" if found else "")
    if info.recall is not None and info.recall < target_recall:
        import warnings

        warnings.warn(
            f"the approximate neighbour search reached recall {info.recall:.3f} < "
            f"{target_recall} on its calibration sample.",
            UserWarning,
            stacklevel=2,
        )
    return (dist, ind, info) if return_info else (dist, ind)


def search(
    queries: ArrayLike, data: ArrayLike, n_neighbors: int, *, squared: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``n_neighbors`` nearest rows of ``data`` to every row of ``queries``.

    Same rules as the exact :func:`kneighbors` (faiss brute force, float64 re-ranking, ties
    by the smaller index), without excluding anything: a query that is also a row of
    ``data`` finds itself at distance 0.

    Returns
    -------
    dist : ndarray of shape (n_queries, n_neighbors), ascending
        Euclidean distances, squared with ``squared=True``.
    ind : ndarray of shape (n_queries, n_neighbors), indices into ``data``
    """
    Q, B = _check_X(queries), _check_X(data)
    if Q.shape[1] != B.shape[1]:
        raise ValueError(f"queries have {Q.shape[1]} features but data has {B.shape[1]}.")
    if not 1 <= n_neighbors <= B.shape[0]:
        raise ValueError(
            f"n_neighbors={n_neighbors} must be between 1 and the number of data rows "
            f"({B.shape[0]})."
        )
    faiss = _import_faiss()
    Bf, shift, scale = _to_float32(B)
    Qf = _to_float32(Q, shift, scale)[0]
    with _faiss_threads(faiss, Q.shape[0] * B.shape[0] * B.shape[1]) as t:
        sq, ind = _exact_knn(faiss, Q, B, Qf, Bf, scale, n_neighbors, t)
    return (sq if squared else np.sqrt(sq)), ind


# --------------------------------------------------------------------------- helpers
def _check_X(X) -> np.ndarray:
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-d (n_samples, n_features), got {X.ndim}-d.")
    if not np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.complexfloating):
        raise ValueError(f"X must hold real numbers, got dtype {X.dtype}.")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values; remove or impute them first.")
    return X


def _import_faiss():
    try:
        import faiss
    except ImportError as exc:  # pragma: no cover - faiss-cpu is a dependency
        raise ImportError("neighbour search needs faiss: pip install faiss-cpu") from exc
    return faiss


_CACHE = register_cache()


def _search_shared(X, k, method, random_state, target_recall):
    """``(dist, ind, info, found)``; inside a model search's sharing block a search already
    made on the same rows is reused, seeded with the block's seed (the result must not
    depend on which fit searched first)."""
    shared = shared_scope()
    if shared is None:
        return (*_search(X, k, method, random_state, target_recall), False)
    seed, max_bytes = shared
    key = (content_hash(X), k, method, target_recall, seed)
    value, found = _CACHE.get_or_compute(
        key, lambda: _search(X, k, method, seed, target_recall), max_bytes
    )
    return (*value, found)


def _search(X, k, method, random_state, target_recall):
    if method == "approximate":
        return _approximate(X, k, random_state, target_recall)
    if method == "exact":
        return _exact(X, k)
    if method == "nndescent":
        return _nndescent(X, k, random_state)
    return _sklearn(X, k)


@contextlib.contextmanager
def _faiss_threads(faiss, work: float):
    """faiss (OpenMP and its BLAS) and the other libraries on ``threads_for(work)`` threads;
    faiss's BLAS used for every batch of queries (its default skips BLAS below 128,000
    queries, about 5 times slower per distance at 50 dimensions)."""
    blas_threshold = faiss.cvar.distance_compute_blas_threshold
    faiss.cvar.distance_compute_blas_threshold = 20
    try:
        with limit_threads(work) as count:
            yield count
    finally:
        faiss.cvar.distance_compute_blas_threshold = blas_threshold


def _to_float32(X: np.ndarray, shift=None, scale=None):
    """``(X - shift) / scale`` in float32: centred and scaled to unit maximum so that float32
    keeps as many significant digits of the distances as it can (same transform for
    queries, via ``shift`` and ``scale``). Converted by row blocks: no float64 temporary
    of the size of ``X``."""
    if shift is None:
        shift = X.mean(axis=0, dtype=np.float64)
        scale = float(max(np.max(X.max(axis=0) - shift), np.max(shift - X.min(axis=0))))
        scale = scale if scale > 0 else 1.0
    Xf = np.empty(X.shape, dtype=np.float32)
    inv = 1.0 / scale
    for start in range(0, X.shape[0], _RERANK_CHUNK):
        sl = slice(start, start + _RERANK_CHUNK)
        Xf[sl] = (X[sl] - shift) * inv
    return Xf, shift, scale


def _faiss_knn(faiss, Qf, Bf, c, progress=None) -> tuple[np.ndarray, np.ndarray]:
    """float32 squared distances and indices of the ``c`` nearest rows of ``Bf`` for every
    row of ``Qf``."""
    dist = np.empty((Qf.shape[0], c), dtype=np.float32)
    ind = np.empty((Qf.shape[0], c), dtype=np.int64)
    for start in range(0, Qf.shape[0], _QUERY_CHUNK):
        stop = min(start + _QUERY_CHUNK, Qf.shape[0])
        dist[start:stop], ind[start:stop] = faiss.knn(Qf[start:stop], Bf, c)
        if progress is not None:
            progress.update(stop - start)
    return dist, ind


def _exact_knn(faiss, Q, B, Qf, Bf, scale, need, n_threads_, progress=None):
    """The ``need`` exact nearest rows of ``B`` for every row of ``Q`` (float64, ties by
    index), from faiss's float32 brute force.

    faiss returns ``c = need + MARGIN`` candidates by float32 distance; after re-ranking in
    float64 a row is certain only if its ``need``-th distance is below the largest float32
    candidate distance by more than twice the float32 error bound (then no point left out
    can be as close). Rows that are not certain (exact ties or near-ties straddling the
    last candidate: duplicates, grids) are searched again with twice as many candidates.
    """
    nq, nb_, d = Q.shape[0], B.shape[0], B.shape[1]
    c = min(nb_, need + MARGIN)
    fd, cand = _faiss_knn(faiss, Qf, Bf, c, progress)
    sq, ind = rerank(Q, B, cand, n_threads_)
    sq, ind = sq[:, :need], ind[:, :need]
    # worst-case float32 error of |q|^2 + |b|^2 - 2 q.b in the scaled coordinates
    eps = (d + 4) * np.finfo(np.float32).eps
    bmax = float(np.max(np.einsum("ij,ij->i", Bf, Bf)))
    qn = np.einsum("ij,ij->i", Qf, Qf).astype(np.float64)
    todo = np.arange(nq)
    while c < nb_:
        err = eps * (qn[todo] + bmax)
        unsure = sq[todo, -1] / scale**2 + 2.0 * err >= fd[:, -1].astype(np.float64)
        todo = todo[unsure]
        if todo.size == 0:
            break
        c = min(nb_, 2 * c)
        fd, cand = _faiss_knn(faiss, Qf[todo], Bf, c)
        s2, i2 = rerank(Q[todo], B, cand, n_threads_)
        sq[todo], ind[todo] = s2[:, :need], i2[:, :need]
    return sq, ind


def round_distances(d2: np.ndarray, bits: int = TIE_BITS) -> np.ndarray:
    """Round non-negative finite floats to ``52 - bits`` bits of mantissa (relative 1e-12).

    Distances equal in exact arithmetic but computed from different coordinates differ in
    their last bits; rounded, they compare equal and their order is the order of the
    indices, whatever the summation order of the computation.
    """
    d2 = np.ascontiguousarray(d2, dtype=np.float64)
    finite = np.isfinite(d2)
    raw = d2.view(np.int64)
    half, mask = np.int64(1 << (bits - 1)), ~np.int64((1 << bits) - 1)
    # for non-negative doubles the bit pattern is monotone: round it as an integer
    return np.where(finite, ((raw + half) & mask).view(np.float64), d2)


def rerank(
    Q: ArrayLike, B: ArrayLike, cand: np.ndarray, n_threads_: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """Float64 squared distances from ``Q[i]`` to ``B[cand[i]]``, rounded by
    :func:`round_distances`; rows sorted ascending with ties by the smaller index (``-1``, a
    missing candidate, sorts last). Returns ``(sqdist, ind)``."""
    m, c = cand.shape
    sq = np.empty((m, c))
    ind = np.empty_like(cand)

    def block(sl):
        Qb = np.asarray(Q[sl], dtype=np.float64)
        cb = cand[sl]
        d2 = np.empty(cb.shape)
        for col in range(c):
            diff = Qb - np.asarray(B[cb[:, col]], dtype=np.float64)
            d2[:, col] = np.einsum("ij,ij->i", diff, diff)
        d2 = round_distances(d2)
        d2[cb < 0] = np.inf
        order = np.lexsort((cb, d2), axis=-1)
        sq[sl] = np.take_along_axis(d2, order, axis=1)
        ind[sl] = np.take_along_axis(cb, order, axis=1)

    slices = [slice(s, min(s + _RERANK_CHUNK, m)) for s in range(0, m, _RERANK_CHUNK)]
    if n_threads_ > 1 and len(slices) > 1:
        # NumPy's element-wise passes release the GIL: blocks run side by side
        with ThreadPoolExecutor(n_threads_) as pool:
            list(pool.map(block, slices))
    else:
        for sl in slices:
            block(sl)
    return sq, ind


def _drop_self(
    values: np.ndarray, ind: np.ndarray, k: int, rows: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Remove each row's own index (``rows[i]``, default ``i``; the last column where it is
    absent) from ``ind`` and ``values`` and keep ``k`` columns."""
    n = ind.shape[0]
    own = np.arange(n) if rows is None else np.asarray(rows)
    is_self = ind == own[:, None]
    # self missing (more exact duplicates of the point than candidates): drop the last one
    missing = ~is_self.any(axis=1)
    is_self[missing, -1] = True
    first = np.argmax(is_self, axis=1)
    # columns 0..k-1 of the row without column `first`
    cols = np.arange(k)[None, :]
    cols = cols + (cols >= first[:, None])
    values = np.take_along_axis(values, cols, axis=1)
    ind = np.take_along_axis(ind, cols, axis=1)
    if np.any(ind < 0):  # pragma: no cover - candidates are always at least k + 1
        raise RuntimeError("the neighbour search returned fewer candidates than asked for.")
    return values, ind


def _seed(rng) -> int:
    return int(rng.randint(2**31 - 1))


# --------------------------------------------------------------------------- exact
def _exact(X: np.ndarray, k: int):
    faiss = _import_faiss()
    n, d = X.shape
    Xf, _, scale = _to_float32(X)
    with _faiss_threads(faiss, float(n) * n * d) as t:
        found = _exact_knn(faiss, X, X, Xf, Xf, scale, k + 1, t, current_stage())
        sq, ind = _drop_self(*found, k)
    return np.sqrt(sq), ind, SearchInfo("exact", 1.0, t)


# --------------------------------------------------------------------------- approximate
def n_cells(n: int) -> int:
    """Number of IVF cells for ``n`` points: about ``sqrt(n)``, at most 4096."""
    return int(min(4096, max(1, round(math.sqrt(n)))))


def _approximate(X: np.ndarray, k: int, random_state, target_recall: float):
    from sklearn.utils import check_random_state

    faiss = _import_faiss()
    rng = check_random_state(random_state)
    n, d = X.shape
    c = min(n, k + 1 + MARGIN)
    nlist = n_cells(n)
    Xf, _, scale = _to_float32(X)
    with _faiss_threads(faiss, float(n) * nlist * d * 20) as t:
        centroids = _train_cells(faiss, Xf, nlist, rng)
        nlist = centroids.shape[0]
        cell = faiss.knn(Xf, centroids, 1)[1].ravel()
        sizes = np.bincount(cell, minlength=nlist)
        # probe order of every cell: the centroids by distance from its own, ties by index
        D = _sq_dists(centroids.astype(np.float64))
        order = np.argsort(D, axis=1, kind="stable").astype(np.int32)
        # calibration: exact neighbours of a sample, and for each the rank of its cell in
        # the probe order of the query's cell; p cells hold those of rank < p
        m = min(CALIBRATION_SAMPLE, n)
        sample = np.sort(rng.choice(n, size=m, replace=False))
        found = _exact_knn(faiss, X[sample], X, Xf[sample], Xf, scale, k + 1, t)
        _, truth = _drop_self(*found, k, rows=sample)
        rank = np.empty((nlist, nlist), dtype=np.int32)
        rank[np.arange(nlist)[:, None], order] = np.arange(nlist, dtype=np.int32)[None, :]
        ranks = np.sort(rank[cell[sample][:, None], cell[truth]].ravel())
        # smallest p with recall(p) = mean(rank < p) >= target_recall
        need = math.ceil(target_recall * ranks.size - 1e-9)
        p = int(ranks[need - 1]) + 1 if need > 0 else 1
        recall = float(np.mean(ranks < p))
        union = np.cumsum(sizes[order], axis=1)
        # every cell searches at least c candidates
        p_cell = np.maximum(p, 1 + np.argmax(union >= c, axis=1))
        per_query = union[np.arange(nlist), p_cell - 1]
        cost = float(np.dot(sizes, per_query))
        if cost > EXACT_COST_FRACTION * float(n) * n:
            dist, ind, info = _exact(X, k)
            return dist, ind, info
        cand = _search_cells(faiss, Xf, cell, sizes, order, p_cell, c, current_stage())
        sq, ind = _drop_self(*rerank(X, X, cand, t), k)
    info = SearchInfo(
        "approximate",
        recall,
        t,
        n_lists=nlist,
        n_probe=p,
        candidates=cost / n / n,
        sample_size=m,
    )
    return np.sqrt(sq), ind, info


def _sq_dists(C: np.ndarray) -> np.ndarray:
    sq = np.einsum("ij,ij->i", C, C)
    D = sq[:, None] + sq[None, :] - 2.0 * (C @ C.T)
    np.fill_diagonal(D, -1.0)  # a cell is searched first, even among equal centroids
    return D


def _train_cells(faiss, Xf: np.ndarray, nlist: int, rng) -> np.ndarray:
    """faiss k-means centroids (10 iterations) from at most 32 points per cell."""
    n = Xf.shape[0]
    m = min(n, 32 * nlist)
    sample = Xf[np.sort(rng.choice(n, size=m, replace=False))] if m < n else Xf
    km = faiss.Kmeans(
        Xf.shape[1],
        nlist,
        niter=10,
        seed=_seed(rng),
        max_points_per_centroid=m,
        min_points_per_centroid=1,
        verbose=False,
    )
    km.train(sample)
    return np.ascontiguousarray(km.centroids, dtype=np.float32)


def _search_cells(faiss, Xf, cell, sizes, order, p_cell, c, progress) -> np.ndarray:
    """For every cell: its points against the points of its ``p_cell`` nearest cells."""
    n = Xf.shape[0]
    perm = np.argsort(cell, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)])
    Xs = Xf[perm]
    cand = np.empty((n, c), dtype=np.int64)
    for j in np.flatnonzero(sizes):
        probe = order[j, : p_cell[j]]
        probe = probe[sizes[probe] > 0]
        rows = np.concatenate([np.arange(starts[i], starts[i + 1]) for i in probe])
        own = slice(starts[j], starts[j + 1])
        found = faiss.knn(Xs[own], Xs[rows], c)[1]
        cand[perm[own]] = perm[rows[found]]
        progress.update(int(sizes[j]))
    return cand


# --------------------------------------------------------------------------- other libraries
def _nndescent(X: np.ndarray, k: int, random_state):
    NNDescent = import_extra("pynndescent", "pynndescent", "method='nndescent'").NNDescent
    from sklearn.utils import check_random_state

    seed = None if random_state is None else _seed(check_random_state(random_state))
    # PyNNDescent is reproducible only on one thread
    jobs = 1 if seed is not None else n_threads()
    index = NNDescent(
        np.ascontiguousarray(X, dtype=np.float32),
        n_neighbors=k + 1,
        random_state=seed,
        n_jobs=jobs,
        low_memory=True,
        compressed=True,
    )
    cand, _ = index.neighbor_graph
    sq, ind = _drop_self(*rerank(X, X, cand.astype(np.int64)), k)
    return np.sqrt(sq), ind, SearchInfo("nndescent", None, jobs)


def _sklearn(X: np.ndarray, k: int):
    from sklearn.neighbors import NearestNeighbors

    with limit_threads() as t:
        nn = NearestNeighbors(n_neighbors=k + 1, n_jobs=t).fit(X)
        dist, ind = nn.kneighbors(X)
    dist, ind = _drop_self(dist, ind, k)
    return dist, ind, SearchInfo("sklearn", 1.0, t)
