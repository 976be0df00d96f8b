"""The built-in constraint scores: how a fold's held-out pairs judge a partition.

Every score takes ``(labels, test_constraints)`` and returns a float, higher is better;
``scoring`` of :class:`~spectralink.model_selection.ConstraintSearchCV` names them by
:data:`SCORER_NAMES` or takes such a callable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..constraints import Constraints
from ..metrics import violated_fraction
from ..utils import validate_params

__all__ = [
    "SCORER_NAMES",
    "balanced_constraint_score",
    "constraint_accuracy",
    "kappa_constraint_score",
    "pair_kappa",
]

#: A score: ``(labels, test_constraints) -> float``.
Scorer = Callable[[Any, Constraints], float]

_SCORE_PARAMS = {"labels": ["array-like"], "constraints": [Constraints]}


def _satisfied(labels, constraints: Constraints) -> tuple[np.ndarray, np.ndarray]:
    if constraints.is_empty:
        raise ValueError("cannot score a partition against no constraints.")
    ok = ~constraints.violated(labels)
    return ok[: constraints.n_must_link], ok[constraints.n_must_link :]


def pair_kappa(together: np.ndarray, must: np.ndarray) -> float:
    """Cohen's kappa between ``must`` (the pair is a must-link) and ``together`` (the
    partition puts it in one cluster), over pooled pairs; 0 when either is constant."""
    together = np.asarray(together, dtype=bool)
    must = np.asarray(must, dtype=bool)
    if len(must) == 0:
        return 0.0
    agree = np.mean(together == must)
    p_t, p_m = together.mean(), must.mean()
    chance = p_t * p_m + (1 - p_t) * (1 - p_m)
    if chance >= 1.0:
        return 0.0
    return float((agree - chance) / (1.0 - chance))


@validate_params(_SCORE_PARAMS, prefer_skip_nested_validation=True)
def balanced_constraint_score(labels: Any, constraints: Constraints) -> float:
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
    ml, cl = _satisfied(labels, constraints)
    return float(np.mean([part.mean() for part in (ml, cl) if len(part)]))


@validate_params(_SCORE_PARAMS, prefer_skip_nested_validation=True)
def kappa_constraint_score(labels: Any, constraints: Constraints) -> float:
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
    ml, cl = _satisfied(labels, constraints)
    if not (len(ml) and len(cl)):
        return float(np.concatenate([ml, cl]).mean())
    # a must-link is together when satisfied, a cannot-link when violated
    together = np.concatenate([ml, ~cl])
    return pair_kappa(together, np.arange(len(together)) < len(ml))


@validate_params(_SCORE_PARAMS, prefer_skip_nested_validation=True)
def constraint_accuracy(labels: Any, constraints: Constraints) -> float:
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


_SCORERS: dict[str, Scorer] = {
    "balanced": balanced_constraint_score,
    "kappa": kappa_constraint_score,
    "accuracy": constraint_accuracy,
}
#: The scores ``scoring`` takes by name.
SCORER_NAMES = tuple(_SCORERS)


def _check_scoring(scoring) -> Scorer:
    if callable(scoring):
        return scoring
    if isinstance(scoring, str) and scoring in _SCORERS:
        return _SCORERS[scoring]
    names = ", ".join(repr(name) for name in _SCORERS)
    raise ValueError(
        f"scoring must be {names} or a callable (labels, test_constraints) -> float, "
        f"got {scoring!r}."
    )


def _check_scorers(scoring) -> dict[str, Scorer] | None:
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
