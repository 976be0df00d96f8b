"""Tests of the constraint cross-validation search (model_selection.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import FitFailedWarning

import spectralink.graph as graph_module
from spectralink import Constraints
from spectralink.graph import kneighbors, sigma_from_distances
from spectralink.methods.ccsr import CCSR as _CCSR
from spectralink.methods.ncut import NCut
from spectralink.metrics import adjusted_rand_score
from spectralink.model_selection import (
    ConstraintSearchCV,
    RelativeSigma,
    UnfoldableConstraintsError,
    balanced_constraint_score,
    constraint_accuracy,
    constraint_folds,
    kappa_constraint_score,
    prefer_reference,
    race_survivors,
    relative_sigmas,
)


def CCSR(*args, **kwargs):  # noqa: N802 - stands in for the class
    """CCSR without the held-out guard: a search's folds already judge it on held-out pairs
    (and the guard's refits would multiply these tests' fits)."""
    kwargs.setdefault("guard", None)
    return _CCSR(*args, **kwargs)


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(n_samples=90, centers=3, cluster_std=2.5, random_state=3)
    cons = Constraints.from_labels(y, 60, random_state=1)
    return X, y, cons


def _implied(train: Constraints, test: Constraints) -> np.ndarray:
    """Independent check: which test pairs the training pairs' closure implies."""
    comp = train.ml_components
    ml_implied = comp[test.must_link[:, 0]] == comp[test.must_link[:, 1]]
    cl_comp = {frozenset((int(comp[i]), int(comp[j]))) for i, j in train.cannot_link}
    cl_implied = np.array(
        [frozenset((int(comp[i]), int(comp[j]))) in cl_comp for i, j in test.cannot_link],
        dtype=bool,
    )
    return np.concatenate([ml_implied, cl_implied])


def _subset(cons: Constraints, index) -> Constraints:
    m1 = cons.n_must_link
    index = np.asarray(index)
    return Constraints(
        cons.must_link[index[index < m1]],
        cons.cannot_link[index[index >= m1] - m1],
        n_samples=cons.n_samples,
    )


# --------------------------------------------------------------------------- folds
def test_k_scan_line_says_why_a_k_other_than_the_best_is_kept():
    from spectralink.model_selection import KScan

    ks = np.arange(2, 7)
    scores = np.array([0.70, 0.72, 0.60, 0.50, 0.40])
    tied = np.array([True, True, False, False, False])
    se = np.array([0.03, 0.0, 0.05, 0.06, 0.07])
    gaps = np.array([0.1, 0.2, 0.05, 0.01, 0.01])
    smallest = KScan(2, "pairs", ks, scores, se, gaps, tied, "smallest").describe()
    assert smallest == (
        "k=2 (of 2-6): held-out kappa 0.700, within one standard error (0.030) of the best, "
        "0.720 at k=3; 2 k are that close and the smallest of them is kept"
    )
    by_gap = KScan(2, "pairs", ks, scores, se, gaps, tied, "eigengap").describe()
    assert by_gap.endswith("the eigengap chose among them")
    best = KScan(3, "pairs", ks, scores, se, gaps, tied, "eigengap").describe()
    assert best == (
        "k=3 (of 2-6): the best held-out kappa, 0.720; 1 other k within one standard error of it"
    )


def test_folds_hold_out_each_pair_once_and_never_an_implied_one():
    # many pairs on few points: the closure implies a lot, so pairs do get moved
    y = np.repeat([0, 1, 2], 10)
    cons = Constraints.from_labels(y, 90, random_state=0)
    m = len(cons)
    folds = constraint_folds(cons, 3, by="pairs", random_state=0)
    assert len(folds) == 3
    held_count = np.zeros(m, dtype=int)
    for train, test in folds:
        assert np.array_equal(np.sort(train), train) and np.array_equal(np.sort(test), test)
        assert len(np.intersect1d(train, test)) == 0
        assert np.array_equal(np.union1d(train, test), np.arange(m))
        held_count[test] += 1
        tr, te = _subset(cons, train), _subset(cons, test)
        assert not _implied(tr, te).any()
        assert len(test) > 0
    assert held_count.max() == 1
    moved = np.flatnonzero(held_count == 0)
    assert len(moved) > 0  # the leakage rule did act on this data
    # a pair held out nowhere was implied by the other folds of its own fold's training
    fold_sizes = [len(te) for _, te in folds]
    assert sum(fold_sizes) + len(moved) == m


def test_folds_stratified_and_balanced_without_leakage():
    y = np.repeat(np.arange(4), 100)
    cons = Constraints.from_labels(y, 50, random_state=2)  # sparse: nothing implied
    folds = constraint_folds(cons, 5, random_state=0)
    sizes = [len(te) for _, te in folds]
    assert sum(sizes) == len(cons)
    assert max(sizes) - min(sizes) <= 1
    m1 = cons.n_must_link
    assert cons.n_must_link >= 5 and cons.n_cannot_link >= 5
    for _, test in folds:
        assert np.any(test < m1) and np.any(test >= m1)


def test_folds_deterministic():
    y = np.repeat(np.arange(3), 20)
    cons = Constraints.from_labels(y, 40, random_state=0)
    a = constraint_folds(cons, 4, random_state=7)
    b = constraint_folds(cons, 4, random_state=7)
    c = constraint_folds(cons, 4, random_state=8)
    for (tr1, te1), (tr2, te2) in zip(a, b, strict=True):
        assert np.array_equal(tr1, tr2) and np.array_equal(te1, te2)
    assert any(not np.array_equal(t1, t2) for (_, t1), (_, t2) in zip(a, c, strict=True))


