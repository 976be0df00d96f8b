"""Clustering quality measures used by the papers.

* :func:`clustering_error`: 1 - accuracy under the best one-to-one matching of clusters
  to classes (Hungarian), the measure of CCSR, CCSKL and SCACS (ACC = 1 - error).
* :func:`majority_vote_error`: every cluster takes its majority class (COSC).
* :func:`adjusted_rand_score`, :func:`normalized_mutual_info_score` (LSCP; scikit-learn).
* :func:`partition_scores`: the four label scores above from one contingency table.
* :func:`normalized_cut`: sum over clusters of cut(C, rest) / vol(C) on a graph.
* :func:`violated_fraction`: share of the pairwise constraints a labelling breaks.
* :func:`partition_diagnostics`: why a fitted partition looks degenerate (tiny clusters
  nothing asks for, constraints ignored); every estimator's ``fit`` warns with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from .constraints import Constraints

__all__ = [
    "VIOLATION_WARN_RATIO",
    "PartitionCounts",
    "adjusted_rand_score",
    "chance_violated_fraction",
    "clearly_fewer_violations",
    "clustering_error",
    "constraints_not_followed",
    "contingency_scores",
    "fewer_violations_possible",
    "majority_vote_error",
    "min_cluster_size",
    "normalized_cut",
    "normalized_mutual_info_score",
    "partition_diagnostics",
    "partition_scores",
    "unrequested_small_clusters",
    "violated_fraction",
]


def _check_pair(y_true, y_pred) -> tuple[np.ndarray, np.ndarray]:
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if y_true.ndim != 1 or y_pred.ndim != 1:
        raise ValueError("y_true and y_pred must be 1-d label arrays.")
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true has {len(y_true)} labels but y_pred has {len(y_pred)}.")
    if len(y_true) == 0:
        raise ValueError("y_true and y_pred are empty.")
    return y_true, y_pred


def contingency_matrix(y_true: ArrayLike, y_pred: ArrayLike) -> np.ndarray:
    """Counts ``C[i, j]`` of points of class ``i`` in cluster ``j`` (classes and clusters in
    sorted order), dense int64 of shape (n_classes, n_clusters)."""
    y_true, y_pred = _check_pair(y_true, y_pred)
    classes, ti = np.unique(y_true, return_inverse=True)
    clusters, pj = np.unique(y_pred, return_inverse=True)
    flat = ti.ravel() * len(clusters) + pj.ravel()
    counts = np.bincount(flat, minlength=len(classes) * len(clusters))
    return counts.reshape(len(classes), len(clusters)).astype(np.int64)


def _ari(C: np.ndarray) -> float:
    """Adjusted Rand index from a contingency table, through the pair confusion counts
    (Hubert & Arabie 1985), with scikit-learn's convention for identical trivial
    partitions (1.0)."""
    n = float(C.sum())
    both = float((C.astype(float) * (C - 1)).sum())  # ordered pairs together in both
    same_class = float((C.sum(axis=1).astype(float) ** 2).sum()) - n
    same_cluster = float((C.sum(axis=0).astype(float) ** 2).sum()) - n
    tp, fp, fn = both, same_cluster - both, same_class - both
    tn = n * n - n - tp - fp - fn
    if fn == 0 and fp == 0:
        return 1.0
    return float(2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn)))


def _entropy(counts: np.ndarray) -> float:
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def _nmi(C: np.ndarray) -> float:
    """Normalized mutual information (arithmetic mean of the entropies, natural log), as
    scikit-learn's default, from a contingency table."""
    if C.shape[0] == C.shape[1] == 1:
        return 1.0
    n = float(C.sum())
    a, b = C.sum(axis=1).astype(float), C.sum(axis=0).astype(float)
    i, j = np.nonzero(C)
    nij = C[i, j].astype(float)
    mi = max(float((nij / n * (np.log(nij) + np.log(n) - np.log(a[i]) - np.log(b[j]))).sum()), 0.0)
    if mi == 0.0:
        return 0.0
    return float(mi / ((_entropy(a) + _entropy(b)) / 2.0))


