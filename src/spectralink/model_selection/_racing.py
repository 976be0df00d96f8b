"""Fit only what can still win: the candidates raced over the folds of a search.

Successive halving over the folds (the pattern of scikit-learn's ``HalvingGridSearchCV``,
with the folds as the resource): every candidate is fitted on the first few folds, then
only those not clearly behind the leader by the paired rule (:func:`race_survivors`), and
at most the better half, go on to the rest of the first repeat, and every survivor of the
whole first repeat not clearly behind goes on to the later repeats (a candidate that can
still win is not dropped), unless the first repeat has already decided (:func:`decided`).
The reference (NCut) runs every round. A candidate that ignores the constraints (NCut) is
fitted once and scored on every fold: its partition does not depend on the training pairs.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from joblib import Parallel, delayed

from ..constraints import Constraints
from ._validation import fit_and_score, fit_once_and_score

__all__ = ["EARLY_FOLDS", "decided", "race_splits", "race_survivors"]

#: Folds every candidate is fitted on before the first cut of the race (three: the fewest
#: whose paired standard error is more than a guess; a t with 2 degrees of freedom).
EARLY_FOLDS = 3
#: The first cut is made at this many times the race's margin (few folds, heavier tails).
EARLY_MARGIN = 2.0
#: Besides the reference, at most this share of the candidates (rounded up) goes on from the
#: first folds to the rest of the first repeat, the best by mean score...
EARLY_SHARE = 0.5
#: ... and at most this many from the first repeat to the later ones (None: every one not
#: clearly behind). The repeats steady the means of the close leaders, which is what the
#: choice between them turns on; a cap of two dropped leaders that could still win and cost
#: Auto ARI against the exhaustive search (docs/results/model_selection/auto_cost.md).
REPEAT_SURVIVORS: int | None = None


def race_survivors(scores: np.ndarray, n_se: float) -> np.ndarray:
    """Which candidates stay in a race after a round of folds.

    ``scores`` is (candidates, folds), all candidates scored on the same folds. The leader
    is the candidate with the highest mean; for every candidate c let ``d_f = score(c, f)
    - score(leader, f)``. Candidate c is *clearly behind* when ``mean(d) < -n_se *
    std(d) / sqrt(n_folds)`` (sample std; with ``std(d) = 0``, when ``mean(d) < 0``): the
    paired one-standard-error rule of :func:`prefer_reference`, turned around. A
    candidate with a ``nan`` score (a failed fit) is behind; with no finite mean, all stay.

    Parameters
    ----------
    scores : ndarray of shape (n_candidates, n_folds)
    n_se : float
        Margin in standard errors; larger keeps more candidates.

    Returns
    -------
    ndarray of bool, shape (n_candidates,)
        True for the candidates that stay (the leader always does).
    """
    scores = np.asarray(scores, dtype=float)
    means = scores.mean(axis=1)
    if not np.isfinite(means).any():
        return np.ones(len(scores), dtype=bool)
    diff = scores - scores[int(np.nanargmax(means))]
    n_folds = scores.shape[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        gap = diff.mean(axis=1)
        se = diff.std(axis=1, ddof=1) / np.sqrt(n_folds) if n_folds > 1 else 0.0 * gap
    behind = ~np.isfinite(gap) | ((gap < -n_se * se) & (gap < 0))
    return ~behind


def decided(scores: np.ndarray, alive: np.ndarray, reference: int, n_se: float) -> bool:
    """Whether the first repeat has decided the search: besides the reference, one
    candidate is left (``alive``), and it beats the reference by more than ``n_se``
    standard errors of the paired differences (or the reference beats it so), so that
    more repeats, which steady the means of close candidates, cannot change the choice
    of :func:`prefer_reference` at one standard error."""
    others = [i for i in np.flatnonzero(alive) if i != reference]
    if len(others) != 1:
        return len(others) == 0
    d = np.asarray(scores[others[0]] - scores[reference], dtype=float)
    if len(d) < 2 or not np.all(np.isfinite(d)):
        return False
    se = d.std(ddof=1) / np.sqrt(len(d))
    return bool(d.mean() != 0) if se == 0 else bool(abs(d.mean()) > n_se * se)


def race_splits(
    n_cand: int,
    n_splits: int,
    fit: Callable[[list[int], list[int]], list[list[tuple]]],
    *,
    n_repeats: int,
    n_se: float | None,
    reference: int = 0,
    decide_n_se: float = 3.0,
) -> tuple[list[tuple], list[bool], int]:
    """Every one of ``n_cand`` candidates' result on every one of ``n_splits`` splits,
    raced.

    ``fit(candidates, split_indices)`` fits and scores the candidates (their indices) on
    those splits and returns, per candidate, one result tuple
    ``(scores, fit_time, error)`` per split. With ``n_se`` None every candidate runs every
    split. Otherwise the rounds are: the first :data:`EARLY_FOLDS` splits for all; the
    rest of the first repeat for those not behind at ``EARLY_MARGIN * n_se``, at most
    :data:`EARLY_SHARE` of them; the later repeats for those not behind at ``n_se`` over
    the first repeat (at most :data:`REPEAT_SURVIVORS` when set), unless :func:`decided` (at
    ``decide_n_se``). The ``reference`` always runs every round it
    reaches. Returns the results in (candidate, split) order over the splits used (the
    first repeat's only when it decided), splits not fitted as ``(nan scores, nan, None)``,
    which candidates were set aside, and the number of splits used.
    """
    n_first = n_splits // max(n_repeats, 1)
    rounds = _rounds(n_first, n_splits, raced=n_se is not None and n_cand > 1)
    results: list[list[Any]] = [[None] * n_splits for _ in range(n_cand)]
    alive = np.ones(n_cand, dtype=bool)
    used = n_splits
    for r, columns in enumerate(rounds):
        if r > 0:
            scores = _first_scores(results, alive, columns.start)
            # within the first repeat the cut is made on few folds: a wider margin
            margin = n_se * (EARLY_MARGIN if columns.start < n_first else 1.0)
            keep = race_survivors(scores[alive], margin)
            alive[np.flatnonzero(alive)[~keep]] = False
            cap = math.ceil(EARLY_SHARE * n_cand) if columns.start < n_first else REPEAT_SURVIVORS
            cap = n_cand if cap is None else cap
            alive &= best_of(scores, alive, reference, cap)
            alive[reference] = True
            if columns.start >= n_first and decided(scores, alive, reference, decide_n_se):
                used = n_first  # the later repeats would not change the choice
                break
        idx = [int(i) for i in np.flatnonzero(alive)]
        for i, out in zip(idx, fit(idx, list(columns)), strict=True):
            for j, res in zip(columns, out, strict=True):
                results[i][j] = res
    skipped = _skipped(results)
    flat = [res if res is not None else skipped for row in results for res in row[:used]]
    raced_out = [any(res is None for res in row[:used]) for row in results]
    return flat, raced_out, used


def best_of(scores: np.ndarray, alive: np.ndarray, reference: int, cap: int) -> np.ndarray:
    """``alive`` but for the ``cap`` best candidates by mean score besides ``reference``
    (ties: the earlier)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a row of failed fits: nan
        means = np.nanmean(np.where(alive[:, None], scores, 0.0), axis=1)
    means = np.where(alive & np.isfinite(means), means, -np.inf)
    means[reference] = -np.inf
    order = np.argsort(-means, kind="stable")
    keep = np.zeros(len(alive), dtype=bool)
    keep[order[:cap]] = True
    return keep & alive


def _rounds(n_first: int, n_splits: int, raced: bool) -> list[range]:
    if not raced:
        return [range(0, n_splits)]
    early = min(EARLY_FOLDS, n_first)
    rounds = [range(0, early)]
    if early < n_first:
        rounds.append(range(early, n_first))
    if n_first < n_splits:
        rounds.append(range(n_first, n_splits))
    return rounds


def _first_scores(results: list[list[Any]], alive: np.ndarray, stop: int) -> np.ndarray:
    """(candidates, splits before ``stop``) of the first score; nan where not fitted."""
    out = np.full((len(results), stop), np.nan)
    for i in np.flatnonzero(alive):
        out[i] = [np.nan if res is None else res[0][0] for res in results[i][:stop]]
    return out


def _skipped(results: list[list[Any]]) -> tuple:
    """A split not fitted, with as many nan scores as the fitted ones have."""
    n_scores = next(len(res[0]) for row in results for res in row if res is not None)
    return ([np.nan] * n_scores, np.nan, None)


def fit_splits(
    prepared: list[tuple],
    splits: list[tuple[Constraints, Constraints]],
    fit_seeds: list[int],
    scorers: Sequence,
    *,
    error_score: Any,
    eigen_seed: int,
    n_jobs: int | None,
    per_fit: int,
    bar: Any = None,
) -> Callable[[list[int], list[int]], list[list[tuple]]]:
    """The ``fit`` of :func:`race_splits` for a search: ``fit_and_score`` of every
    candidate on every split asked for (in parallel through joblib), a candidate that
    ignores the constraints fitted once and scored on each; ``bar`` (a tqdm bar or None)
    advances once per split scored."""

    def fit(candidates: list[int], columns: list[int]) -> list[list[tuple]]:
        tasks, layout = [], []
        for i in candidates:
            template, data, _ = prepared[i]
            if not getattr(type(template), "_uses_constraints", True):
                tests = [splits[j][1] for j in columns]
                tasks.append(
                    delayed(fit_once_and_score)(
                        template, data, tests, fit_seeds[columns[0]], list(scorers),
                        error_score, eigen_seed, per_fit,
                    )
                )  # fmt: skip
                layout.append(("once", len(columns)))
                continue
            for j in columns:
                train, test = splits[j]
                tasks.append(
                    delayed(fit_and_score)(
                        template, data, train, test, fit_seeds[j], list(scorers),
                        error_score, eigen_seed, per_fit,
                    )
                )  # fmt: skip
            layout.append(("each", len(columns)))
        flat = []
        for result, (kind, count) in zip(
            Parallel(n_jobs=n_jobs, return_as="generator")(tasks), _expand(layout), strict=True
        ):
            flat.extend(result if kind == "once" else [result])
            if bar is not None:
                bar.update(count if kind == "once" else 1)
        per = len(columns)
        return [flat[k * per : (k + 1) * per] for k in range(len(candidates))]

    return fit


def _expand(layout: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """One entry per joblib task: a "once" task per candidate, an "each" task per split."""
    out = []
    for kind, count in layout:
        out.extend([(kind, count)] if kind == "once" else [(kind, 1)] * count)
    return out