def test_folds_errors():
    empty = Constraints(n_samples=10)
    with pytest.raises(ValueError, match="needs constraints"):
        constraint_folds(empty, 3)
    few = Constraints([(0, 1)], [(2, 3)], n_samples=10)
    with pytest.raises(ValueError, match="at least 3 constraints"):
        constraint_folds(few, 3)
    for bad in (1, 0, True, 2.0):
        with pytest.raises(ValueError, match="'n_splits' parameter of constraint_folds must be"):
            constraint_folds(few, bad)
    # every pair of a clique is implied by the others: a fold with nothing left to score
    clique = Constraints([(0, 1), (1, 2), (0, 2)], n_samples=3)
    with pytest.raises(UnfoldableConstraintsError, match="no held-out constraint"):
        constraint_folds(clique, 3, by="pairs", random_state=0)
    with pytest.raises(ValueError, match="'by' parameter of constraint_folds must be a str among"):
        constraint_folds(clique, 3, by="rows")
    with pytest.raises(UnfoldableConstraintsError, match="need at least 4 of them"):
        constraint_folds(clique, 4, by="points")


def test_point_folds_of_a_labelled_subset_are_leak_free():
    y = np.repeat(np.arange(3), 30)
    cons = Constraints.from_labeled_subset(y, 20, random_state=0)
    points = np.unique(np.vstack([cons.must_link, cons.cannot_link]))
    folds = constraint_folds(cons, 4, by="points", random_state=1)
    held_points = []
    m = len(cons)
    held_count = np.zeros(m, dtype=int)
    for train, test in folds:
        assert len(test) > 0 and len(np.intersect1d(train, test)) == 0
        assert np.array_equal(np.union1d(train, test), np.arange(m))
        tr, te = _subset(cons, train), _subset(cons, test)
        assert not _implied(tr, te).any()
        train_points = np.unique(np.vstack([tr.must_link, tr.cannot_link]))
        test_points = np.setdiff1d(np.unique(np.vstack([te.must_link, te.cannot_link])),
                                   train_points)  # fmt: skip
        # every held-out pair touches a point that no training pair touches
        te_pairs = np.vstack([te.must_link, te.cannot_link])
        assert np.all(np.isin(te_pairs, test_points).any(axis=1))
        held_points.append(test_points)
        held_count[test] += 1
    # the constrained points are dealt to the folds, each to exactly one
    assert np.array_equal(np.sort(np.concatenate(held_points)), points)
    assert held_count.min() >= 1 and held_count.max() <= 2
    # by pairs (almost) nothing of it can be scored; "auto" switches to points, which hold
    # out the pairs between two folds' points twice
    auto = constraint_folds(cons, 4, random_state=1)
    assert sum(len(te) for _, te in auto) > m


def test_auto_folds_use_pairs_while_few_are_implied():
    y = np.repeat(np.arange(4), 100)
    sparse = Constraints.from_labels(y, 50, random_state=2)
    a = constraint_folds(sparse, 5, random_state=0)
    b = constraint_folds(sparse, 5, by="pairs", random_state=0)
    for (tr1, te1), (tr2, te2) in zip(a, b, strict=True):
        assert np.array_equal(tr1, tr2) and np.array_equal(te1, te2)
    # 400 pairs on 30 points: the closure implies most held-out pairs
    dense = Constraints.from_labels(np.repeat([0, 1, 2], 10), 400, random_state=0)
    auto = constraint_folds(dense, 5, random_state=0)
    assert sum(len(te) for _, te in auto) > len(dense)  # point folds hold some pairs twice


# --------------------------------------------------------------------------- scores
def test_scores_on_hand_made_case():
    labels = np.array([0, 0, 1, 1])
    cons = Constraints([(0, 1), (1, 2)], [(0, 3), (1, 3), (2, 3)], n_samples=4)
    # must-links: 1 of 2 satisfied; cannot-links: 2 of 3
    assert balanced_constraint_score(labels, cons) == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert constraint_accuracy(labels, cons) == pytest.approx(3 / 5)
    only_ml = Constraints([(0, 1), (0, 2)], n_samples=4)
    assert balanced_constraint_score(labels, only_ml) == pytest.approx(0.5)
    only_cl = Constraints(cannot_link=[(0, 3), (2, 3)], n_samples=4)
    assert balanced_constraint_score(labels, only_cl) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="no constraints"):
        balanced_constraint_score(labels, Constraints(n_samples=4))
    # kappa: table [[ml together 1, ml apart 1], [cl together 1, cl apart 2]], n = 5
    p_o, p_e = 3 / 5, (2 / 5) * (2 / 5) + (3 / 5) * (3 / 5)
    assert kappa_constraint_score(labels, cons) == pytest.approx((p_o - p_e) / (1 - p_e))
    assert kappa_constraint_score(labels, only_ml) == pytest.approx(0.5)  # one kind: fraction
    assert kappa_constraint_score(np.arange(4), cons) == pytest.approx(0.0)  # all apart
    assert kappa_constraint_score(np.zeros(4, int), cons) == pytest.approx(0.0)  # all together
    with pytest.raises(ValueError, match="no constraints"):
        kappa_constraint_score(labels, Constraints(n_samples=4))


