"""The estimator machinery the landmark methods (LSC-R, SCACS) share: features only, the
landmark graph of :mod:`spectralink.landmarks`, a NumPy or Dask backend, and ``predict``
through the landmark code (eq. 3 of Li et al., TKDE 2015)."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils.validation import check_is_fitted

from .. import landmarks as lm
from .._dask import is_dask_array
from ..spectral import cluster_means, kmeans_rows, nearest_center, normalize_rows
from ..utils import Int, StrOptions, check_features, check_n_clusters
from ._base import COMMON_CONSTRAINTS, ConstrainedFitMixin, ConstraintsLike, fit_quietly
from ._graph import weighted_vote
from ._guard import GuardPlan

if TYPE_CHECKING:  # Python >= 3.11
    from typing import Self

__all__ = ["CLUSTER_DOC", "LandmarkClustering"]

# shared Notes paragraphs of LSC-R and SCACS (numpydoc knows no custom sections)
CLUSTER_DOC = """
    **Running on Dask.** Pass a ``dask.array`` as ``X`` (or ``backend="dask"`` to wrap a
    NumPy array in row chunks of ``chunk_size``). Landmark assignment, the degree and
    ``Z Z^T`` reductions, the embedding and the k-means assignment then run block by block
    as dask tasks; only p x p matrices, k x m sums and the constrained rows reach the
    client. ``labels_`` and ``embedding_`` are then dask arrays (``labels_`` persisted on
    the workers; ``np.asarray(model.labels_)`` gathers it), and ``predict`` of a dask array
    is one. Up to 100,000 points, k-means runs on the gathered embedding and the results
    equal the in-core ones for the same ``random_state`` (up to summation order); beyond,
    it starts from k-means on a uniform sample of 100,000 rows and Lloyd passes over every
    row refine the centres. To use a cluster, create a client before fitting::

        from dask.distributed import Client
        client = Client("tcp://scheduler:8786")   # or Client() for a local cluster
        X = dask.array.from_zarr(...)              # row-chunked, whole rows per block
        model.fit(X, constraints=c)

    Dask is imported only on this path (``pip install 'spectralink[dask]'``).

    **Predicting new points.** ``predict`` encodes new points by their ``n_nearest`` nearest
    landmarks with the fitted bandwidth (the code ``Z`` of eq. 3), maps the code by
    ``components_`` and assigns the nearest ``cluster_centers_`` of the row-normalised
    embedding; a dask array is encoded block by block. No training data is kept (the
    landmarks and the p x m map suffice). With as many landmarks as points
    (``n <= n_landmarks``) every training point is its own nearest landmark, and SCACS's own
    directions (``fallback_`` False) can fit the training codes rather than their
    neighbourhoods: held-out accuracy then falls below the training accuracy (overlapping
    blobs, 100 pairs: 0.56 against 0.93; 0.89 against 0.94 with ``n_landmarks=100``).