def partition_scores(y_true: ArrayLike, y_pred: ArrayLike) -> dict[str, float]:
    """:func:`clustering_error`, :func:`majority_vote_error`, :func:`adjusted_rand_score` and
    :func:`normalized_mutual_info_score` (arithmetic normalisation) from one contingency
    table: the same values (to rounding), without scikit-learn's per-call input checks,
    which cost more than the scores themselves when a protocol scores thousands of small
    partitions."""
    return contingency_scores(contingency_matrix(y_true, y_pred))


def contingency_scores(C: ArrayLike) -> dict[str, float]:
    """The scores of :func:`partition_scores` from a contingency table ``C`` (classes x
    clusters counts), such as one summed over the partitions of a table on a cluster."""
    C = np.asarray(C, dtype=np.int64)
    n = C.sum()
    rows, cols = linear_sum_assignment(C, maximize=True)
    return {
        "error": float(1.0 - C[rows, cols].sum() / n),
        "majority_error": float(1.0 - C.max(axis=0).sum() / n),
        "ari": _ari(C),
        "nmi": _nmi(C),
    }


def clustering_error(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Fraction of points misclassified under the best cluster-to-class matching.

    The matching is one-to-one (Hungarian algorithm on the contingency table); when the
    numbers of clusters and classes differ, unmatched clusters count as errors.
    """
    y_true, y_pred = _check_pair(y_true, y_pred)
    C = contingency_matrix(y_true, y_pred)
    rows, cols = linear_sum_assignment(C, maximize=True)
    return float(1.0 - C[rows, cols].sum() / len(y_true))


def majority_vote_error(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Fraction of points whose class differs from the majority class of their cluster.

    Several clusters may take the same class, so this is at most :func:`clustering_error`.
    """
    y_true, y_pred = _check_pair(y_true, y_pred)
    C = contingency_matrix(y_true, y_pred)
    return float(1.0 - C.max(axis=0).sum() / len(y_true))


def normalized_cut(W: ArrayLike, labels: ArrayLike) -> float:
    """Normalized multi-cut ``sum_l cut(C_l, V \\ C_l) / vol(C_l)`` of ``labels`` on ``W``.

    ``vol`` is the sum of degrees. Clusters of zero volume contribute 0 if their cut is 0
    (isolated points) and make the value infinite otherwise.
    """
    W = sp.csr_matrix(W)
    labels = np.asarray(labels)
    if W.shape[0] != W.shape[1] or W.shape[0] != len(labels):
        raise ValueError(
            f"W has shape {W.shape} but labels has {len(labels)} entries; W must be square "
            "with one row per label."
        )
    _, lab = np.unique(labels, return_inverse=True)
    k = int(lab.max()) + 1
    H = sp.csr_matrix((np.ones(len(lab)), (np.arange(len(lab)), lab)), shape=(len(lab), k))
    within = np.asarray((H.T @ W @ H).diagonal()).ravel()
    vol = np.asarray(H.T @ np.asarray(W.sum(axis=1))).ravel()
    cut = vol - within
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(vol > 0, cut / np.where(vol > 0, vol, 1), np.where(cut > 0, np.inf, 0))
    return float(terms.sum())


def violated_fraction(labels: ArrayLike, constraints: Constraints) -> float:
    """Fraction of the constraints that ``labels`` violates (0 when there are none)."""
    if len(constraints) == 0:
        return 0.0
    return float(np.mean(constraints.violated(labels)))


@dataclass(frozen=True)
class PartitionCounts:
    """What the diagnostics need of a partition, without the whole labelling: the clusters'
    names and sizes, and the labels of the points the pairs name.

    Attributes
    ----------
    names, sizes : ndarray
        Every cluster's label and number of points.
    points : ndarray of int
        The constrained points (sorted).
    labels : ndarray
        Their labels.
    """

    names: np.ndarray
    sizes: np.ndarray
    points: np.ndarray
    labels: np.ndarray

    @classmethod
    def of(cls, labels: ArrayLike, constraints: Constraints) -> PartitionCounts:
        """The counts of an in-memory labelling."""
        labels = np.asarray(labels)
        if labels.shape != (constraints.n_samples,):
            raise ValueError(
                f"labels has shape {labels.shape}, expected ({constraints.n_samples},) for "
                "these constraints."
            )
        names, sizes = np.unique(labels, return_counts=True)
        points = constraints.constrained_points
        return cls(names, sizes, points, labels[points])

    @property
    def n_samples(self) -> int:
        return int(self.sizes.sum())

    def at(self, idx: np.ndarray) -> np.ndarray:
        """Labels of the constrained points ``idx`` (global indices)."""
        return self.labels[np.searchsorted(self.points, idx)]

    def violated(self, constraints: Constraints) -> np.ndarray:
        """:meth:`Constraints.violated` from the counts."""
        ml, cl = constraints.must_link, constraints.cannot_link
        return np.concatenate(
            [self.at(ml[:, 0]) != self.at(ml[:, 1]), self.at(cl[:, 0]) == self.at(cl[:, 1])]
        )


def _counts(labels: ArrayLike | PartitionCounts, constraints: Constraints) -> PartitionCounts:
    return (
        labels if isinstance(labels, PartitionCounts) else PartitionCounts.of(labels, constraints)
    )


def chance_violated_fraction(
    labels: ArrayLike | PartitionCounts, constraints: Constraints
) -> float:
    """Share of ``constraints`` that a partition unrelated to them would violate.

    The expectation when the pairs fall on random points of a partition with the cluster
    proportions ``p`` of ``labels``: a must-link is violated with probability
    ``1 - sum p_c^2``, a cannot-link with ``sum p_c^2`` (0 when there are no constraints).
    ``labels`` may be given as its :class:`PartitionCounts`.
    """
    if len(constraints) == 0:
        return 0.0
    sizes = _counts(labels, constraints).sizes
    same = float(np.sum((sizes / sizes.sum()) ** 2))
    n_ml, n_cl = constraints.n_must_link, constraints.n_cannot_link
    return (n_ml * (1.0 - same) + n_cl * same) / (n_ml + n_cl)


def min_cluster_size(n_samples: int) -> int:
    """The size under which a cluster no cannot-link asks for makes a partition degenerate
    (:func:`partition_diagnostics`): ``max(2, 1 % of n_samples)``."""
    return max(2, int(np.ceil(0.01 * n_samples)))


def unrequested_small_clusters(
    labels: ArrayLike | PartitionCounts, constraints: Constraints, min_size: int
) -> list[tuple[int, int]]:
    """``(label, size)`` of the clusters under ``min_size`` points that no cannot-link asks for.

    A small cluster is asked for when it cannot be merged into any other cluster without
    breaking a cannot-link, i.e. a cannot-link joins it to every other cluster.
    """
    counts = _counts(labels, constraints)
    names, sizes = counts.names, counts.sizes
    small = [(int(c), int(s)) for c, s in zip(names, sizes, strict=True) if s < min_size]
    if not small or len(names) < 2:
        return small
    cl = constraints.cannot_link
    la, lb = counts.at(cl[:, 0]), counts.at(cl[:, 1])
    linked: dict[int, set] = {}
    for a, b in zip(la.tolist(), lb.tolist(), strict=True):
        if a != b:
            linked.setdefault(a, set()).add(b)
            linked.setdefault(b, set()).add(a)
    others = len(names) - 1
    return [(c, s) for c, s in small if len(linked.get(c, ())) < others]


def _clearly_fewer_bound(reference: ArrayLike, constraints: Constraints) -> float:
    """The violated fraction below which a partition violates clearly fewer of
    ``constraints`` than ``reference`` (see :func:`clearly_fewer_violations`)."""
    n_cons = len(constraints)
    v_ref = violated_fraction(reference, constraints)
    se = np.sqrt(max(v_ref, 1.0 / n_cons) * (1.0 - v_ref) / n_cons)
    return v_ref - 2.0 * se


def fewer_violations_possible(reference: ArrayLike, constraints: Constraints) -> bool:
    """Whether any partition could violate clearly fewer of ``constraints`` than
    ``reference`` (:func:`clearly_fewer_violations`): False when ``reference`` violates so
    few that the bound is not above zero, so an alternative fit need not be tried."""
    return len(constraints) > 0 and _clearly_fewer_bound(reference, constraints) > 0


def clearly_fewer_violations(
    labels: ArrayLike, reference: ArrayLike, constraints: Constraints
) -> bool:
    """Whether ``labels`` violates clearly fewer of ``constraints`` than ``reference`` does.

    "Clearly": by more than two binomial standard errors of the reference's violated
    fraction ``v`` (``sqrt(max(v, 1/C) (1 - v) / C)`` for ``C`` constraints), so a handful
    of constraints never overturns the reference. The methods use it to choose between a
    regularised (or constrained) partition and an alternative fit.
    """
    if len(constraints) == 0:
        return False
    return violated_fraction(labels, constraints) < _clearly_fewer_bound(reference, constraints)


#: A fit warns when it violates at least this share of the chance-level violations.
VIOLATION_WARN_RATIO = 0.5


def partition_diagnostics(
    labels: ArrayLike | PartitionCounts,
    constraints: Constraints,
    n_clusters: int,
    *,
    check_violations: bool = True,
) -> list[str]:
    """Why a fitted partition looks degenerate; an empty list when it does not.

    Three checks: fewer than ``n_clusters`` clusters; a cluster of fewer than
    ``max(2, 1 % of n)`` points that no cannot-link asks for
    (:func:`unrequested_small_clusters`); at least 3 violated constraints and a violated
    share of at least :data:`VIOLATION_WARN_RATIO` times the share that a partition
    unrelated to the constraints would violate (:func:`chance_violated_fraction`), i.e. the
    constraints were largely ignored. ``check_violations=False`` skips the last check (for
    methods that do not use constraints). ``labels`` may be given as its
    :class:`PartitionCounts` (a labelling too large to hold).
    """
    labels = _counts(labels, constraints)
    n = labels.n_samples
    problems = []
    found = len(labels.names)
    if found < n_clusters:
        problems.append(f"{found} cluster(s) where {n_clusters} were asked for")
    min_size = min_cluster_size(n)
    small = unrequested_small_clusters(labels, constraints, min_size)
    if small and found > 1:
        sizes = ", ".join(str(s) for _, s in small[:5]) + (", ..." if len(small) > 5 else "")
        problems.append(
            f"{len(small)} cluster(s) under {min_size} points (sizes {sizes}) no cannot-link "
            "asks for"
        )
    if check_violations and len(constraints):
        n_violated = int(labels.violated(constraints).sum())
        share = n_violated / len(constraints)
        chance = chance_violated_fraction(labels, constraints)
        if n_violated >= 3 and share >= VIOLATION_WARN_RATIO * chance:
            problems.append(
                f"it violates {share:.0%} of the {len(constraints)} given constraints, where "
                f"a partition unrelated to them would violate {chance:.0%}"
            )
    return problems


def constraints_not_followed(
    name: str,
    n_violated: int,
    n_violated_reference: int | None,
    labels: ArrayLike | PartitionCounts,
    constraints: Constraints,
    hint: str = "Auto chooses whether to use them",
) -> str | None:
    """Why a constrained partition looks no closer to the given pairs than ignoring them,
    followed by ``hint``; ``None`` when it does not.

    With NCut's partition of the same graph at hand (``n_violated_reference``), the
    partition is flagged when it violates more of the pairs; without it, when it violates
    at least 3 and at least :data:`VIOLATION_WARN_RATIO` times the share a partition
    unrelated to them would (:func:`chance_violated_fraction`).
    """
    total, end = len(constraints), (f"; {hint}." if hint else ".")
    if n_violated_reference is not None:
        if n_violated <= n_violated_reference:
            return None
        return (
            f"{name} violates {n_violated} of the {total} given pairs, more than NCut's "
            f"partition of the same graph ({n_violated_reference})"
            + (f"; {hint}." if hint else ".")
        )
    share = n_violated / max(total, 1)
    chance = chance_violated_fraction(labels, constraints)
    if n_violated < 3 or share < VIOLATION_WARN_RATIO * chance:
        return None
    return (
        f"{name} violates {share:.0%} of the {total} given pairs, where a partition unrelated "
        f"to them would violate {chance:.0%}{end}"
    )
