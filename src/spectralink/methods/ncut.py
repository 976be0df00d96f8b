"""NCut: normalized spectral clustering, the unconstrained reference.

Ng, Jordan & Weiss (2002) form of the normalized cut relaxation (Shi & Malik 2000):
the k smallest eigenvectors of ``I - D^{-1/2} W D^{-1/2}``, rows scaled to unit length,
k-means on the rows. Constraints are accepted and ignored, so NCut runs in the same
comparisons as the constrained methods.
"""

from __future__ import annotations

import numpy as np

from ..spectral import cluster_means, njw_clustering, normalize_rows
from ..utils import StrOptions
from ._base import COMMON_CONSTRAINTS
from ._graph import ConstrainedClusteringMixin

__all__ = ["NCut"]


class NCut(ConstrainedClusteringMixin):
    """Normalized spectral clustering (NJW), ignoring any constraints.

    Parameters
    ----------
    n_clusters : int
        Number of clusters k.
    affinity : {"knn", "precomputed"}, default="knn"
        ``"knn"`` builds the symmetric k-NN Gaussian graph from features;
        ``"precomputed"`` takes ``X`` as a square affinity matrix.
    n_neighbors : int, default=20
        Neighbours of the k-NN graph.
    sigma : float, default=None
        Gaussian bandwidth; ``None`` is the mean distance to the k-th neighbour.
    n_init : int, default=10
        k-means restarts.
    random_state : int, RandomState or None
        Seeds the eigensolver start and k-means.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    affinity_matrix_ : sparse matrix of shape (n_samples, n_samples)
    embedding_ : ndarray of shape (n_samples, n_clusters)
        The k smallest Laplacian eigenvectors (before row normalisation).
    eigenvalues_ : ndarray of shape (n_clusters,)

    Notes
    -----
    ``predict`` maps new points into the embedding by the Nyström extension (each new
    point linked to its ``n_neighbors`` nearest training points with the graph's Gaussian
    weights, :func:`spectralink.spectral.nystrom_extension`), normalises the rows and
    assigns the nearest k-means centre (the mean normalised row of each cluster). With
    ``affinity="knn"`` the model keeps a reference to the training features for the
    neighbour search (n x n_features floats, also in its pickle); with
    ``affinity="precomputed"`` ``predict`` takes the new points' affinities to the
    training points, shape (n_new, n_train).

    References
    ----------
    Shi, J., & Malik, J. (2000). Normalized cuts and image segmentation. IEEE TPAMI 22(8).
    Ng, A., Jordan, M., & Weiss, Y. (2002). On spectral clustering: analysis and an algorithm.
    NIPS.
    """

    _uses_constraints = False
    _parameter_constraints = {
        **COMMON_CONSTRAINTS,
        "affinity": [StrOptions({"knn", "precomputed"})],
    }

    def __init__(
        self,
        n_clusters: int = 2,
        *,
        affinity: str = "knn",
        n_neighbors: int = 20,
        sigma: float | None = None,
        n_init: int = 10,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.n_init = n_init
        self.random_state = random_state

    def _fit(self, X, constraints):
        W = self._affinity(X)
        vals, F, labels = njw_clustering(
            W, self.n_clusters, n_init=self.n_init, random_state=self.random_state
        )
        self.affinity_matrix_ = W
        self.eigenvalues_ = vals
        self.embedding_ = F
        self.labels_ = labels
        self._centers_ = cluster_means(normalize_rows(F), labels, self.n_clusters)

    def _embed_new(self, C):
        F = self._njw_embed_new(C, self.embedding_, self.eigenvalues_)
        return None if F is None else normalize_rows(F)
