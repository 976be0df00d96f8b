"""Folds over the constraints: k-fold splits of the pairs, or of the constrained points.

Every fit of a cross-validation still sees all the points; what is held out is pairs.
:func:`constraint_folds` is the public entry; :func:`split_constraints` also says which way
it folded (the model-selection search and the estimators' held-out guard use it).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.utils import check_random_state

from ..utils import Int, StrOptions, validate_params
from ._core import Constraints

__all__ = [
    "FOLD_BY",
    "MAX_MOVED_FRACTION",
    "UnfoldableConstraintsError",
    "constraint_folds",
    "split_constraints",
]


class UnfoldableConstraintsError(ValueError):
    """The constraints cannot be split into the requested folds (too few pairs or points,
    or every held-out pair implied by the others)."""


#: ``by="auto"`` folds the points instead of the pairs when the leakage rule would move
#: more than this share of the pairs out of the held-out folds
MAX_MOVED_FRACTION = 0.5

#: the ways to fold, as ``by`` / ``split_by`` take them
FOLD_BY = ("auto", "pairs", "points")


def _ml_components(ml: np.ndarray, n: int) -> np.ndarray:
    graph = sp.coo_matrix((np.ones(len(ml)), (ml[:, 0], ml[:, 1])), shape=(n, n))
    return connected_components(graph.tocsr(), directed=False)[1]


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


@validate_params(
    {
        "constraints": [Constraints],
        "n_splits": [Int(2)],
        "by": [StrOptions(set(FOLD_BY))],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def constraint_folds(
    constraints: Constraints,
    n_splits: int = 5,
    *,
    by: str = "auto",
    random_state: int | np.random.RandomState | None = None,
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
    return split_constraints(constraints, n_splits, by, random_state)[0]


def split_constraints(
    constraints: Constraints, n_splits: int, by: str, random_state
) -> tuple[list, str]:
    """:func:`constraint_folds` on checked arguments, and which way (``"pairs"`` or
    ``"points"``) it folded."""
    n_splits = int(n_splits)
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
