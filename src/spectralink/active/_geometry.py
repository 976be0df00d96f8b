"""What the pair strategies read of one data set, computed on first use and kept between
batches: the features (or the spectral embedding of a precomputed graph), squared
distances, the k-NN graph and its row-normalised spectral embedding, NCut's partition of
that graph, a random forest's leaves, and the selector's random stream."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ..graph import knn_affinity
from ..spectral import kmeans_rows, laplacian_eigenvectors, normalize_rows

__all__ = ["SelectionGeometry"]


class SelectionGeometry:
    """One data set's geometry for :mod:`spectralink.active._strategies`.

    Parameters
    ----------
    X : ndarray of shape (n, d) or None
        Features; ``None`` when ``W`` is given.
    W : sparse matrix of shape (n, n) or None
        A precomputed affinity; built from ``X`` (k-NN, ``n_neighbors``) on first use
        otherwise.
    n_clusters : int
        The k the strategies look for.
    n_neighbors, n_trees, prior, random_state
        As for :class:`~spectralink.active.PairSelector`.
    """

    def __init__(self, X, W, n_clusters: int, *, n_neighbors, n_trees, prior, random_state):
        self.X, self.W = X, W
        self.n_samples = (X if X is not None else W).shape[0]
        self.n_neighbors, self.n_trees, self.prior = n_neighbors, n_trees, prior
        self.random_state = random_state
        self.rng = check_random_state(random_state)
        self.forest_key: int | None = None
        self.forest_leaves_: np.ndarray | None = None
        self.set_n_clusters(n_clusters)

    def set_n_clusters(self, k: int) -> None:
        """Look for ``k`` groups: what depends on k is recomputed on next use."""
        self.n_clusters = k
        self._F = self._sq = self._mind = self._own_labels = None
        self._mind_seen = np.zeros(self.n_samples, dtype=bool)

    def seed(self) -> int:
        """A seed derived from ``random_state`` (the same at every call)."""
        return int(check_random_state(self.random_state).randint(2**31 - 1))

    def graph(self) -> sp.csr_matrix:
        if self.W is None:
            n_nb = min(self.n_neighbors, self.n_samples - 1)
            self.W = knn_affinity(self.X, n_neighbors=n_nb, random_state=self.seed())
        return self.W

    @property
    def embedding(self) -> np.ndarray:
        """Row-normalised spectral embedding of :meth:`graph`, ``n_clusters`` columns."""
        if self._F is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a disconnected graph is still usable here
                _, V = laplacian_eigenvectors(
                    self.graph(), self.n_clusters, random_state=self.seed()
                )
            self._F = normalize_rows(V)
        return self._F

    def features(self) -> np.ndarray:
        """Features for the feature-space strategies (the embedding if precomputed)."""
        return self.X if self.X is not None else self.embedding

    def squared_norms(self) -> np.ndarray:
        if self._sq is None:
            Z = self.features()
            self._sq = np.einsum("ij,ij->i", Z, Z)
        return self._sq

    def squared_distances_to(self, p: int) -> np.ndarray:
        Z, sq = self.features(), self.squared_norms()
        return np.maximum(sq + sq[p] - 2.0 * (Z @ Z[p]), 0.0)

    def min_squared_distance(self, constrained: np.ndarray) -> np.ndarray:
        """Squared distance of every point to the nearest constrained point (incremental)."""
        new = np.flatnonzero(constrained & ~self._mind_seen)
        if self._mind is None or np.any(self._mind_seen & ~constrained):
            # the constrained set shrank (a different constraint set): start over
            self._mind = np.full(self.n_samples, np.inf)
            self._mind_seen = np.zeros(self.n_samples, dtype=bool)
            new = np.flatnonzero(constrained)
        Z, sq = self.features(), self.squared_norms()
        for start in range(0, len(new), 256):  # blocks of points: one BLAS product each
            b = new[start : start + 256]
            D = sq[:, None] + sq[b][None, :] - 2.0 * (Z @ Z[b].T)
            np.minimum(self._mind, np.maximum(D.min(axis=1), 0.0), out=self._mind)
        self._mind_seen |= constrained
        return self._mind

    def fallback_labels(self) -> np.ndarray:
        """NCut's partition of :meth:`graph` when no estimator gives one."""
        if self._own_labels is None:
            self._own_labels = kmeans_rows(
                self.embedding, self.n_clusters, random_state=self.seed()
            )
        return self._own_labels

    def forest_leaves(self, labels: np.ndarray) -> np.ndarray:
        """Leaves of every point in a random forest learning ``labels`` (kept while the
        labels are the same)."""
        from sklearn.ensemble import RandomForestClassifier

        key = hash(labels.tobytes())
        if self.forest_key != key:
            rf = RandomForestClassifier(n_estimators=self.n_trees, random_state=self.seed())
            rf.fit(self.features(), labels)
            self.forest_leaves_ = rf.apply(self.features())
            self.forest_key = key
        return self.forest_leaves_