def test_kappa_on_all_pairs_is_the_adjusted_rand_index():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 120)
    labels = np.where(rng.random(120) < 0.3, rng.integers(0, 5, 120), y)
    i, j = np.triu_indices(120, 1)
    same = y[i] == y[j]
    cons = Constraints(np.c_[i, j][same], np.c_[i, j][~same], n_samples=120)
    assert kappa_constraint_score(labels, cons) == pytest.approx(adjusted_rand_score(y, labels))


def test_kappa_weighs_a_merge_as_the_ari_does():
    # four classes of 25; "merged" joins classes 0 and 1 and splits class 3, "noisy"
    # relabels a quarter of the points at random: the balanced score prefers the merge,
    # kappa (like the ARI) the noisy partition
    y = np.repeat(np.arange(4), 25)
    merged = np.where(y == 1, 0, y)
    merged[75:88] = 1
    rng = np.random.default_rng(0)
    noisy = y.copy()
    flip = rng.random(100) < 0.25
    noisy[flip] = rng.integers(0, 4, flip.sum())
    i, j = np.triu_indices(100, 1)
    same = y[i] == y[j]
    cons = Constraints(np.c_[i, j][same], np.c_[i, j][~same], n_samples=100)
    assert balanced_constraint_score(merged, cons) > balanced_constraint_score(noisy, cons)
    assert kappa_constraint_score(merged, cons) < kappa_constraint_score(noisy, cons)
    assert adjusted_rand_score(y, merged) < adjusted_rand_score(y, noisy)


def test_relative_sigma():
    assert relative_sigmas([0.5, 2]) == [RelativeSigma(0.5), RelativeSigma(2.0)]
    assert RelativeSigma(0.5).resolve(4.0) == 2.0
    assert repr(RelativeSigma(0.5)) == "0.5r"
    for bad in (0, -1, np.inf, "1"):
        with pytest.raises(ValueError, match="'factor' parameter of RelativeSigma must be"):
            RelativeSigma(bad)


# --------------------------------------------------------------------------- search
def test_sigma_grid_shares_one_neighbour_search_and_avoids_absurd_sigma(blobs, monkeypatch):
    X, _, cons = blobs
    calls = {"knn": 0, "graph": 0}
    real_knn, real_graph = graph_module.kneighbors, graph_module.gaussian_knn_graph

    def counting_knn(*args, **kwargs):
        calls["knn"] += 1
        return real_knn(*args, **kwargs)

    def counting_graph(*args, **kwargs):
        calls["graph"] += 1
        return real_graph(*args, **kwargs)

    monkeypatch.setattr(graph_module, "kneighbors", counting_knn)
    monkeypatch.setattr(graph_module, "gaussian_knn_graph", counting_graph)
    factors = [1e-3, 0.5, 1.0, 2.0]
    search = ConstraintSearchCV(
        NCut(3, n_neighbors=10),
        {"sigma": relative_sigmas(factors)},
        cv=3,
        refit=False,
        random_state=0,
    ).fit(X, constraints=cons)
    assert calls == {"knn": 1, "graph": len(factors)}  # once, not once per candidate x fold
    assert search.best_params_["sigma"] != RelativeSigma(1e-3)
    assert search.cv_results_["rank_test_score"][0] == len(factors)
    assert not hasattr(search, "best_estimator_") and not hasattr(search, "labels_")

    # the refit runs on the features like a user's own fit: one more neighbour search
    calls["knn"] = 0
    search.set_params(refit=True).fit(X, constraints=cons)
    assert calls["knn"] == 2
    r = sigma_from_distances(real_knn(X, 10)[0])
    assert search.sigma_scales_ == {10: pytest.approx(r)}
    best = search.best_estimator_
    assert best.affinity == "knn"
    assert best.sigma == pytest.approx(search.best_params_["sigma"].factor * r)


def test_relative_sigma_one_equals_default(blobs):
    X, _, cons = blobs
    search = ConstraintSearchCV(
        NCut(3, n_neighbors=10),
        {"sigma": [None, RelativeSigma(1.0)]},
        cv=3,
        refit=False,
        random_state=0,
    ).fit(X, constraints=cons)
    s = search.cv_results_
    for f in range(3):
        assert s[f"split{f}_test_score"][0] == s[f"split{f}_test_score"][1]


def test_shared_graph_fit_matches_feature_fit(blobs):
    X, _, cons = blobs
    dist, ind = kneighbors(X, 10)
    sigma = 0.7 * sigma_from_distances(dist)
    W = graph_module.gaussian_knn_graph(dist, ind, sigma)
    a = NCut(3, n_neighbors=10, sigma=sigma, random_state=4).fit(X, constraints=cons)
    b = NCut(3, affinity="precomputed", random_state=4).fit(W, constraints=cons)
    assert np.array_equal(a.labels_, b.labels_)


