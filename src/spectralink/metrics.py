"""Clustering quality measures used by the papers.

* :func:`clustering_error`: 1 - accuracy under the best one-to-one matching of clusters
  to classes (Hungarian), the measure of CCSR, CCSKL and SCACS (ACC = 1 - error).
* :func:`majority_vote_error`: every cluster takes its majority class (COSC).
* :func:`adjusted_rand_score`, :func:`normalized_mutual_info_score` (LSCP; scikit-learn).
* :func:`normalized_cut`: sum over clusters of cut(C, rest) / vol(C) on a graph.
* :func:`violated_fraction`: share of the pairwise constraints a labelling breaks.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix

from .constraints import Constraints

__all__ = [
    "adjusted_rand_score",
    "clustering_error",
    "majority_vote_error",
    "normalized_cut",
    "normalized_mutual_info_score",
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


def clustering_error(y_true, y_pred) -> float:
    """Fraction of points misclassified under the best cluster-to-class matching.

    The matching is one-to-one (Hungarian algorithm on the contingency table); when the
    numbers of clusters and classes differ, unmatched clusters count as errors.
    """
    y_true, y_pred = _check_pair(y_true, y_pred)
    C = contingency_matrix(y_true, y_pred)
    rows, cols = linear_sum_assignment(C, maximize=True)
    return float(1.0 - C[rows, cols].sum() / len(y_true))


def majority_vote_error(y_true, y_pred) -> float:
    """Fraction of points whose class differs from the majority class of their cluster.

    Several clusters may take the same class, so this is at most :func:`clustering_error`.
    """
    y_true, y_pred = _check_pair(y_true, y_pred)
    C = contingency_matrix(y_true, y_pred)
    return float(1.0 - C.max(axis=0).sum() / len(y_true))


def normalized_cut(W, labels) -> float:
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


def violated_fraction(labels, constraints: Constraints) -> float:
    """Fraction of the constraints that ``labels`` violates (0 when there are none)."""
    if len(constraints) == 0:
        return 0.0
    return float(np.mean(constraints.violated(labels)))
