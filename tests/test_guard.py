"""The opt-in held-out guard of the base class (``guard="held_out"``): constraints are used
only when held-out pairs say they help (spectralink.methods._guard). By default every named
method is its paper's method.

The constructed cases are far from any decision boundary (well-separated blobs, a method
that returns noise), so the outcomes do not depend on floating-point rounding.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

from spectralink import get_method
from spectralink.constraints import Constraints
from spectralink.exceptions import ConstraintsIgnoredWarning
from spectralink.methods import ConstrainedClusteringMixin
from spectralink.methods._base import COMMON_CONSTRAINTS, GUARD_CONSTRAINT
from spectralink.methods._guard import (
    GUARD_FOLDS,
    GuardReport,
    held_out_guard,
    keeps_constrained,
    pairs_disagreeing,
    refit_sides,
    same_partition,
)
from spectralink.methods.ncut import NCut

pytestmark = pytest.mark.filterwarnings("ignore::spectralink.exceptions.DisconnectedGraphWarning")


class NoisyMethod(ConstrainedClusteringMixin):
    """A 'constrained' method that returns a random partition: the guard must catch it."""

    _parameter_constraints = {**COMMON_CONSTRAINTS, "guard": GUARD_CONSTRAINT}

    def __init__(self, n_clusters=2, *, affinity="knn", n_neighbors=10, sigma=None,
                 n_init=10, random_state=None, guard="held_out"):  # fmt: skip
        self.n_clusters = n_clusters
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.n_init = n_init
        self.random_state = random_state
        self.guard = guard

    def _fit(self, X, constraints):
        self.affinity_matrix_ = self._affinity(X)
        rng = np.random.default_rng(len(constraints))
        self.labels_ = rng.integers(0, self.n_clusters, X.shape[0])


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(n_samples=300, centers=3, n_features=4, cluster_std=0.5, random_state=0)
    return X, y, Constraints.from_labels(y, 60, random_state=0)


def test_rule_and_partition_identity():
    # won - lost must exceed 1.645 standard errors, 1.645 * sqrt(won + lost): a one-sided
    # sign test at the 5 % level
    assert keeps_constrained(10, 2)  # 8 > 1.645 * sqrt(12) = 5.7
    assert not keeps_constrained(7, 3)  # 4 < 1.645 * sqrt(10) = 5.2: within the noise
    assert not keeps_constrained(24, 16)  # 8 < 10.4
    assert keeps_constrained(7, 3, margin=1.0)  # one standard error would keep it
    assert not keeps_constrained(4, 4)  # ties go to the unconstrained partition
    assert not keeps_constrained(4, 5)
    assert keeps_constrained(1, 0, margin=0.0) and not keeps_constrained(0, 0, margin=0.0)
    assert same_partition([0, 0, 1, 2], [2, 2, 0, 1])
    assert not same_partition([0, 0, 1, 2], [0, 1, 1, 2])
    assert not same_partition([0, 0, 1, 1], [0, 0, 1, 2])


def test_fires_on_a_method_that_ignores_the_structure(blobs):
    X, y, cons = blobs
    est = NoisyMethod(3, random_state=0)
    with pytest.warns(ConstraintsIgnoredWarning, match="constraints did not help"):
        est.fit(X, constraints=cons)
    assert est.fallback_
    assert isinstance(est.guard_, GuardReport) and est.guard_.fallback
    assert est.guard_.violated > est.guard_.violated_reference
    reference = NCut(3, random_state=0).fit(X)  # NCut at its defaults
    assert same_partition(est.labels_, reference.labels_)
    assert adjusted_rand_score(y, est.labels_) == 1.0
    # predict follows the labels it returned, not the noise
    assert adjusted_rand_score(est.labels_, est.predict(X)) == 1.0
    # the partition it returned is not reported as ignoring the pairs: the warning says why
    assert est.n_violated_ == 0


def test_paper_setting_bypasses_it(blobs):
    X, _, cons = blobs
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConstraintsIgnoredWarning)
        warnings.simplefilter("ignore", UserWarning)  # the noise is degenerate, as built
        est = NoisyMethod(3, random_state=0, guard=None).fit(X, constraints=cons)
    assert not hasattr(est, "fallback_") or not est.fallback_
    assert est.guard_ is None
    noise = np.random.default_rng(len(cons)).integers(0, 3, X.shape[0])
    np.testing.assert_array_equal(est.labels_, noise)


@pytest.mark.parametrize("name", ["ccsr", "ccskl", "e2cp", "sl", "fcsc", "scacs", "copkmeans"])
def test_silent_on_clean_data(blobs, name):
    X, y, cons = blobs
    kwargs = {"n_landmarks": 100} if name == "scacs" else {}
    est = get_method(name)(n_clusters=3, random_state=0, guard="held_out", **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConstraintsIgnoredWarning)
        est.fit(X, constraints=cons)
    assert not est.fallback_
    assert adjusted_rand_score(y, est.labels_) == 1.0


def test_without_constraints_nothing_to_judge(blobs):
    X, _, _ = blobs
    est = get_method("ccsr")(n_clusters=3, random_state=0, guard="held_out").fit(X)
    assert est.guard_ is None and not est.fallback_


@pytest.mark.parametrize("name", ["ccsr", "ccskl", "e2cp", "lscp", "sl", "cosc", "scacs", "fcsc"])
def test_named_methods_are_their_papers_by_default(blobs, name):
    # the default is the method as published: no refit, no report, no fallback
    X, _, cons = blobs
    est = get_method(name)(n_clusters=3, random_state=0)
    assert est.guard is None
    kwargs = {"n_landmarks": 100} if name == "scacs" else {}
    est.set_params(**kwargs).fit(X, constraints=cons)
    assert est.guard_ is None and not est.fallback_


def test_every_constrained_method_declares_the_guard():
    # a method without the parameter would be silently unguarded: every registered method
    # that uses the pairs takes it (Auto's safety is its search's, and it has none)
    from spectralink.registry import available_methods

    for name in available_methods():
        cls = get_method(name)
        if name == "auto" or not cls._uses_constraints:
            continue
        assert "guard" in cls().get_params(), name


def test_too_few_constrained_points_judge_the_given_pairs(blobs):
    X, y, _ = blobs
    # two constrained points cannot be split into GUARD_FOLDS folds: the given pairs judge
    a, b = np.flatnonzero(y == 0)[:2]
    ml = Constraints([(a, b)], [], n_samples=len(y))
    assert len(ml.constrained_points) < GUARD_FOLDS
    # breaking the one pair NCut keeps is a veto of the given pairs, before any fold
    with pytest.warns(ConstraintsIgnoredWarning, match="violates 1 given pairs"):
        noisy = NoisyMethod(3, random_state=0).fit(X, constraints=ml)
    assert "more than the unconstrained partition" in str(noisy.guard_)
    assert noisy.fallback_ and noisy.guard_.n_held_out == 0 and noisy.guard_.vetoed
    assert noisy.guard_.violated_reference == 0  # NCut keeps the two together
    # a method that satisfies a pair NCut breaks is kept
    c = np.flatnonzero(y == 1)[0]
    forced = Constraints([(a, c)], [], n_samples=len(y))

    class Joins(NoisyMethod):
        def _fit(self, X, constraints):
            self.affinity_matrix_ = self._affinity(X)
            self.labels_ = y.copy()
            self.labels_[c] = 0  # joins c to a

    with warnings.catch_warnings():
        warnings.simplefilter("error", ConstraintsIgnoredWarning)
        warnings.simplefilter("ignore", UserWarning)
        kept = Joins(3, random_state=0).fit(X, constraints=forced)
    assert not kept.fallback_ and kept.guard_.violated == 0 < kept.guard_.violated_reference


def test_held_out_guard_judges_unseen_pairs_only():
    # a refit that satisfies exactly its training pairs (and nothing else) versus a
    # reference that satisfies everything: every held-out pair is judged on the refit
    y = np.repeat([0, 1, 2], 20)
    cons = Constraints.from_labels(y, 40, random_state=1)
    seen = []

    def refit(train):
        seen.append(train)
        return np.arange(len(y))  # every point alone: violates every must-link

    # the fit itself keeps every given pair (one unconstrained point moved), so the given
    # pairs do not veto and the folds judge
    labels = y.copy()
    free = np.setdiff1d(np.arange(len(y)), cons.constrained_points)[0]
    labels[free] = (y[free] + 1) % 3
    report = held_out_guard(refit, labels, y, cons, random_state=0)
    assert not report.vetoed and len(seen) == GUARD_FOLDS
    assert report.violated_reference == 0
    assert report.fallback
    held_ml = report.violated  # the singletons violate exactly the held-out must-links
    assert report.won == 0 and report.lost == held_ml  # every discordant pair is lost
    assert 0 < held_ml <= report.n_held_out


def test_a_partition_the_refits_do_not_stand_behind_is_not_kept():
    # refits that win the held-out pairs clearly (the classes, against an unconstrained
    # partition with constrained points moved), and a final partition that keeps every given
    # pair but lands elsewhere (unconstrained points moved): the held-out pairs judge the
    # refits, and the refits side with the unconstrained partition where the final one
    # differs from it, so it is not kept; the same refits behind a final partition that is
    # theirs keep it
    y = np.repeat([0, 1, 2], 40)
    cons = Constraints.from_labels(y, 40, random_state=1)
    points = cons.constrained_points
    for n_moved in range(1, len(points)):
        moved = y.copy()
        moved[points[:n_moved]] = (y[points[:n_moved]] + 1) % 3
        if cons.violated(moved).sum() >= 10:
            break
    free = np.setdiff1d(np.arange(len(y)), points)
    elsewhere = y.copy()
    elsewhere[free[:30]] = (y[free[:30]] + 1) % 3
    assert len(free) >= 30 and cons.violated(elsewhere).sum() == 0

    report = held_out_guard(lambda train: y, elsewhere, moved, cons, random_state=0)
    assert not report.vetoed and not report.undecided and report.n_held_out > 0
    assert keeps_constrained(report.won, report.lost) and report.lost == 0
    assert report.fallback and report.sided_reference > report.sided
    assert "side with the unconstrained one" in str(report)
    report = held_out_guard(lambda train: y, y, moved, cons, random_state=0)
    assert not report.fallback and report.sided > report.sided_reference == 0
    assert "side with" not in str(report)


def test_refit_sides_counts_the_pairs_of_points_each_side_gets():
    # by enumeration of the pairs of points on small random partitions
    rng = np.random.default_rng(0)
    for n in (2, 7, 30):
        refit, labels, reference = (rng.integers(0, 3, n) for _ in range(3))
        sides, disagreeing = [0, 0], 0
        for i in range(n):
            for j in range(i + 1, n):
                same = [lab[i] == lab[j] for lab in (refit, labels, reference)]
                if same[1] != same[2]:
                    sides[0 if same[0] == same[1] else 1] += 1
                    disagreeing += 1
        assert pairs_disagreeing(labels, reference) == disagreeing
        assert refit_sides(refit, labels, reference) == tuple(sides)
        # the count every refit shares, passed once
        assert refit_sides(refit, labels, reference, disagreeing) == tuple(sides)


def test_guard_warning_is_one_line_with_the_detail_in_the_report(blobs):
    X, _, cons = blobs
    with pytest.warns(ConstraintsIgnoredWarning) as caught:
        est = NoisyMethod(3, random_state=0).fit(X, constraints=cons)
    message = str(caught[0].message)
    assert "\n" not in message and len(message) <= 200
    assert len(str(est.guard_)) > len(est.guard_.summary())


def test_guard_parameter_is_validated(blobs):
    X, _, cons = blobs
    with pytest.raises(ValueError, match="guard"):
        get_method("ccsr")(n_clusters=3, guard="sometimes").fit(X, constraints=cons)


@pytest.mark.parametrize("name", ["ncut", "lscr"])
def test_unconstrained_methods_have_no_guard(name):
    assert "guard" not in get_method(name)().get_params()


def test_auto_has_no_guard_refits(blobs):
    # Auto's safety is its search's choice against NCut: no guard, no refit after the search
    X, _, cons = blobs
    assert "guard" not in get_method("auto")().get_params()
    auto = get_method("auto")(n_clusters=3, methods=["ccsr"], sigmas=None, random_state=0)
    auto.fit(X, constraints=cons)
    assert not hasattr(auto, "fallback_") and not hasattr(auto, "guard_")


def test_reference_is_ncut_at_its_defaults(blobs):
    X, _, cons = blobs
    # on NCut's default graph the reference comes from the graph already built; on another
    # graph (here 10 neighbours) NCut at its defaults is fitted from the features
    ccsr = get_method("ccsr")
    default = ccsr(n_clusters=3, random_state=0, guard="held_out").fit(X, constraints=cons)
    other = ccsr(n_clusters=3, n_neighbors=10, random_state=0, guard="held_out")
    other.fit(X, constraints=cons)
    assert default._graph_is_ncut_default() and not other._graph_is_ncut_default()
    ncut = NCut(3, random_state=0).fit(X)
    assert same_partition(other._guard_plan(X).reference().labels_, ncut.labels_)


def test_refits_that_fail_leave_the_given_pairs_to_judge(blobs):
    X, _, cons = blobs

    reference = NCut(3, random_state=0).fit(X).labels_
    moved = reference.copy()  # NCut's partition with one unconstrained point moved
    free = np.setdiff1d(np.arange(len(moved)), cons.constrained_points)[0]
    moved[free] = (moved[free] + 1) % 3

    class NeedsAllPairs(NoisyMethod):
        def _fit(self, X, constraints):
            if len(constraints) < len(cons):
                raise ValueError("too few pairs for this method")
            self.affinity_matrix_ = self._affinity(X)
            self.labels_ = moved

    with pytest.warns(ConstraintsIgnoredWarning, match="given pairs"):
        est = NeedsAllPairs(3, random_state=0).fit(X, constraints=cons)
    assert "no pair could be held out" in str(est.guard_)
    assert est.fallback_ and est.guard_.n_held_out == 0 and not est.guard_.vetoed
    # a tie on the given pairs goes to the unconstrained partition
    assert est.guard_.violated == est.guard_.violated_reference


def test_given_pairs_veto_before_any_refit():
    # a partition that breaks the must-links NCut keeps is a failed fit: the guard returns
    # the unconstrained partition without refitting; one that breaks none goes to the folds
    y = np.repeat([0, 1, 2], 20)
    cons = Constraints.from_labels(y, 40, random_state=1)
    assert cons.n_must_link > 0
    calls = []

    def refit(train):
        calls.append(train)
        return y

    broken = y.copy()  # one end of every must-link moved to the next cluster
    ends = cons.must_link[:, 0]
    broken[ends] = (y[ends] + 1) % 3
    n_broken = int(cons.violated(broken).sum())
    assert n_broken >= cons.n_must_link - 1 > 0  # all but chains through one point
    report = held_out_guard(refit, broken, y, cons, random_state=0)
    assert report.vetoed and not report.degenerate and report.fallback
    assert report.n_held_out == 0
    assert report.violated == n_broken and report.violated_reference == 0
    assert calls == []
    assert "more than the unconstrained partition's 0" in str(report)
    # the reference itself breaking the pairs: no veto, the folds judge
    report = held_out_guard(refit, y, broken, cons, random_state=0)
    assert not report.vetoed and not report.fallback and len(calls) == GUARD_FOLDS


def test_a_degenerate_partition_is_vetoed_before_any_refit():
    # a partition with a cluster of a few points no cannot-link asks for (or with fewer
    # clusters) is a failed fit that pairs rarely see: refused where the unconstrained
    # partition is not degenerate, even when it violates none of the given pairs
    from spectralink.methods import degenerate_against

    y = np.repeat([0, 1, 2], 100)
    cons = Constraints(must_link=[(0, 1), (100, 101)], cannot_link=[(0, 100)], n_samples=300)
    tiny = y.copy()
    tiny[[250, 251]] = 3  # a 2-point cluster (min size 3 at n = 300) no pair touches
    merged = np.where(y == 2, 1, y)
    assert degenerate_against(tiny, y, cons) and degenerate_against(merged, y, cons)
    assert not degenerate_against(y, merged, cons) and not degenerate_against(tiny, tiny, cons)
    calls = []

    def refit(train):
        calls.append(train)
        return tiny

    report = held_out_guard(refit, tiny, y, cons, random_state=0)
    assert report.vetoed and report.degenerate and report.fallback and calls == []
    assert report.violated == 0 and "degenerate" in str(report)
    # asked for: a cannot-link from the small cluster to every other cluster
    asked = Constraints(cannot_link=[(250, 0), (250, 100), (250, 200)], n_samples=300)
    assert not degenerate_against(tiny, y, asked)


def test_held_out_pairs_that_cannot_decide_leave_the_given_pairs_to_judge():
    # refits that agree with the unconstrained partition on every held-out pair give no
    # lead at all (won = lost = 0: no outcome could pass the margin), so the given pairs
    # judge, by the same margin: a partition that violates clearly fewer of them is kept;
    # one that violates one or two fewer, or as many, is not
    from spectralink.methods import held_out_can_decide

    assert not held_out_can_decide(0) and not held_out_can_decide(2)  # 2 < 1.645 ** 2
    assert held_out_can_decide(3) and not held_out_can_decide(4, margin=2.0)
    y = np.repeat([0, 1, 2], 20)
    cons = Constraints.from_labels(y, 40, random_state=1)

    def moving(points):  # the unconstrained partition with constrained points moved
        moved = y.copy()
        moved[points] = (moved[points] + 1) % 3
        return moved

    points = cons.constrained_points
    for n_moved in range(1, len(points)):
        moved = moving(points[:n_moved])
        if cons.violated(moved).sum() >= 6:
            break

    def refit(train):  # the partition, but its held-out points placed as NCut places them
        out = y.copy()
        held = np.setdiff1d(points, train.constrained_points)
        out[held] = moved[held]
        return out

    report = held_out_guard(refit, y, moved, cons, random_state=0)
    assert report.undecided and not report.fallback and report.n_held_out > 0
    assert report.violated == 0 < report.violated_reference == report.won
    assert report.lost == 0 and keeps_constrained(report.won, 0)
    assert report.sided > report.sided_reference
    assert "could not decide" in str(report) and "side with" not in str(report)
    # the same given pairs, but refits that are the unconstrained partition: they do not
    # stand behind the partition returned, so the given pairs' lead does not keep it
    report = held_out_guard(lambda train: moved, y, moved, cons, random_state=0)
    assert report.undecided and report.fallback and keeps_constrained(report.won, report.lost)
    assert report.sided == 0 < report.sided_reference
    assert "refits side with the unconstrained one on 100%" in str(report)
    one = moving(points[:1])  # the partition violates one or two fewer: not clearly
    assert 0 < cons.violated(one).sum() <= 2
    report = held_out_guard(lambda train: one, y, one, cons, random_state=0)
    assert report.undecided and report.fallback and report.won == cons.violated(one).sum()
    other = moved.copy()  # another partition, but as many given pairs violated
    free = np.setdiff1d(np.arange(len(y)), cons.constrained_points)[0]
    other[free] = (other[free] + 1) % 3
    report = held_out_guard(lambda train: moved, other, moved, cons, random_state=0)
    assert report.undecided and report.fallback
    assert report.violated == report.violated_reference > 0


def test_a_graph_is_shared_only_where_the_guarded_fit_is_the_same():
    # the guard judges a precomputed affinity against NCut on it, and a fit from features
    # against NCut at its defaults: E2CP's 10-neighbour graph handed over precomputed would
    # change its reference, so the protocol may share only NCut's default graph with it
    from spectralink.methods import shareable_knn_graph

    e2cp = get_method("e2cp")
    assert shareable_knn_graph(get_method("ccsr")(n_clusters=3)) == (20, None)
    assert shareable_knn_graph(e2cp(n_clusters=3, guard="held_out")) is None
    assert shareable_knn_graph(e2cp(n_clusters=3)) == (10, None)
    assert shareable_knn_graph(e2cp(n_clusters=3, n_neighbors=20, guard="held_out")) == (20, None)


def test_unguarded_clone_leaves_the_estimator_alone():
    from spectralink.methods import unguarded_clone

    est = get_method("ccsr")(n_clusters=3, n_neighbors=15, guard="held_out")
    copy = unguarded_clone(est)
    assert copy is not est and copy.guard is None and copy.n_neighbors == 15
    assert est.guard == "held_out"
    plain = unguarded_clone(NCut(3))  # no guard to remove
    assert "guard" not in plain.get_params(deep=False)