def test_estimator_key_search_and_cv_results(blobs):
    X, _, cons = blobs
    grid = [
        {"estimator": ["ncut"]},
        {"estimator": [CCSR(3, n_neighbors=10)], "sigma": relative_sigmas([0.5, 1.0])},
    ]
    search = ConstraintSearchCV(NCut(3, n_neighbors=10), grid, cv=3, random_state=0)
    search.fit(X, constraints=cons)
    res = search.cv_results_
    n_cand = 3
    expected = {
        "params",
        "param_estimator",
        "param_sigma",
        "split0_test_score",
        "split1_test_score",
        "split2_test_score",
        "mean_test_score",
        "std_test_score",
        "rank_test_score",
        "mean_fit_time",
        "std_fit_time",
    }
    assert set(res) == expected
    for key in expected - {"params"}:
        assert len(res[key]) == n_cand
    assert isinstance(res["param_sigma"], np.ma.MaskedArray)
    assert list(res["param_sigma"].mask) == [True, False, False]
    assert res["param_estimator"][0] == "ncut"
    assert search.n_splits_ == 3
    assert 0 <= search.best_index_ < n_cand
    assert search.best_params_ == res["params"][search.best_index_]
    assert search.best_score_ == res["mean_test_score"][search.best_index_]
    assert res["rank_test_score"][search.best_index_] == 1
    assert np.array_equal(search.best_estimator_.labels_, search.labels_)
    assert search.best_estimator_.n_clusters == 3
    assert np.all((res["mean_test_score"] >= 0) & (res["mean_test_score"] <= 1))
    # a method by name takes the base estimator's n_clusters
    by_name = ConstraintSearchCV(NCut(4), {"estimator": ["ncut"]}, cv=3, random_state=0)
    assert by_name.fit(X, constraints=cons).best_estimator_.n_clusters == 4


@pytest.mark.slow  # process pool start-up and a grid fitted three times
def test_n_jobs_and_determinism(blobs):
    X, _, cons = blobs
    grid = {"sigma": relative_sigmas([0.5, 1.0]), "n_neighbors": [8, 12]}

    def run(n_jobs):
        return ConstraintSearchCV(CCSR(3), grid, cv=3, n_jobs=n_jobs, random_state=5).fit(
            X, constraints=cons
        )

    a, b, c = run(1), run(2), run(1)
    for other in (b, c):
        for key in ("mean_test_score", "split0_test_score", "split2_test_score"):
            np.testing.assert_array_equal(a.cv_results_[key], other.cv_results_[key])
        assert a.best_index_ == other.best_index_
        assert np.array_equal(a.labels_, other.labels_)
        assert a.best_estimator_.random_state == other.best_estimator_.random_state
    assert a.best_estimator_.random_state is not None  # seeded from the search


def test_ties_prefer_earlier_candidate_and_callable_scoring(blobs):
    X, _, cons = blobs
    seen = []

    def constant(labels, test):
        seen.append(isinstance(test, Constraints) and len(labels) == X.shape[0])
        return 0.5

    search = ConstraintSearchCV(
        NCut(3, n_neighbors=10),
        {"sigma": relative_sigmas([2.0, 1.0])},
        cv=3,
        scoring=constant,
        random_state=0,
    ).fit(X, constraints=cons)
    assert all(seen) and len(seen) == 6
    assert search.best_index_ == 0
    assert list(search.cv_results_["rank_test_score"]) == [1, 1]


def test_accuracy_scoring_and_pair_constraints(blobs):
    X, _, cons = blobs
    search = ConstraintSearchCV(
        NCut(3, n_neighbors=10), {"sigma": [None]}, cv=3, scoring="accuracy", random_state=0
    ).fit(X, constraints=(cons.must_link, cons.cannot_link))
    assert 0 <= search.best_score_ <= 1


def test_several_scores_from_one_fit_each(blobs):
    X, _, cons = blobs
    grid = [{"estimator": [NCut(3)]}, {"estimator": [CCSR(3)], "sigma": relative_sigmas([0.5, 2])}]
    kw = dict(cv=3, n_repeats=2, random_state=0)
    calls = []

    def counted_kappa(labels, test):
        calls.append(1)
        return kappa_constraint_score(labels, test)

    multi = ConstraintSearchCV(
        NCut(3), grid, scoring={"balanced": "balanced", "kappa": counted_kappa}, refit="kappa", **kw
    ).fit(X, constraints=cons)
    assert len(calls) == 3 * 6  # one fit per candidate and split, scored twice
    assert multi.multimetric_ and "mean_test_score" not in multi.cv_results_
    for name in ("balanced", "kappa"):
        single = ConstraintSearchCV(NCut(3), grid, scoring=name, **kw).fit(X, constraints=cons)
        for key in ("mean", "std", "rank", "split5"):
            np.testing.assert_array_equal(
                multi.cv_results_[f"{key}_test_{name}"], single.cv_results_[f"{key}_test_score"]
            )
        if name == "kappa":
            assert multi.best_index_ == single.best_index_
            assert multi.best_score_ == single.best_score_
            assert np.array_equal(multi.labels_, single.labels_)
            rule = prefer_reference(single.cv_results_, n_repeats=2)
            assert prefer_reference(multi.cv_results_, score="kappa", n_repeats=2) == rule
    # a list of names; a callable refit; no refit: no best_* (as scikit-learn)
    listed = ConstraintSearchCV(NCut(3), grid, scoring=["kappa", "accuracy"], refit=False, **kw)
    listed.fit(X, constraints=cons)
    assert {"mean_test_kappa", "mean_test_accuracy"} <= set(listed.cv_results_)
    assert not hasattr(listed, "best_index_")
    pick = ConstraintSearchCV(NCut(3), grid, scoring=["kappa", "balanced"], refit=lambda r: 2, **kw)
    assert pick.fit(X, constraints=cons).best_index_ == 2 and not hasattr(pick, "best_score_")
    with pytest.raises(ValueError, match="score='score' is not one of its scores"):
        prefer_reference(listed.cv_results_)
    for scoring, refit, match in [
        (["kappa", "balanced"], True, "refit must be the name of one of them"),
        (["kappa", "balanced"], "accuracy", "refit must be the name of one of them"),
        (["kappa", "kappa"], False, "distinct names"),
        ([], False, "distinct names"),
        ({"not a name": "kappa"}, False, "identifiers"),
        (["ari"], False, "scoring must be"),
    ]:
        with pytest.raises(ValueError, match=match):
            ConstraintSearchCV(NCut(3), grid, scoring=scoring, refit=refit).fit(X, constraints=cons)


