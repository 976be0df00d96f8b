"""Clustering metrics: identities, the k-mismatch case, normalized cut by hand, violations."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from spectralink import Constraints
from spectralink.metrics import (
    adjusted_rand_score,
    chance_violated_fraction,
    clearly_fewer_violations,
    clustering_error,
    majority_vote_error,
    normalized_cut,
    normalized_mutual_info_score,
    partition_diagnostics,
    unrequested_small_clusters,
    violated_fraction,
)


@pytest.fixture
def labels():
    rng = np.random.RandomState(0)
    y = rng.randint(0, 4, size=200)
    noisy = y.copy()
    flip = rng.rand(200) < 0.3
    noisy[flip] = rng.randint(0, 4, size=flip.sum())
    return y, noisy


def test_perfect_labels_give_zero(labels):
    y, _ = labels
    perm = np.array([2, 0, 3, 1])[y] + 10  # relabelled, shifted ids
    assert clustering_error(y, perm) == 0.0
    assert majority_vote_error(y, perm) == 0.0
    assert adjusted_rand_score(y, perm) == pytest.approx(1.0)
    assert normalized_mutual_info_score(y, perm) == pytest.approx(1.0)


def test_permutation_invariance(labels):
    y, pred = labels
    rng = np.random.RandomState(1)
    for _ in range(5):
        perm = rng.permutation(4)
        assert clustering_error(y, perm[pred]) == pytest.approx(clustering_error(y, pred))
        assert majority_vote_error(y, perm[pred]) == pytest.approx(majority_vote_error(y, pred))
        assert clustering_error(perm[y], pred) == pytest.approx(clustering_error(y, pred))


def test_clustering_error_matches_brute_force(labels):
    from itertools import permutations

    y, pred = labels
    best = max(np.mean(np.array(p)[pred] == y) for p in permutations(range(4)))
    assert clustering_error(y, pred) == pytest.approx(1 - best)
    assert 0 < clustering_error(y, pred) < 0.5


def test_different_numbers_of_clusters():
    y = np.array([0, 0, 0, 1, 1, 1])
    # three clusters for two classes: the best one-to-one matching leaves cluster 2 unmatched
    pred = np.array([0, 0, 2, 1, 1, 1])
    assert clustering_error(y, pred) == pytest.approx(1 / 6)
    assert majority_vote_error(y, pred) == 0.0
    # one cluster for two classes: at most half can be matched
    assert clustering_error(y, np.zeros(6, int)) == pytest.approx(0.5)
    assert majority_vote_error(y, np.zeros(6, int)) == pytest.approx(0.5)


def test_majority_vote_at_most_hungarian():
    rng = np.random.RandomState(3)
    for _ in range(20):
        y = rng.randint(0, 3, size=50)
        pred = rng.randint(0, rng.randint(1, 6), size=50)
        assert majority_vote_error(y, pred) <= clustering_error(y, pred) + 1e-12


def test_label_errors():
    with pytest.raises(ValueError, match="3 labels but y_pred has 2"):
        clustering_error([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="1-d"):
        majority_vote_error([[0, 1]], [[0, 1]])
    with pytest.raises(ValueError, match="empty"):
        clustering_error([], [])


def test_normalized_cut_by_hand():
    # path 0-1-2-3 with weights 2, 1, 3 plus edge 0-3 of weight 0.5
    W = np.zeros((4, 4))
    for i, j, w in [(0, 1, 2.0), (1, 2, 1.0), (2, 3, 3.0), (0, 3, 0.5)]:
        W[i, j] = W[j, i] = w
    # degrees: 2.5, 3, 4, 3.5; C1 = {0, 1} (vol 5.5), C2 = {2, 3} (vol 7.5), cut = 1 + 0.5
    expected = 1.5 / 5.5 + 1.5 / 7.5
    assert normalized_cut(W, [0, 0, 1, 1]) == pytest.approx(expected)
    assert normalized_cut(sp.csr_matrix(W), ["a", "a", "b", "b"]) == pytest.approx(expected)
    # a single cluster cuts nothing; singletons cut everything (sum of 1 per cluster)
    assert normalized_cut(W, [0, 0, 0, 0]) == 0.0
    assert normalized_cut(W, [0, 1, 2, 3]) == pytest.approx(4.0)


def test_normalized_cut_isolated_point_and_errors():
    W = np.zeros((3, 3))
    W[0, 1] = W[1, 0] = 1.0
    assert normalized_cut(W, [0, 0, 1]) == 0.0
    with pytest.raises(ValueError, match="must be square"):
        normalized_cut(np.ones((3, 2)), [0, 1, 0])
    with pytest.raises(ValueError, match="one row per label"):
        normalized_cut(W, [0, 1])


def test_violated_fraction():
    c = Constraints([(0, 1), (2, 3)], [(0, 2), (1, 3)], n_samples=4)
    assert violated_fraction(np.array([0, 0, 1, 1]), c) == 0.0
    # (2, 3) ML broken, CL (0, 2) broken
    assert violated_fraction(np.array([0, 0, 0, 1]), c) == pytest.approx(0.5)
    assert violated_fraction(np.array([0, 1, 0, 1]), c) == pytest.approx(1.0)
    assert violated_fraction(np.array([0, 1, 0, 1]), Constraints(n_samples=4)) == 0.0


# --------------------------------------------------------------------------- diagnostics
def test_chance_violated_fraction():
    labels = np.array([0, 0, 1, 1])  # p = (1/2, 1/2): sum p^2 = 1/2
    cons = Constraints(must_link=[(0, 1)], cannot_link=[(0, 2), (1, 3), (0, 3)], n_samples=4)
    assert chance_violated_fraction(labels, cons) == pytest.approx(0.5)
    one = np.zeros(4, dtype=int)  # one cluster: every cannot-link is violated by chance
    assert chance_violated_fraction(one, cons) == pytest.approx(0.75)
    assert chance_violated_fraction(labels, Constraints(n_samples=4)) == 0.0


def test_small_cluster_asked_for_by_cannot_links_is_not_reported():
    labels = np.array([0] * 50 + [1] * 49 + [2])
    none = Constraints(n_samples=100)
    assert unrequested_small_clusters(labels, none, 2) == [(2, 1)]
    # a cannot-link to one cluster only: the point could join the other one
    one = Constraints(cannot_link=[(99, 0)], n_samples=100)
    assert unrequested_small_clusters(labels, one, 2) == [(2, 1)]
    both = Constraints(cannot_link=[(99, 0), (99, 60)], n_samples=100)
    assert unrequested_small_clusters(labels, both, 2) == []


def test_partition_diagnostics():
    y = np.repeat([0, 1, 2], 100)
    cons = Constraints.from_labels(y, 200, random_state=0)
    assert partition_diagnostics(y, cons, 3) == []
    giant = np.zeros(300, dtype=int)
    giant[:2] = [1, 2]  # one giant cluster and two singletons: the SL collapse
    problems = partition_diagnostics(giant, cons, 3)
    assert any("under 3 points" in p for p in problems)
    assert any("violates" in p for p in problems)
    assert "2 cluster(s) where 3" in partition_diagnostics(np.repeat([0, 1], 150), cons, 3)[0]
    # violations are only checked for methods that use the constraints
    shuffled = np.random.RandomState(0).permutation(y)
    assert any("violates" in p for p in partition_diagnostics(shuffled, cons, 3))
    assert partition_diagnostics(shuffled, cons, 3, check_violations=False) == []


def test_constraints_not_followed():
    from spectralink.metrics import constraints_not_followed

    y = np.repeat([0, 1, 2], 100)
    cons = Constraints.from_labels(y, 200, random_state=0)
    # against NCut's count: only more violations than ignoring the pairs is flagged
    assert constraints_not_followed("M", 5, 5, y, cons) is None
    text = constraints_not_followed("M", 6, 5, y, cons)
    assert "more than NCut's" in text and text.endswith("whether to use them.")
    assert "\n" not in text and len(text) <= 200
    # without it, against chance: the true partition is fine, a shuffled one is flagged
    assert constraints_not_followed("M", 0, None, y, cons) is None
    shuffled = np.random.RandomState(0).permutation(y)
    n_shuffled = int(cons.violated(shuffled).sum())
    assert "unrelated" in constraints_not_followed("M", n_shuffled, None, shuffled, cons)
    assert constraints_not_followed("M", n_shuffled, None, shuffled, cons, hint="").endswith("%.")


def test_clearly_fewer_violations():
    y = np.repeat([0, 1], 100)
    cons = Constraints.from_labels(y, 100, random_state=0)
    noisy = y.copy()
    noisy[:40] = 1  # breaks a fifth of the first cluster
    assert clearly_fewer_violations(y, noisy, cons)
    assert not clearly_fewer_violations(noisy, y, cons)
    one_off = y.copy()
    one_off[0] = 1  # at most a couple of pairs: within noise
    assert not clearly_fewer_violations(y, one_off, cons)
    assert not clearly_fewer_violations(y, noisy, Constraints(n_samples=200))


@pytest.mark.parametrize("seed", range(5))
def test_fewer_violations_possible_is_exact(seed):
    """When no partition can violate clearly fewer pairs than the reference, the shrunk
    CCSR/CCSKL fits skip their unshrunk alternative: that must never skip a fit that
    would have been kept. Checked against the best possible partition (the classes,
    violating none)."""
    from spectralink.metrics import fewer_violations_possible

    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, 150)
    cons = Constraints.from_labels(y, int(rng.integers(5, 200)), random_state=seed)
    for n_flipped in range(0, 60, 3):
        ref = y.copy()
        ref[:n_flipped] = (ref[:n_flipped] + 1) % 3
        possible = fewer_violations_possible(ref, cons)
        # the classes violate none: the best any partition can do
        assert possible == clearly_fewer_violations(y, ref, cons)
    assert not fewer_violations_possible(y, Constraints(n_samples=150))


@pytest.mark.parametrize("seed", range(6))
def test_partition_scores_match_scikit_learn(seed):
    from sklearn import metrics as skm

    from spectralink.metrics import partition_scores

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 300))
    y = rng.integers(0, int(rng.integers(1, 6)), n)
    labels = rng.integers(0, int(rng.integers(1, 8)), n) * 3 - 2  # arbitrary label values
    if seed == 0:
        labels = y.copy()  # identical partitions
    if seed == 1:
        labels = np.zeros(n, dtype=int)  # one cluster
    got = partition_scores(y, labels)
    assert got["ari"] == pytest.approx(skm.adjusted_rand_score(y, labels), abs=1e-12)
    assert got["nmi"] == pytest.approx(skm.normalized_mutual_info_score(y, labels), abs=1e-12)
    assert got["error"] == pytest.approx(clustering_error(y, labels), abs=1e-12)
    assert got["majority_error"] == pytest.approx(majority_vote_error(y, labels), abs=1e-12)


def test_partition_scores_trivial_partitions():
    from spectralink.metrics import partition_scores

    one = np.zeros(5, dtype=int)
    own = np.arange(5)
    assert partition_scores(one, one)["ari"] == 1.0 and partition_scores(one, one)["nmi"] == 1.0
    assert partition_scores(own, own)["ari"] == 1.0
    assert partition_scores(one, own)["nmi"] == 0.0
