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
of the library's default bandwidth r. :class:`spectralink.Auto` builds on them.

References
----------
Pourrajabi, M., Moulavi, D., Campello, R. J. G. B., Zimek, A., Sander, J., & Goebel, R.
(2014). Model selection for semi-supervised clustering. EDBT.
Van Craenendonck, T., & Blockeel, H. (2017). Constraint-based clustering selection.
Machine Learning 106(9-10).
Warrens, M. J. (2008). On the equivalence of Cohen's kappa and the Hubert-Arabie adjusted
Rand index. Journal of Classification 25(2).
"""

from __future__ import annotations

import numbers
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs
from scipy.sparse.csgraph import connected_components
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import ParameterGrid
from sklearn.utils import check_random_state

from . import graph as _graph
from .constraints import Constraints, as_constraints
from .methods import shareable_knn_graph
from .metrics import violated_fraction
from .parallel import config_context, n_threads
from .registry import get_method
from .spectral import shared_eigenvectors
from .utils._validation import check_features

__all__ = [
    "ConstraintSearchCV",
    "RelativeSigma",
    "UnfoldableConstraintsError",
    "balanced_constraint_score",
    "constraint_accuracy",
    "constraint_folds",
    "kappa_constraint_score",
    "prefer_reference",
    "relative_sigmas",
]

_SEED_MAX = 2**31 - 1


# --------------------------------------------------------------------------- sigma
@dataclass(frozen=True)
class RelativeSigma:
    """A Gaussian bandwidth given as ``factor`` times the library's default scale r.

    r is :func:`spectralink.graph.sigma_from_distances` of the candidate's own k-NN
    search: the mean distance to the ``n_neighbors``-th neighbour (``n_neighbors``
    clipped to ``n_samples - 1`` as the estimators do). ``RelativeSigma(1.0)`` is
    therefore the estimators' ``sigma=None``. :class:`ConstraintSearchCV` resolves it
    to a float before fitting; build lists of them with :func:`relative_sigmas`.

    Parameters
    ----------
    factor : float
        Positive, finite multiple of r.
    """

    factor: float

    def __post_init__(self) -> None:
        f = self.factor
        if isinstance(f, bool) or not isinstance(f, numbers.Real) or not (np.isfinite(f) and f > 0):
            raise ValueError(f"a relative sigma factor must be positive and finite, got {f!r}.")
        object.__setattr__(self, "factor", float(f))

    def resolve(self, r: float) -> float:
        """The bandwidth ``factor * r``."""
        return self.factor * float(r)

    def __repr__(self) -> str:
        return f"{self.factor:g}r"


def relative_sigmas(factors: Iterable[float]) -> list[RelativeSigma]:
    """Bandwidths as multiples of the default r, for a ``"sigma"`` entry of a grid.

    Parameters
    ----------
    factors : iterable of float
        Positive multiples of r.

    Returns
    -------
    list of RelativeSigma

    Examples
    --------
    >>> relative_sigmas([0.5, 1, 2])
    [0.5r, 1r, 2r]
    """
    return [RelativeSigma(f) for f in factors]


# --------------------------------------------------------------------------- scores
def _satisfied(labels, constraints: Constraints) -> tuple[np.ndarray, np.ndarray]:
    ok = ~constraints.violated(labels)
    return ok[: constraints.n_must_link], ok[constraints.n_must_link :]


def balanced_constraint_score(labels, constraints: Constraints) -> float:
    """Mean of the fractions of must-links and of cannot-links that ``labels`` satisfies.

    When only one kind of pair is present, its fraction alone. Weights are ignored.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
    constraints : Constraints
        Non-empty.

    Returns
    -------
    float in [0, 1]
    """
    if constraints.is_empty:
        raise ValueError("cannot score a partition against no constraints.")
    ml, cl = _satisfied(labels, constraints)
    return float(np.mean([part.mean() for part in (ml, cl) if len(part)]))


def kappa_constraint_score(labels, constraints: Constraints) -> float:
    """Cohen's kappa between the pairs' kind and whether ``labels`` puts them together.

    The pairs form a 2 x 2 table: must-link or cannot-link, together or apart in
    ``labels``. Kappa is the agreement beyond what chance gives at the table's margins,
    ``(p_o - p_e) / (1 - p_e)``; on all the pairs of points it *is* the adjusted Rand index
    (Warrens 2008), so on a uniform sample of pairs (such as random held-out constraints)
    it estimates the ARI of ``labels`` against the unknown classes. Unlike the fraction
    satisfied, it does not reward over-splitting (all pairs apart scores 0), and unlike
    :func:`balanced_constraint_score` it also weighs how many cannot-link pairs a merge
    of two classes puts together, as the ARI does. When only one kind of pair is present
    (the table has one row) kappa is undefined; the fraction satisfied is returned, as
    :func:`balanced_constraint_score` does. Weights are ignored.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
    constraints : Constraints
        Non-empty.

    Returns
    -------
    float in [-1, 1]

    References
    ----------
    Warrens, M. J. (2008). On the equivalence of Cohen's kappa and the Hubert-Arabie
    adjusted Rand index. Journal of Classification 25(2).
    """
    if constraints.is_empty:
        raise ValueError("cannot score a partition against no constraints.")
    ml, cl = _satisfied(labels, constraints)
    if not (len(ml) and len(cl)):
        return float(np.concatenate([ml, cl]).mean())
    n = len(ml) + len(cl)
    # must-links together, cannot-links together, cannot-links apart
    ml_in, cl_in, cl_out = int(ml.sum()), int(len(cl) - cl.sum()), int(cl.sum())
    p_o = (ml_in + cl_out) / n
    together = (ml_in + cl_in) / n
    # chance agreement; below 1 as both kinds are present
    p_e = len(ml) / n * together + len(cl) / n * (1.0 - together)
    return float((p_o - p_e) / (1.0 - p_e))


def constraint_accuracy(labels, constraints: Constraints) -> float:
    """Fraction of the pairs (must-links and cannot-links together) ``labels`` satisfies.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
    constraints : Constraints
        Non-empty.

    Returns
    -------
    float in [0, 1]
    """
    if constraints.is_empty:
        raise ValueError("cannot score a partition against no constraints.")
    return 1.0 - violated_fraction(labels, constraints)


_SCORERS: dict[str, Callable[[Any, Constraints], float]] = {
    "balanced": balanced_constraint_score,
    "kappa": kappa_constraint_score,
    "accuracy": constraint_accuracy,
}
#: The scores ``scoring`` takes by name.
SCORER_NAMES = tuple(_SCORERS)


def _check_scoring(scoring) -> Callable[[Any, Constraints], float]:
    if callable(scoring):
        return scoring
    if isinstance(scoring, str) and scoring in _SCORERS:
        return _SCORERS[scoring]
    names = ", ".join(repr(name) for name in _SCORERS)
    raise ValueError(
        f"scoring must be {names} or a callable (labels, test_constraints) -> float, "
        f"got {scoring!r}."
    )


def _check_scorers(scoring) -> dict[str, Callable[[Any, Constraints], float]] | None:
    """``{name: scorer}`` for several scores (a list of names or a dict), else None."""
    if isinstance(scoring, Mapping):
        items = list(scoring.items())
    elif isinstance(scoring, (list, tuple)):
        if not all(isinstance(name, str) for name in scoring):
            raise ValueError(f"a list of scores holds score names, got {scoring!r}.")
        items = [(name, name) for name in scoring]
    else:
        return None
    names = [name for name, _ in items]
    if not items or len(set(names)) != len(names):
        raise ValueError(f"several scores need distinct names, at least one; got {scoring!r}.")
    for name in names:
        if not (isinstance(name, str) and name.isidentifier()):
            raise ValueError(f"score names must be identifiers (cv_results_ keys), got {name!r}.")
    return {name: _check_scoring(scorer) for name, scorer in items}


def prefer_reference(
    cv_results: Mapping,
    *,
    reference: int = 0,
    n_se: float = 1.0,
    n_repeats: int = 1,
    score: str = "score",
) -> int:
    """Choose a candidate only when it beats a reference beyond the folds' noise.

    A one-standard-error rule on paired differences. All candidates of a search are
    scored on the same folds, so for candidate c and fold f let
    ``d_f = score(c, f) - score(reference, f)``. Candidate c *beats the reference* when
    ``mean(d) > n_se * std(d) / sqrt(n_folds)`` (sample std; with ``std(d) = 0``, when
    ``mean(d) > 0``), where ``n_folds`` is the number of splits divided by
    ``n_repeats``. The result is the candidate with the highest mean score among those
    that beat the reference (ties: the earlier), else the reference. With repeated folds
    (:class:`ConstraintSearchCV`'s ``n_repeats_``), the splits of different repeats hold
    out the same pairs, so they count as one repeat's ``cv`` folds: averaging the repeats
    steadies the mean difference, while the standard error stays that of ``cv`` folds
    (counting every split would shrink it by ``sqrt(n_repeats)`` and let noise through).
    Use it as :class:`ConstraintSearchCV`'s ``refit`` (with :func:`functools.partial` for
    other arguments) to keep an unconstrained reference such as NCut unless the held-out
    constraints say clearly that a constrained candidate does better.

    Parameters
    ----------
    cv_results : dict
        :attr:`ConstraintSearchCV.cv_results_`.
    reference : int, default=0
        Index of the reference candidate.
    n_se : float, default=1.0
        Required margin in standard errors of the paired differences; 0 keeps any
        candidate with a higher mean than the reference.
    n_repeats : int, default=1
        Repeats of the folds behind ``cv_results`` (``ConstraintSearchCV.n_repeats_``).
    score : str, default="score"
        Which score of a search with several (``scoring`` a list or dict): its name; the
        columns read are ``mean_test_<score>`` and ``split<i>_test_<score>``.

    Returns
    -------
    int
        Index into ``cv_results["params"]``. Candidates with a ``nan`` mean are never
        chosen; with a ``nan`` reference the highest mean wins.
    """
    key = f"mean_test_{score}"
    if key not in cv_results:
        raise ValueError(f"cv_results has no {key!r}: score={score!r} is not one of its scores.")
    means = np.asarray(cv_results[key], dtype=float)
    n_cand = len(means)
    if not 0 <= reference < n_cand:
        raise ValueError(f"reference={reference} is not a candidate index (0..{n_cand - 1}).")
    if not (isinstance(n_se, numbers.Real) and np.isfinite(n_se) and n_se >= 0):
        raise ValueError(f"n_se must be a finite number >= 0, got {n_se!r}.")
    n_repeats = _check_n_repeats(n_repeats)
    if np.all(np.isnan(means)):
        raise ValueError("no candidate has a finite mean score.")
    if np.isnan(means[reference]):
        return int(np.nanargmax(means))
    n_splits = 0
    while f"split{n_splits}_test_{score}" in cv_results:
        n_splits += 1
    scores = np.column_stack([cv_results[f"split{f}_test_{score}"] for f in range(n_splits)])
    diff = scores - scores[reference]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nan rows
        gain = diff.mean(axis=1)
        n_folds = n_splits / n_repeats
        se = diff.std(axis=1, ddof=1) / np.sqrt(n_folds) if n_splits > 1 else 0.0 * gain
    beats = np.isfinite(gain) & (gain > n_se * se) & (gain > 0)
    beats[reference] = False
    if not beats.any():
        return int(reference)
    return int(np.argmax(np.where(beats, means, -np.inf)))


# --------------------------------------------------------------------------- folds
class UnfoldableConstraintsError(ValueError):
    """The constraints cannot be split into the requested folds (too few pairs or points,
    or every held-out pair implied by the others)."""


def _check_n_repeats(n_repeats) -> int:
    if isinstance(n_repeats, bool) or not isinstance(n_repeats, numbers.Integral) or n_repeats < 1:
        raise ValueError(
            f"n_repeats must be an integer >= 1 (repetitions of the folds), got {n_repeats!r}."
        )
    return int(n_repeats)


def _check_n_splits(n_splits) -> int:
    if isinstance(n_splits, bool) or not isinstance(n_splits, numbers.Integral) or n_splits < 2:
        raise ValueError(f"cv must be an integer >= 2 (the number of folds), got {n_splits!r}.")
    return int(n_splits)


def _pairs_subset(constraints: Constraints, index: np.ndarray) -> Constraints:
    """The pairs ``index`` of ``[must_link; cannot_link]``, weights kept."""
    m1 = constraints.n_must_link
    index = np.sort(np.asarray(index, dtype=np.int64))
    ml, cl = index[index < m1], index[index >= m1] - m1
    weights = np.concatenate([constraints.ml_weights[ml], constraints.cl_weights[cl]])
    return Constraints(
        constraints.must_link[ml],
        constraints.cannot_link[cl],
        n_samples=constraints.n_samples,
        weights=weights,
    )


def _ml_components(ml: np.ndarray, n: int) -> np.ndarray:
    graph = sp.coo_matrix((np.ones(len(ml)), (ml[:, 0], ml[:, 1])), shape=(n, n))
    return connected_components(graph.tocsr(), directed=False)[1]


#: ``by="auto"`` folds the points instead of the pairs when the leakage rule would move
#: more than this share of the pairs out of the held-out folds
MAX_MOVED_FRACTION = 0.5

_FOLD_BY = ("auto", "pairs", "points")


def _check_fold_by(by) -> str:
    if not isinstance(by, str) or by not in _FOLD_BY:
        raise ValueError(f"by must be one of {', '.join(map(repr, _FOLD_BY))}, got {by!r}.")
    return by


def _pair_folds(constraints: Constraints, n_splits: int, rng) -> tuple[list, int]:
    """Pair folds with the implied held-out pairs moved to training, and how many moved."""
    m1, m2 = constraints.n_must_link, constraints.n_cannot_link
    m = m1 + m2
    offset = int(rng.randint(n_splits))
    fold = np.empty(m, dtype=np.int64)
    fold[rng.permutation(m1)] = (offset + np.arange(m1)) % n_splits
    fold[m1 + rng.permutation(m2)] = (offset + m1 + np.arange(m2)) % n_splits

    n = constraints.n_samples
    pairs = np.vstack([constraints.must_link, constraints.cannot_link])
    is_ml = np.arange(m) < m1
    out, moved = [], 0
    for f in range(n_splits):
        held = fold == f
        comp = _ml_components(pairs[~held & is_ml], n)
        cl_train = pairs[~held & ~is_ml]
        a, b = comp[cl_train[:, 0]], comp[cl_train[:, 1]]
        cl_keys = np.minimum(a, b) * n + np.maximum(a, b)
        test = np.flatnonzero(held)
        ci, cj = comp[pairs[test, 0]], comp[pairs[test, 1]]
        implied = np.where(
            is_ml[test],
            ci == cj,
            np.isin(np.minimum(ci, cj) * n + np.maximum(ci, cj), cl_keys),
        )
        moved += int(implied.sum())
        train = np.sort(np.concatenate([np.flatnonzero(~held), test[implied]]))
        out.append((train, test[~implied]))
    return out, moved


def _point_folds(constraints: Constraints, n_splits: int, rng) -> list:
    """Folds of the constrained points: a fold holds out every pair touching its points."""
    pairs = np.vstack([constraints.must_link, constraints.cannot_link])
    points = np.unique(pairs)
    if len(points) < n_splits:
        raise UnfoldableConstraintsError(
            f"cv={n_splits} folds of the constrained points need at least {n_splits} of "
            f"them; the constraints involve {len(points)}."
        )
    offset = int(rng.randint(n_splits))
    fold_of = np.full(constraints.n_samples, -1, dtype=np.int64)
    fold_of[rng.permutation(points)] = (offset + np.arange(len(points))) % n_splits
    fi, fj = fold_of[pairs[:, 0]], fold_of[pairs[:, 1]]
    out = []
    for f in range(n_splits):
        held = (fi == f) | (fj == f)
        out.append((np.flatnonzero(~held), np.flatnonzero(held)))
    return out


def constraint_folds(
    constraints: Constraints, n_splits: int = 5, *, by: str = "auto", random_state=None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """k-fold split of the constraints (never of the fitted points), leakage-free.

    Pairs are indexed as in :meth:`Constraints.violated`: the must-links, then the
    cannot-links. Every fit still sees all the points; what is held out is pairs.

    **By pairs** (``by="pairs"``), in two steps.

    1. Assignment. The must-links are shuffled and dealt round-robin to the folds
       starting at a random fold; the cannot-links are shuffled and dealt on from where
       the must-links stopped. Every fold thus gets ``floor`` or ``ceil`` of
       ``n_pairs / n_splits`` pairs, and must-links (cannot-links) as soon as there are
       at least ``n_splits`` of them.
    2. Leakage removal. For fold f, let the training pairs be all pairs dealt to the
       other folds. A held-out must-link (i, j) is *implied* when i and j lie in one
       connected component of the training must-links; a held-out cannot-link (i, j) is
       implied when a training cannot-link joins the must-link components of i and j.
       Implied pairs are **moved into fold f's training set** (so every fit sees them)
       and are not scored. Adding an implied pair leaves the training closure unchanged,
       so no remaining held-out pair becomes implied by the move.

    Every pair is thus held out in exactly one fold unless it was moved for leakage, in
    which case it is held out nowhere.

    **By points** (``by="points"``). Constraints closed under transitivity, such as all
    the pairs among a labelled subset of points (:meth:`Constraints.from_labeled_subset`),
    imply most of any held-out part of them from the rest, so pair folds are left nearly
    empty. Point folds deal the *constrained points* (those in at least one pair),
    shuffled, round-robin to the folds; fold f holds out every pair with an endpoint
    among its points and trains on the pairs among the other points. No held-out pair
    can be implied by the training pairs, since its held-out endpoint is in none of them
    (for a labelled subset: the held-out points are scored against each other and
    against the training points, as labelled points never seen would be). A pair joining
    two folds' points is held out in both; training sets are smaller than with pair
    folds (about ``(1 - 1/n_splits)^2`` of the pairs).

    ``by="auto"`` (default) folds by pairs unless that leaves a fold without a held-out
    pair or moves more than ``MAX_MOVED_FRACTION`` (half) of the pairs for leakage; then
    by points.

    Parameters
    ----------
    constraints : Constraints
    n_splits : int, default=5
        Number of folds, >= 2, at most the number of pairs (by pairs) or of constrained
        points (by points).
    by : {"auto", "pairs", "points"}, default="auto"
    random_state : int, RandomState or None
        Seeds the shuffles.

    Returns
    -------
    list of (train, test) pairs of sorted int arrays
        Indices into ``[must_link; cannot_link]``.

    Raises
    ------
    UnfoldableConstraintsError (a ValueError)
        No constraints, fewer pairs (points) than folds, or (``by="pairs"``) a fold left
        without any held-out pair once the implied ones are moved.
    """
    return _make_folds(constraints, n_splits, by, random_state)[0]


def _make_folds(constraints: Constraints, n_splits, by, random_state) -> tuple[list, str]:
    """:func:`constraint_folds` and which way (``"pairs"`` or ``"points"``) it folded."""
    n_splits = _check_n_splits(n_splits)
    by = _check_fold_by(by)
    m1, m2 = constraints.n_must_link, constraints.n_cannot_link
    m = m1 + m2
    if m == 0:
        raise UnfoldableConstraintsError(
            "constraint cross-validation needs constraints: got no must-link or cannot-link pair."
        )
    rng = check_random_state(random_state)
    if by == "points":
        return _point_folds(constraints, n_splits, rng), "points"
    if m < n_splits:
        raise UnfoldableConstraintsError(
            f"cv={n_splits} folds need at least {n_splits} constraints; got {m} "
            f"({m1} must-links, {m2} cannot-links)."
        )
    folds, moved = _pair_folds(constraints, n_splits, rng)
    empty = next((f for f, (_, test) in enumerate(folds) if len(test) == 0), None)
    if by == "auto" and (empty is not None or moved > MAX_MOVED_FRACTION * m):
        return _point_folds(constraints, n_splits, rng), "points"
    if empty is not None:
        raise UnfoldableConstraintsError(
            f"fold {empty} of {n_splits} has no held-out constraint that the other folds' "
            "transitive closure does not already imply; use fewer folds, less redundant "
            "constraints, or by='points' (all the pairs among a labelled subset of points, "
            "as Constraints.from_labeled_subset draws, imply one another and cannot be "
            "cross-validated pair by pair)."
        )
    return folds, "pairs"


# --------------------------------------------------------------------------- fitting
def _n_samples(X) -> int:
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    return len(X)


def _seed_if_unset(estimator, seed: int | None):
    if seed is not None:
        params = estimator.get_params(deep=False)
        if "random_state" in params and params["random_state"] is None:
            estimator.set_params(random_state=seed)
    return estimator


def _fit_and_score(
    template, data, train, test, seed, scorers, error_score, eigen_seed, n_threads_=None
):
    """Fit a clone of ``template`` on ``data`` and the training pairs, score on the test
    pairs with every scorer of ``scorers`` (a list), on ``n_threads_`` threads. Returns
    ``(scores, fit_time, error message or None)``."""
    estimator = _seed_if_unset(clone(template), seed)
    t0 = time.perf_counter()
    try:
        # clear=False: a worker process keeps the eigenvectors for its next tasks (bounded)
        with (
            warnings.catch_warnings(),
            config_context(n_jobs=n_threads_),
            shared_eigenvectors(eigen_seed, clear=False),
        ):
            # degenerate partitions / disconnected graphs are what the score measures
            warnings.simplefilter("ignore")
            estimator.fit(data, constraints=train)
    except Exception as exc:
        if isinstance(error_score, str):  # "raise"
            raise
        failed = [float(error_score)] * len(scorers)
        return failed, time.perf_counter() - t0, f"{type(exc).__name__}: {exc}"
    fit_time = time.perf_counter() - t0
    return [float(scorer(estimator.labels_, test)) for scorer in scorers], fit_time, None


# --------------------------------------------------------------------------- search
class ConstraintSearchCV(BaseEstimator):
    """Exhaustive parameter search scored by cross-validation over the constraints.

    The constraints are split into ``cv`` folds (:func:`constraint_folds`); every
    candidate is fitted once per fold on **all the points** with the training pairs, and
    its partition is scored on the held-out pairs. The candidate with the best mean score
    is refitted on all the constraints.

    Parameters
    ----------
    estimator : estimator instance
        A spectralink estimator (``fit(X, constraints=...)``, ``labels_``); the base of
        every candidate without an ``"estimator"`` entry, and the source of
        ``n_clusters`` for methods given by name.
    param_grid : dict or list of dicts
        As :class:`sklearn.model_selection.ParameterGrid`. The key ``"estimator"`` takes
        estimator instances or registry names (:func:`spectralink.registry.get_method`;
        built with the base estimator's ``n_clusters``) to search across methods; the
        other keys are set with ``clone(est).set_params(**params)``. A ``"sigma"`` value
        may be a :class:`RelativeSigma` (see :func:`relative_sigmas`), a multiple of the
        default bandwidth r of that candidate's ``n_neighbors``.
    cv : int, default=5
        Number of folds over the constraints, >= 2.
    n_repeats : int, default=1
        Repetitions of the ``cv``-fold split with independent shuffles (as
        :class:`sklearn.model_selection.RepeatedKFold`): every candidate is fitted
        ``cv * n_repeats`` times and scored on the mean over all the splits. With few
        held-out pairs per fold, which pairs land in which fold moves the scores as much
        as the candidates differ; repeating averages that draw out. The repeats fold the
        same way as the first (``split_by_``); a repeat whose pair folds would leave a
        fold without a held-out pair is skipped.
    split_by : {"auto", "pairs", "points"}, default="auto"
        How the folds are built (:func:`constraint_folds`): held-out pairs, or held-out
        constrained points with every pair touching them (for constraints closed under
        transitivity, such as all the pairs among labelled points); ``"auto"`` uses pairs
        unless the leakage rule would leave a fold empty or move more than half of them.
    scoring : {"balanced", "kappa", "accuracy"} or callable, default="balanced"
        ``"balanced"``: :func:`balanced_constraint_score`; ``"kappa"``:
        :func:`kappa_constraint_score` (on random pairs, an estimate of the ARI);
        ``"accuracy"``: :func:`constraint_accuracy`; a callable
        ``(labels, test_constraints) -> float``. Higher is better. Several scores, as in
        scikit-learn: a list of names or a dict ``{name: name or callable}``; every fit
        is then scored with each (one fit, several scores) and ``cv_results_`` has the
        columns ``*_test_<name>`` instead of ``*_test_score``.
    refit : bool, str or callable, default=True
        Refit the best candidate on all the constraints (``best_estimator_``,
        ``labels_``). A callable ``cv_results_ -> index`` chooses the candidate instead
        of the highest mean score (as in scikit-learn), e.g. :func:`prefer_reference`
        for a one-standard-error rule against a reference candidate. With several
        scores: the name of the one that ranks the candidates, a callable, or False (no
        ``best_*`` attributes then).
    n_jobs : int or None, default=None
        Fits run in parallel through joblib. Results do not depend on it. The workers
        share the library's thread count (:func:`spectralink.set_config`): each fit runs
        on ``max(1, threads // workers)`` threads.
    random_state : int, RandomState or None, default=None
        Seeds the folds and, up front, one seed per fold (shared by all candidates, so
        they are compared on the same random draws) and one for the refit, given to every
        estimator whose ``random_state`` is None.
    verbose : int, default=0
        Show a tqdm progress bar over the fits when > 0.
    error_score : "raise" or float, default=np.nan
        Score of a fit that raises. ``"raise"`` re-raises. Some fits failing gives a
        :class:`sklearn.exceptions.FitFailedWarning`; all failing, a ``ValueError``.

    Attributes
    ----------
    cv_results_ : dict of arrays
        As scikit-learn's: ``params``, ``param_<name>`` (masked object arrays),
        ``split<i>_test_score``, ``mean_test_score``, ``std_test_score``,
        ``rank_test_score``, ``mean_fit_time``, ``std_fit_time``; with several scores,
        ``split<i>_test_<name>``, ``mean_test_<name>``, ... for each.
    best_index_ : int
        Candidate with the highest mean score; ties go to the **earlier** candidate in
        grid order (list an unconstrained reference such as NCut first to prefer it).
        Candidates with a ``nan`` mean are never chosen. With a callable ``refit``, the
        index it returns.
    best_params_ : dict
        ``cv_results_["params"][best_index_]`` (a relative sigma stays relative here).
    best_score_ : float
        ``cv_results_["mean_test_score"][best_index_]`` (with several scores, that of
        the one named by ``refit``; not set with a callable ``refit``).
    best_estimator_ : estimator
        With ``refit=True``: ``clone(estimator).set_params(**best_params_)`` (sigma
        resolved to a float), fitted on ``X`` with all the constraints.
    labels_ : ndarray of shape (n_samples,)
        ``best_estimator_.labels_``.
    n_splits_ : int
        Number of splits scored: ``cv`` times the repeats kept.
    n_repeats_ : int
        Number of ``cv``-fold splits kept (``n_repeats`` unless one was skipped).
    folds_ : list of (train, test)
        The folds (:func:`constraint_folds`), indices into ``[must_link; cannot_link]``,
        repeat after repeat.
    split_by_ : {"pairs", "points"}
        How they were built.
    multimetric_ : bool
        Whether several scores were computed.
    sigma_scales_ : dict
        ``{n_neighbors: r}`` for every k-NN search the search ran.

    Notes
    -----
    **Shared graphs.** A candidate that builds the library's k-NN Gaussian graph
    (``affinity="knn"``, standard ``_affinity``, precomputed graphs accepted) is fitted
    with ``affinity="precomputed"`` on a graph built once: the neighbour search
    (:func:`spectralink.graph.kneighbors`) runs once per distinct ``n_neighbors`` and
    :func:`spectralink.graph.gaussian_knn_graph` once per distinct ``(n_neighbors,
    sigma)``, shared by all candidates and folds (the graph does not depend on the
    constraints). The refit runs on the features like a user's own fit (one more
    neighbour search). Above :data:`spectralink.graph.ANN_THRESHOLD` points the shared
    approximate search is seeded from ``random_state``, not the estimator's.

    **Shared eigenvectors.** The fits run inside
    :func:`spectralink.spectral.shared_eigenvectors`: a method that takes the
    normalized-Laplacian eigenvectors of the graph it was given (NCut, CCSR, CCSKL) gets
    them decomposed once per graph and number of eigenvectors instead of once per fold
    (per worker process with ``n_jobs``), the iterative eigensolvers seeded from
    ``random_state``. Methods that change the graph with the constraints (SL, E2CP, LSCP)
    decompose their own graph every fit.

    Warnings raised by the fits inside the cross-validation (degenerate partitions,
    disconnected graphs) are silenced: the score is what judges them. The refit warns.

    References
    ----------
    Pourrajabi, M., Moulavi, D., Campello, R. J. G. B., Zimek, A., & Sander, J. (2014).
    Model selection for semi-supervised clustering. EDBT.
    Van Craenendonck, T., & Blockeel, H. (2017). Constraint-based clustering selection.
    Machine Learning 106(9-10).

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from spectralink import Constraints, NCut
    >>> from spectralink.model_selection import ConstraintSearchCV, relative_sigmas
    >>> X, y = make_blobs(60, centers=3, random_state=0)
    >>> c = Constraints.from_labels(y, 40, random_state=0)
    >>> search = ConstraintSearchCV(
    ...     NCut(3, n_neighbors=10), {"sigma": relative_sigmas([0.5, 1, 2])}, cv=3,
    ...     random_state=0).fit(X, constraints=c)
    >>> search.labels_.shape
    (60,)
    """

    def __init__(
        self,
        estimator,
        param_grid,
        *,
        cv: int = 5,
        n_repeats: int = 1,
        split_by: str = "auto",
        scoring: str | Callable[[Any, Constraints], float] = "balanced",
        refit: bool | Callable[[dict], int] = True,
        n_jobs: int | None = None,
        random_state=None,
        verbose: int = 0,
        error_score: str | float = np.nan,
    ) -> None:
        self.estimator = estimator
        self.param_grid = param_grid
        self.cv = cv
        self.n_repeats = n_repeats
        self.split_by = split_by
        self.scoring = scoring
        self.refit = refit
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.error_score = error_score

    # ------------------------------------------------------------------ helpers
    def _candidates(self) -> tuple[list[dict], list]:
        """Grid points and the (unfitted) estimator of each, params set."""
        if not hasattr(self.estimator, "get_params"):
            raise TypeError(
                f"estimator must be an estimator instance, got {type(self.estimator).__name__}."
            )
        grid = self.param_grid
        if not isinstance(grid, (Mapping, Sequence)) or isinstance(grid, str):
            raise TypeError("param_grid must be a dict or a list of dicts.")
        params_list = list(ParameterGrid(grid))
        if not params_list:
            raise ValueError("param_grid has no candidate.")
        base_k = self.estimator.get_params(deep=False).get("n_clusters")
        estimators = []
        for params in params_list:
            rest = dict(params)
            spec = rest.pop("estimator", self.estimator)
            if isinstance(spec, str):
                cls = get_method(spec)
                est = cls() if base_k is None else cls(n_clusters=base_k)
            elif hasattr(spec, "get_params"):
                est = clone(spec)
            else:
                raise TypeError(
                    f"param_grid 'estimator' values must be estimators or method names, got "
                    f"{spec!r}."
                )
            estimators.append(est.set_params(**rest))
        return params_list, estimators

    def _neighbors(self, X, k: int):
        """Cached k-NN search of the features for ``k`` neighbours (k clipped to n - 1)."""
        if k not in self._knn_cache:
            if self._features is None:
                self._features = check_features(X)
            dist, ind = _graph.kneighbors(self._features, k, random_state=self._knn_seed)
            self._knn_cache[k] = (dist, ind, _graph.sigma_from_distances(dist))
        return self._knn_cache[k]

    def _prepare(self, X, estimator):
        """``(cv_template, cv_data, feature_estimator)`` of one candidate."""
        n = _n_samples(X)
        params = estimator.get_params(deep=False)
        key = shareable_knn_graph(estimator)
        try:
            if key is not None:
                n_neighbors, sigma = key
                k = min(int(n_neighbors), n - 1)
                dist, ind, r = self._neighbors(X, k)
                if sigma is None:
                    value = r
                elif isinstance(sigma, RelativeSigma):
                    value = sigma.resolve(r)
                else:
                    value = float(sigma)
                feature_est = clone(estimator)
                if isinstance(sigma, RelativeSigma):
                    feature_est.set_params(sigma=value)
                if (k, value) not in self._graphs:
                    self._graphs[(k, value)] = _graph.gaussian_knn_graph(dist, ind, value)
                template = clone(feature_est).set_params(affinity="precomputed")
                return template, self._graphs[(k, value)], feature_est
            if isinstance(params.get("sigma"), RelativeSigma) and "n_neighbors" in params:
                k = min(int(params["n_neighbors"]), n - 1)
                r = self._neighbors(X, k)[2]
                estimator = clone(estimator).set_params(sigma=params["sigma"].resolve(r))
        except Exception:  # left to the candidate's own fit, scored error_score
            pass
        return estimator, X, estimator

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None, constraints=None) -> ConstraintSearchCV:
        """Run the search, then refit the best candidate when ``refit=True``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            What the candidates' ``fit`` takes (features, or an affinity when they are
            ``affinity="precomputed"``).
        y : None
            Ignored. Pass the constraints by keyword.
        constraints : Constraints or (must_link, cannot_link) pair
            Required and non-empty.

        Returns
        -------
        self
        """
        if isinstance(y, Constraints) or (isinstance(y, tuple) and len(y) == 2):
            raise TypeError("pass constraints by keyword: fit(X, constraints=...).")
        n_splits = _check_n_splits(self.cv)
        n_repeats = _check_n_repeats(self.n_repeats)
        split_by = _check_fold_by(self.split_by)
        multi = _check_scorers(self.scoring)
        scorers = multi if multi is not None else {"score": _check_scoring(self.scoring)}
        if multi is None and not (isinstance(self.refit, bool) or callable(self.refit)):
            raise ValueError(f"refit must be True, False or a callable, got {self.refit!r}.")
        if multi is not None and not (
            self.refit is False or callable(self.refit) or self.refit in multi
        ):
            raise ValueError(
                f"with several scores, refit must be the name of one of them {list(multi)}, "
                f"a callable or False; got {self.refit!r}."
            )
        error_score = self.error_score
        if not (
            (isinstance(error_score, str) and error_score == "raise")
            or (isinstance(error_score, numbers.Real) and not isinstance(error_score, bool))
        ):
            raise ValueError(f"error_score must be 'raise' or a number, got {error_score!r}.")
        if constraints is None:
            raise ValueError(
                "ConstraintSearchCV needs constraints: fit(X, constraints=...) with at least "
                "cv must-link / cannot-link pairs."
            )
        n = _n_samples(X)
        cons = as_constraints(constraints, n)
        params_list, estimators = self._candidates()

        rng = check_random_state(self.random_state)
        fold_seed = int(rng.randint(_SEED_MAX))
        self._knn_seed = int(rng.randint(_SEED_MAX))
        fit_seeds = [int(s) for s in rng.randint(_SEED_MAX, size=n_splits)]
        self._refit_seed = int(rng.randint(_SEED_MAX))
        eigen_seed = int(rng.randint(_SEED_MAX))

        folds, self.split_by_ = _make_folds(cons, n_splits, split_by, fold_seed)
        # later repeats draw their seeds after all of the first's, so that n_repeats=1
        # is exactly the single split
        self.n_repeats_ = 1
        for _ in range(1, n_repeats):
            seed = int(rng.randint(_SEED_MAX))
            more_fit_seeds = [int(s) for s in rng.randint(_SEED_MAX, size=n_splits)]
            try:
                more, _ = _make_folds(cons, n_splits, self.split_by_, seed)
            except UnfoldableConstraintsError:
                continue
            folds += more
            fit_seeds += more_fit_seeds
            self.n_repeats_ += 1
        n_splits = len(folds)
        splits = [(_pairs_subset(cons, tr), _pairs_subset(cons, te)) for tr, te in folds]
        self.folds_ = folds

        self._features, self._knn_cache, self._graphs = None, {}, {}
        try:
            prepared = [self._prepare(X, est) for est in estimators]
        finally:
            self._features = None
        self.sigma_scales_ = {k: v[2] for k, v in self._knn_cache.items()}
        self._knn_cache, self._graphs = {}, {}

        self._feature_estimators = [est for _, _, est in prepared]
        # the workers share the library's threads (each fit gets its part of them)
        per_fit = max(1, n_threads() // effective_n_jobs(self.n_jobs))
        tasks = [
            delayed(_fit_and_score)(
                template, data, train, test, fit_seeds[f], list(scorers.values()), error_score,
                eigen_seed,
                per_fit,
            )
            for template, data, _ in prepared
            for f, (train, test) in enumerate(splits)
        ]
        with shared_eigenvectors(eigen_seed):  # emptied when the search ends
            out = Parallel(n_jobs=self.n_jobs, return_as="generator")(tasks)
            if self.verbose:
                from tqdm.auto import tqdm

                out = tqdm(out, total=len(tasks), desc="ConstraintSearchCV", unit="fit")
            results = list(out)

        n_cand = len(params_list)
        scores = np.array([r[0] for r in results], dtype=float).reshape(n_cand, n_splits, -1)
        times = np.array([r[1] for r in results], dtype=float).reshape(n_cand, n_splits)
        errors = [r[2] for r in results if r[2] is not None]
        if len(errors) == len(results):
            raise ValueError(f"all {len(results)} fits failed; the first error was: {errors[0]}")
        if errors:
            warnings.warn(
                f"{len(errors)} of {len(results)} fits failed and were scored "
                f"error_score={error_score!r}; the first error was: {errors[0]}",
                FitFailedWarning,
                stacklevel=2,
            )

        self.cv_results_ = self._format_results(params_list, scores, times, list(scorers))
        self.n_splits_ = n_splits
        self.multimetric_ = multi is not None
        if multi is not None and self.refit is False:
            return self  # no single best without a score to rank by (as scikit-learn)
        # the score that ranks; several with a callable refit: eligible when all are finite
        names = [self.refit] if isinstance(self.refit, str) else list(scorers)
        means = sum(self.cv_results_[f"mean_test_{name}"] for name in names)
        if np.all(np.isnan(means)):
            raise ValueError(
                "no candidate has a finite mean score (a fit failed or scored nan in every "
                f"candidate); the first error was: {errors[0] if errors else 'none'}"
            )
        if callable(self.refit):
            index = self.refit(self.cv_results_)
            if (
                isinstance(index, bool)
                or not isinstance(index, numbers.Integral)
                or not 0 <= index < n_cand
                or np.isnan(means[index])
            ):
                raise ValueError(
                    f"the refit callable must return the index of a candidate with a finite "
                    f"mean score (0..{n_cand - 1}), got {index!r}."
                )
            self.best_index_ = int(index)
        else:
            self.best_index_ = int(np.nanargmax(means))  # first maximum: earlier one wins
        self.best_params_ = params_list[self.best_index_]
        if multi is None or isinstance(self.refit, str):
            self.best_score_ = float(means[self.best_index_])
        if self.refit:
            self.best_estimator_ = self.candidate(self.best_index_).fit(X, constraints=cons)
            self.labels_ = self.best_estimator_.labels_
        return self

    def candidate(self, index: int):
        """The unfitted estimator of candidate ``index``, as the refit fits it.

        ``clone(estimator).set_params(**params)`` with a relative sigma resolved to the
        bandwidth the search used, and ``random_state`` (when None) set to the refit's
        seed. Lets a caller refit another candidate than ``best_index_`` on the features.

        Parameters
        ----------
        index : int
            Row of ``cv_results_``.

        Returns
        -------
        estimator
        """
        if not hasattr(self, "_feature_estimators"):
            raise AttributeError("candidate() needs a fitted search; call fit first.")
        return _seed_if_unset(clone(self._feature_estimators[index]), self._refit_seed)

    def fit_predict(self, X, y=None, constraints=None) -> np.ndarray:
        """Run the search and return the refitted best candidate's ``labels_``."""
        if not self.refit:
            raise ValueError("fit_predict needs refit=True.")
        return self.fit(X, y, constraints=constraints).labels_

    @staticmethod
    def _format_results(params_list, scores, times, score_names) -> dict:
        """scikit-learn's layout; ``scores`` is (candidates, splits, scores) with
        ``score_names`` the score names (``["score"]`` for one)."""
        n_cand, n_splits, _ = scores.shape
        results: dict[str, Any] = {"params": params_list}
        names = sorted({name for p in params_list for name in p})
        for name in names:
            col = np.ma.MaskedArray(np.empty(n_cand, dtype=object), mask=True)
            for i, p in enumerate(params_list):
                if name in p:
                    col[i] = p[name]
            results[f"param_{name}"] = col
        for j, name in enumerate(score_names):
            for f in range(n_splits):
                results[f"split{f}_test_{name}"] = scores[:, f, j]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # nan rows (failed fits)
                mean = scores[:, :, j].mean(axis=1)
                std = scores[:, :, j].std(axis=1)
            results[f"mean_test_{name}"] = mean
            results[f"std_test_{name}"] = std
            # scikit-learn's convention: equal scores share the best rank, nan ranks last
            filled = np.where(np.isnan(mean), -np.inf, mean)
            results[f"rank_test_{name}"] = rankdata(-filled, method="min").astype(np.int32)
        results["mean_fit_time"] = times.mean(axis=1)
        results["std_fit_time"] = times.std(axis=1)
        return results
