"""SCLC (normalized cut with linear constraints): the constrained eigenproblem and rounding."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.linalg as la
import scipy.sparse as sp
from sklearn.datasets import make_blobs

from spectralink import Constraints
from spectralink.graph import degrees
from spectralink.methods.sclc import SCLC, sign_partition
from spectralink.metrics import normalized_cut


def _random_graph(n, seed, density=0.5):
    rng = np.random.default_rng(seed)
    A = rng.uniform(0.1, 1.0, (n, n)) * (rng.uniform(size=(n, n)) < density)
    A = np.triu(A, 1)
    A = A + A.T
    A[np.arange(n - 1), np.arange(1, n)] += 0.05  # a path keeps it connected
    A[np.arange(1, n), np.arange(n - 1)] += 0.05
    return sp.csr_matrix(A)


def _dense_reference(W, ml, cl):
    """min v^T L v / v^T D v over {B v = 0}, from an explicit null-space basis."""
    W = W.toarray()
    n = len(W)
    d = W.sum(1)
    rows = [d]
    for i, j in ml:
        r = np.zeros(n)
        r[i], r[j] = 1, -1
        rows.append(r)
    for i, j in cl:
        r = np.zeros(n)
        r[i] = r[j] = 1
        rows.append(r)
    Z = la.null_space(np.array(rows))
    L = np.diag(d) - W
    lam = la.eigh(Z.T @ L @ Z, Z.T @ np.diag(d) @ Z, eigvals_only=True)
    return lam[0], np.array(rows)


@pytest.mark.parametrize("seed", range(4))
def test_embedding_solves_the_constrained_eigenproblem(seed):
    W = _random_graph(14, seed)
    ml = [(0, 1), (1, 5)]
    cl = [(2, 3), (0, 7), (9, 12)]
    cons = Constraints(must_link=ml, cannot_link=cl, n_samples=14)
    est = SCLC(affinity="precomputed", random_state=seed).fit(W, constraints=cons)
    v = est.embedding_
    lam_ref, B = _dense_reference(W, ml, cl)
    d = degrees(W)
    L = sp.diags(d) - W
    assert np.abs(B @ v).max() < 1e-8 * np.abs(v).max()
    assert v @ (L @ v) / (v @ (d * v)) == pytest.approx(lam_ref, rel=1e-6, abs=1e-9)


def test_constraints_satisfied_on_blobs():
    X, y = make_blobs(n_samples=120, centers=2, cluster_std=3.0, random_state=1)
    cons = Constraints.from_labels(y, 40, random_state=0)
    est = SCLC(random_state=0).fit(X, constraints=cons)
    assert est.n_violated_ == 0
    assert est.cut_ == pytest.approx(normalized_cut(est.affinity_matrix_, est.labels_))
    assert set(np.unique(est.labels_)) == {0, 1}


def test_sign_partition_picks_the_cheaper_side_for_zero_entries():
    W = _random_graph(8, 3)
    v = np.array([1.0, 0.8, 0.0, -0.5, 0.0, -1.0, 0.3, -0.2])
    got = sign_partition(W, v)
    cands = []
    for side in (0, 1):
        lab = np.where(v == 0, side, (v > 0).astype(int))
        cands.append((normalized_cut(W, lab), tuple(lab)))
    assert tuple(got) == min(cands)[1]
    assert got[2] == got[4]  # the zero set moves together


def test_deterministic():
    X, y = make_blobs(n_samples=80, centers=2, random_state=2)
    cons = Constraints.from_labels(y, 20, random_state=3)
    a = SCLC(random_state=5).fit(X, constraints=cons).labels_
    b = SCLC(random_state=5).fit(X, constraints=cons).labels_
    np.testing.assert_array_equal(a, b)


def test_unconstrained_is_the_second_eigenvector_cut():
    W = _random_graph(10, 7)
    est = SCLC(affinity="precomputed", random_state=0).fit(W)
    lam_ref, _ = _dense_reference(W, [], [])
    v = est.embedding_
    d = degrees(W)
    assert v @ ((sp.diags(d) - W) @ v) / (v @ (d * v)) == pytest.approx(lam_ref, rel=1e-6)


def test_more_than_two_clusters_refused():
    X, _ = make_blobs(n_samples=30, centers=3, random_state=0)
    with pytest.raises(ValueError, match="2 clusters only"):
        SCLC(3).fit(X)


def test_odd_cannot_link_cycle_refused():
    X, _ = make_blobs(n_samples=30, centers=2, random_state=0)
    cons = Constraints(cannot_link=[(0, 1), (1, 2), (2, 0)], n_samples=30)
    with pytest.raises(ValueError, match="odd cycle"):
        SCLC().fit(X, constraints=cons)


def test_no_admissible_vector_refused():
    # path 0-1-2; the must-link merges {0, 1}, whose weight differs from vertex 2's, so the
    # cannot-link v_01 = -v_2 and the balance g^T v = 0 leave only v = 0
    W = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=float))
    cons = Constraints(must_link=[(0, 1)], cannot_link=[(1, 2)], n_samples=3)
    with pytest.raises(ValueError, match="only v = 0"):
        SCLC(affinity="precomputed").fit(W, constraints=cons)


@pytest.mark.parametrize("param, value", [("tol", 0), ("tol", -1.0), ("maxiter", 0)])
def test_bad_parameters(param, value):
    X, _ = make_blobs(n_samples=30, centers=2, random_state=0)
    with pytest.raises(ValueError, match=param):
        SCLC(**{param: value}).fit(X)


def test_isolated_vertex_refused():
    W = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]], dtype=float))
    with pytest.raises(ValueError, match="no edge"):
        SCLC(affinity="precomputed").fit(W)


def test_sclc_cut_is_no_better_than_brute_force_over_consistent_partitions():
    # SCLC satisfies the constraints, so its cut is bounded below by the best consistent cut
    W = _random_graph(10, 11)
    ml, cl = [(0, 1)], [(2, 3), (4, 5)]
    cons = Constraints(must_link=ml, cannot_link=cl, n_samples=10)
    est = SCLC(affinity="precomputed", random_state=0, guard=None).fit(W, constraints=cons)
    best = np.inf
    for bits in itertools.product((0, 1), repeat=9):
        lab = np.array((0, *bits))
        if lab.max() == 0 or cons.violated(lab).any():
            continue
        best = min(best, normalized_cut(W, lab))
    assert est.n_violated_ == 0
    assert est.cut_ >= best - 1e-12