def test_failed_fits(blobs):
    X, _, cons = blobs
    grid = {"n_neighbors": [0, 10]}  # n_neighbors=0 raises in every fit
    with pytest.warns(FitFailedWarning, match="3 of 6 fits failed"):
        search = ConstraintSearchCV(NCut(3), grid, cv=3, random_state=0).fit(X, constraints=cons)
    assert np.isnan(search.cv_results_["mean_test_score"][0])
    assert search.best_index_ == 1
    assert list(search.cv_results_["rank_test_score"]) == [2, 1]
    with pytest.warns(FitFailedWarning):
        search = ConstraintSearchCV(NCut(3), grid, cv=3, error_score=-1.0, random_state=0)
        search.fit(X, constraints=cons)
    assert search.cv_results_["mean_test_score"][0] == -1.0
    with pytest.raises(ValueError, match="n_neighbors"):
        ConstraintSearchCV(NCut(3), grid, cv=3, error_score="raise").fit(X, constraints=cons)
    with pytest.raises(ValueError, match="all 3 fits failed"):
        ConstraintSearchCV(NCut(3), {"n_neighbors": [0]}, cv=3).fit(X, constraints=cons)


def test_bad_inputs(blobs):
    X, _, cons = blobs
    base = NCut(3, n_neighbors=10)
    grid = {"sigma": [None]}
    with pytest.raises(ValueError, match="needs constraints"):
        ConstraintSearchCV(base, grid).fit(X)
    with pytest.raises(ValueError, match="needs constraints"):
        ConstraintSearchCV(base, grid).fit(X, constraints=Constraints(n_samples=len(X)))
    with pytest.raises(
        ValueError,
        match=r"'cv' parameter of ConstraintSearchCV must be an int in the range \[2, inf\)",
    ):
        ConstraintSearchCV(base, grid, cv=1).fit(X, constraints=cons)
    with pytest.raises(ValueError, match="'scoring' parameter of ConstraintSearchCV must be"):
        ConstraintSearchCV(base, grid, scoring="ari").fit(X, constraints=cons)
    with pytest.raises(TypeError, match="by keyword"):
        ConstraintSearchCV(base, grid).fit(X, cons)
    with pytest.raises(TypeError, match="by keyword"):
        ConstraintSearchCV(base, grid).fit(X, (cons.must_link, cons.cannot_link))
    few = Constraints([(0, 1)], [(0, 50)], n_samples=len(X))
    with pytest.raises(ValueError, match="at least 5 constraints"):
        ConstraintSearchCV(base, grid).fit(X, constraints=few)
    with pytest.raises(ValueError, match="error_score"):
        ConstraintSearchCV(base, grid, error_score="ignore").fit(X, constraints=cons)
    with pytest.raises(ValueError, match="unknown method"):
        ConstraintSearchCV(base, {"estimator": ["nope"]}).fit(X, constraints=cons)
    with pytest.raises(ValueError, match="Invalid parameter"):
        ConstraintSearchCV(base, {"no_such_param": [1]}).fit(X, constraints=cons)
    # __init__ only stores
    search = ConstraintSearchCV(base, "not validated yet", cv="nor this")
    assert search.get_params()["cv"] == "nor this"


# --------------------------------------------------------------------------- selection rule
def _results(rows):
    rows = np.asarray(rows, dtype=float)
    out = {f"split{f}_test_score": rows[:, f] for f in range(rows.shape[1])}
    with np.errstate(all="ignore"):
        out["mean_test_score"] = rows.mean(axis=1)
    out["params"] = [{}] * len(rows)
    return out


def test_prefer_reference_one_standard_error_rule():
    ref = [0.80, 0.70, 0.90, 0.75, 0.85]
    noisy = [0.90, 0.65, 0.95, 0.70, 0.95]  # higher mean, but not consistently better
    clear = [0.84, 0.75, 0.93, 0.80, 0.88]  # a little better on every fold
    assert prefer_reference(_results([ref, noisy])) == 0
    assert prefer_reference(_results([ref, noisy]), n_se=0) == 1
    assert prefer_reference(_results([ref, clear])) == 1
    # the highest mean among those that beat the reference, not the highest mean overall
    assert prefer_reference(_results([ref, noisy, clear])) == 2
    # a failed (nan) candidate is never chosen; a constant gain counts
    nan = [0.99, np.nan, 0.99, 0.99, 0.99]
    plus = [v + 0.01 for v in ref]
    assert prefer_reference(_results([ref, nan, plus])) == 2
    assert prefer_reference(_results([ref, [v - 0.01 for v in ref]])) == 0
    # reference elsewhere; a nan reference lets the highest mean win
    assert prefer_reference(_results([noisy, ref]), reference=1) == 1
    assert prefer_reference(_results([[np.nan] * 5, ref, clear])) == 2
    with pytest.raises(ValueError, match="reference=3"):
        prefer_reference(_results([ref, clear]), reference=3)
    with pytest.raises(ValueError, match="n_se"):
        prefer_reference(_results([ref, clear]), n_se=-1)


