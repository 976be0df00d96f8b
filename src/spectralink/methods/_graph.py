"""The graph side of the estimators: the graph they cluster and ``predict`` through it.

``predict(X_new)`` extends a fitted model to new points through its training graph:
each new point is linked to its nearest training points with the fitted graph's weights
(:meth:`AffinityGraphMixin._new_point_affinity`), then either mapped into the learnt
embedding (a method's ``_embed_new`` hook, e.g. the Nyström extension) and given the
nearest fitted centre, or given the weighted vote of its neighbours' training labels.

:class:`ConstrainedClusteringMixin` is the fit contract with these graph hooks, the base of
every method that clusters a k-NN (or precomputed, or learnt) graph.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import replace
from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted

from .. import graph
from ..graph import check_cross_affinity, safe_degrees
from ..progress import stage
from ..spectral import (
    kmeans_rows,
    laplacian_eigenvectors,
    nearest_center,
    njw_clustering,
    nystrom_extension,
    sharing_eigenvectors,
)
from ._base import ConstrainedFitMixin, ConstraintsLike, fit_quietly
from ._guard import GuardPlan

if TYPE_CHECKING:  # Python >= 3.11
    from typing import Self

__all__ = [
    "AffinityGraphMixin",
    "ConstrainedClusteringMixin",
    "EigenvectorRefitMixin",
    "NYSTROM_MIN_EIGENVALUE",
    "check_n_components",
    "shareable_knn_graph",
    "weighted_vote",
]


#: Smallest eigenvalue ``mu`` of the normalized adjacency that predict extends by Nyström
#: (it divides by ``mu``); below it new points get the weighted vote of their neighbours.
NYSTROM_MIN_EIGENVALUE = 0.05


def weighted_vote(C: sp.spmatrix, labels: np.ndarray, n_clusters: int) -> np.ndarray:
    """For every row of ``C`` (weights to the training points), the label with the largest
    total weight among the training ``labels`` (ties: the smallest label)."""
    n = len(labels)
    onehot = sp.csr_matrix((np.ones(n), (np.arange(n), labels)), shape=(n, n_clusters))
    scores = (sp.csr_matrix(C) @ onehot).toarray()
    return np.argmax(scores, axis=1).astype(np.int64)


class AffinityGraphMixin:
    """Graph hooks: the graph a method clusters, and ``predict`` through it.

    The graph built by :meth:`_affinity` is recorded (``_fit_X_``, ``_graph_spec_``) so
    that :meth:`_new_point_affinity` can link new points to the training points with the
    same weights; a method with an embedding implements ``_embed_new`` (rows comparable
    with ``_centers_``), otherwise new points get the weighted vote of their neighbours'
    labels. Used with :class:`~spectralink.methods.ConstrainedFitMixin` (see
    :class:`ConstrainedClusteringMixin`).
    """

    def predict(self, X: ArrayLike) -> np.ndarray:
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
        if getattr(self, "fallback_", False):
            # the guard returned the unconstrained partition: follow its labels
            labels = weighted_vote(C, self.labels_, self.n_clusters)
        else:
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

    def neighbour_weights(self, X: ArrayLike) -> tuple[sp.csr_matrix, np.ndarray | None]:
        """``(C, nearest)``: the weights of new points to the training points in the fitted
        graph's kernel (n_new x n_train, sparse), and each one's nearest training point
        (None with a precomputed affinity): what :meth:`predict` votes or embeds with."""
        check_is_fitted(self, "labels_")
        return self._new_point_affinity(X)

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

    def _affinity(self, X) -> sp.csr_matrix:
        """The graph the method clusters: the k-NN Gaussian graph (``"knn"``), the adaptive
        one of COSC (``"adaptive_knn"``, for methods that list it in
        :meth:`_feature_affinities`) or the precomputed one.

        Records what :meth:`predict` needs to link new points to it: ``_graph_spec_``
        (kind, neighbours, bandwidth or per-point scales) and, for features, ``_fit_X_``,
        a reference to the validated training features (no copy when ``X`` was already a
        float array; the model then holds n x n_features floats, also in its pickle).
        """
        W = self._build_affinity(X)
        self._graph_ = W  # what the guard's unconstrained partition and refits reuse
        return W

    def _build_affinity(self, X) -> sp.csr_matrix:
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


class ConstrainedClusteringMixin(AffinityGraphMixin, ConstrainedFitMixin):
    """Base class of the graph methods: the fit contract
    (:class:`~spectralink.methods.ConstrainedFitMixin`) with the graph hooks and
    ``predict`` of :class:`AffinityGraphMixin`.

    The held-out guard's plan (:meth:`_guard_plan`) reuses the graph the fit built
    (``_graph_``, recorded by :meth:`_affinity`). The unconstrained partition is what the
    library gives without the pairs: NCut at its defaults on the same features (on the graph
    already built when it is NCut's default k-NN graph; on the given affinity with
    ``affinity="precomputed"``). The refits on part of the pairs take the built graph as a
    precomputed affinity when the method builds it with the base class's :meth:`_affinity`.
    """

    def _guard_plan(self, X) -> GuardPlan:
        W = getattr(self, "_graph_", None)
        plan = super()._guard_plan(X)
        if W is not None and _refits_on_its_graph(self):
            unguarded = self._unguarded_clone().set_params(affinity="precomputed")

            def on_graph(train):
                return fit_quietly(clone(unguarded), W, train).labels_

            plan = replace(plan, refit=on_graph)
        return replace(plan, reference=lambda: self._ncut_partition(X))

    def _ncut_partition(self, X):
        """NCut's partition: on the graph already built when it is NCut's default one."""
        W = getattr(self, "_graph_", None)
        if W is not None and self._graph_is_ncut_default():
            _, _, labels = njw_clustering(
                W, self.n_clusters, n_init=getattr(self, "n_init", 10),
                random_state=self.random_state,
            )  # fmt: skip
            return SimpleNamespace(labels_=labels)
        return self._ncut_at_defaults(X)

    def _graph_is_ncut_default(self) -> bool:
        """Whether the graph the fit built is the one NCut at its defaults would cluster
        (or the user's own affinity, which NCut would cluster as given)."""
        from .ncut import NCut

        spec = getattr(self, "_graph_spec_", None) or {}
        if spec.get("kind") == "precomputed":
            return True
        n_fit = len(self.labels_)
        return (
            spec.get("kind") == "knn"
            and spec.get("n_neighbors") == min(NCut().n_neighbors, n_fit - 1)
            and getattr(self, "sigma", None) is None
        )


class EigenvectorRefitMixin:
    """What the methods that adapt the eigenvectors of the graph share (CCSR, CCSKL): the
    fit up to the eigenvectors (``eigenvectors_``, ascending, then the method's
    ``_fit_embedding``), and the guard plan and diagnostics on them: NCut's
    partition is k-means on the first ``n_clusters`` of them, row-normalised (on another
    graph than NCut's default one, the guard compares with NCut at its defaults), and the
    refits reuse them. Being at hand, NCut's partition also gives ``n_violated_reference_``.
    """

    def _fit(self, X, constraints):
        m = check_n_components(self.n_components, X.shape[0])
        W = self._affinity(X)
        vals, F = laplacian_eigenvectors(
            W, m, random_state=self.random_state, n_clusters=self.n_clusters
        )
        self.affinity_matrix_ = W
        self.eigenvalues_ = vals
        self.eigenvectors_ = F
        self._fit_embedding(F, constraints)
        return self

    def fit_embedding(self, F: ArrayLike, constraints: ConstraintsLike | None = None) -> Self:
        """Fit from precomputed eigenvectors of the graph: every step of ``fit`` after them.

        The way to share one eigendecomposition among several fits (other constraints,
        parameters, or the other eigenvector method). The parameters, ``F`` and the
        constraints are validated as in ``fit``, and ``n_violated_`` and the warnings are as
        after ``fit``. ``predict`` needs the graph, hence ``fit``.

        Parameters
        ----------
        F : array-like of shape (n_samples, m)
            Eigenvectors of the normalized Laplacian of the graph for its ``m`` smallest
            eigenvalues, in ascending order (what ``fit`` computes with
            :func:`spectralink.spectral.laplacian_eigenvectors`, kept as
            ``eigenvectors_``); ``m`` takes the place of ``n_components``.
        constraints : Constraints or (must_link, cannot_link) pair, default=None
            Pairwise constraints over the rows of ``F``.

        Returns
        -------
        self
        """
        return self._fit_from_eigenvectors(F, constraints)

    def _fit_from_eigenvectors(self, F, constraints, **precomputed) -> Self:
        """:meth:`fit_embedding` with what the method's solve can reuse (``precomputed``
        keywords of its ``_fit_embedding``)."""
        self._check_params()
        F = check_array(F, dtype=np.float64)
        self.__dict__.pop("_graph_spec_", None)  # predict through a graph needs fit
        self.eigenvectors_ = F
        return self._fit_contract(
            F.shape[0], constraints, lambda cons: self._fit_embedding(F, cons, **precomputed), F
        )

    def _guard_plan(self, X) -> GuardPlan:
        plan = super()._guard_plan(X)

        def refit(train):
            unguarded = self._unguarded_clone()
            return fit_quietly(unguarded, self.eigenvectors_, train, method="fit_embedding").labels_

        if getattr(self, "_graph_spec_", None) is not None and not self._graph_is_ncut_default():
            return replace(plan, refit=refit)  # NCut at its defaults, from the features
        reference = lambda: SimpleNamespace(labels_=self._ncut_on_eigenvectors())  # noqa: E731
        return replace(plan, reference=reference, refit=refit)

    def _ncut_on_eigenvectors(self, n_init: int | None = None) -> np.ndarray:
        k = self.n_clusters
        return kmeans_rows(
            self.eigenvectors_[:, :k], k, normalize=True,
            n_init=self.n_init if n_init is None else n_init, random_state=self.random_state,
        )  # fmt: skip

    def _reference_labels(self) -> np.ndarray | None:
        V = getattr(self, "eigenvectors_", None)
        if V is None or V.shape[1] < self.n_clusters or sharing_eigenvectors():
            return None  # inside a search nobody reads a fold's diagnostics
        # a count for a diagnostic: one k-means run (a tenth of the ten NCut's fit makes,
        # 0.08 s of a 0.43 s CCSR fit on USPS) is enough
        return self._ncut_on_eigenvectors(n_init=1)


def check_n_components(n_components: int, n_samples: int) -> int:
    """Validate the embedding order ``m`` (1 <= m <= n_samples)."""
    if isinstance(n_components, bool) or not isinstance(n_components, numbers.Integral):
        raise ValueError(f"n_components must be a positive integer, got {n_components!r}.")
    if not 1 <= n_components <= n_samples:
        raise ValueError(
            f"n_components={n_components} must be between 1 and n_samples={n_samples}."
        )
    return int(n_components)


def _refits_on_its_graph(estimator: BaseEstimator) -> bool:
    """Whether a refit given the graph the estimator built (``_graph_``) as a precomputed
    affinity repeats its fit: it accepts one and builds its graph with the base class's
    :meth:`AffinityGraphMixin._affinity` (the k-NN Gaussian or adaptive k-NN graph)."""
    cls = type(estimator)
    return (
        getattr(cls, "_supports_precomputed", True)
        and cls._affinity is AffinityGraphMixin._affinity
        and "affinity" in estimator.get_params(deep=False)
    )


def shareable_knn_graph(estimator: BaseEstimator) -> tuple | None:
    """``(n_neighbors, sigma)`` of the k-NN graph ``estimator`` would build, or None.

    Not None only when the estimator builds its graph with the base class's standard
    ``knn_affinity`` (it does not override ``_affinity``) and accepts a precomputed one, so
    that a graph built once can be handed to it as ``affinity="precomputed"``; and, when
    its held-out guard is on, only for NCut's default graph: the guard compares a fit on a
    precomputed affinity with NCut on that affinity, and a fit from features with NCut at
    its defaults, so on any other graph the two fits would differ.
    """
    if not isinstance(estimator, AffinityGraphMixin):
        return None
    cls = type(estimator)
    if not getattr(cls, "_supports_precomputed", True):
        return None
    if cls._affinity is not AffinityGraphMixin._affinity:
        return None
    params = estimator.get_params(deep=False)
    if params.get("affinity") != "knn" or "n_neighbors" not in params or "sigma" not in params:
        return None
    key = (params["n_neighbors"], params["sigma"])
    if params.get("guard") is not None and key != _ncut_default_graph():
        return None
    return key


def _ncut_default_graph() -> tuple:
    """``(n_neighbors, sigma)`` of NCut's default k-NN graph."""
    from .ncut import NCut

    params = NCut().get_params()
    return (params["n_neighbors"], params["sigma"])
