"""LSC-R: landmark-based spectral clustering with random landmarks (Chen & Cai, AAAI 2011).

The unconstrained baseline of SCACS (Li et al., TKDE 2015, §5): the landmark graph
``G_hat = Z_hat^T Z_hat`` of eq. 3 (:mod:`spectralink.landmarks`), whose leading
eigenvectors are the left singular vectors of ``Z_hat^T``, computed from the p x p
eigenproblem ``S_hat a = s a`` as ``b = Z_hat^T a / sqrt(s)``. As in Cai's code the first
(trivial, constant) vector is dropped, ``k`` are kept, rows are normalised and k-means
clusters them.

This module also holds the estimator machinery the landmark methods share (features
only, landmark graph, NumPy or Dask backend, ``predict`` through the landmark code).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as la
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .. import landmarks as lm
from ..spectral import cluster_means, kmeans_rows, nearest_center, normalize_rows, sign_flip
from ..utils._validation import Int, check_features, check_n_clusters
from ._base import COMMON_CONSTRAINTS, ConstrainedClusteringMixin

__all__ = ["LSCR", "lscr_embedding"]

# shared Notes paragraphs of LSC-R and SCACS (numpydoc knows no custom sections)
_CLUSTER_DOC = """
    **Running on Dask.** Pass a ``dask.array`` as ``X`` (or ``backend="dask"`` to wrap a
    NumPy array in row chunks of ``chunk_size``). Landmark assignment, the degree and
    ``Z Z^T`` reductions and the final embedding then run block by block as dask tasks; only
    p x p matrices, the labelled rows and the n x m embedding reach the client, where k-means
    runs (the embedding is gathered: n x m float64, e.g. 160 MB for 2M points and m = 10).
    Results equal the in-core ones for the same ``random_state`` (up to summation order). To
    use a cluster, create a client before fitting::

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


class _LandmarkClustering(ConstrainedClusteringMixin):
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

    def _set_graph(self, graph: lm.LandmarkGraph) -> None:
        self.landmark_graph_ = graph
        self.landmarks_ = graph.landmarks
        self.sigma_ = graph.sigma
        self.n_landmarks_dropped_ = graph.n_dropped
        # the graph's landmarks live in the feature space, also when fitted from a graph
        self.n_features_in_ = graph.landmarks.shape[1]

    def _embed(self, nearest, weights, M):
        """``Z^T M`` in-core or as a gathered dask computation."""
        if lm._is_dask(nearest):
            from .._dask import dask_embed

            return np.asarray(dask_embed(nearest, weights, M).compute())
        return lm.embed(nearest, weights, M, chunk_size=self.chunk_size)

    def _cluster(self, F: np.ndarray) -> None:
        """Row-normalise, k-means, and keep the centres for :meth:`predict`."""
        Fn = normalize_rows(F)
        labels = kmeans_rows(
            Fn, self.n_clusters, n_init=self.n_init, random_state=self.random_state
        )
        self.cluster_centers_ = cluster_means(Fn, labels, self.n_clusters)
        self.embedding_ = F
        self.labels_ = labels

    def predict(self, X):
        """Cluster of new points through the landmark code: nearest k-means centre of
        their row-normalised embedding ``Z_new^T M`` (``M`` the fitted p x m map).

        For training points the code is the same as at fit time, so the result equals
        ``labels_`` wherever k-means converged (a Lloyd fixed point). A dask array is
        encoded block by block. No training data is kept: the landmarks and the p x m
        map suffice.
        """
        from .._dask import as_dask_array, is_dask_array

        check_is_fitted(self, ["components_", "cluster_centers_", "landmark_graph_"])
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
        Fn = normalize_rows(self._embed(ind, w, self.components_))
        return nearest_center(Fn, self.cluster_centers_)


