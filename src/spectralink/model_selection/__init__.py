"""Model selection with pairwise constraints: cross-validation over the constraints.

Constrained clustering has no labels to validate against, but the constraints themselves
can be held out: fit on part of the must-link / cannot-link pairs (always on *all* the
points) and count how many of the held-out pairs the partition satisfies (Pourrajabi et
al. 2014; Van Craenendonck & Blockeel 2017). :class:`ConstraintSearchCV` does this over a
scikit-learn style parameter grid, possibly across methods; :func:`constraint_folds`
builds the folds (over the pairs, or over the constrained points when the pairs imply one
another), :func:`balanced_constraint_score`, :func:`kappa_constraint_score` and
:func:`constraint_accuracy` are the built-in scores, :func:`prefer_reference` is a
one-standard-error rule that keeps a reference candidate unless another beats it beyond
the folds' noise, and :func:`relative_sigmas` expresses Gaussian bandwidths as multiples
of the library's default bandwidth r, and :func:`search_sample` and :func:`sample_scale`
let a search on large data run on a sample of it; :func:`scan_n_clusters` chooses k from
the pairs. :class:`spectralink.Auto` builds on them.

References
----------
Pourrajabi, M., Moulavi, D., Campello, R. J. G. B., Zimek, A., Sander, J., & Goebel, R.
(2014). Model selection for semi-supervised clustering. EDBT.
Van Craenendonck, T., & Blockeel, H. (2017). Constraint-based clustering selection.
Machine Learning 106(9-10).
Warrens, M. J. (2008). On the equivalence of Cohen's kappa and the Hubert-Arabie adjusted
Rand index. Journal of Classification 25(2).
"""

from ..constraints import MAX_MOVED_FRACTION, UnfoldableConstraintsError, constraint_folds
from ._candidates import (
    COSC_KWAY_MAX_SAMPLES,
    DEFAULT_METHODS,
    RelativeSigma,
    default_methods,
    named_candidates,
    relative_sigmas,
    searches_relative_sigma,
)
from ._n_clusters import (
    CLEAR_GAP_RATIO,
    K_MAX_CAP,
    KScan,
    check_k_range,
    choose_n_clusters,
    clear_eigengap_k,
    default_k_range,
    eigengap_n_clusters,
    scan_n_clusters,
)
from ._report import SearchReport
from ._scores import (
    SCORER_NAMES,
    balanced_constraint_score,
    constraint_accuracy,
    kappa_constraint_score,
    pair_kappa,
)
from ._search import ConstraintSearchCV, prefer_reference, race_survivors
from ._subsample import SCALE_QUERIES, sample_scale, search_sample

__all__ = [
    "CLEAR_GAP_RATIO",
    "COSC_KWAY_MAX_SAMPLES",
    "DEFAULT_METHODS",
    "K_MAX_CAP",
    "KScan",
    "MAX_MOVED_FRACTION",
    "SCALE_QUERIES",
    "SCORER_NAMES",
    "ConstraintSearchCV",
    "SearchReport",
    "RelativeSigma",
    "UnfoldableConstraintsError",
    "balanced_constraint_score",
    "constraint_accuracy",
    "check_k_range",
    "choose_n_clusters",
    "clear_eigengap_k",
    "constraint_folds",
    "default_k_range",
    "default_methods",
    "eigengap_n_clusters",
    "kappa_constraint_score",
    "named_candidates",
    "pair_kappa",
    "prefer_reference",
    "race_survivors",
    "relative_sigmas",
    "sample_scale",
    "scan_n_clusters",
    "search_sample",
    "searches_relative_sigma",
]
