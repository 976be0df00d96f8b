"""A method from another package: COP-KMeans on the spectral embedding of the k-NN graph.

The example of "Writing a method" in the documentation, installed by the tests as a package
beside spectralink (its distribution's ``spectralink.methods`` entry point names it
``spectral_copkmeans``). It uses only the public modules: the graph base class, the
library's spectral steps, and COP-KMeans.
"""

from __future__ import annotations

from spectralink import COPKMeans
from spectralink.methods import (
    COMMON_CONSTRAINTS,
    GUARD_CONSTRAINT,
    ConstrainedClusteringMixin,
    with_guard_doc,
)
from spectralink.spectral import laplacian_eigenvectors, normalize_rows


class SpectralCOPKMeans(ConstrainedClusteringMixin):
    """COP-KMeans on the row-normalised first ``n_clusters`` eigenvectors of the graph.

    Parameters
    ----------
    n_clusters : int, default=2
    n_neighbors : int, default=20
    sigma : float or None, default=None
    n_init : int, default=10
    random_state : int, RandomState or None, default=None
    <guard>
    """

    _parameter_constraints = {**COMMON_CONSTRAINTS, "guard": GUARD_CONSTRAINT}

    def __init__(
        self, n_clusters=2, *, n_neighbors=20, sigma=None, n_init=10, random_state=None,
        guard=None,
    ):  # fmt: skip
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.n_init = n_init
        self.random_state = random_state
        self.guard = guard

    def _fit(self, X, constraints):
        W = self._affinity(X)  # the graph, recorded for predict's weighted vote
        _, V = laplacian_eigenvectors(W, self.n_clusters, random_state=self.random_state)
        self.embedding_ = normalize_rows(V)
        km = COPKMeans(self.n_clusters, n_init=self.n_init, random_state=self.random_state)
        self.labels_ = km.fit(self.embedding_, constraints=constraints).labels_


SpectralCOPKMeans.__doc__ = with_guard_doc(SpectralCOPKMeans.__doc__, "NCut at its defaults")
