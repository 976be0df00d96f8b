"""Where the label page draws the points: a 2-d map of the data.

The map is the first two principal axes of the spectral embedding, where the graph's
clusters sit apart. On a graph of several connected components the embedding's vectors are
constant on each component, so a component would collapse onto one dot: each group of
points the embedding puts on one spot is spread by the first two principal axes of its own
(standardised) features, within a small disc around that spot.
"""

from __future__ import annotations

import numpy as np
from sklearn.decomposition import PCA

__all__ = ["SPREAD_RADIUS", "map_layout"]

#: Radius, as a share of the map's side, of the disc a collapsed group is spread over.
SPREAD_RADIUS = 0.06
#: Positions closer than this (share of the map's side) are one spot.
SAME_SPOT = 1e-3


def map_layout(F: np.ndarray, X: np.ndarray, random_state: int = 0) -> np.ndarray:
    """``(n, 2)`` positions in [0, 1]: the embedding ``F``'s first two principal axes, with
    every group of points on one spot spread by its features ``X`` (see the module)."""
    xy = _unit(PCA(2, random_state=random_state).fit_transform(np.asarray(F, dtype=float)))
    X = np.asarray(X, dtype=float)
    spots = np.round(xy / SAME_SPOT).astype(np.int64)
    _, group, counts = np.unique(spots, axis=0, return_inverse=True, return_counts=True)
    group = np.ravel(group)
    for g in np.flatnonzero(counts > 2):
        members = np.flatnonzero(group == g)
        xy[members] += SPREAD_RADIUS * _spread(X[members], random_state)
    return _unit(xy)


def _spread(X: np.ndarray, random_state: int) -> np.ndarray:
    """The group's first two principal axes of its standardised features, scaled into the
    unit disc (zeros when the features do not vary)."""
    scale = X.std(axis=0)
    Z = (X - X.mean(axis=0)) / np.where(scale > 0, scale, 1.0)
    n_axes = min(2, Z.shape[1], Z.shape[0] - 1)
    if n_axes < 1 or not np.any(scale > 0):
        return np.zeros((len(X), 2))
    P = PCA(n_axes, random_state=random_state).fit_transform(Z)
    P = np.pad(P, ((0, 0), (0, 2 - n_axes)))
    radius = np.sqrt((P**2).sum(axis=1)).max()
    return P / radius if radius > 0 else P


def _unit(xy: np.ndarray) -> np.ndarray:
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    return (xy - lo) / np.where(hi > lo, hi - lo, 1.0)
