"""SSKK: semi-supervised kernel k-means (normalized-cut version)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs

from spectralink import Constraints
from spectralink.graph import knn_affinity
from spectralink.methods.ncut import NCut
from spectralink.methods.sskk import (
    SSKK,
    _distances,
    penalty_matrix,
    psd_shift,
    weighted_kernel_kmeans,
)
from spectralink.metrics import clustering_error


def two_class_four_blobs(n=200, seed=0):
    X, b = make_blobs(
        n, centers=[[0, 0], [6, 0], [0, 6], [6, 6]], cluster_std=1.0, random_state=seed
    )
    return X, np.isin(b, [0, 3]).astype(int)


def _graph_and_constraints(n=120, n_pairs=40, seed=0):
    X, y = make_blobs(n, centers=3, cluster_std=1.5, random_state=seed)
    A = knn_affinity(X, 10)
    return A, Constraints.from_labels(y, n_pairs, random_state=seed), y


def test_penalty_is_n_over_k_c():
    _, cons, _ = _graph_and_constraints()
    Wc = penalty_matrix(cons, 3)
    w = 120 / (3 * len(cons))
    i, j = cons.must_link[0]
    assert np.isclose(Wc[i, j], w) and np.isclose(Wc[j, i], w)
    i, j = cons.cannot_link[0]
    assert np.isclose(Wc[i, j], -w)
    assert penalty_matrix(Constraints(n_samples=5), 2).nnz == 0


@pytest.mark.parametrize("shift", [0.0, 0.7])
def test_sparse_distances_equal_dense_kernel_kmeans(shift):
    A, cons, _ = _graph_and_constraints()
    P = (A + penalty_matrix(cons, 3)).tocsr()
    d = np.asarray(A.sum(axis=1)).ravel()
    K = shift * np.diag(1 / d) + (P.toarray() / d[:, None]) / d[None, :]
    labels = np.random.default_rng(0).integers(0, 3, len(d))
    dense = np.empty((len(d), 3))
    for c in range(3):
        idx = labels == c
        a = d[idx]
        dense[:, c] = (
            np.diag(K) - 2 * K[:, idx] @ a / a.sum() + a @ K[np.ix_(idx, idx)] @ a / a.sum() ** 2
        )
    ours, _, _ = _distances(P, d, shift, labels, 3)
    # equal up to the per-point constant K_ii
    np.testing.assert_allclose(ours + np.diag(K)[:, None], dense, rtol=1e-10, atol=1e-12)


def test_auto_shift_makes_the_kernel_psd():
    A, cons, _ = _graph_and_constraints()
    P = (A + penalty_matrix(cons, 3)).tocsr()
    d = np.asarray(A.sum(axis=1)).ravel()
    s = psd_shift(P, d)
    K0 = (P.toarray() / d[:, None]) / d[None, :]
    assert np.linalg.eigvalsh(K0).min() < 0  # indefinite without the shift
    assert np.linalg.eigvalsh(K0 + s * np.diag(1 / d)).min() >= -1e-10


def test_psd_shift_sweeps_decrease_the_objective():
    A, cons, _ = _graph_and_constraints()
    P = (A + penalty_matrix(cons, 3)).tocsr()
    d = np.asarray(A.sum(axis=1)).ravel()
    s = psd_shift(P, d)
    labels = np.random.default_rng(1).integers(0, 3, len(d))
    objs = []
    for _ in range(6):
        labels, obj, _ = weighted_kernel_kmeans(P, d, labels, 3, shift=s, max_iter=1)
        objs.append(obj)
    assert np.all(np.diff(objs) <= 1e-12)


def test_constraints_fix_what_the_graph_cannot_see():
    X, y = two_class_four_blobs()
    base = clustering_error(y, SSKK(2, random_state=0).fit_predict(X))
    errs = [
        clustering_error(
            y,
            SSKK(2, random_state=0).fit_predict(
                X, constraints=Constraints.from_labels(y, 60, random_state=s)
            ),
        )
        for s in range(3)
    ]
    assert base >= 0.2
    assert np.mean(errs) <= base - 0.1


def test_empty_constraints_and_attributes():
    X, y = make_blobs(150, centers=3, random_state=0)
    est = SSKK(3, random_state=0).fit(X)
    # without constraints SSKK is kernel k-means for the normalized cut: close to NCut
    ncut = NCut(3, random_state=0).fit_predict(X)
    assert clustering_error(y, est.labels_) <= clustering_error(y, ncut) + 0.05
    assert est.penalty_ == 0.0 and est.shift_ >= 0
    assert sp.issparse(est.affinity_matrix_)
    assert np.unique(est.labels_).size == 3


def test_fixed_shift_zero_warns_but_runs():
    X, y = two_class_four_blobs(100)
    cons = Constraints.from_labels(y, 30, random_state=0)
    with pytest.warns(RuntimeWarning, match="indefinite"):
        est = SSKK(2, shift=0.0, random_state=0).fit(X, constraints=cons)
    assert est.shift_ == 0.0 and est.labels_.shape == (100,)


def test_deterministic():
    X, y = two_class_four_blobs(100)
    cons = Constraints.from_labels(y, 30, random_state=0)
    a = SSKK(2, random_state=4).fit_predict(X, constraints=cons)
    b = SSKK(2, random_state=4).fit_predict(X, constraints=cons)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "params",
    [{"shift": -1.0}, {"shift": "big"}, {"penalty": -2.0}, {"n_init": 0}, {"max_iter": 1.5}],
)
def test_bad_params(params):
    X, _ = make_blobs(40, random_state=0)
    with pytest.raises(ValueError):
        SSKK(2, **params).fit(X)
