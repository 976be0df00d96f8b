"""Tests of Auto: the method and bandwidth chosen by cross-validation over the constraints."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_blobs

import spectralink
import spectralink.registry
from spectralink import Auto, Constraints
from spectralink.auto import COSC_KWAY_MAX_SAMPLES, default_methods
from spectralink.exceptions import (
    ConstraintsViolatedWarning,
    DegeneratePartitionWarning,
    ModelSelectionWarning,
)
from spectralink.graph import knn_affinity
from spectralink.methods.ncut import NCut
from spectralink.metrics import adjusted_rand_score
from spectralink.model_selection import RelativeSigma
from spectralink.registry import get_method


@pytest.fixture(scope="module")
def blobs():
    # touching blobs: NCut's graph cut errs (ARI 0.42); with 120 correct pairs COP-KMeans
    # does better (0.66) and the cross-validation sees it whatever the folds (with 80 pairs,
    # ARI 0.58, its gain over NCut is about one standard error and the choice depends on
    # the fold draw)
    X, y = make_blobs(n_samples=120, centers=3, cluster_std=1.5, random_state=0)
    cons = Constraints.from_labels(y, 120, random_state=0)
    return X, y, cons


class Oracle(NCut):
    """A test estimator that returns the true labels: it wins any cross-validation.

    With ``fail_on`` pairs (the full set) it raises, as COP-KMeans does when the whole
    constraint set has no feasible assignment although every fold's subset had one.
    """

    def __init__(
        self, n_clusters=2, *, y=None, fail_on=-1, spoil_on=-1, spoil="merge", affinity="knn",
        random_state=None,
    ):  # fmt: skip
        self.n_clusters = n_clusters
        self.y = y
        self.fail_on = fail_on
        self.spoil_on = spoil_on
        self.spoil = spoil
        self.affinity = affinity
        self.random_state = random_state

    def _fit(self, X, constraints):
        if len(constraints) == self.fail_on:
            raise ValueError("no feasible assignment")
        y = np.asarray(self.y)
        if len(constraints) == self.spoil_on:
            # a fit that fails on all the pairs only: two clusters merged, or labels shuffled
            y = np.where(y == 1, 0, y) if self.spoil == "merge" else _shuffled(y)
        self.labels_ = y


def _shuffled(y):
    return np.random.RandomState(0).permutation(y)


def test_registry_and_public_name():
    assert get_method("auto") is Auto
    assert get_method("AUTO") is Auto
    assert spectralink.Auto is Auto
    assert "auto" in spectralink.registry.available_methods()


def test_no_constraints_is_ncut_without_search(blobs):
    X, _, _ = blobs
    auto = Auto(3, random_state=0).fit(X)
    assert auto.best_method_ == "ncut"
    assert auto.selection_ == "no constraints"
    assert auto.search_ is None and auto.best_params_ == {}
    assert np.isnan(auto.best_score_)
    ncut = NCut(3, random_state=auto.best_estimator_.random_state).fit(X)
    assert np.array_equal(auto.labels_, ncut.labels_)
    assert auto.n_violated_ == 0
    empty = Auto(3, random_state=0).fit(X, constraints=Constraints(n_samples=len(X)))
    assert empty.best_method_ == "ncut" and np.array_equal(empty.labels_, auto.labels_)


def test_choice_is_deterministic_and_independent_of_n_jobs(blobs):
    X, _, cons = blobs

    def run(**kw):
        auto = Auto(3, methods=["lscp", "copkmeans"], sigmas=(0.5, 1.0), random_state=7, **kw)
        return auto.fit(X, constraints=cons)

    a, b, c = run(), run(), run(n_jobs=2)
    for other in (b, c):
        assert other.best_method_ == a.best_method_
        assert other.best_params_ == a.best_params_
        assert np.array_equal(other.labels_, a.labels_)
        np.testing.assert_array_equal(
            other.search_.cv_results_["mean_test_score"], a.search_.cv_results_["mean_test_score"]
        )
    # another seed draws other folds
    d = Auto(3, methods=["lscp", "copkmeans"], sigmas=(0.5, 1.0), random_state=8)
    d.fit(X, constraints=cons)
    assert not np.array_equal(
        d.search_.cv_results_["split0_test_score"], a.search_.cv_results_["split0_test_score"]
    )


def test_never_a_worse_cv_score_than_ncut_and_the_grid(blobs):
    X, y, cons = blobs
    auto = Auto(3, methods=["ccsr", "copkmeans"], random_state=0).fit(X, constraints=cons)
    res = auto.search_.cv_results_
    assert auto.selection_ == "cross-validation"
    # NCut first, then CCSR at 0.5, 1, 2 r; COP-KMeans has no graph, hence no bandwidth
    labels = [type(p["estimator"]).__name__ for p in res["params"]]
    assert labels == ["NCut"] + ["CCSR"] * 3 + ["COPKMeans"]
    assert [p.get("sigma") for p in res["params"][1:4]] == [
        RelativeSigma(0.5),
        RelativeSigma(1.0),
        RelativeSigma(2.0),
    ]
    assert auto.reference_score_ == res["mean_test_score"][0]
    assert auto.best_score_ >= auto.reference_score_
    assert auto.best_score_ == res["mean_test_score"][auto.best_index_]
    # the constraints are informative here: a constrained candidate wins, and clusters better
    assert auto.best_method_ == "copkmeans" and auto.best_params_ == {}
    ncut = NCut(3, random_state=0).fit(X)
    assert adjusted_rand_score(y, auto.labels_) > adjusted_rand_score(y, ncut.labels_) + 0.1
    assert "copkmeans: 5-fold x 3 cross-validated accuracy score" in auto.describe()
    # a bandwidth choice is reported relative to r
    ccsr = Auto(3, methods=["ccsr"], n_se=0, random_state=0).fit(X, constraints=cons)
    if ccsr.best_method_ == "ccsr":
        assert isinstance(ccsr.best_params_["sigma"], RelativeSigma)
        assert ccsr.best_estimator_.sigma == pytest.approx(
            ccsr.best_params_["sigma"].resolve(ccsr.search_.sigma_scales_[20])
        )


def test_uninformative_constraints_keep_ncut(blobs):
    X, y, _ = blobs
    # pairs labelled from a random partition: no candidate should beat NCut beyond noise
    rng = np.random.RandomState(0)
    noise = Constraints.from_labels(rng.randint(3, size=len(y)), 80, random_state=1)
    with warnings.catch_warnings():  # choosing NCut is choosing to ignore them: no warning
        warnings.simplefilter("error", ConstraintsViolatedWarning)
        auto = Auto(3, methods=["ccsr", "lscp"], sigmas=(0.5, 2.0), random_state=0)
        auto.fit(X, constraints=noise)
    res = auto.search_.cv_results_
    assert auto.best_method_ == "ncut", res["mean_test_score"]
    assert auto.best_index_ == 0
    # the highest mean alone (n_se=0) may take a constrained candidate; the rule is what
    # stops it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegeneratePartitionWarning)
        greedy = Auto(3, methods=["ccsr", "lscp"], sigmas=(0.5, 2.0), n_se=0, random_state=0)
        greedy.fit(X, constraints=noise)
    best = int(np.nanargmax(res["mean_test_score"]))
    if res["mean_test_score"][best] > res["mean_test_score"][0]:
        assert greedy.best_index_ == best


def test_too_few_constraints_fall_back_with_a_warning(blobs):
    X, _, _ = blobs
    few = Constraints([(0, 1)], [(0, 60), (1, 100)], n_samples=len(X))
    with pytest.warns(ModelSelectionWarning, match="cannot cross-validate"):
        auto = Auto(3, random_state=0).fit(X, constraints=few)
    assert auto.selection_ == "too few constraints"
    assert auto.best_method_ == "ccsr" and auto.search_ is None
    assert auto.labels_.shape == (len(X),)
    assert auto.n_violated_ == int(few.violated(auto.labels_).sum())
    assert "no cross-validation" in auto.describe()


def test_labelled_subset_is_folded_by_points(blobs):
    X, y, _ = blobs
    cons = Constraints.from_labeled_subset(y, 15, random_state=0)
    auto = Auto(3, methods=["ccsr"], random_state=0).fit(X, constraints=cons)
    assert auto.selection_ == "cross-validation"
    assert auto.search_.split_by_ == "points"
    for _, test in auto.search_.folds_:
        assert len(test) > 0
    # by pairs this subset cannot be cross-validated: Auto falls back, never crashes
    with pytest.warns(ModelSelectionWarning):
        pairs = Auto(3, methods=["ccsr"], split_by="pairs", random_state=0)
        pairs.fit(X, constraints=cons)
    assert pairs.selection_ == "too few constraints"


def test_failed_refit_falls_back_to_ncut(blobs):
    X, y, cons = blobs
    oracle = Oracle(3, y=y, fail_on=len(cons))
    with pytest.warns(ModelSelectionWarning, match="failed on all the constraints"):
        auto = Auto(3, methods=[oracle], sigmas=None, random_state=0).fit(X, constraints=cons)
    assert auto.search_.best_index_ == 1 or auto.search_.cv_results_["mean_test_score"][1] == 1
    assert auto.selection_ == "refit failed"
    assert auto.best_method_ == "ncut" and auto.best_index_ == 0
    # without the failure the perfect candidate is chosen
    ok = Auto(3, methods=[Oracle(3, y=y)], sigmas=None, random_state=0).fit(X, constraints=cons)
    assert ok.best_index_ == 1 and np.array_equal(ok.labels_, y)


@pytest.mark.parametrize("spoil", ["merge", "shuffle"])
def test_the_choice_is_returned_as_fitted_with_one_line_diagnostics(blobs, spoil):
    # no refit after the search beyond the choice's on all the pairs: a choice that spoils
    # its partition there is returned as it is, and Auto says so in one line, under its name
    X, y, cons = blobs
    oracle = Oracle(3, y=y, spoil_on=len(cons), spoil=spoil)
    expected = DegeneratePartitionWarning if spoil == "merge" else ConstraintsViolatedWarning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        auto = Auto(3, methods=[oracle], sigmas=None, random_state=0).fit(X, constraints=cons)
    assert auto.selection_ == "cross-validation" and auto.best_index_ == 1
    assert not hasattr(auto, "guard_")
    assert len(np.unique(auto.labels_)) == (2 if spoil == "merge" else 3)
    mine = [w for w in caught if w.category is expected]
    assert len(mine) == 1 and str(mine[0].message).startswith("Auto ")
    assert all("\n" not in str(w.message) and len(str(w.message)) <= 200 for w in caught)
    assert auto.diagnostics_ and auto.diagnostics_[0].startswith("Auto ")


def test_refit_choice_refits_the_choice_on_the_new_pairs(blobs):
    X, y, cons = blobs
    auto = Auto(3, methods=[Oracle(3, y=y)], sigmas=None, random_state=0).fit(X, constraints=cons)
    search = auto.search_
    fewer = cons.take(np.arange(100))
    auto.refit_choice(X, constraints=fewer)
    assert auto.search_ is search and auto.selection_ == "cross-validation"
    assert auto.best_index_ == 1 and isinstance(auto.best_estimator_, Oracle)
    assert np.array_equal(auto.labels_, y) and "Oracle" in auto.describe()


def test_a_choice_that_holds_on_all_the_pairs_is_kept(blobs):
    X, y, cons = blobs
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConstraintsViolatedWarning)
        auto = Auto(3, methods=[Oracle(3, y=y)], sigmas=None, random_state=0)
        auto.fit(X, constraints=cons)
    assert auto.selection_ == "cross-validation"
    assert auto.best_index_ == 1 and np.array_equal(auto.labels_, y)


def test_precomputed_affinity(blobs):
    X, _, cons = blobs
    W = knn_affinity(X, n_neighbors=10)
    auto = Auto(3, affinity="precomputed", methods=["ccsr"], random_state=0)
    auto.fit(W, constraints=cons)
    params = auto.search_.cv_results_["params"]
    assert len(params) == 2  # no bandwidth grid on a given graph
    assert all(p["estimator"].affinity == "precomputed" for p in params)
    assert auto.labels_.shape == (len(X),)
    with pytest.raises(ValueError, match="does not accept a precomputed affinity"):
        Auto(3, affinity="precomputed", methods=["lscp"]).fit(W, constraints=cons)
    assert "lscp" not in default_methods(100, 3, precomputed=True)


def test_default_candidates_follow_the_budget():
    assert default_methods(500, 3) == ["ccsr", "ccskl", "lscp", "scacs", "copkmeans", "cosc"]
    big = default_methods(COSC_KWAY_MAX_SAMPLES + 1, 10)
    assert "cosc" not in big and "ccsr" in big
    assert "cosc" in default_methods(100_000, 2)  # two-cluster COSC is cheap


def test_clone_get_params_and_bad_parameters(blobs):
    X, _, cons = blobs
    auto = Auto(4, methods=["ccsr"], sigmas=(1.0,), cv=3, n_se=0.5, random_state=1)
    twin = clone(auto)
    assert twin.get_params() == auto.get_params()
    assert twin.get_params()["methods"] == ["ccsr"]
    twin.set_params(n_clusters=3)
    assert twin.n_clusters == 3 and auto.n_clusters == 4
    for bad, match in [
        ({"cv": 1}, r"'cv' parameter of Auto must be an int in the range \[2, inf\)"),
        ({"n_se": -1}, "'n_se' parameter of Auto must be"),
        ({"sigmas": (0,)}, "'factor' parameter of RelativeSigma must be"),
        ({"methods": "ccsr"}, "'methods' parameter of Auto must be"),
        ({"methods": [3]}, "names or estimators"),
        ({"methods": ["nope"]}, "unknown method"),
        ({"scoring": "ari"}, "'scoring' parameter of Auto must be"),
    ]:
        with pytest.raises((ValueError, TypeError), match=match):
            Auto(3, **bad).fit(X, constraints=cons)
    with pytest.raises(TypeError, match="by keyword"):
        Auto(3).fit(X, cons)


def test_scoring_reaches_the_search(blobs):
    from spectralink.model_selection import kappa_constraint_score

    X, _, cons = blobs
    kw = dict(methods=["ccsr", "copkmeans"], sigmas=None, n_repeats=1, random_state=0)
    kappa = Auto(3, scoring="kappa", **kw).fit(X, constraints=cons)
    assert kappa.search_.scoring == "kappa"
    accuracy = Auto(3, **kw).fit(X, constraints=cons)  # the default
    assert accuracy.search_.scoring == "accuracy"
    assert not np.allclose(
        kappa.search_.cv_results_["mean_test_score"],
        accuracy.search_.cv_results_["mean_test_score"],
    )
    calls = []

    def mine(labels, test):
        calls.append(len(test))
        return kappa_constraint_score(labels, test)

    custom = Auto(3, scoring=mine, **kw).fit(X, constraints=cons)
    assert "5-fold cross-validated kappa score" in kappa.describe()
    assert "5-fold cross-validated custom score" in custom.describe()
    assert len(calls) == 3 * 5  # three candidates, five folds
    np.testing.assert_allclose(
        custom.search_.cv_results_["mean_test_score"],
        kappa.search_.cv_results_["mean_test_score"],
    )
    assert custom.best_index_ == kappa.best_index_


def test_default_set_runs_on_small_data(blobs):
    X, y, _ = blobs
    X, y = X[:90], y[:90]
    cons = Constraints.from_labels(y, 50, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelSelectionWarning)
        auto = Auto(3, cv=3, random_state=0).fit(X, constraints=cons)
    names = {type(p["estimator"]).__name__ for p in auto.search_.cv_results_["params"]}
    assert names == {"NCut", "CCSR", "CCSKL", "LSCP", "SCACS", "COPKMeans", "COSC"}
    assert auto.best_score_ >= auto.reference_score_
    assert auto.fit_predict(X, constraints=cons).shape == (len(X),)


def test_repeated_folds_on_small_data_only(blobs, monkeypatch):
    import spectralink.auto as auto_module

    X, _, cons = blobs
    auto = Auto(3, methods=["ccsr"], sigmas=None, random_state=0).fit(X, constraints=cons)
    assert auto.search_.n_repeats_ == auto_module.AUTO_REPEATS == 3
    assert auto.search_.n_splits_ == 15
    once = Auto(3, methods=["ccsr"], sigmas=None, n_repeats=1, random_state=0)
    assert once.fit(X, constraints=cons).search_.n_splits_ == 5
    assert "5-fold cross-validated" in once.describe()
    # above the size limit a fit is not cheap: one split
    monkeypatch.setattr(auto_module, "REPEAT_MAX_SAMPLES", len(X) - 1)
    big = Auto(3, methods=["ccsr"], sigmas=None, random_state=0).fit(X, constraints=cons)
    assert big.search_.n_repeats_ == 1
    # the selection rule counts the repeats as one split (prefer_reference's n_repeats)
    assert auto.best_index_ == auto_module.prefer_reference(
        auto.search_.cv_results_, n_se=auto.n_se, n_repeats=3
    )


def test_refit_choice_refits_the_last_choice_without_searching():
    from sklearn.datasets import make_blobs

    from spectralink import Auto, Constraints

    X, y = make_blobs(120, centers=3, random_state=0)
    few = Constraints.from_labels(y, 10, random_state=0)
    more = Constraints.from_labels(y, 80, random_state=1)
    auto = Auto(3, methods=["ccskl"], sigmas=None, cv=3, n_repeats=1, random_state=0)
    # before any search: the fallback method, said so
    auto.refit_choice(X, constraints=few)
    assert auto.selection_ == "not searched" and auto.search_ is None
    assert auto.best_method_ == "ccsr" and auto.labels_.shape == (120,)
    assert "not searched" in auto.describe()
    auto.fit(X, constraints=more)
    search, method, params = auto.search_, auto.best_method_, auto.best_estimator_.get_params()
    auto.refit_choice(X, constraints=few)
    assert auto.search_ is search  # no new search
    assert auto.best_method_ == method
    assert auto.best_estimator_.get_params() == params
    assert auto.n_violated_ == int(
        (auto.labels_[few.must_link[:, 0]] != auto.labels_[few.must_link[:, 1]]).sum()
        + (auto.labels_[few.cannot_link[:, 0]] == auto.labels_[few.cannot_link[:, 1]]).sum()
    )


def test_kway_cosc_runs_its_search_schedule_inside_the_search_only(monkeypatch):
    from sklearn.datasets import make_blobs

    import spectralink.auto as auto_module
    from spectralink import COSC, Auto, Constraints

    X, y = make_blobs(90, centers=3, random_state=0)
    c = Constraints.from_labels(y, 40, random_state=0)
    # whatever the scores, choose COSC (row 1), to see what the refit fits
    monkeypatch.setattr(auto_module, "prefer_reference", lambda *a, **k: 1)
    auto = Auto(3, methods=["cosc"], sigmas=None, cv=3, n_repeats=1, random_state=0)
    auto.fit(X, constraints=c)
    searched = auto.search_.cv_results_["params"][1]["estimator"]
    assert searched.n_recursions == auto_module.SEARCH_SCHEDULES["cosc"]["n_recursions"]
    assert auto.best_method_ == "cosc"
    assert auto.best_estimator_.n_recursions == COSC().n_recursions  # the refit: defaults
    # a COSC given as an estimator runs as given, in the search and in the refit
    given = Auto(3, methods=[COSC(3, n_recursions=2)], sigmas=None, cv=3,
                 n_repeats=1, random_state=0).fit(X, constraints=c)  # fmt: skip
    assert given.search_.cv_results_["params"][1]["estimator"].n_recursions == 2
    assert given.best_estimator_.n_recursions == 2


def test_search_sample_keeps_every_constrained_point():
    from spectralink.model_selection import search_sample

    c = Constraints([[0, 5], [7, 9]], [[0, 99]], n_samples=100)
    assert search_sample(100, c, 100) is None  # no larger than the sample: no sampling
    idx = search_sample(100, c, 30, random_state=0)
    assert len(idx) == 30 and np.all(np.diff(idx) > 0)
    assert set(c.constrained_points) <= set(idx)
    assert np.array_equal(idx, search_sample(100, c, 30, random_state=0))
    # more constrained points than the sample holds: those alone
    assert np.array_equal(search_sample(100, c, 3), c.constrained_points)
    with pytest.raises(ValueError, match="at least 2"):
        search_sample(100, c, 1)


def test_sample_scale_is_r_when_every_point_is_a_query():
    from spectralink.graph import kneighbors, sigma_from_distances
    from spectralink.model_selection import sample_scale

    X, _ = make_blobs(200, centers=3, random_state=0)
    dist, _ = kneighbors(X, 10)
    assert sample_scale(X, 10) == pytest.approx(sigma_from_distances(dist), rel=1e-9)
    # from 150 of the 200 points: an estimate of it, seeded
    est = sample_scale(X, 10, n_queries=150, random_state=0)
    assert est == sample_scale(X, 10, n_queries=150, random_state=0)
    assert est == pytest.approx(sigma_from_distances(dist), rel=0.2)


def test_search_on_a_sample_then_the_choice_on_all_points(monkeypatch):
    import spectralink.auto as auto_module
    from spectralink.model_selection import sample_scale

    X, y = make_blobs(240, centers=3, random_state=0)
    c = Constraints.from_labels(y, 30, random_state=0)
    # whatever the scores, choose CCSKL at 0.5r (row 1), to see what the refit fits
    monkeypatch.setattr(auto_module, "prefer_reference", lambda *a, **k: 1)
    auto = Auto(3, methods=["ccskl"], sigmas=(0.5, 1.0), cv=3, n_repeats=1, subsample=120,
                random_state=0).fit(X, constraints=c)  # fmt: skip
    sample = auto.subsample_
    assert len(sample) == 120 and set(c.constrained_points) <= set(sample)
    assert auto.search_.folds_ is not None and auto.labels_.shape == (240,)
    assert auto.best_params_ == {"sigma": RelativeSigma(0.5)}
    # 0.5 r of all the points, not of the sample
    r = sample_scale(X, auto.best_estimator_.n_neighbors, random_state=0)
    assert auto.best_estimator_.sigma == pytest.approx(0.5 * r)
    assert "chosen on 120 of the 240 points" in auto.describe()
    # the default: only above SUBSAMPLE_MIN_SAMPLES points, and not in the exhaustive search
    big = auto_module.SUBSAMPLE_MIN_SAMPLES + 1
    assert Auto(3).subsample_size(big) == auto_module.SUBSAMPLE_SIZE
    assert Auto(3).subsample_size(big - 1) is None
    assert Auto(3, search="exhaustive").subsample_size(big) is None
    assert Auto(3, subsample=50, affinity="precomputed").subsample_size(big) is None
    small = Auto(3, methods=["ccskl"], sigmas=None, cv=3, n_repeats=1, random_state=0)
    assert small.fit(X, constraints=c).subsample_ is None
    with pytest.raises(ValueError, match="subsample"):
        Auto(3, subsample=1).fit(X, constraints=c)


def test_a_pipe_gets_one_line_per_stage(blobs, capsys):
    # stderr is not a terminal under pytest: no bar, a line per stage; verbose=0: nothing
    X, y, cons = blobs
    Auto((2, 4), methods=["ccsr"], sigmas=None, random_state=0).fit(X, constraints=cons)
    lines = capsys.readouterr().err.splitlines()
    stages = [line for line in lines if line.startswith("spectralink: Auto:")]
    assert [s.split(":")[2].split()[0] for s in stages] == ["choosing", "searching", "fitting"]
    Auto(3, methods=["ccsr"], sigmas=None, random_state=0, verbose=0).fit(X, constraints=cons)
    assert "Auto:" not in capsys.readouterr().err


def test_a_sample_search_fits_lscp_as_its_defaults_fit_all_the_points(monkeypatch):
    """On data beyond the dense refinement's size, LSCP's defaults refine by sampling: the
    search on a sample fits that (not the exact dense refinement the sample's size alone
    would pick), and the refit of the choice runs the defaults."""
    from sklearn.datasets import make_blobs

    import spectralink.auto as auto_module
    from spectralink import Auto, Constraints

    X, y = make_blobs(150, centers=3, random_state=0)
    c = Constraints.from_labels(y, 40, random_state=0)
    monkeypatch.setattr(auto_module, "prefer_reference", lambda *a, **k: 1)
    kwargs = dict(methods=["lscp"], sigmas=None, cv=3, n_repeats=1, subsample=90, random_state=0)
    small = Auto(3, **kwargs).fit(X, constraints=c)  # 150 points: dense on all of them too
    assert small.search_.cv_results_["params"][1]["estimator"].refinement == "auto"
    monkeypatch.setattr(auto_module, "DENSE_REFINEMENT_MAX", 100)
    big = Auto(3, **kwargs).fit(X, constraints=c)
    assert len(big.subsample_) == 90
    assert big.search_.cv_results_["params"][1]["estimator"].refinement == "sampled"
    assert big.best_method_ == "lscp" and big.best_estimator_.refinement == "auto"