def test_refit_callable_and_candidate(blobs):
    X, _, cons = blobs
    grid = [
        {"estimator": [NCut(3, n_neighbors=10)]},
        {"estimator": [CCSR(3, n_neighbors=10)], "sigma": relative_sigmas([0.5, 2.0])},
    ]
    picked = []

    def last(results):
        picked.append(len(results["params"]))
        return len(results["params"]) - 1

    search = ConstraintSearchCV(NCut(3), grid, cv=3, refit=last, random_state=0)
    search.fit(X, constraints=cons)
    assert picked == [3] and search.best_index_ == 2
    assert search.best_params_["sigma"] == RelativeSigma(2.0)
    assert search.best_score_ == search.cv_results_["mean_test_score"][2]
    r = search.sigma_scales_[10]
    assert search.best_estimator_.sigma == pytest.approx(2.0 * r)
    # candidate(i): the estimator the refit would fit, bandwidth resolved, seeded
    cand = search.candidate(1)
    assert isinstance(cand, _CCSR) and cand.sigma == pytest.approx(0.5 * r)
    assert cand.random_state == search.best_estimator_.random_state is not None
    assert not hasattr(cand, "labels_")
    with pytest.raises(ValueError, match="refit callable must return"):
        ConstraintSearchCV(NCut(3), grid, cv=3, refit=lambda res: 7).fit(X, constraints=cons)
    with pytest.raises(AttributeError, match="fitted search"):
        ConstraintSearchCV(NCut(3), grid).candidate(0)


def test_search_decomposes_a_shared_graph_once_per_size(blobs, monkeypatch):
    import spectralink.spectral as spectral

    X, _, cons = blobs
    calls = []
    real = spectral._laplacian_eigenvectors

    def counting(W, m, *args):
        calls.append(m)
        return real(W, m, *args)

    monkeypatch.setattr(spectral, "_laplacian_eigenvectors", counting)
    grid = [{"estimator": [NCut(3, n_neighbors=10)]},
            {"estimator": [CCSR(3, n_neighbors=10, n_components=6)]}]  # fmt: skip
    ConstraintSearchCV(NCut(3), grid, cv=4, refit=False, random_state=0).fit(X, constraints=cons)
    # 8 fits on one graph: NCut's 3 eigenvectors once, CCSR's 6 once
    assert sorted(calls) == [3, 6]
    assert not spectral._CACHE


def test_repeated_folds_extend_the_single_split(blobs):
    X, _, cons = blobs
    grid = {"sigma": [0.5, 2.0]}
    one = ConstraintSearchCV(NCut(3), grid, cv=5, refit=False, random_state=0)
    three = ConstraintSearchCV(NCut(3), grid, cv=5, n_repeats=3, refit=False, random_state=0)
    one.fit(X, constraints=cons)
    three.fit(X, constraints=cons)
    assert (one.n_splits_, one.n_repeats_) == (5, 1)
    assert (three.n_splits_, three.n_repeats_) == (15, 3)
    assert len(three.folds_) == 15
    # the first repeat is the single split: same folds, same fit seeds, same scores
    for f in range(5):
        assert np.array_equal(three.folds_[f][1], one.folds_[f][1])
        np.testing.assert_array_equal(
            three.cv_results_[f"split{f}_test_score"], one.cv_results_[f"split{f}_test_score"]
        )
    # every repeat is a fold split of its own: no pair held out twice within a repeat,
    # and the repeats shuffle differently
    for r in range(3):
        tests = [te for _, te in three.folds_[5 * r : 5 * r + 5]]
        held = np.concatenate(tests)
        assert len(held) == len(np.unique(held))
    assert any(not np.array_equal(three.folds_[f][1], three.folds_[5 + f][1]) for f in range(5))
    scores = np.column_stack([three.cv_results_[f"split{f}_test_score"] for f in range(15)])
    np.testing.assert_allclose(three.cv_results_["mean_test_score"], scores.mean(axis=1))
    with pytest.raises(ValueError, match="n_repeats"):
        ConstraintSearchCV(NCut(3), grid, n_repeats=0).fit(X, constraints=cons)


def test_a_repeat_that_cannot_fold_by_pairs_is_skipped():
    # 8 pairs on 10 points: some shuffles leave a pair fold with only implied pairs
    y = np.repeat([0, 1], 5)
    X = np.r_[np.zeros((5, 2)), np.ones((5, 2))] + np.arange(10)[:, None] * 0.01
    cons = Constraints.from_labels(y, 8, random_state=10)
    kept = []
    for seed in range(10):
        search = ConstraintSearchCV(
            NCut(2, n_neighbors=3),
            {"sigma": [1.0]},
            cv=3,
            n_repeats=5,
            split_by="pairs",
            refit=False,
            random_state=seed,
        )
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                search.fit(X, constraints=cons)
        except UnfoldableConstraintsError:  # the first repeat itself could not fold
            continue
        assert search.split_by_ == "pairs"
        assert search.n_splits_ == 3 * search.n_repeats_ == len(search.folds_)
        assert all(len(te) > 0 for _, te in search.folds_)
        kept.append(search.n_repeats_)
    assert kept and min(kept) < 5


