"""LSCP similarity learning and the batched simplex QP solver."""

import numpy as np
import pytest
import scipy.sparse as sp

from spectralink import Constraints
from spectralink.graph import kneighbors
from spectralink.similarity import learn_similarity, local_gram
from spectralink.solvers.simplex_qp import simplex_qp, simplex_qp_kkt_residual


def _random_qps(rng, n, k, rank=None, ridge=0.1):
    rank = k if rank is None else rank
    B = rng.standard_normal((n, k, rank))
    A = B @ B.transpose(0, 2, 1) / rank + ridge * np.eye(k)
    b = rng.standard_normal((n, k)) * rng.uniform(0.1, 3.0, size=(n, 1))
    return A, b


def _cvxpy_simplex_qp(A, b):
    cp = pytest.importorskip("cvxpy")
    k = len(b)
    w = cp.Variable(k)
    L = np.linalg.cholesky(A)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(L.T @ w) + b @ w), [w >= 0, cp.sum(w) == 1])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return w.value


@pytest.mark.parametrize("k,rank", [(10, 10), (10, 3), (5, 5), (2, 1)])
def test_simplex_qp_matches_reference_solver(k, rank):
    rng = np.random.default_rng(k * 10 + rank)
    A, b = _random_qps(rng, 8, k, rank)
    W = simplex_qp(A, b)
    for i in range(len(b)):
        ref = _cvxpy_simplex_qp(A[i], b[i])
        obj = lambda w, i=i: 0.5 * w @ A[i] @ w + b[i] @ w  # noqa: E731
        assert obj(W[i]) <= obj(ref) + 1e-10
        np.testing.assert_allclose(W[i], ref, atol=1e-6)


def test_simplex_qp_is_exact_kkt():
    rng = np.random.default_rng(0)
    A, b = _random_qps(rng, 2000, 10, 4)
    W = simplex_qp(A, b)
    assert np.all(W >= 0)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-14)
    assert simplex_qp_kkt_residual(A, b, W).max() < 1e-10
    # a handful of supports, not just interior or vertex solutions
    sizes = np.count_nonzero(W > 0, axis=1)
    assert sizes.min() < sizes.max()


def test_simplex_qp_interior_and_vertex_cases():
    k = 4
    A = np.eye(k)[None].repeat(2, axis=0)
    b = np.zeros((2, k))
    b[1, 2] = -10.0  # strongly prefers coordinate 2: vertex solution
    W = simplex_qp(A, b)
    np.testing.assert_allclose(W[0], 0.25)
    np.testing.assert_allclose(W[1], np.eye(k)[2])


def test_simplex_qp_bad_input():
    with pytest.raises(ValueError, match="shape"):
        simplex_qp(np.eye(3), np.zeros(3))
    with pytest.raises(ValueError, match="finite"):
        simplex_qp(np.full((1, 2, 2), np.nan), np.zeros((1, 2)))
    with pytest.raises(ValueError, match="symmetric"):
        simplex_qp(np.array([[[1.0, 1.0], [0.0, 1.0]]]), np.zeros((1, 2)))


def _blobs(rng, n_per=40, d=3, sep=4.0):
    centers = np.eye(3, d) * sep
    X = np.vstack([c + rng.standard_normal((n_per, d)) for c in centers])
    y = np.repeat(np.arange(3), n_per)
    return X, y


def test_local_gram_is_kernel_gram():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 4))
    dist, ind = kneighbors(X, 5)
    sigma = 1.3
    G = local_gram(X, ind, dist, sigma=sigma)
    i = 7
    K = lambda a, b: np.exp(-np.sum((a - b) ** 2) / (2 * sigma**2))  # noqa: E731
    ref = np.array(
        [
            [K(X[i], X[i]) - K(X[i], X[l]) - K(X[j], X[i]) + K(X[j], X[l]) for l in ind[i]]
            for j in ind[i]
        ]
    )
    np.testing.assert_allclose(G[i], ref, atol=1e-12)
    assert np.linalg.eigvalsh(G).min() > -1e-10
    Gl = local_gram(X, ind, dist, kernel="linear")
    D = X[i] - X[ind[i]]
    np.testing.assert_allclose(Gl[i], D @ D.T, atol=1e-12)


