"""CCSKL: Constrained Clustering by Spectral Kernel Learning (Li & Liu, ICCV 2009).

The kernel ``K = sum_l beta_l v_l v_l^T`` over the ``m`` smoothest eigenvectors of the
normalized Laplacian (eq. 5, 11) keeps the eigenvectors and learns their order-preserving
spectrum ``beta_1 >= ... >= beta_m >= 0`` from the targets (eq. 6-12: 1 on the diagonal
and must-links, 0 on cannot-links, weighted by ``c_ij^2``). The QP (eq. 13-16) is solved
exactly as a non-negative least-squares problem
(:func:`spectralink.solvers.ordered_nnls.ordered_nnls`); k-means clusters the rows of
``F Lambda^{1/2}`` (section 4.3).

By default (``shrinkage="auto"``) the spectrum is also pulled toward the unconstrained one,
with a weight that fades as constraints accumulate; ``shrinkage=0`` is the paper's
algorithm (see :class:`CCSKL`).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..constraints import Constraints
from ..metrics import clearly_fewer_violations, fewer_violations_possible
from ..solvers.ordered_nnls import OrderedNNLSResult, ordered_design, ordered_nnls
from ..spectral import cluster_means, kmeans_rows, normalize_rows
from ..utils import NON_NEGATIVE, Int, StrOptions
from ._base import COMMON_CONSTRAINTS, GUARD_CONSTRAINT, with_guard_doc
from ._graph import ConstrainedClusteringMixin, EigenvectorRefitMixin
from .ccsr import (
    check_normalize_rows,
    projector_scale,
    shrinkage_weight,
)

__all__ = ["CCSKL", "ccskl_spectrum"]


def ccskl_spectrum(
    F: np.ndarray,
    constraints: Constraints,
    *,
    shrinkage: float = 0.0,
    n_clusters: int | None = None,
) -> OrderedNNLSResult:
    """The ordered spectrum ``beta`` of eq. 13-16 for the eigenvectors ``F``.

    The terms are ``constraints.targets``; a constraint's weight replaces ``c_ij`` (section
    4.4), so it multiplies the squared residual as ``c_ij^2``. Diagonal terms have weight 1.

    ``shrinkage = lam > 0`` adds ``lam * e * ||beta - s beta_0||^2``: ``beta_0`` is 1 on the
    ``n_clusters`` smoothest eigenvectors and 0 after (NCut's embedding), ``s`` from
    :func:`~spectralink.methods.ccsr.projector_scale`, and ``e`` the mean curvature of the
    diagonal terms per NNLS coordinate (squared Frobenius norm of their design over ``m``),
    so ``lam`` is relative to those ``n`` terms. It equals a pull of the kernel ``F diag(beta)
    F^T`` toward NCut's in Frobenius norm; the extra rows ``sqrt(lam e) T`` keep the problem
    an ordered NNLS. ``shrinkage=0`` is the paper's QP.
    """
    i, j, t, w = constraints.targets
    B, r = ordered_design(F, i, j, t, w)
    if shrinkage > 0:
        if n_clusters is None:
            raise ValueError("shrinkage > 0 needs n_clusters (the target's rank).")
        n, m = F.shape
        # targets lists the n diagonal terms first
        scale = np.sqrt(shrinkage * np.sum(B[:n] ** 2) / m)
        target = projector_scale(F, n_clusters) * (np.arange(m) < n_clusters)
        # beta = T delta with T the upper-triangular ones (ordered_design's cumulative sum)
        B = np.vstack([B, scale * np.triu(np.ones((m, m)))])
        r = np.concatenate([r, scale * target])
    return ordered_nnls(B, r)


class CCSKL(EigenvectorRefitMixin, ConstrainedClusteringMixin):
    """Constrained clustering by spectral kernel learning (CCSKL).

    Parameters
    ----------
    n_clusters : int
        Number of clusters k.
    n_components : int, default=20
        Number m of eigenvectors whose eigenvalues are learnt (the paper uses 20).
    affinity : {"knn", "precomputed"}, default="knn"
        ``"knn"``: symmetric k-NN Gaussian graph from features; ``"precomputed"``: ``X``
        is a square affinity matrix.
    n_neighbors : int, default=20
        Neighbours of the k-NN graph.
    sigma : float, default=None
        Gaussian bandwidth; ``None`` is the mean distance to the k-th neighbour.
    n_init : int, default=10
        k-means restarts.
    shrinkage : "auto" or float >= 0, default="auto"
        Weight ``lam`` of a pull of the spectrum toward the unconstrained one ``s beta_0``
        (``beta_0`` = 1 on the ``n_clusters`` smoothest eigenvectors, 0 after: NCut's
        embedding), added to eq. 12 as ``lam * e * ||beta - s beta_0||^2`` (see
        :func:`ccskl_spectrum`; ``lam`` is relative to the ``n`` diagonal terms). ``"auto"``
        uses ``0.1 / (1 + |constraints| / (4 m))``, ``m`` being the number of free
        eigenvalues (:func:`~spectralink.methods.ccsr.shrinkage_weight`); then also fits the
        unshrunk spectrum and keeps it when its partition violates clearly fewer of the
        given constraints (:func:`~spectralink.metrics.clearly_fewer_violations`); a number
        is used as is, without that check. **0 reproduces the paper** (with
        ``normalize_rows="auto"``). See Notes.
    normalize_rows : "auto" or bool, default="auto"
        Scale the embedding's rows to unit length before k-means, as NCut does. ``"auto"``
        is True when ``shrinkage`` is not 0 and False (the paper, raw rows) when it is 0.
        The trivial eigenvector ``D^{1/2} 1`` is part of the embedding and often gets the
        largest weight, so raw rows also encode the degree; normalising removes that.
    random_state : int, RandomState or None
        Seeds the eigensolver start and k-means.
    <guard>

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    affinity_matrix_ : sparse matrix of shape (n_samples, n_samples)
    eigenvalues_ : ndarray of shape (n_components,)
        Smallest eigenvalues of the normalized Laplacian.
    eigenvectors_ : ndarray of shape (n_samples, n_components)
    betas_ : ndarray of shape (n_components,)
        Learnt kernel eigenvalues, non-increasing and non-negative (with no constraints:
        1 for the ``n_clusters`` smoothest eigenvectors, 0 after).
    embedding_ : ndarray of shape (n_samples, n_components)
        ``F diag(betas_)^{1/2}``, the rows clustered by k-means.
    objective_ : float
        Weighted squared error of eq. 12 at ``betas_``, the shrinkage term included.
    kkt_ : dict
        KKT residuals of the NNLS (``grad_min``, ``complementarity``).
    shrinkage_ : float
        The shrinkage weight used (``"auto"`` resolved; 0 with no constraints).

    Notes
    -----
    With no constraints the fit is NCut's: k-means on the unit-norm rows of the
    ``n_clusters`` smoothest eigenvectors.

    Why the default shrinks. The ``n`` diagonal targets ``k_ii = 1`` dominate eq. 12 unless
    the constraints are very many, and the 20 ordered eigenvalues cannot fit both; they
    flatten the spectrum, so the paper's CCSKL is often worse than NCut with a realistic
    number of random pairs (digits, 50 pairs: error 0.26 vs 0.19; segmentation, 50-800
    pairs: 0.72-0.77 vs 0.57). Shrinking toward NCut's spectrum, with unit-norm rows as in
    NCut, fixes this; measured on iris, wine, breast cancer, digits, segmentation, sonar,
    USPS and blobs with 50-800 random pairs, the default was never more than 0.02 worse
    than NCut and often much better (digits about 0.07, USPS about 0.24 vs NCut 0.35). The
    weight fades with the number of constraints like CCSR's (halved at ``4 m``, 80 pairs for
    ``m = 20``), so that many constraints recover the paper's fit (with unit-norm rows).

    ``predict`` maps new points into the eigenvectors by the Nyström extension (each new
    point linked to its ``n_neighbors`` nearest training points with the graph's Gaussian
    weights, :func:`spectralink.spectral.nystrom_extension`), scales them by
    ``betas_^{1/2}``, normalises the rows when the fit did, and assigns the nearest
    k-means centre; as in :class:`~spectralink.CCSR`, a weighted vote of the neighbours'
    labels replaces it when an eigenvalue ``1 - lambda`` of an eigenvector with
    ``beta > 0`` is below ``methods._graph.NYSTROM_MIN_EIGENVALUE``. With
    ``affinity="knn"`` the model keeps a reference to the training features (n x
    n_features floats, also pickled); with ``"precomputed"`` ``predict`` takes affinities
    of shape (n_new, n_train).

    References
    ----------
    Li, Z., & Liu, J. (2009). Constrained clustering by spectral kernel learning. ICCV,
    421-427.
    """

    _parameter_constraints = {
        "guard": GUARD_CONSTRAINT,
        **COMMON_CONSTRAINTS,
        "n_components": [Int(1)],
        "affinity": [StrOptions({"knn", "precomputed"})],
        "shrinkage": [StrOptions({"auto"}), NON_NEGATIVE],
        "normalize_rows": [StrOptions({"auto"}), "boolean"],
    }

    def __init__(
        self,
        n_clusters: int = 2,
        *,
        n_components: int = 20,
        affinity: str = "knn",
        n_neighbors: int = 20,
        sigma: float | None = None,
        n_init: int = 10,
        shrinkage: str | float = "auto",
        normalize_rows: str | bool = "auto",
        random_state: int | np.random.RandomState | None = None,
        guard: str | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.n_components = n_components
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.n_init = n_init
        self.shrinkage = shrinkage
        self.normalize_rows = normalize_rows
        self.random_state = random_state
        self.guard = guard

    def _fit_embedding(self, F, constraints):
        """Everything after the eigenvectors (parameters and constraints validated)."""
        shrinkage = "auto" if self.shrinkage == "auto" else float(self.shrinkage)
        m = F.shape[1]
        if constraints.is_empty:
            self.betas_ = (np.arange(m) < self.n_clusters).astype(np.float64)
            self.objective_, self.kkt_ = float("nan"), {}
            self.shrinkage_ = 0.0
            self._set_labels(F, normalize=True)
            return self
        normalize = check_normalize_rows(self.normalize_rows, shrinkage)
        lam = shrinkage_weight(shrinkage, len(constraints), m)
        self._set_labels(F, self._solve(F, constraints, lam, normalize))
        # the unshrunk fit, kept only if it fits the given constraints clearly better:
        # not tried when the shrunk fit violates too few of them for that to be possible
        if shrinkage == "auto" and fewer_violations_possible(self.labels_, constraints):
            shrunk = self.betas_, self.objective_, self.kkt_, self.embedding_, self.labels_
            shrunk_rows = self._normalized_rows_, self._centers_
            self._set_labels(F, self._solve(F, constraints, 0.0, normalize))
            if clearly_fewer_violations(self.labels_, shrunk[-1], constraints):
                lam = 0.0
            else:
                self.betas_, self.objective_, self.kkt_, self.embedding_, self.labels_ = shrunk
                self._normalized_rows_, self._centers_ = shrunk_rows
        self.shrinkage_ = lam
        return self

    def _solve(self, F, constraints, lam, normalize):
        """Fit ``betas_``; returns whether k-means should normalise the rows."""
        res = ccskl_spectrum(F, constraints, shrinkage=lam, n_clusters=self.n_clusters)
        self.betas_, self.objective_, self.kkt_ = res.beta, res.objective, res.kkt
        if not np.any(res.beta > 0):
            warnings.warn(
                "CCSKL learnt an all-zero spectrum (degenerate constraints); falling back "
                "to the unconstrained spectral embedding.",
                RuntimeWarning,
                stacklevel=4,
            )
            self.betas_ = (np.arange(F.shape[1]) < self.n_clusters).astype(np.float64)
            return True
        return normalize

    def _set_labels(self, F, normalize):
        self.embedding_ = F * np.sqrt(self.betas_)
        self.labels_ = kmeans_rows(
            self.embedding_,
            self.n_clusters,
            normalize=normalize,
            n_init=self.n_init,
            random_state=self.random_state,
        )
        self._normalized_rows_ = normalize
        emb = normalize_rows(self.embedding_) if normalize else self.embedding_
        self._centers_ = cluster_means(emb, self.labels_, self.n_clusters)

    def _embed_new(self, C):
        F = self._njw_embed_new(C, self.eigenvectors_, self.eigenvalues_, self.betas_ > 0)
        if F is None:
            return None
        F = F * np.sqrt(self.betas_)
        return normalize_rows(F) if self._normalized_rows_ else F


CCSKL.__doc__ = with_guard_doc(CCSKL.__doc__, "NCut at its defaults, from the same eigenvectors")
