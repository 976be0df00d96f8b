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

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ._landmark_blocks import (
    DEFAULT_CHUNK,
    degree_block,
    embed_block,
    gaussian_code_weights,
    gram_block,
    nearest_block,
    sigma_from_rule,
)
from .exceptions import MissingExtraError

if TYPE_CHECKING:
    import dask.array as da

    from .landmarks import LandmarkGraph

__all__ = ["as_dask_array", "dask_embed", "dask_encode", "dask_landmark_code", "is_dask_array"]


def _import_dask():
    try:
        import dask
        import dask.array as da
    except ImportError:  # pragma: no cover - exercised only without dask
        raise MissingExtraError(
            "backend='dask' needs dask: pip install 'spectralink[dask]' (dask[array], distributed)."
        ) from None
    return dask, da


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


def dask_landmark_code(
    X: ArrayLike, U: np.ndarray, r: int, sigma: float | None, sigma_rule: str
) -> tuple:
    """Nearest landmarks, eq. 3 weights, degrees and ``Z Z^T`` of a dask ``X``.

    Returns ``(ind, w, degrees, ZZt, sigma)``: ``ind`` and ``w`` are dask arrays
    persisted in cluster memory, the rest NumPy.
    """
    dask, da = _import_dask()
    n, p = X.shape[0], U.shape[0]
    ind, sq, s1, s2 = _nearest_blocks(X, U, r)
    ind, sq, s1, s2 = dask.persist(ind, sq, s1, s2)
    if sigma is None:
        tot1, tot2 = dask.compute(s1, s2)
        sigma = sigma_from_rule(tot1 / (n * p), tot2 / (n * p), sigma_rule)
    w = sq.map_blocks(gaussian_code_weights, sigma, dtype=np.float64)
    ind, w = dask.persist(ind, w)
    ib, wb = ind.to_delayed().ravel(), w.to_delayed().ravel()
    deg = [dask.delayed(degree_block)(i, x, p) for i, x in zip(ib, wb, strict=True)]
    gram = [dask.delayed(gram_block)(i, x, p) for i, x in zip(ib, wb, strict=True)]
    d, G = dask.compute(dask.delayed(sum)(deg), dask.delayed(sum)(gram))
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
