"""Dask backend of the landmark methods (SCACS, LSC-R): every O(n) step block by block.

Dask is optional: this module is imported only when a dask array reaches
:func:`spectralink.landmarks.build_landmark_graph` or an estimator gets
``backend="dask"``. The per-block kernels are the same functions the in-core code
runs over its own chunks, so a dask run and an in-core run with the same seed give the
same result up to floating-point summation order:

* landmark assignment: one task per row block returns the block's ``r`` nearest
  landmarks and squared distances (kept on the cluster, persisted) and two scalars,
  its sums of distances and squared distances to all landmarks (the bandwidth rules);
* p x p reductions: landmark degrees ``Z 1`` and ``Z Z^T`` are summed from one p x p
  partial per block; only p x p arrays travel to the client;
* the final embedding ``Z_hat^T V`` (n x m) is a ``map_blocks`` over the code.

With a ``dask.distributed.Client`` active, all of this runs on its workers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils import check_random_state

from ._landmark_blocks import (
    DEFAULT_CHUNK,
    degree_block,
    embed_block,
    gaussian_code_weights,
    gram_block,
    nearest_block,
    sigma_from_rule,
)
from .exceptions import import_extra
from .metrics import PartitionCounts
from .spectral import cluster_means, nearest_center, normalize_rows

if TYPE_CHECKING:
    import dask.array as da

    from .landmarks import LandmarkGraph

__all__ = [
    "KMEANS_CLIENT_ROWS",
    "as_dask_array",
    "dask_embed",
    "dask_encode",
    "dask_kmeans",
    "dask_landmark_code",
    "dask_partition_counts",
    "is_dask_array",
    "normalized",
]


def _import_dask():
    what = "backend='dask'"
    return import_extra("dask", "dask", what), import_extra("dask.array", "dask", what)


def is_dask_array(X: ArrayLike) -> bool:
    return type(X).__module__.startswith("dask.")


def as_dask_array(X: ArrayLike, chunk_size: int = DEFAULT_CHUNK) -> da.Array:
    """``X`` as a dask array chunked by rows only (whole rows per block)."""
    _, da = _import_dask()
    if not is_dask_array(X):
        X = da.from_array(np.asarray(X), chunks=(chunk_size, -1))
    elif X.ndim == 2 and len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    if X.ndim != 2:
        raise ValueError(f"X must be 2-d (n_samples, n_features), got {X.ndim}-d.")
    if any(np.isnan(c) for c in X.chunks[0]):
        raise ValueError("X has unknown chunk sizes; call X.compute_chunk_sizes() first.")
    if not np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.complexfloating):
        raise ValueError(f"X must hold real numbers, got dtype {X.dtype}.")
    if not np.issubdtype(X.dtype, np.floating):
        X = X.astype(np.float64)
    return X


def _nearest_blocks(X, U: np.ndarray, r: int):
    """One delayed task per row block -> (ind, sqdist) dask arrays and per-block sums."""
    dask, da = _import_dask()
    X = as_dask_array(X)
    blocks = X.to_delayed().ravel()
    parts = [dask.delayed(nearest_block, nout=4)(b, U, r) for b in blocks]
    rows = X.chunks[0]
    ind = da.concatenate(
        [da.from_delayed(t[0], (m, r), dtype=np.int64) for t, m in zip(parts, rows, strict=True)]
    )
    sq = da.concatenate(
        [da.from_delayed(t[1], (m, r), dtype=np.float64) for t, m in zip(parts, rows, strict=True)]
    )
    s1 = dask.delayed(sum)([t[2] for t in parts])
    s2 = dask.delayed(sum)([t[3] for t in parts])
    return ind, sq, s1, s2


def tree_sum(parts: list, fan_in: int = 8):
    """The sum of delayed ``parts`` as a tree of tasks adding ``fan_in`` at a time: no task
    holds more than ``fan_in`` partial results (a p x p partial per block, 2 MB for 500
    landmarks, would otherwise all meet in one task: 3 GB for 1,500 blocks)."""
    import dask

    while len(parts) > 1:
        parts = [dask.delayed(sum)(parts[i : i + fan_in]) for i in range(0, len(parts), fan_in)]
    return parts[0]


def _as_int32(a: np.ndarray) -> np.ndarray:
    return a.astype(np.int32)


def dask_landmark_code(
    X: ArrayLike, U: np.ndarray, r: int, sigma: float | None, sigma_rule: str
) -> tuple:
    """Nearest landmarks, eq. 3 weights, degrees and ``Z Z^T`` of a dask ``X``.

    Returns ``(ind, w, degrees, ZZt, sigma)``: ``ind`` (int32) is persisted in the
    workers' memory with the squared distances ``w`` is computed from, the rest NumPy.
    """
    dask, da = _import_dask()
    n, p = X.shape[0], U.shape[0]
    ind, sq, s1, s2 = _nearest_blocks(X, U, r)
    # what stays in the workers' memory between the passes: the landmark indices (int32:
    # 12 bytes a row for r = 3) and their squared distances (float64, as in core); the
    # weights are recomputed from them at each use (an exp of n x r), never stored
    ind = ind.map_blocks(_as_int32, dtype=np.int32)
    ind, sq, s1, s2 = dask.persist(ind, sq, s1, s2)
    if sigma is None:
        tot1, tot2 = dask.compute(s1, s2)
        sigma = sigma_from_rule(tot1 / (n * p), tot2 / (n * p), sigma_rule)
    w = sq.map_blocks(gaussian_code_weights, sigma, dtype=np.float64)
    ib, wb = ind.to_delayed().ravel(), w.to_delayed().ravel()
    deg = [dask.delayed(degree_block)(i, x, p) for i, x in zip(ib, wb, strict=True)]
    gram = [dask.delayed(gram_block)(i, x, p) for i, x in zip(ib, wb, strict=True)]
    d, G = dask.compute(tree_sum(deg), tree_sum(gram))
    return ind, w, np.asarray(d, dtype=np.float64), np.asarray(G), float(sigma)


def dask_encode(X: ArrayLike, graph: LandmarkGraph, *, chunk_size: int = DEFAULT_CHUNK) -> tuple:
    """Code of new points (dask arrays ``ind``, ``w``) against a fitted landmark graph."""
    ind, sq, _, _ = _nearest_blocks(X, graph.landmarks, graph.nearest.shape[1])
    return ind, sq.map_blocks(gaussian_code_weights, graph.sigma, dtype=np.float64)


def dask_embed(ind: ArrayLike, w: ArrayLike, M: np.ndarray) -> da.Array:
    """``Z^T M`` as a dask array (n x m), block by block."""
    M = np.asarray(M, dtype=np.float64)
    return ind.map_blocks(
        embed_block, w, M, chunks=(ind.chunks[0], (M.shape[1],)), dtype=np.float64
    )


def take_rows(a: ArrayLike, idx: np.ndarray) -> np.ndarray:
    """Rows ``idx`` of a dask array, gathered to the client (a few labelled points)."""
    return np.asarray(a[np.asarray(idx)].compute())


# ------------------------------------------------------------------ the assignment
#: At most this many rows of the embedding are clustered on the client; beyond, k-means
#: starts from a uniform sample of this many rows and is refined over every row.
KMEANS_CLIENT_ROWS = 100_000


def _lloyd_block(F: np.ndarray, centers: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """One Lloyd step's sums over one block: per-centre row sums and counts, and the block's
    inertia (squared distances to the nearest centre)."""
    k = centers.shape[0]
    d2 = (F * F).sum(axis=1)[:, None] - 2.0 * F @ centers.T + (centers * centers).sum(axis=1)
    labels = np.argmin(d2, axis=1)
    sums = np.zeros_like(centers)
    np.add.at(sums, labels, F)
    inertia = float(np.maximum(d2[np.arange(len(F)), labels], 0.0).sum())
    return sums, np.bincount(labels, minlength=k), inertia


def dask_kmeans(
    F,
    n_clusters: int,
    kmeans: Callable[[np.ndarray], np.ndarray],
    *,
    random_state=None,
    max_iter: int = 100,
    tol: float = 1e-6,
) -> tuple:
    """k-means on the rows of a row-normalised dask embedding ``F``; returns ``(labels, centres)``
    with ``labels`` a persisted dask array.

    Up to :data:`KMEANS_CLIENT_ROWS` rows, the rows are gathered and ``kmeans`` (the in-core
    k-means, labels of the rows it gets) runs on them: the in-core result. Beyond, it runs
    on a uniform sample of that many rows, and Lloyd passes over every row on the workers
    (one k x m reduction each) refine its centres until they move less than ``tol`` (relative
    inertia change) or ``max_iter`` passes.
    """
    dask, _ = _import_dask()
    n = F.shape[0]
    if n <= KMEANS_CLIENT_ROWS:
        rows = np.asarray(F.compute())
        labels = kmeans(rows)
        centers = cluster_means(rows, labels, n_clusters)
    else:
        # a Generator draws k of n without an n-sized permutation
        rng = np.random.default_rng(check_random_state(random_state).randint(2**31))
        pick = np.sort(rng.choice(n, size=KMEANS_CLIENT_ROWS, replace=False))
        sample = take_rows(F, pick)
        centers = cluster_means(sample, kmeans(sample), n_clusters)
        blocks = F.to_delayed().ravel()
        previous = np.inf
        for _ in range(max_iter):
            parts = dask.compute(*[dask.delayed(_lloyd_block)(b, centers) for b in blocks])
            sums = sum(p[0] for p in parts)
            counts = sum(p[1] for p in parts)
            inertia = sum(p[2] for p in parts)
            filled = counts > 0  # an emptied centre keeps its place
            centers = centers.copy()
            centers[filled] = sums[filled] / counts[filled, None]
            if previous - inertia <= tol * max(inertia, 1e-300):
                break
            previous = inertia
    labels = F.map_blocks(_nearest_int32, centers, drop_axis=1, dtype=np.int32)
    return labels.persist(), centers


def _nearest_int32(F: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """:func:`~spectralink.spectral.nearest_center` as int32 (4 bytes a row kept)."""
    return nearest_center(F, centers).astype(np.int32)


def normalized(F):
    """Rows of the dask array ``F`` scaled to unit norm (all-zero rows stay zero)."""
    return F.map_blocks(normalize_rows, dtype=np.float64)


def dask_partition_counts(labels, constraints) -> PartitionCounts:
    """:class:`~spectralink.metrics.PartitionCounts` of a dask labelling: the cluster sizes
    and the constrained points' labels are all that reaches the client."""
    dask, da = _import_dask()
    points = constraints.constrained_points
    names, sizes = da.unique(labels, return_counts=True)
    names, sizes = dask.compute(names, sizes)
    at = take_rows(labels, points) if len(points) else np.zeros(0, np.int64)
    return PartitionCounts(np.asarray(names), np.asarray(sizes), points, at)