def test_prefer_reference_counts_repeats_as_one_split():
    ref = [0.80, 0.70, 0.90, 0.75, 0.85]
    gain = [0.86, 0.68, 0.97, 0.76, 0.92]  # +0.038 on average, 0.018 standard error
    # the same five folds seen three times: counted as 15 splits the standard error
    # shrinks to 0.010 and the gain passes 2.5 of them; counted as 5 folds (0.017) it does not
    assert prefer_reference(_results([ref, gain]), n_se=1.5) == 1
    assert prefer_reference(_results([ref * 3, gain * 3]), n_se=2.5, n_repeats=3) == 0
    assert prefer_reference(_results([ref * 3, gain * 3]), n_se=2.5) == 1
    with pytest.raises(ValueError, match="n_repeats"):
        prefer_reference(_results([ref, gain]), n_repeats=0)


def test_race_survivors_drops_only_candidates_clearly_behind_the_leader():
    scores = np.array(
        [
            [0.80, 0.82, 0.78, 0.81, 0.79],  # the reference
            [0.90, 0.91, 0.89, 0.92, 0.88],  # the leader
            [0.89, 0.92, 0.88, 0.93, 0.86],  # level with it within the noise
            [0.70, 0.72, 0.69, 0.71, 0.70],  # far behind
            [0.90, 0.91, 0.89, 0.92, np.nan],  # a failed fit
        ]
    )
    assert race_survivors(scores, 2.0).tolist() == [False, True, True, False, False]
    # a huge margin keeps every finite candidate; no finite mean keeps all
    assert race_survivors(scores, 1e9).tolist() == [True, True, True, True, False]
    assert race_survivors(np.full((3, 4), np.nan), 1.0).all()