def lscr_embedding(graph: lm.LandmarkGraph, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """The LSC p x k map ``M`` (``Z^T M`` is the embedding) and its eigenvalues.

    Top ``k + 1`` eigenpairs ``(s, a)`` of ``S_hat``; the first (trivial) is dropped and
    ``M = D^{-1/2} a / sqrt(s)`` so that ``Z^T M = Z_hat^T a / sqrt(s)``: unit left
    singular vectors of ``Z_hat^T``. When eigenvalue 1 is repeated (disconnected landmark
    graph) exactly the trivial direction ``d^{1/2}`` is removed from its eigenspace.
    """
    vals, vecs = graph.spectrum()
    m = min(n_clusters + 1, len(vals))
    if m < 2:
        raise ValueError("S_hat has rank 1: the landmark graph cannot separate any cluster.")
    vals, vecs = vals[:m], vecs[:, :m]
    unit = int(np.sum(vals > 1.0 - 1e-9))
    if unit > 1:
        # disconnected landmark graph: eigenvalue 1 is repeated and "the first" vector is an
        # arbitrary mix; remove exactly the trivial direction d^{1/2} from that eigenspace
        t = vecs[:, :unit].T @ graph.sqrt_degrees
        block = vecs[:, :unit] @ la.null_space(t[None, :] / np.linalg.norm(t))
        vals, vecs = vals[1:], np.column_stack([block, vecs[:, unit:]])
    else:
        vals, vecs = vals[1:], vecs[:, 1:]
    vecs = sign_flip(vecs)
    M = vecs / np.sqrt(vals)[None, :] / np.sqrt(graph.degrees)[:, None]
    return M, vals


class LSCR(_LandmarkClustering):
    """Landmark-based spectral clustering with random landmarks (LSC-R), unconstrained.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters k.
    n_landmarks : int, default=500
        Number of landmarks ``p`` (capped at ``n_samples``).
    n_nearest : int, default=3
        Nearest landmarks per point ``r`` (non-zeros per column of ``Z``).
    landmark_init : {"random", "kmeans"}, default="random"
        Random data points (LSC-R) or k-means centres (LSC-K).
    sigma : float, default=None
        Gaussian bandwidth of eq. 3; ``None`` applies ``sigma_rule``.
    sigma_rule : {"mean_distance", "mean_squared_distance"}, default="mean_distance"
        ``"mean_distance"`` is SCACS's rule (the graph SCACS uses, so the two compare on
        one graph); ``"mean_squared_distance"`` is Cai's LSC code.
    affinity : {"landmark"}, default="landmark"
        The only graph: the landmark graph (a precomputed affinity is not accepted).
    n_init : int, default=10
        k-means restarts.
    backend : {"auto", "numpy", "dask"}, default="auto"
        ``"auto"`` runs on Dask when ``X`` is a dask array.
    chunk_size : int, default=8192
        Rows per chunk (in-core, and when wrapping NumPy input for Dask).
    random_state : int, RandomState or None
        Seeds the landmarks and k-means.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    embedding_ : ndarray of shape (n_samples, n_clusters)
        ``Z_hat^T a / sqrt(s)`` before row normalisation.
    eigenvalues_ : ndarray of shape (n_clusters,)
        Eigenvalues of ``S_hat`` of the kept vectors (trivial one excluded).
    components_ : ndarray of shape (p, n_clusters)
        The map ``M`` with ``embedding_ = Z^T M``.
    cluster_centers_ : ndarray of shape (n_clusters, n_clusters)
        Means of the row-normalised embedding per cluster (used by :meth:`predict`).
    landmarks_ : ndarray of shape (p, n_features)
    landmark_graph_ : LandmarkGraph
    sigma_ : float
    n_landmarks_dropped_ : int
        Landmarks no point had among its nearest (removed).

    Notes
    -----
    %s
    References
    ----------
    Chen, X., & Cai, D. (2011). Large scale spectral clustering with landmark-based
    representation. AAAI.
    """

    _uses_constraints = False

    def __init__(
        self,
        n_clusters: int = 2,
        *,
        n_landmarks: int = 500,
        n_nearest: int = 3,
        landmark_init: str = "random",
        sigma: float | None = None,
        sigma_rule: str = "mean_distance",
        affinity: str = "landmark",
        n_init: int = 10,
        backend: str = "auto",
        chunk_size: int = lm.DEFAULT_CHUNK,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.n_landmarks = n_landmarks
        self.n_nearest = n_nearest
        self.landmark_init = landmark_init
        self.sigma = sigma
        self.sigma_rule = sigma_rule
        self.affinity = affinity
        self.n_init = n_init
        self.backend = backend
        self.chunk_size = chunk_size
        self.random_state = random_state

    def _fit(self, X, constraints):
        graph = self._build_graph(X)
        self._fit_graph(graph)

    def _fit_graph(self, graph: lm.LandmarkGraph) -> LSCR:
        """Fit on an already built landmark graph (lets benchmarks share one graph)."""
        self._set_graph(graph)
        M, vals = lscr_embedding(graph, self.n_clusters)
        self.components_ = M
        self.eigenvalues_ = vals
        self._cluster(self._embed(graph.nearest, graph.weights, M))
        return self


LSCR.__doc__ = LSCR.__doc__ % _CLUSTER_DOC