"""


class LandmarkClustering(ConstrainedFitMixin):
    """Shared fit plumbing of LSC-R and SCACS: validation, graph, backend, predict."""

    _supports_precomputed = False
    _scale = "landmark graph, p x p eigenproblem: millions of points"
    _supports_dask = True
    _parameter_constraints = {
        "n_clusters": COMMON_CONSTRAINTS["n_clusters"],
        "n_landmarks": [Int(1)],
        "n_nearest": [Int(1)],
        "landmark_init": [StrOptions({"random", "kmeans"})],
        "sigma": COMMON_CONSTRAINTS["sigma"],
        "sigma_rule": [StrOptions(set(lm.SIGMA_RULES))],
        "affinity": [StrOptions({"landmark"})],
        "n_init": COMMON_CONSTRAINTS["n_init"],
        "backend": [StrOptions({"auto", "numpy", "dask"})],
        "chunk_size": [Int(1)],
        "random_state": ["random_state"],
    }

    def _feature_affinities(self) -> set:
        return {"landmark"}

    def _validate_X(self, X):
        from .._dask import is_dask_array

        if is_dask_array(X) or self.backend == "dask":
            if self.backend == "numpy":
                X = check_features(X.compute())
            else:
                from .._dask import as_dask_array

                X = as_dask_array(X, self.chunk_size)
                if X.shape[0] < 2:
                    raise ValueError("X needs at least 2 samples.")
        else:
            X = check_features(X)
        self.n_features_in_ = X.shape[1]
        return X

    def _build_graph(self, X) -> lm.LandmarkGraph:
        check_n_clusters(self.n_clusters, X.shape[0])
        graph = lm.build_landmark_graph(
            X,
            self.n_landmarks,
            self.n_nearest,
            init=self.landmark_init,
            sigma=self.sigma,
            sigma_rule=self.sigma_rule,
            random_state=self.random_state,
            chunk_size=self.chunk_size,
        )
        return graph

    def fit_landmark_graph(
        self, graph: lm.LandmarkGraph, constraints: ConstraintsLike | None = None
    ) -> Self:
        """Fit on a landmark graph built once: every step of ``fit`` after the graph.

        The way to share one graph (:func:`spectralink.landmarks.build_landmark_graph`)
        among several fits (other constraints, parameters, or methods). The parameters and
        the constraints are validated as in ``fit`` (the graph's parameters,
        ``n_landmarks``, ``n_nearest``, ``landmark_init``, ``sigma``, ``sigma_rule``, are
        the graph's, not the estimator's), and ``n_violated_`` and the degenerate-partition
        warning are as after ``fit``.

        Parameters
        ----------
        graph : LandmarkGraph
            Built over the ``n_samples`` points to cluster.
        constraints : Constraints or (must_link, cannot_link) pair, default=None
            Pairwise constraints over those points.

        Returns
        -------
        self
        """
        self._check_params()
        if not isinstance(graph, lm.LandmarkGraph):
            raise TypeError(
                f"graph must be a spectralink.landmarks.LandmarkGraph, got {type(graph).__name__}."
            )
        return self._fit_contract(
            graph.n_samples, constraints, lambda cons: self._fit_graph(graph, cons), None
        )

    # the held-out guard. In core, the unconstrained partition is NCut at its defaults (the
    # promise is "never worse than ignoring the pairs", and LSC-R's landmark graph can be
    # much weaker than the k-NN graph: 5 % cluster, many noise columns); on Dask, or from a
    # landmark graph alone, it is LSC-R on the same landmark graph. The same partition as
    # the unconstrained one is adopted too: predict through its model, which is smooth over
    # the data; constrained directions need not be (with about as many landmarks as points
    # they can give every landmark its own value, and new points, coded by several
    # landmarks, fall between clusters).
    def _guard_plan(self, X) -> GuardPlan:
        if is_dask_array(self.landmark_graph_.nearest):
            raise ValueError(
                "guard='held_out' refits on the points in memory; on Dask leave guard=None "
                "(Auto, fitted on a sample, makes that choice at scale)."
            )
        return GuardPlan(
            reference=lambda: self._unconstrained_partition(X),
            refit=lambda train: (
                fit_quietly(
                    self._unguarded_clone(),
                    self.landmark_graph_,
                    train,
                    method="fit_landmark_graph",
                ).labels_
            ),
            adopt=self._adopt_reference,
            adopt_when_same=True,
        )

    def _unconstrained_partition(self, X):
        from .._dask import is_dask_array

        if X is not None and not is_dask_array(X):
            return self._ncut_at_defaults(X)
        from .lscr import LSCR

        reference = LSCR(self.n_clusters, n_init=self.n_init, random_state=self.random_state)
        return reference.fit_landmark_graph(self.landmark_graph_)

    def _vote_through_reference(self, X) -> np.ndarray:
        """The guard returned NCut's partition: each new point gets the weighted vote of
        its neighbours in NCut's k-NN graph (its nearest point when all weights vanish),
        as the graph methods do after a fallback."""
        C, nearest = self._reference_.neighbour_weights(X)
        labels = weighted_vote(C, self.labels_, self.n_clusters)
        isolated = np.asarray(C.sum(axis=1)).ravel() <= 0
        labels[isolated] = self.labels_[nearest[isolated]]
        return labels

    def _adopt_reference(self, reference) -> None:
        self.labels_ = reference.labels_
        if hasattr(reference, "components_"):  # LSC-R: its map replaces SCACS's
            self.components_ = reference.components_
            self.cluster_centers_ = reference.cluster_centers_
            self.embedding_ = reference.embedding_
        else:  # NCut: predict votes through its graph
            self._reference_ = reference

    def _set_graph(self, graph: lm.LandmarkGraph) -> None:
        self.landmark_graph_ = graph
        self.landmarks_ = graph.landmarks
        self.sigma_ = graph.sigma
        self.n_landmarks_dropped_ = graph.n_dropped
        # the graph's landmarks live in the feature space, also when fitted from a graph
        self.n_features_in_ = graph.landmarks.shape[1]

    def _embed(self, nearest, weights, M):
        """``Z^T M`` in core, or a lazy dask array block by block."""
        if is_dask_array(nearest):
            from .._dask import dask_embed

            return dask_embed(nearest, weights, M)
        return lm.embed(nearest, weights, M, chunk_size=self.chunk_size)

    def _kmeans(self, Fn: np.ndarray) -> np.ndarray:
        return kmeans_rows(Fn, self.n_clusters, n_init=self.n_init, random_state=self.random_state)

    def _cluster(self, F) -> None:
        """Row-normalise, k-means, and keep the centres for :meth:`predict`; on Dask the
        assignment runs on the workers (:func:`spectralink._dask.dask_kmeans`) and
        ``labels_`` and ``embedding_`` stay there."""
        self.embedding_ = F
        if is_dask_array(F):
            from .._dask import dask_kmeans, normalized

            self.labels_, self.cluster_centers_ = dask_kmeans(
                normalized(F), self.n_clusters, self._kmeans, random_state=self.random_state
            )
            return
        Fn = normalize_rows(F)
        labels = self._kmeans(Fn)
        self.cluster_centers_ = cluster_means(Fn, labels, self.n_clusters)
        self.labels_ = labels

    def for_prediction(self) -> Self:
        """A copy that predicts as this estimator does, without what it holds per training
        point (``labels_``, ``embedding_``, the graph's code): the model to send to the
        workers that label a large table."""
        check_is_fitted(self, ["components_", "cluster_centers_", "landmark_graph_"])
        out = copy.copy(self)
        out.landmark_graph_ = self.landmark_graph_.without_points()
        for name in ("labels_", "embedding_"):
            out.__dict__.pop(name, None)
        return out

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Cluster of new points through the landmark code: nearest k-means centre of
        their row-normalised embedding ``Z_new^T M`` (``M`` the fitted p x m map).

        For training points the code is the same as at fit time, so the result equals
        ``labels_`` wherever k-means converged (a Lloyd fixed point). A dask array is
        encoded block by block. No training data is kept: the landmarks and the p x m
        map suffice.
        """
        from .._dask import as_dask_array, is_dask_array

        check_is_fitted(self, ["components_", "cluster_centers_", "landmark_graph_"])
        if getattr(self, "_reference_", None) is not None:
            return self._vote_through_reference(X)
        if is_dask_array(X):
            # shape and dtype only: a NaN scan would cost a full pass over the data
            X = as_dask_array(X, self.chunk_size)
        else:
            X = check_features(X, ensure_min_samples=1)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )
        ind, w = lm.encode(X, self.landmark_graph_, chunk_size=self.chunk_size)
        F = self._embed(ind, w, self.components_)
        if is_dask_array(F):
            from .._dask import normalized

            return normalized(F).map_blocks(
                nearest_center, self.cluster_centers_, drop_axis=1, dtype=np.int64
            )
        return nearest_center(normalize_rows(F), self.cluster_centers_)