def test_learn_similarity_properties():
    rng = np.random.default_rng(2)
    X, y = _blobs(rng)
    n = len(y)
    cons = Constraints.from_labels(y, 200, random_state=0)
    W = learn_similarity(X, cons, n_neighbors=6)
    assert sp.issparse(W) and W.shape == (n, n)
    assert abs(W - W.T).max() < 1e-15
    assert W.diagonal().max() == 0
    assert W.data.min() >= 0 and W.data.max() <= 1
    assert np.asarray(W.sum(axis=1)).min() >= 0.5 - 1e-12


def test_learn_similarity_equals_per_point_reference_qps():
    # eqs. 6-10 solved point by point with a generic QP solver, then symmetrised
    rng = np.random.default_rng(5)
    X, y = _blobs(rng, n_per=10)
    n, k, lam, mu = len(y), 5, 0.1, 0.1
    cons = Constraints.from_labels(y, 120, random_state=1)
    dist, ind = kneighbors(X, k)
    sigma = float(np.mean(dist[:, -1]))
    G = local_gram(X, ind, dist, sigma=sigma)
    Y = cons.signed_matrix.toarray()
    Wu = np.zeros((n, n))
    for i in range(n):
        Yi = Y[i, ind[i]]
        H = (Yi != 0).astype(float)
        A = 2 * (G[i] + lam * np.diag(H * H) + mu * np.eye(k))
        Wu[i, ind[i]] = _cvxpy_simplex_qp(A, -2 * lam * H * Yi)
    ref = (Wu + Wu.T) / 2
    assert np.count_nonzero(Y[np.repeat(np.arange(n), k), ind.ravel()]) > 0
    W = learn_similarity(X, cons, n_neighbors=k, lam=lam, mu=mu, neighbors=(dist, ind))
    np.testing.assert_allclose(W.toarray(), ref, atol=1e-6)


def test_constraints_change_the_learnt_graph():
    rng = np.random.default_rng(3)
    X, y = _blobs(rng, sep=2.0)
    W0 = learn_similarity(X, n_neighbors=8)
    # cannot-link every neighbouring pair across classes: their weights must vanish
    dist, ind = kneighbors(X, 8)
    rows = np.repeat(np.arange(len(y)), 8)
    cols = ind.ravel()
    cross = y[rows] != y[cols]
    assert cross.any()
    cons = Constraints(cannot_link=np.column_stack([rows[cross], cols[cross]]), n_samples=len(y))
    W1 = learn_similarity(X, cons, n_neighbors=8, lam=10.0)
    cross_w0 = np.asarray(W0[rows[cross], cols[cross]]).ravel().sum()
    cross_w1 = np.asarray(W1[rows[cross], cols[cross]]).ravel().sum()
    assert cross_w1 < 0.2 * cross_w0


def test_learn_similarity_deterministic_and_bad_input():
    rng = np.random.default_rng(4)
    X, y = _blobs(rng)
    a = learn_similarity(X, n_neighbors=5, random_state=0)
    b = learn_similarity(X, n_neighbors=5, random_state=0)
    assert abs(a - b).max() == 0
    with pytest.raises(ValueError, match="n_neighbors"):
        learn_similarity(X, n_neighbors=len(y))
    with pytest.raises(ValueError, match="mu"):
        learn_similarity(X, mu=0)
    with pytest.raises(ValueError, match="lam"):
        learn_similarity(X, lam=-1)
    with pytest.raises(ValueError, match="kernel"):
        learn_similarity(X, kernel="cosine")
    with pytest.raises(ValueError, match="sigma"):
        learn_similarity(X, sigma=-1.0)
    with pytest.raises(ValueError, match="NaN"):
        learn_similarity(np.full((5, 2), np.nan))
    with pytest.raises(ValueError, match="neighbors"):
        learn_similarity(X, n_neighbors=5, neighbors=(np.zeros((3, 5)), np.zeros((3, 5), int)))
