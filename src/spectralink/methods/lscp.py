"""LSCP: learning similarity for pairwise constraint propagation (MTAP 2015).

"Learning similarities for pairwise constraint propagation", Multimedia Tools and
Applications 74 (2015), Algorithm 1: (1) learn a k-NN graph by constrained local
reconstruction on the simplex (eqs. 2-10, :func:`spectralink.similarity.learn_similarity`);
(2) propagate the constraints over it with E2CP (eq. 11); (3) refine the learnt graph
(eq. 12) and cluster it with Ng-Jordan-Weiss spectral clustering. Steps 2-3 are shared
with :class:`spectralink.methods.e2cp.E2CP`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .. import graph
from ..progress import stage
from ..similarity import learn_similarity, local_gram
from ..solvers.simplex_qp import simplex_qp
from ..utils import NON_NEGATIVE, POSITIVE, StrOptions
from ._base import with_guard_doc
from .e2cp import DEFAULT_N_FILL, DENSE_REFINEMENT_MAX, E2CP

__all__ = ["LSCP", "reconstruction_weights"]

#: Bytes of the (batch, k, n_features) neighbour gather per batch of new points.
_BATCH_BYTES = 64 * 2**20


def reconstruction_weights(
    X_fit: np.ndarray,
    X_new: np.ndarray,
    dist: np.ndarray,
    ind: np.ndarray,
    *,
    kernel: str = "gaussian",
    sigma: float = 1.0,
    mu: float = 0.1,
) -> np.ndarray:
    """Weights reconstructing new points from their training neighbours (eq. 6, no
    constraint term): ``min_w w' G_x w + mu ||w||^2`` on the simplex.

    A new point carries no constraint, so eq. 6's constraint error vanishes and only the
    local Gram matrix ``G_x`` (eq. 4) over its neighbours ``ind`` (at distances ``dist``)
    and the ridge remain.

    Returns
    -------
    weights : ndarray of shape (n_new, k), rows on the probability simplex
    """
    n_new, k = ind.shape
    out = np.empty((n_new, k))
    batch = max(1, int(_BATCH_BYTES // (8 * k * max(X_fit.shape[1], k))))
    eye = np.eye(k)
    for start in range(0, n_new, batch):
        sl = slice(start, min(start + batch, n_new))
        if kernel == "linear":
            diff = X_fit[ind[sl]] - X_new[sl, None, :]  # x_j - x
            G = np.matmul(diff, diff.transpose(0, 2, 1))
        else:
            G = local_gram(X_fit, ind[sl], dist[sl], kernel="gaussian", sigma=sigma)
        A = G + mu * eye
        out[sl] = simplex_qp(0.5 * (A + A.transpose(0, 2, 1)), np.zeros((sl.stop - sl.start, k)))
    return out


class LSCP(E2CP):
    """Learnt constraint-aware similarity graph + E2CP propagation + NJW clustering.

    Parameters
    ----------
    n_clusters : int
        Number of clusters k.
    affinity : {"knn"}, default="knn"
        LSCP learns its graph from features; a precomputed affinity is refused (run
        :class:`E2CP` with ``affinity="precomputed"`` on a graph from
        :func:`spectralink.learn_similarity` instead).
    n_neighbors : int, default=10
        Neighbourhood size k of the local reconstruction.
    sigma : float, default=None
        Gaussian kernel bandwidth; ``None`` is the mean distance to the k-th neighbour
        (not stated in the paper, see :func:`spectralink.similarity.learn_similarity`).
    lam : float, default=0.1
        Weight of the local constraint error (eq. 6).
    mu : float, default=0.1
        Ridge weight (eq. 6).
    eta : float, default=0.25
        Propagation trade-off (eq. 11).
    kernel : {"gaussian", "linear"}, default="gaussian"
        Kernel of the local Gram matrices the reconstruction weights are learnt from.
    refinement : {"auto", "dense", "sampled", "masked"}, default="auto"
        See :class:`E2CP` and :func:`spectralink.methods.e2cp.refined_affinity`.
    dense_max : int, default=5000
    n_fill : int, default=20
        Draws per point of the sampled fill-in.
    tol : float, default=1e-5
        Relative residual of the propagation solves; see :class:`E2CP`.
    f_scale : {"clip", "max"}, default="clip"
    n_init : int, default=10
    random_state : int, RandomState or None
        Seeds every random choice of the fit.
    <guard>

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    similarity_ : sparse matrix of shape (n_samples, n_samples)
        The learnt graph W (eq. 10, symmetrised).
    affinity_matrix_ : sparse matrix of shape (n_samples, n_samples)
        The refined graph W* (eq. 12).
    embedding_ : ndarray of shape (n_samples, n_clusters)
    eigenvalues_ : ndarray of shape (n_clusters,)
    refinement_ : {"dense", "sampled", "masked"}

    Notes
    -----
    ``predict`` reconstructs each new point from its ``n_neighbors`` nearest training
    points as in step 1 (eq. 6 with the constraint term absent: a new point carries no
    constraint; :func:`reconstruction_weights`) and gives it the vote of their labels
    weighted by those reconstruction weights. As for :class:`E2CP`, the propagation does
    not reach points outside the training set, so no embedding is extended. The model
    keeps a reference to the training features (n x n_features floats, also pickled).

    References
    ----------
    Learning similarities for pairwise constraint propagation. Multimedia Tools and
    Applications 74 (2015).
    Lu, Z., & Ip, H. H. S. (2010). Constrained spectral clustering via exhaustive and
    efficient constraint propagation. ECCV.
    """

    _supports_precomputed = False
    _parameter_constraints = {
        **E2CP._parameter_constraints,
        "affinity": [StrOptions({"knn"})],
        "lam": [NON_NEGATIVE],
        "mu": [POSITIVE],
        "kernel": [StrOptions({"gaussian", "linear"})],
    }

    def __init__(
        self,
        n_clusters: int = 2,
        *,
        affinity: str = "knn",
        n_neighbors: int = 10,
        sigma: float | None = None,
        lam: float = 0.1,
        mu: float = 0.1,
        eta: float = 0.25,
        kernel: str = "gaussian",
        refinement: str = "auto",
        dense_max: int = DENSE_REFINEMENT_MAX,
        n_fill: int = DEFAULT_N_FILL,
        tol: float = 1e-5,
        f_scale: str = "clip",
        n_init: int = 10,
        random_state: int | np.random.RandomState | None = None,
        guard: str | None = None,
    ) -> None:
        super().__init__(
            n_clusters,
            affinity=affinity,
            n_neighbors=n_neighbors,
            sigma=sigma,
            eta=eta,
            refinement=refinement,
            dense_max=dense_max,
            n_fill=n_fill,
            tol=tol,
            f_scale=f_scale,
            n_init=n_init,
            random_state=random_state,
            guard=guard,
        )
        self.lam = lam
        self.mu = mu
        self.kernel = kernel

    def _fit(self, X, constraints):
        k = min(self.n_neighbors, X.shape[0] - 1)
        # one neighbour search, shared with predict's record of the bandwidth
        neighbors = graph.kneighbors(X, k, random_state=self.random_state)
        with stage("graph") as st:
            st.detail = "LSCP local reconstruction"
            W = learn_similarity(
                X,
                constraints,
                n_neighbors=k,
                lam=self.lam,
                mu=self.mu,
                sigma=self.sigma,
                kernel=self.kernel,
                random_state=self.random_state,
                neighbors=neighbors,
            )
        self.similarity_ = W
        self._fit_X_ = X
        sigma = graph.sigma_from_distances(neighbors[0]) if self.sigma is None else self.sigma
        self._graph_spec_ = {"kind": "lscp", "n_neighbors": k, "sigma": float(sigma)}
        self._cluster_graph(W, constraints)

    def _new_point_affinity(self, X):
        X = self._check_new_features(X)
        k = self._graph_spec_["n_neighbors"]
        dist, ind = graph.kneighbors_query(self._fit_X_, X, k, random_state=self.random_state)
        w = reconstruction_weights(
            self._fit_X_, X, dist, ind, kernel=self.kernel, sigma=self._graph_spec_["sigma"],
            mu=self.mu,
        )  # fmt: skip
        rows = np.repeat(np.arange(X.shape[0]), k)
        C = sp.csr_matrix((w.ravel(), (rows, ind.ravel())), shape=(X.shape[0], len(self.labels_)))
        return C, ind[:, 0]


LSCP.__doc__ = with_guard_doc(LSCP.__doc__, "NCut at its defaults")
