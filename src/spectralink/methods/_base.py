"""The estimator contract shared by every method of the library.

``__init__`` only stores parameters (scikit-learn convention). ``fit(X, constraints=...)``
validates the parameters (``_parameter_constraints``, scikit-learn's mechanism), ``X``
and the constraints, then calls the subclass's ``_fit``, which delegates to plain
functions and sets ``labels_``. ``affinity="precomputed"`` makes ``X`` a square affinity
matrix (dense or sparse) instead of features.

``predict(X_new)`` extends a fitted model to new points through its training graph:
each new point is linked to its nearest training points with the fitted graph's weights
(:meth:`ConstrainedClusteringMixin._new_point_affinity`), then either mapped into the
learnt embedding (a method's ``_embed_new`` hook, e.g. the Nyström extension) and given
the nearest fitted centre, or given the weighted vote of its neighbours' training labels.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn import get_config
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from .. import graph
from ..constraints import Constraints, as_constraints
from ..exceptions import DegeneratePartitionWarning
from ..graph import check_affinity, check_cross_affinity, safe_degrees
from ..metrics import partition_diagnostics
from ..parallel import limit_threads
from ..progress import stage
from ..spectral import nearest_center, nystrom_extension
from ..utils._validation import (
    POSITIVE,
    Int,
    check_features,
    check_n_clusters,
)

__all__ = [
    "ConstrainedClusteringMixin",
    "COMMON_CONSTRAINTS",
    "NYSTROM_MIN_EIGENVALUE",
    "shareable_knn_graph",
    "weighted_vote",
]


#: Smallest eigenvalue ``mu`` of the normalized adjacency that predict extends by Nyström
#: (it divides by ``mu``); below it new points get the weighted vote of their neighbours.
NYSTROM_MIN_EIGENVALUE = 0.05

#: Constraints of the parameters most estimators share.
COMMON_CONSTRAINTS: dict[str, list] = {
    "n_clusters": [Int(2)],
    "n_neighbors": [Int(1)],
    "sigma": [POSITIVE, None],
    "n_init": [Int(1)],
    "random_state": ["random_state"],
}


def weighted_vote(C: sp.spmatrix, labels: np.ndarray, n_clusters: int) -> np.ndarray:
    """For every row of ``C`` (weights to the training points), the label with the largest
    total weight among the training ``labels`` (ties: the smallest label)."""
    n = len(labels)
    onehot = sp.csr_matrix((np.ones(n), (np.arange(n), labels)), shape=(n, n_clusters))
    scores = (sp.csr_matrix(C) @ onehot).toarray()
    return np.argmax(scores, axis=1).astype(np.int64)


class ConstrainedClusteringMixin(ClusterMixin, BaseEstimator):
    """Base class: validation, the ``fit`` / ``fit_predict`` contract and ``predict``.

    Subclasses declare their parameters in ``__init__`` (which only stores them) and
    their types and ranges in ``_parameter_constraints`` (checked at the start of
    ``fit``, scikit-learn's mechanism), and implement ``_fit(X, constraints)`` where ``X``
    is validated features or, with ``affinity="precomputed"``, a validated CSR affinity.
    ``_fit`` must set ``labels_``. ``fit`` then sets ``n_violated_`` and warns
    (:class:`~spectralink.exceptions.DegeneratePartitionWarning`) when the partition is
    degenerate (:func:`~spectralink.metrics.partition_diagnostics`).

    ``predict`` hooks: the graph built by :meth:`_affinity` is recorded (``_fit_X_``,
    ``_graph_spec_``) so that :meth:`_new_point_affinity` can link new points to the
    training points with the same weights; a method with an embedding implements
    ``_embed_new`` (rows comparable with ``_centers_``), otherwise new points get the
    weighted vote of their neighbours' labels.
    """

    _parameter_constraints: dict = {}

    #: whether the method can consume a precomputed affinity instead of features
    _supports_precomputed = True
    #: whether the method uses the constraints (those that do not skip the violation check)
    _uses_constraints = True
    # capabilities shown by `spectralink methods` (spectralink.catalog reads them)
    #: whether the method partitions into k = 2 clusters only
    _two_clusters_only = False
    #: whether fit refuses to run without constraints
    _requires_constraints = False
    #: name of the parameter capping n_samples (its default is the limit), or None
    _max_samples_param: str | None = None
    #: what limits the size of the data, in a few words
    _scale = "sparse k-NN graph and eigenvectors: large n"
    #: whether fit accepts a Dask array
    _supports_dask = False

    def fit(self, X, y=None, constraints=None):
        """Cluster ``X`` under pairwise constraints.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples)
            Features, or an affinity matrix when ``affinity="precomputed"``.
        y : None
            Ignored; present for scikit-learn API consistency. Pass constraints by
            keyword.
        constraints : Constraints or (must_link, cannot_link) pair, default=None
            Pairwise constraints over the rows of ``X``. ``None`` means unconstrained.

        Returns
        -------
        self

        Raises
        ------
        sklearn.utils._param_validation.InvalidParameterError
            (a ``ValueError``) naming the parameter, the expected type or range and the
            value received, when a parameter is invalid.

        Warns
        -----
        DegeneratePartitionWarning
            When the partition has fewer clusters than ``n_clusters``, a cluster of fewer
            than ``max(2, 1 % of n)`` points that no cannot-link asks for, or violates at
            least half as large a share of the constraints as a partition unrelated to them
            would (:func:`spectralink.metrics.partition_diagnostics`).
        """
        if isinstance(y, Constraints) or (
            isinstance(y, tuple) and len(y) == 2 and constraints is None
        ):
            raise TypeError("pass constraints by keyword: fit(X, constraints=...).")
        # scikit-learn's parameter validation, called directly (not through its
        # _fit_context decorator) so that warnings keep pointing at the caller's line
        if not get_config()["skip_parameter_validation"]:
            self._validate_params()
        X = self._validate_X(X)
        n = X.shape[0]
        check_n_clusters(self.n_clusters, n)
        cons = as_constraints(constraints, n)
        # the library's thread count for every BLAS/OpenMP pool; "method" is the time of
        # the steps that are not a shared stage (neighbours, graph, eigenvectors, ...)
        with stage("method") as st, limit_threads():
            st.detail = f"{type(self).__name__}, its own steps"
            self._fit(X, cons)
        self.n_violated_ = int(cons.violated(self.labels_).sum())
        problems = partition_diagnostics(
            self.labels_, cons, self.n_clusters, check_violations=self._uses_constraints
        )
        if problems:
            warnings.warn(
                f"{type(self).__name__} returned a degenerate partition: "
                + "; ".join(problems)
                + ".",
                DegeneratePartitionWarning,
                stacklevel=2,
            )
        return self

    def fit_predict(self, X, y=None, constraints=None):
        """Fit and return ``labels_``."""
        return self.fit(X, y, constraints=constraints).labels_

    def predict(self, X):
        """Cluster labels of new points, through the fitted training graph.

        Each new point is linked to its ``n_neighbors`` nearest training points with the
        fitted graph's weights (same kernel and bandwidth as at fit time; the bandwidth
        is not re-estimated). Methods with a spectral embedding map it into that
        embedding (Nyström extension) and give it the nearest fitted centre; the others
        give it the label with the largest total weight among its neighbours. The class
        docstring says which rule a method uses. New points carry no constraints.

        Parameters
        ----------
        X : array-like of shape (n_new, n_features), or (n_new, n_train)
            New points in the training feature space; with ``affinity="precomputed"``,
            their affinities to the ``n_train`` training points (dense or sparse, finite,
            non-negative), with the same kernel as the training affinity.

        Returns
        -------
        labels : ndarray of shape (n_new,)

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            On a wrong number of features (or of training points), NaN or infinite
            values, or, with a precomputed affinity, a new point with no positive
            affinity to any training point.

        Warns
        -----
        UserWarning
            When a new point is so far from the training data that all its graph weights
            are zero (Gaussian underflow); it gets the label of its nearest training point.
        """
        check_is_fitted(self, "labels_")
        C, nearest = self._new_point_affinity(X)
        isolated = np.asarray(C.sum(axis=1)).ravel() <= 0
        if isolated.any() and nearest is None:
            raise ValueError(
                f"{int(isolated.sum())} new point(s) (rows {np.flatnonzero(isolated)[:5].tolist()}"
                f"{'...' if isolated.sum() > 5 else ''}) have no positive affinity to any "
                "training point; they cannot be placed."
            )
        labels = self._predict_from_affinity(C)
        if isolated.any():
            warnings.warn(
                f"{int(isolated.sum())} new point(s) are too far from the training data for "
                "any graph weight (all underflow to 0); each gets the label of its nearest "
                "training point.",
                UserWarning,
                stacklevel=2,
            )
            labels[isolated] = self.labels_[nearest[isolated]]
        return labels

    # ------------------------------------------------------------ predict hooks
    def _predict_from_affinity(self, C: sp.csr_matrix) -> np.ndarray:
        """Labels from the weights ``C`` (n_new x n_train): embedding or vote."""
        F = self._embed_new(C)
        if F is None:
            return weighted_vote(C, self.labels_, self.n_clusters)
        return nearest_center(F, self._centers_)

    def _embed_new(self, C: sp.csr_matrix) -> np.ndarray | None:
        """New points' rows of the learnt embedding, comparable with ``_centers_``;
        ``None`` (the default) means predict by a weighted vote of the neighbours."""
        return None

    def _njw_embed_new(
        self,
        C: sp.csr_matrix,
        vectors: np.ndarray,
        laplacian_eigenvalues: np.ndarray,
        used: np.ndarray | None = None,
    ) -> np.ndarray | None:
        """Nyström extension of ``vectors`` (eigenvectors of the normalized Laplacian of
        ``affinity_matrix_`` with eigenvalues ``laplacian_eigenvalues``) to new points.

        ``used`` (boolean, per vector) marks the vectors the embedding depends on; the
        others are returned as zero columns. ``None`` (vote) when a used vector's
        eigenvalue ``mu = 1 - lambda`` of the normalized adjacency is below
        :data:`NYSTROM_MIN_EIGENVALUE`: the extension divides by ``mu``.
        """
        mu = 1.0 - np.asarray(laplacian_eigenvalues, dtype=np.float64)
        used = np.ones(len(mu), dtype=bool) if used is None else np.asarray(used, dtype=bool)
        if np.any(mu[used] < NYSTROM_MIN_EIGENVALUE):
            return None
        F = np.zeros((C.shape[0], len(mu)))
        F[:, used] = nystrom_extension(
            C, safe_degrees(self.affinity_matrix_), vectors[:, used], mu[used]
        )
        return F

    def _new_point_affinity(self, X) -> tuple[sp.csr_matrix, np.ndarray | None]:
        """Weights ``C`` (n_new x n_train) of new points to the training points of the fitted
        graph, and each new point's nearest training point (``None`` when precomputed)."""
        spec = getattr(self, "_graph_spec_", None)
        if spec is None:
            raise NotFittedError(
                f"this {type(self).__name__} was not fitted through fit() (no record of its "
                "graph); call fit before predict."
            )
        if spec["kind"] == "precomputed":
            return check_cross_affinity(X, spec["n_fit"]), None
        X = self._check_new_features(X)
        if spec["kind"] == "adaptive_knn":
            return graph.adaptive_knn_cross_affinity(
                self._fit_X_, X, spec["n_neighbors"], spec["scales"],
                random_state=self.random_state,
            )  # fmt: skip
        return graph.knn_cross_affinity(
            self._fit_X_, X, spec["n_neighbors"], spec["sigma"], random_state=self.random_state
        )

    def _check_new_features(self, X) -> np.ndarray:
        X = check_features(X, ensure_min_samples=1)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )
        return X

    # ---------------------------------------------------------------- helpers
    def _validate_X(self, X):
        affinity = getattr(self, "affinity", None)
        if affinity == "precomputed":
            if not self._supports_precomputed:
                raise ValueError(f"{type(self).__name__} does not accept a precomputed affinity.")
            W = check_affinity(X)
            self.n_features_in_ = W.shape[1]
            return W
        if affinity is not None and affinity not in self._feature_affinities():
            raise ValueError(
                f"affinity must be one of {sorted(self._feature_affinities() | {'precomputed'})}"
                f", got {affinity!r}."
            )
        X = check_features(X, accept_sparse=False)
        self.n_features_in_ = X.shape[1]
        return X

    def _feature_affinities(self) -> set:
        return {"knn"}

    def _affinity(self, X) -> sp.csr_matrix:
        """The graph the method clusters: the k-NN Gaussian graph (``"knn"``), the adaptive
        one of COSC (``"adaptive_knn"``, for methods that list it in
        :meth:`_feature_affinities`) or the precomputed one.

        Records what :meth:`predict` needs to link new points to it: ``_graph_spec_``
        (kind, neighbours, bandwidth or per-point scales) and, for features, ``_fit_X_``,
        a reference to the validated training features (no copy when ``X`` was already a
        float array; the model then holds n x n_features floats, also in its pickle).
        """
        if sp.issparse(X) and getattr(self, "affinity", None) == "precomputed":
            self._graph_spec_ = {"kind": "precomputed", "n_fit": X.shape[0]}
            self._fit_X_ = None
            return X
        n_neighbors = min(self.n_neighbors, X.shape[0] - 1)
        # through the module, so that the neighbour search is the one graph.py provides
        dist, ind = graph.kneighbors(X, n_neighbors, random_state=self.random_state)
        self._fit_X_ = X
        with stage("graph") as st:
            if getattr(self, "affinity", None) == "adaptive_knn":
                st.detail = f"adaptive k-NN, k={n_neighbors}"
                scales = graph.adaptive_scales(dist)
                self._graph_spec_ = {
                    "kind": "adaptive_knn", "n_neighbors": n_neighbors, "scales": scales,
                }  # fmt: skip
                return graph.adaptive_knn_graph(dist, ind, scales)
            st.detail = f"k-NN Gaussian, k={n_neighbors}"
            sigma = graph.sigma_from_distances(dist) if self.sigma is None else self.sigma
            self._graph_spec_ = {"kind": "knn", "n_neighbors": n_neighbors, "sigma": float(sigma)}
            return graph.gaussian_knn_graph(dist, ind, sigma)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = getattr(self, "affinity", None) == "precomputed"
        return tags


def shareable_knn_graph(estimator) -> tuple | None:
    """``(n_neighbors, sigma)`` of the k-NN graph ``estimator`` would build, or None.

    Not None only when the estimator builds its graph with the base class's standard
    ``knn_affinity`` (it does not override ``_affinity``) and accepts a precomputed one, so
    that a graph built once can be handed to it as ``affinity="precomputed"``.
    """
    if not isinstance(estimator, ConstrainedClusteringMixin):
        return None
    cls = type(estimator)
    if not getattr(cls, "_supports_precomputed", True):
        return None
    if cls._affinity is not ConstrainedClusteringMixin._affinity:
        return None
    params = estimator.get_params(deep=False)
    if params.get("affinity") != "knn" or "n_neighbors" not in params or "sigma" not in params:
        return None
    return (params["n_neighbors"], params["sigma"])
