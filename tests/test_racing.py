"""Fit only what can still win: the race over the folds of a search (model_selection._racing).

The races here are built from fixed score tables, so what is fitted follows from the rule
alone, with no floating-point rounding in the way.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from spectralink import Constraints
from spectralink.methods.ncut import NCut
from spectralink.model_selection import ConstraintSearchCV
from spectralink.model_selection._racing import EARLY_FOLDS, decided, race_splits, race_survivors


def _fake_fit(table, calls):
    """A ``fit`` for race_splits that reads the scores from ``table`` (candidates x splits)
    and records which (candidate, split) it was asked for."""

    def fit(candidates, columns):
        calls.extend((i, j) for i in candidates for j in columns)
        return [[([float(table[i, j])], 0.0, None) for j in columns] for i in candidates]

    return fit


def test_a_candidate_clearly_behind_stops_after_the_first_folds():
    # 5 folds x 3 repeats; candidate 2 is far behind on every fold, 1 leads, 0 is NCut
    base = np.array([0.80, 0.82, 0.78, 0.81, 0.79])
    table = np.vstack([np.tile(base, 3), np.tile(base + 0.1, 3), np.tile(base - 0.5, 3)])
    table[1] += np.tile([0.01, -0.02, 0.0, 0.02, -0.01], 3)  # spread: the lead is not exact
    calls: list = []
    out, raced_out, used = race_splits(
        3, 15, _fake_fit(table, calls), n_repeats=3, n_se=2.0,
        decide_n_se=np.inf,
    )  # fmt: skip
    fitted = {i: sorted(j for c, j in calls if c == i) for i in range(3)}
    assert fitted[2] == list(range(EARLY_FOLDS))  # set aside after the first folds
    assert fitted[0] == list(range(15)) and fitted[1] == list(range(15))
    assert raced_out == [False, False, True]
    assert np.isnan(out[2 * 15 + EARLY_FOLDS][0][0]) and len(out) == 45


def test_a_decided_first_repeat_fits_no_more_repeats():
    # only the leader and the reference survive and the lead is many standard errors
    base = np.array([0.80, 0.82, 0.78, 0.81, 0.79])
    table = np.vstack([np.tile(base, 3), np.tile(base + 0.15, 3), np.tile(base - 0.5, 3)])
    table[1, :5] += [0.001, -0.002, 0.0, 0.002, -0.001]  # a paired difference with spread
    calls: list = []
    out, _, used = race_splits(3, 15, _fake_fit(table, calls), n_repeats=3, n_se=2.0)
    assert max(j for _, j in calls) == 4 and used == 5  # the first repeat only
    assert len(out) == 3 * 5 and np.isfinite(out[0][0][0])
    scores = table[:, :5]
    assert decided(scores, np.array([True, True, False]), 0, 3.0)
    # two candidates still close to each other: not decided
    assert not decided(scores, np.array([True, True, True]), 0, 3.0)


def test_the_better_half_goes_on_and_every_survivor_repeats():
    # 7 candidates within noise of each other: none is clearly behind, so the cap decides
    rng = np.random.RandomState(0)
    table = 0.8 + 0.001 * np.arange(7)[:, None] + 0.05 * rng.standard_normal((7, 15))
    calls: list = []
    race_splits(
        7, 15, _fake_fit(table, calls), n_repeats=3, n_se=2.0,
        decide_n_se=np.inf,
    )  # fmt: skip
    rest = {i for i, j in calls if 3 <= j < 5}
    later = {i for i, j in calls if j >= 5}
    early_best = np.argsort(-table[1:, :3].mean(axis=1), kind="stable")[:4] + 1
    assert rest == {0, *early_best.tolist()}  # the reference and the better half (4 of 7)
    # every survivor not clearly behind after the first repeat can still win and goes on
    # to the later repeats, however many (a cap of two dropped such leaders)
    ranked = sorted(rest)
    kept = {ranked[i] for i in np.flatnonzero(race_survivors(table[ranked, :5], 2.0))}
    assert later == {0} | kept and len(kept) > 2


def test_a_repeat_cap_keeps_the_best_of_the_survivors(monkeypatch):
    import spectralink.model_selection._racing as racing

    monkeypatch.setattr(racing, "REPEAT_SURVIVORS", 2)
    rng = np.random.RandomState(0)
    table = 0.8 + 0.001 * np.arange(7)[:, None] + 0.05 * rng.standard_normal((7, 15))
    calls: list = []
    race_splits(7, 15, _fake_fit(table, calls), n_repeats=3, n_se=2.0, decide_n_se=np.inf)
    rest = {i for i, j in calls if 3 <= j < 5}
    later = {i for i, j in calls if j >= 5}
    survivors = sorted(rest - {0})
    means = table[survivors, :5].mean(axis=1)
    best_two = {survivors[i] for i in np.argsort(-means, kind="stable")[:2]}
    assert later == {0} | best_two  # the reference and the best two of the first repeat


def test_without_a_race_everything_is_fitted():
    table = np.arange(12, dtype=float).reshape(3, 4)
    calls: list = []
    out, raced_out, used = race_splits(3, 4, _fake_fit(table, calls), n_repeats=1, n_se=None)
    assert len(calls) == 12 and not any(raced_out)
    assert [o[0][0] for o in out] == table.ravel().tolist()


class CountingNCut(NCut):
    """NCut that counts its fits (the search runs in this process with n_jobs=None)."""

    fits = 0

    def fit(self, X, y=None, constraints=None):
        type(self).fits += 1
        return super().fit(X, y, constraints=constraints)


@pytest.mark.parametrize("race", [None, 2.0])
def test_a_candidate_that_ignores_the_pairs_is_fitted_once_per_round(race):
    X, y = make_blobs(150, centers=3, random_state=0)
    cons = Constraints.from_labels(y, 60, random_state=0)
    CountingNCut.fits = 0
    grid = {"n_neighbors": [10, 15]}
    search = ConstraintSearchCV(CountingNCut(3), grid, cv=5, refit=False, race=race, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, constraints=cons)
    # one fit per candidate and round (the first folds, then the rest of the repeat), not
    # one per fold
    assert CountingNCut.fits == (2 if race is None else 4)
    for i in range(2):
        scores = [search.cv_results_[f"split{f}_test_score"][i] for f in range(5)]
        assert np.all(np.isfinite(scores))


class Oracle(NCut):
    """The true labels whatever the pairs: clearly ahead of a badly tuned reference."""

    _uses_constraints = True

    def __init__(self, n_clusters=2, *, y=None, n_neighbors=10, random_state=None):
        self.n_clusters = n_clusters
        self.y = y
        self.n_neighbors = n_neighbors
        self.random_state = random_state

    def _fit(self, X, constraints):
        self.labels_ = np.asarray(self.y)


def test_a_search_whose_first_repeat_decides_is_that_repeat():
    X, y = make_blobs(150, centers=3, random_state=0)
    cons = Constraints.from_labels(y, 90, random_state=0)
    # the reference merges clusters (k=2 of 3): the oracle wins every fold by far
    grid = [{"estimator": [NCut(2)]}, {"estimator": [Oracle(3, y=y)]}]
    search = ConstraintSearchCV(
        NCut(3), grid, cv=5, n_repeats=3, refit=False, race=2.0, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, constraints=cons)
    assert search.n_repeats_ == 1 and search.n_splits_ == 5 and len(search.folds_) == 5
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert "split5_test_score" not in search.cv_results_
