"""LSCP: learning similarity for pairwise constraint propagation (MTAP 2015).

"Learning similarities for pairwise constraint propagation", Multimedia Tools and
Applications 74 (2015), Algorithm 1: (1) learn a k-NN graph by constrained local
reconstruction on the simplex (eqs. 2-10, :func:`spectralink.similarity.learn_similarity`);
(2) propagate the constraints over it with E2CP (eq. 11); (3) refine the learnt graph
(eq. 12) and cluster it with Ng-Jordan-Weiss spectral clustering. Steps 2-3 are shared
with :class:`spectralink.methods.e2cp.E2CP`.
"""

from __future__ import annotations

from ..similarity import learn_similarity
from .e2cp import DEFAULT_N_FILL, DENSE_REFINEMENT_MAX, E2CP

__all__ = ["LSCP"]


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

    References
    ----------
    Learning similarities for pairwise constraint propagation. Multimedia Tools and
    Applications 74 (2015).
    Lu, Z., & Ip, H. H. S. (2010). Constrained spectral clustering via exhaustive and
    efficient constraint propagation. ECCV.
    """

    _supports_precomputed = False

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
        random_state=None,
    ):
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
        )
        self.lam = lam
        self.mu = mu
        self.kernel = kernel

    def _fit(self, X, constraints):
        W = learn_similarity(
            X,
            constraints,
            n_neighbors=min(self.n_neighbors, X.shape[0] - 1),
            lam=self.lam,
            mu=self.mu,
            sigma=self.sigma,
            kernel=self.kernel,
            random_state=self.random_state,
        )
        self.similarity_ = W
        self._cluster_graph(W, constraints)
