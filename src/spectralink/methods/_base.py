"""The estimator contract shared by every method of the library.

``__init__`` only stores parameters (scikit-learn convention). ``fit(X, constraints=...)``
validates ``X`` and the constraints, then calls the subclass's ``_fit``, which delegates
to plain functions and sets ``labels_``. ``affinity="precomputed"`` makes ``X`` a
square affinity matrix (dense or sparse) instead of features.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import check_array

from ..constraints import Constraints, as_constraints
from ..exceptions import DegeneratePartitionWarning
from ..graph import adaptive_knn_affinity, check_affinity, knn_affinity
from ..metrics import partition_diagnostics
from ..parallel import limit_threads
from ..progress import stage

__all__ = [
    "ConstrainedClusteringMixin",
    "check_features",
    "check_n_clusters",
    "shareable_knn_graph",
]


def check_n_clusters(n_clusters, n_samples: int) -> int:
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, numbers.Integral):
        raise ValueError(f"n_clusters must be an integer >= 2, got {n_clusters!r}.")
    if n_clusters < 2:
        raise ValueError(f"n_clusters must be >= 2, got {n_clusters}.")
    if n_samples < n_clusters:
        raise ValueError(
            f"n_samples={n_samples} is smaller than n_clusters={n_clusters}: cannot form "
            "that many clusters."
        )
    return int(n_clusters)


def check_features(
    X, *, accept_sparse: bool = False, ensure_min_samples: int = 2
) -> np.ndarray:
    """Feature matrix as a finite float array of shape (n_samples, n_features).

    ``ensure_min_samples=1`` suits ``predict``, where one new point is valid input.
    """
    if X is None:
        raise ValueError("X is None; expected an array of shape (n_samples, n_features).")
    try:
        return check_array(
            X,
            accept_sparse=accept_sparse,
            dtype=[np.float64, np.float32],
            ensure_all_finite=True,
            ensure_min_samples=ensure_min_samples,
        )
    except ValueError as exc:
        msg = str(exc)
        if "NaN" in msg or "infinity" in msg:
            raise ValueError(
                "X contains NaN or infinite values; remove or impute them before clustering."
            ) from None
        raise ValueError(f"invalid X: {msg}") from None


class ConstrainedClusteringMixin(ClusterMixin, BaseEstimator):
    """Base class: validation and the ``fit`` / ``fit_predict`` contract.

    Subclasses declare their parameters in ``__init__`` (which only stores them),
    and implement ``_fit(X, constraints)`` where ``X`` is validated features or,
    with ``affinity="precomputed"``, a validated CSR affinity. ``_fit`` must set
    ``labels_``. ``fit`` then sets ``n_violated_`` and warns
    (:class:`~spectralink.exceptions.DegeneratePartitionWarning`) when the partition is
    degenerate (:func:`~spectralink.metrics.partition_diagnostics`).
    """

    #: whether the method can consume a precomputed affinity instead of features
    _supports_precomputed = True
    #: whether the method uses the constraints (those that do not skip the violation check)
    _uses_constraints = True

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
        :meth:`_feature_affinities`) or the precomputed one."""
        if sp.issparse(X) and getattr(self, "affinity", None) == "precomputed":
            return X
        n_neighbors = min(self.n_neighbors, X.shape[0] - 1)
        with stage("graph") as st:
            if getattr(self, "affinity", None) == "adaptive_knn":
                st.detail = f"adaptive k-NN, k={n_neighbors}"
                return adaptive_knn_affinity(X, n_neighbors, random_state=self.random_state)
            st.detail = f"k-NN Gaussian, k={n_neighbors}"
            return knn_affinity(
                X, n_neighbors=n_neighbors, sigma=self.sigma, random_state=self.random_state
            )

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
