"""Choosing on a subsample: the points a search on large data runs on, and the scale r
of the whole data that a bandwidth chosen there is a multiple of.

A search fits every candidate on every fold; on a large data set that is many fits of
costly methods. Which method and which relative bandwidth suit the data can be read on a
sample of it that keeps every point the constraints name (so that no pair is lost) and
fills up with points drawn uniformly from the rest (so that the sample's clusters keep the
data's proportions, in expectation). The choice is then fitted once on all the points.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils import check_random_state

from .. import graph as _graph
from ..constraints import Constraints
from ..utils import check_features

__all__ = ["SCALE_QUERIES", "sample_scale", "search_sample"]

#: Points whose distance to their k-th neighbour estimates r in :func:`sample_scale`; the
#: mean of that many distances was within 3 % of r on the data sets measured
#: (docs/results/model_selection/auto_cost.md).
SCALE_QUERIES = 2000


def search_sample(
    n_samples: int,
    constraints: Constraints,
    size: int,
    random_state: int | np.random.RandomState | None = None,
) -> np.ndarray | None:
    """The points a search runs on when the data has more than ``size`` of them.

    Every point named by a constraint, and points drawn uniformly without replacement from
    the others until the sample holds ``size`` points (none when the constrained points
    alone are that many).

    Parameters
    ----------
    n_samples : int
        Number of points of the data.
    constraints : Constraints
        The constraints over them.
    size : int
        Points of the sample (at least 2).
    random_state : int, RandomState or None, default=None
        Seeds the draw.

    Returns
    -------
    ndarray of int or None
        Sorted indices of the sample; ``None`` when ``n_samples <= size`` (no sampling).
    """
    if int(size) < 2:
        raise ValueError(f"size must be at least 2, got {size!r}.")
    if n_samples <= size:
        return None
    named = constraints.constrained_points
    others = np.setdiff1d(np.arange(n_samples), named, assume_unique=True)
    n_fill = max(int(size) - len(named), 0)
    rng = check_random_state(random_state)
    drawn = rng.choice(others, size=min(n_fill, len(others)), replace=False)
    return np.sort(np.concatenate([named, drawn])).astype(np.int64)


def sample_scale(
    X: ArrayLike,
    n_neighbors: int,
    *,
    n_queries: int = SCALE_QUERIES,
    random_state: int | np.random.RandomState | None = None,
) -> float:
    """r of ``X``, the mean distance to the ``n_neighbors``-th nearest neighbour
    (:func:`spectralink.graph.sigma_from_distances`), from ``n_queries`` random points.

    Exact (every point a query) when ``X`` has at most ``n_queries`` rows; otherwise the
    mean over a uniform sample of the points, each searched exactly against all of ``X``:
    ``n_queries / n`` of the cost of the full neighbour search.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_neighbors : int
        Clipped to ``n_samples - 1``, as the estimators do.
    n_queries : int, default=SCALE_QUERIES
    random_state : int, RandomState or None, default=None
        Seeds the choice of the query points.

    Returns
    -------
    float
    """
    X = check_features(X)
    n = X.shape[0]
    k = min(int(n_neighbors), n - 1)
    if n <= n_queries:
        queries = np.arange(n)
    else:
        queries = np.sort(check_random_state(random_state).choice(n, n_queries, replace=False))
    # the query point finds itself (or a duplicate) at distance 0: column k is its k-th
    # neighbour among the others, as in the fit's own search
    dist, _ = _graph.kneighbors_query(X, X[queries], k + 1, method="exact")
    return _graph.sigma_from_distances(dist[:, k : k + 1])