def test_race_fits_the_later_repeats_for_the_survivors_only(blobs):
    X, _, cons = blobs
    grid = {"estimator": [NCut(3, n_neighbors=10), CCSR(3, n_neighbors=10)],
            "n_neighbors": [10]}  # fmt: skip
    # a candidate far behind on every fold: NCut with an absurd bandwidth
    bad = NCut(3, n_neighbors=10, sigma=1e-3)
    grid = [grid, {"estimator": [bad]}]
    full = ConstraintSearchCV(NCut(3), grid, cv=3, n_repeats=2, refit=False, random_state=0)
    raced = ConstraintSearchCV(
        NCut(3), grid, cv=3, n_repeats=2, refit=False, race=1.0, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full.fit(X, constraints=cons)
        raced.fit(X, constraints=cons)
    r, f = raced.cv_results_, full.cv_results_
    first = [f"split{i}_test_score" for i in range(3)]
    later = [f"split{i}_test_score" for i in range(3, 6)]
    # the first repeat is the same search; the raced-out candidate has no later splits
    for key in first:
        np.testing.assert_array_equal(r[key], f[key])
    out = r["raced_out"]
    assert out.tolist()[0] is False  # the reference always runs
    assert out[2], "the candidate far behind after the first repeat is set aside"
    for key in later:
        assert np.isnan(r[key][out]).all()
        np.testing.assert_array_equal(r[key][~out], f[key][~out])
    assert np.isnan(r["mean_test_score"][out]).all()
    assert prefer_reference(r, n_repeats=2) != 2


# ------------------------------------------------------------------ k from the pairs
def _four_blobs(n_pairs, seed=0):
    from sklearn.datasets import make_blobs

    from spectralink.graph import knn_affinity

    X, y = make_blobs(240, centers=4, random_state=0)
    return X, y, knn_affinity(X), Constraints.from_labels(y, n_pairs, random_state=seed)


def test_scan_n_clusters_finds_separated_blobs_and_reports_every_k():
    from spectralink.model_selection import scan_n_clusters

    X, y, W, cons = _four_blobs(120)
    scan = scan_n_clusters(W, cons, (2, 8), random_state=0)
    assert scan.rule == "pairs" and scan.n_clusters == 4
    assert list(scan.ks) == list(range(2, 9))
    # the chosen k is tied with the best, and scores are kappas (at most 1)
    assert scan.tied[scan.ks == 4][0] and np.all(scan.scores <= 1.0)
    assert scan.std_errors[np.argmax(scan.scores)] == 0.0
    assert scan.describe().startswith("k=4 (of 2-8): ")
    assert "held-out kappa" in scan.describe()
    again = scan_n_clusters(W, cons, (2, 8), random_state=0)
    assert np.array_equal(scan.scores, again.scores)  # seeded
    # one kind of pair alone cannot tell k: the eigengap decides, and says so
    ml_only = Constraints(cons.must_link, np.empty((0, 2)), n_samples=len(y))
    by_gap = scan_n_clusters(W, ml_only, (2, 8), random_state=0)
    assert by_gap.rule == "eigengap" and np.isnan(by_gap.scores).all()
    assert by_gap.n_clusters == 2 + int(np.argmax(by_gap.eigengaps))


def test_tie_rule_follows_a_clear_eigengap_only():
    from sklearn.datasets import make_blobs

    from spectralink.graph import knn_affinity
    from spectralink.model_selection import clear_eigengap_k, scan_n_clusters

    assert clear_eigengap_k(np.array([0.1, 0.5, 0.2])) == 1  # 2.5x the next: clear
    assert clear_eigengap_k(np.array([0.1, 0.5, 0.3])) is None  # 1.7x: the largest of several
    assert clear_eigengap_k(np.array([0.5])) is None and clear_eigengap_k(np.zeros(3)) is None
    # six separated blobs, 20 pairs (about 3 must-links): many k tie with the best
    centers = np.array([[0, 0], [10, 0], [0, 10], [10, 10], [20, 0], [20, 10]])
    X, y = make_blobs(480, centers=centers, random_state=0, cluster_std=1.0)
    W = knn_affinity(X)
    auto_ks, smallest_ks = [], []
    for seed in range(1, 7):  # seed 0 draws no must-link
        cons = Constraints.from_labels(y, 20, random_state=seed)
        scan = scan_n_clusters(W, cons, (2, 10), random_state=seed)
        assert scan.rule == "pairs" and scan.tied[scan.ks == 6][0]
        assert scan.tie_rule == "eigengap"  # the spectrum jumps clearly after 6
        auto_ks.append(scan.n_clusters)
        smallest = scan_n_clusters(W, cons, (2, 10), random_state=seed, tie_break="smallest")
        assert smallest.tie_rule == "smallest" and np.array_equal(smallest.scores, scan.scores)
        # every rule replayed on one scan is the rule's own scan
        assert scan.k_by("smallest") == smallest.n_clusters and scan.k_by("auto") == 6
        smallest_ks.append(smallest.n_clusters)
    assert auto_ks == [6] * 6
    # the smallest tied k leans low when must-links are this few
    assert min(smallest_ks) < 6
    with pytest.raises(ValueError, match="tie_break"):
        scan_n_clusters(W, cons, (2, 10), tie_break="largest")
    with pytest.raises(ValueError, match="tie_break"):
        scan.k_by("largest")


def test_pair_kappa_and_k_ranges():
    from spectralink.model_selection import check_k_range, default_k_range, pair_kappa

    must = np.array([1, 1, 0, 0], bool)
    assert pair_kappa(must, must) == 1.0
    assert pair_kappa(~must, must) == -1.0
    assert pair_kappa(np.ones(4, bool), must) == 0.0  # a constant partition says nothing
    assert pair_kappa(np.zeros(0, bool), np.zeros(0, bool)) == 0.0  # no pairs
    assert default_k_range(150) == (2, 10)
    assert default_k_range(1800) == (2, 30)
    assert default_k_range(8) == (2, 7)
    assert check_k_range((3, 5), 100) == (3, 5)
    for bad in [(1, 5), (5, 3), (2, 100), (2.5, 4), (2, 3, 4)]:
        with pytest.raises(ValueError, match="n_clusters"):
            check_k_range(bad, 100)


def test_auto_chooses_k_from_the_pairs_or_the_eigengap():
    from spectralink import Auto

    X, y, _, cons = _four_blobs(120)
    auto = Auto(None, methods=["ccskl"], sigmas=None, cv=3, n_repeats=1, random_state=0)
    auto.fit(X, constraints=cons)
    assert auto.n_clusters_ == 4 == len(np.unique(auto.labels_))
    assert auto.k_scan_.n_clusters == 4 and set(auto.k_scores_) == set(range(2, 12))
    assert auto.describe().startswith("k=4 (of 2-11): ")
    # given k: no scan
    fixed = Auto(4, methods=["ccskl"], sigmas=None, cv=3, n_repeats=1, random_state=0)
    assert fixed.fit(X, constraints=cons).k_scan_ is None and fixed.n_clusters_ == 4
    assert np.array_equal(fixed.labels_, auto.labels_)  # the same search at the same k
    # no constraints: the eigengap alone, said so
    bare = Auto((2, 6), random_state=0).fit(X)
    assert bare.k_scan_.rule == "eigengap" and "by the eigengap" in bare.describe()
    with pytest.raises(ValueError, match="n_clusters range"):
        Auto((2, 500)).fit(X, constraints=cons)
    with pytest.raises(ValueError, match="param_grid needs k"):
        Auto(None).param_grid(100)


def test_search_report_says_what_was_chosen_and_on_what():
    from spectralink.model_selection import SearchReport

    results = {
        "mean_test_score": [0.61, 0.83],
        "std_test_score": [0.02, 0.03],
        "params": [{}, {}],
        "raced_out": [0, 0],
    }
    report = SearchReport(
        method="ccskl", params={"n_neighbors": 10}, results=results, index=1,
        split_by="pairs", n_splits=10, n_repeats=2, n_points=90_000, n_searched=20_000,
    )  # fmt: skip
    text = str(report)
    assert text.startswith("ccskl (n_neighbors=10): 5-fold x 2 cross-validated balanced score")
    assert "0.830 ± 0.030 (NCut 0.610 ± 0.020; 2 candidates, folds by pairs" in text
    assert text.endswith("chosen on 20,000 of the 90,000 points)")
    bare = SearchReport(method="ncut", selection="no constraints")
    assert str(bare) == "ncut: no constraints, no cross-validation"
