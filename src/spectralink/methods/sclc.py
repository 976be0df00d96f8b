"""SCLC: fast normalized cut with linear constraints (Xu, Li & Schuurmans, CVPR 2009).

The two-cluster baseline of the COSC paper (Rangapuram & Hein 2012, Section 6), the one
other method there that satisfies the constraints by construction:

    minimise  v^T L v / v^T D v   subject to  B v = 0,

where the rows of ``B`` are ``e_i - e_j`` for every must-link (``v_i = v_j``),
``e_i + e_j`` for every cannot-link (``v_i = -v_j``) and ``d^T`` (balance). The
partition is ``sign(v)``.

Implemented here:

* must-link rows by merging each must-link component into one vertex whose weight is
  the sum of its degrees (``merge_vertices``): ``v_i = v_j`` on a quotient with ``D`` is
  exactly that contraction, and it leaves fewer rows for the projector;
* the constrained generalized eigenproblem by Lanczos on the projected, shifted operator
  (:func:`spectralink.spectral.constrained_fiedler`; the paper uses a projected power
  method on the same operator);
* sign rounding; entries that vanish (a cannot-link pair forced to ``v_i = v_j = 0``)
  go to the side that gives the smaller normalized cut.

SCLC's encoding ``v_i + v_j = 0`` is satisfied by ``v_i = v_j = 0``, so a cannot-link can
still be violated after rounding, and it pulls the cut towards equal volumes (COSC's
critique). It is defined for two clusters only.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ..constraints import Constraints
from ..graph import positive_degrees
from ..metrics import normalized_cut
from ..solvers.constraint_graph import merge_vertices, reduce_cannot_links, two_colouring
from ..spectral import constrained_fiedler
from ..utils import POSITIVE, Int, StrOptions
from ._base import COMMON_CONSTRAINTS, GUARD_CONSTRAINT, with_guard_doc
from ._graph import ConstrainedClusteringMixin

__all__ = ["SCLC", "sign_partition"]


def sign_partition(W: sp.spmatrix, v: np.ndarray, *, zero_tol: float = 1e-8) -> np.ndarray:
    """Labels ``v > 0`` -> 1; the entries with ``|v| <= zero_tol * max |v|`` join the side
    (all of them together, as in SCLC) that gives the smaller normalized cut on ``W``.
    """
    v = np.asarray(v, dtype=float)
    zero = np.abs(v) <= zero_tol * np.abs(v).max()
    pos = (v > 0) & ~zero
    if not zero.any():
        return pos.astype(np.int64)
    best = None
    for side in (False, True):
        lab = np.where(zero, side, pos).astype(np.int64)
        if lab.min() == lab.max():
            continue
        cut = normalized_cut(W, lab)
        if best is None or cut < best[0]:
            best = (cut, lab)
    if best is None:
        raise ValueError("SCLC's eigenvector is zero on one side: no bipartition to round to.")
    return best[1]


class SCLC(ConstrainedClusteringMixin):
    """Normalized cut with linear constraints (SCLC), two clusters.

    Parameters
    ----------
    n_clusters : int, default=2
        Must be 2: the linear encoding ``v_i = -v_j`` of a cannot-link only exists for a
        bipartition. Use :class:`spectralink.COSC` for more clusters.
    affinity : {"adaptive_knn", "knn", "precomputed"}, default="adaptive_knn"
        ``"adaptive_knn"``: COSC's graph (:func:`spectralink.graph.adaptive_knn_affinity`),
        the graph of the paper that compares the two; ``"knn"``: the library's Gaussian
        k-NN graph; ``"precomputed"``: ``X`` is the affinity.
    n_neighbors : int, default=10
        Neighbours of the k-NN graph.
    sigma : float, default=None
        Bandwidth of ``affinity="knn"``.
    tol : float, default=1e-8
        Lanczos tolerance of the constrained eigenvector. The reference power iteration
        runs to convergence; a loose tolerance changes the signs of near-zero entries.
    maxiter : int, default=5000
        Lanczos restarts before a ``ConvergenceWarning``.
    random_state : int, RandomState or None
        Seeds the Lanczos start vector.
    <guard>

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    embedding_ : ndarray of shape (n_samples,)
        The constrained eigenvector ``v`` (``v_i = v_j`` on must-links, ``v_i = -v_j`` on
        cannot-links, ``d^T v = 0``).
    cut_ : float
        Normalized cut of ``labels_`` on ``affinity_matrix_``.
    n_violated_ : int
        Number of the given constraints the labels violate.
    affinity_matrix_ : sparse matrix of shape (n_samples, n_samples)

    Notes
    -----
    ``predict`` gives a new point the weighted vote of its ``n_neighbors`` nearest
    training points' labels, weighted by the fitted graph's weights (as
    :class:`~spectralink.COSC`). The constrained eigenvector solves the eigenproblem only
    up to the multipliers of the linear constraints (the balance row reaches every
    point), so reading the eigen-equation at a new point (Nyström) is not exact. With a
    feature affinity the model keeps a reference to the training features (n x
    n_features floats, also pickled); with ``"precomputed"`` ``predict`` takes affinities
    of shape (n_new, n_train).

    References
    ----------
    Xu, L., Li, W., & Schuurmans, D. (2009). Fast normalized cut with linear constraints.
    CVPR, 2866-2873.
    Rangapuram, S. S., & Hein, M. (2012). Constrained 1-spectral clustering. AISTATS
    (the comparison and the critique of the encoding).
    """

    _two_clusters_only = True
    _parameter_constraints = {
        "guard": GUARD_CONSTRAINT,
        "n_clusters": COMMON_CONSTRAINTS["n_clusters"],
        "affinity": [StrOptions({"adaptive_knn", "knn", "precomputed"})],
        "n_neighbors": COMMON_CONSTRAINTS["n_neighbors"],
        "sigma": COMMON_CONSTRAINTS["sigma"],
        "tol": [POSITIVE],
        "maxiter": [Int(1)],
        "random_state": ["random_state"],
    }

    #: k = 2 only: checked before any fit by ``spectralink compare``
    _two_clusters_only = True

    def __init__(
        self,
        n_clusters: int = 2,
        *,
        affinity: str = "adaptive_knn",
        n_neighbors: int = 10,
        sigma: float | None = None,
        tol: float = 1e-8,
        maxiter: int = 5000,
        random_state: int | np.random.RandomState | None = None,
        guard: str | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.tol = tol
        self.maxiter = maxiter
        self.random_state = random_state
        self.guard = guard

    def _feature_affinities(self) -> set:
        return {"knn", "adaptive_knn"}

    def _fit(self, X, constraints: Constraints):
        if self.n_clusters != 2:
            raise ValueError(
                f"SCLC partitions into 2 clusters only (got n_clusters={self.n_clusters}); "
                "its cannot-link encoding v_i = -v_j has no k-way form. Use COSC for k > 2."
            )
        W = self._affinity(X)
        d = positive_degrees(W, "SCLC")
        Wr, gr, mapping = merge_vertices(W, d, constraints.ml_components)
        clr = reduce_cannot_links(constraints.cannot_link, constraints.cl_weights, mapping)
        if Wr.shape[0] < 2:
            raise ValueError("the must-links join every point into one group: no bipartition.")
        # an odd cannot-link cycle admits no bipartition (and forces v = 0 on it)
        two_colouring(Wr.shape[0], clr[0], clr[1])
        rng = check_random_state(self.random_state)
        v_r = constrained_fiedler(
            Wr, gr, clr, random_state=rng, tol=self.tol, maxiter=self.maxiter, strict=True
        )
        v = v_r[mapping]
        self.affinity_matrix_ = W
        self.embedding_ = v
        self.labels_ = sign_partition(W, v)
        self.cut_ = normalized_cut(W, self.labels_)
        return self


SCLC.__doc__ = with_guard_doc(SCLC.__doc__, "NCut at its defaults")
