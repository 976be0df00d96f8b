"""CCSR and its exact PSD least-squares solver."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

from spectralink import Constraints
from spectralink.graph import gaussian_knn_graph, kneighbors, knn_affinity, sigma_from_distances
from spectralink.methods.ccsr import CCSR
from spectralink.methods.ncut import NCut
from spectralink.metrics import clustering_error
from spectralink.solvers.psd_lstsq import (
    accumulate_gram,
    psd_least_squares,
    smat,
    svec,
)
from spectralink.spectral import laplacian_eigenvectors


def _problem(n=300, m=8, n_pairs=600, seed=0, weighted=True):
    """Spectral embedding of blobs with targets from unrelated labels: the PSD bound is active."""
    rng = np.random.default_rng(seed)
    X, _ = make_blobs(n, centers=5, cluster_std=2.5, random_state=seed)
    _, U = laplacian_eigenvectors(knn_affinity(X, 10), m, random_state=0)
    labels = rng.integers(0, 3, n)
    a, b = rng.integers(0, n, n_pairs), rng.integers(0, n, n_pairs)
    keep = a != b
    a, b = a[keep], b[keep]
    i = np.r_[np.arange(n), a]
    j = np.r_[np.arange(n), b]
    t = np.r_[np.ones(n), (labels[a] == labels[b]).astype(float)]
    w = np.r_[np.ones(n), rng.uniform(0.5, 20.0, len(a)) if weighted else np.ones(len(a))]
    return U, i, j, t, w


def _direct_objective(U, i, j, t, w, M):
    return float(np.sum(w * (np.einsum("sa,ab,sb->s", U[i], M, U[j]) - t) ** 2))


def two_class_four_blobs(n=200, seed=0):
    X, b = make_blobs(
        n, centers=[[0, 0], [6, 0], [0, 6], [6, 6]], cluster_std=1.0, random_state=seed
    )
    return X, np.isin(b, [0, 3]).astype(int)


def test_svec_is_an_isometry():
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((2, 6, 6))
    A, B = A + A.T, B + B.T
    assert np.isclose(svec(A) @ svec(B), np.sum(A * B))
    np.testing.assert_allclose(smat(svec(A)), A)


def test_gram_reproduces_the_objective():
    U, i, j, t, w = _problem(n=120, m=5, n_pairs=200)
    G, h, c = accumulate_gram(U, i, j, t, w, block_size=37)
    rng = np.random.default_rng(1)
    R = rng.standard_normal((5, 5))
    M = R @ R.T
    z = svec(M)
    assert np.isclose(z @ G @ z - 2 * h @ z + c, _direct_objective(U, i, j, t, w, M), rtol=1e-10)


@pytest.mark.parametrize("seed,m", [(0, 6), (1, 10)])
def test_psd_solver_kkt_and_matches_cvxpy(seed, m):
    cp = pytest.importorskip("cvxpy")
    U, i, j, t, w = _problem(m=m, seed=seed)
    G, h, c = accumulate_gram(U, i, j, t, w)
    res = psd_least_squares(G, h, c)
    # the PSD constraint is active: the unconstrained minimiser is not the answer
    assert res.method != "unconstrained"
    assert np.linalg.matrix_rank(res.M, tol=1e-8 * np.abs(res.M).max()) < m
    kkt = res.kkt
    assert kkt["M_min_eig"] >= -1e-10 * np.abs(res.M).max()
    assert kkt["grad_min_eig"] >= -1e-7 * kkt["scale"]
    assert abs(kkt["complementarity"]) <= 1e-7 * kkt["scale"] * np.linalg.norm(res.M)
    assert res.converged
    assert np.isclose(res.objective, _direct_objective(U, i, j, t, w, res.M), rtol=1e-9)

    M = cp.Variable((m, m), PSD=True)
    pred = cp.sum(cp.multiply(U[i] @ M, U[j]), axis=1)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(w, cp.square(pred - t)))))
    prob.solve(solver=cp.CLARABEL)
    assert abs(res.objective - prob.value) <= 1e-5 * abs(prob.value)
    # ours is the exact optimum, so never worse than the conic solver beyond its tolerance
    assert res.objective <= prob.value * (1 + 1e-7)


def test_psd_solver_interior_optimum_is_the_linear_solve():
    rng = np.random.default_rng(0)
    U = np.linalg.qr(rng.standard_normal((200, 4)))[0]
    i = j = np.arange(200)
    res = psd_least_squares(*accumulate_gram(U, i, j, np.ones(200)))
    assert res.method == "unconstrained"
    assert res.kkt["M_min_eig"] > 0
    assert np.abs(res.kkt["grad_min_eig"]) < 1e-8 * res.kkt["scale"]


def test_psd_solver_bad_input():
    with pytest.raises(ValueError, match="p = m"):
        psd_least_squares(np.eye(4), np.zeros(4))
    with pytest.raises(ValueError, match="finite"):
        psd_least_squares(np.full((3, 3), np.nan), np.zeros(3))
    with pytest.raises(ValueError, match="non-negative"):
        accumulate_gram(np.ones((3, 2)), np.arange(3), np.arange(3), np.ones(3), -np.ones(3))


def test_ccsr_exposes_certified_solution():
    X, y = two_class_four_blobs()
    cons = Constraints.from_labels(y, 60, random_state=0)
    est = CCSR(2, random_state=0).fit(X, constraints=cons)
    assert est.M_.shape == (15, 15)
    assert est.embedding_.shape == (len(X), 15)
    assert est.eigenvalues_.shape == (15,)
    assert np.all(np.linalg.eigvalsh(est.M_) >= -1e-10 * np.abs(est.M_).max())
    assert est.kkt_["grad_min_eig"] >= -1e-7 * est.kkt_["scale"]
    # the embedding realises M: its Gram matrix is F M F^T
    F = est.eigenvectors_
    np.testing.assert_allclose(
        est.embedding_[:20] @ est.embedding_[:20].T, F[:20] @ est.M_ @ F[:20].T, atol=1e-10
    )


def test_constraints_fix_what_ncut_cannot_see():
    # classes are unions of opposite blobs: without constraints no graph method finds them
    X, y = two_class_four_blobs()
    ncut_err = clustering_error(y, NCut(2, random_state=0).fit_predict(X))
    errs = [
        clustering_error(
            y,
            CCSR(2, random_state=0).fit_predict(
                X, constraints=Constraints.from_labels(y, 100, random_state=s)
            ),
        )
        for s in range(3)
    ]
    assert ncut_err >= 0.2
    assert np.mean(errs) <= 0.05


def test_empty_constraints_is_ncut():
    X, y = make_blobs(150, centers=3, random_state=0)
    a = CCSR(3, random_state=0).fit(X)
    b = NCut(3, random_state=0).fit(X)
    assert adjusted_rand_score(a.labels_, b.labels_) == 1.0
    np.testing.assert_allclose(a.M_, np.diag([1.0] * 3 + [0.0] * 12))


def test_weights_act_on_squared_residuals():
    U, i, j, t, _ = _problem(n=100, m=4, n_pairs=50, weighted=False)
    w = np.ones_like(t)
    w[-1] = 3.0
    G3, h3, c3 = accumulate_gram(U, i, j, t, w)
    # weight 3 == the same term three times
    i2, j2, t2 = np.r_[i, i[-1], i[-1]], np.r_[j, j[-1], j[-1]], np.r_[t, t[-1], t[-1]]
    G1, h1, c1 = accumulate_gram(U, i2, j2, t2)
    np.testing.assert_allclose(G3, G1, rtol=1e-12)
    np.testing.assert_allclose(h3, h1, rtol=1e-12)


def test_deterministic():
    X, y = two_class_four_blobs()
    cons = Constraints.from_labels(y, 40, random_state=0)
    a = CCSR(2, random_state=3).fit(X, constraints=cons)
    b = CCSR(2, random_state=3).fit(X, constraints=cons)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.M_, b.M_)


@pytest.mark.parametrize("n_components", [0, 2.5, "a", 10_000])
def test_bad_n_components(n_components):
    X, _ = make_blobs(50, random_state=0)
    with pytest.raises(ValueError, match="n_components"):
        CCSR(2, n_components=n_components).fit(X)


def test_bad_input():
    X, _ = make_blobs(50, random_state=0)
    with pytest.raises(ValueError, match="tol"):
        CCSR(2, tol=-1.0).fit(X)
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        CCSR(2).fit(X)
    with pytest.raises(ValueError):
        CCSR(2).fit(np.zeros((50, 2)) + np.arange(50)[:, None], constraints=([[0, 99]], None))


def test_precomputed_affinity():
    X, y = two_class_four_blobs()
    W = knn_affinity(X, 20)
    cons = Constraints.from_labels(y, 60, random_state=0)
    a = CCSR(2, affinity="precomputed", random_state=0).fit(W, constraints=cons)
    b = CCSR(2, random_state=0).fit(X, constraints=cons)
    np.testing.assert_allclose(a.M_, b.M_, rtol=1e-6, atol=1e-8 * np.abs(b.M_).max())


def test_psd_solver_degenerate_embedding_is_certified():
    """A nearly disconnected graph (sigma = 0.1 r) gives a singular G and a non-unique optimum."""
    cp = pytest.importorskip("cvxpy")
    X, y = make_blobs(150, centers=3, n_features=4, random_state=0)
    dist, ind = kneighbors(X, 20)
    W = gaussian_knn_graph(dist, ind, 0.1 * sigma_from_distances(dist))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, U = laplacian_eigenvectors(W, 12, random_state=0)
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 150, 200), rng.integers(0, 150, 200)
    keep = a != b
    a, b = a[keep], b[keep]
    i, j = np.r_[np.arange(150), a], np.r_[np.arange(150), b]
    t = np.r_[np.ones(150), (y[a] == y[b]).astype(float)]
    G, h, c = accumulate_gram(U, i, j, t)
    assert np.linalg.matrix_rank(G) < G.shape[0]
    res = psd_least_squares(G, h, c)
    assert res.converged
    M = cp.Variable((12, 12), PSD=True)
    pred = cp.sum(cp.multiply(U[i] @ M, U[j]), axis=1)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(pred - t)))
    prob.solve(solver=cp.CLARABEL)
    assert abs(res.objective - prob.value) <= 1e-5 * abs(prob.value)
    assert res.objective <= prob.value * (1 + 1e-7)


def test_normalize_rows_option():
    X, y = two_class_four_blobs()
    cons = Constraints.from_labels(y, 60, random_state=0)
    est = CCSR(2, normalize_rows=True, random_state=0).fit(X, constraints=cons)
    from spectralink.spectral import kmeans_rows

    expected = kmeans_rows(est.embedding_, 2, normalize=True, n_init=10, random_state=0)
    np.testing.assert_array_equal(est.labels_, expected)


def test_paper_setting_reproduces_the_previous_algorithm():
    """shrinkage=0 is eq. 17 solved exactly and k-means on the raw rows of F M^{1/2}."""
    from spectralink.methods.ccsr import ccsr_metric, psd_sqrt
    from spectralink.spectral import kmeans_rows

    X, y = make_blobs(200, centers=3, cluster_std=2.0, random_state=1)
    cons = Constraints.from_labels(y, 40, random_state=0)
    est = CCSR(3, shrinkage=0, random_state=0, guard=None).fit(X, constraints=cons)
    F = est.eigenvectors_
    M = ccsr_metric(F, cons).M  # the previous fit: eq. 17 alone
    np.testing.assert_array_equal(est.M_, M)
    expected = kmeans_rows(F @ psd_sqrt(M), 3, normalize=False, n_init=10, random_state=0)
    np.testing.assert_array_equal(est.labels_, expected)
    assert est.shrinkage_ == 0.0


def test_auto_shrinkage_fades_with_constraints():
    from spectralink.methods.ccsr import AUTO_SHRINKAGE, shrinkage_weight

    w = [shrinkage_weight("auto", c, 120) for c in (0, 100, 480, 5000)]
    assert w[0] == AUTO_SHRINKAGE
    assert w[2] == pytest.approx(AUTO_SHRINKAGE / 2)
    assert all(np.diff(w) < 0)
    assert shrinkage_weight(0.3, 5000, 120) == 0.3


def test_numeric_shrinkage_pulls_toward_ncut():
    X, y = two_class_four_blobs()
    cons = Constraints.from_labels(y, 60, random_state=0)
    est = CCSR(2, shrinkage=1e6, random_state=0).fit(X, constraints=cons)
    assert est.shrinkage_ == 1e6
    # a huge weight leaves the scaled projector on the 2 smoothest eigenvectors
    target = np.zeros((15, 15))
    target[:2, :2] = np.eye(2)
    np.testing.assert_allclose(est.M_ / est.M_[0, 0], target, atol=1e-3)


@pytest.mark.parametrize("shrinkage", [-0.1, "paper", True, np.nan, np.inf, None])
def test_bad_shrinkage(shrinkage):
    X, _ = make_blobs(50, random_state=0)
    with pytest.raises(ValueError, match="shrinkage"):
        CCSR(2, shrinkage=shrinkage).fit(X)


@pytest.mark.parametrize("normalize_rows", ["yes", 1, None])
def test_bad_normalize_rows(normalize_rows):
    X, _ = make_blobs(50, random_state=0)
    with pytest.raises(ValueError, match="normalize_rows"):
        CCSR(2, normalize_rows=normalize_rows).fit(X)


@pytest.mark.parametrize("name", ["ccsr", "ccskl"])
def test_fit_embedding_shares_the_eigenvectors(name):
    """fit_embedding on fit's eigenvectors gives fit's labels; it validates as fit does."""
    from sklearn.datasets import load_iris

    from spectralink.methods.ccskl import CCSKL
    from spectralink.utils._validation import InvalidParameterError

    cls = {"ccsr": CCSR, "ccskl": CCSKL}[name]
    X, y = load_iris(return_X_y=True)
    cons = Constraints.from_labels(y, 60, random_state=0)
    full = cls(3, random_state=0).fit(X, constraints=cons)
    part = cls(3, random_state=0).fit_embedding(full.eigenvectors_, cons)
    np.testing.assert_array_equal(part.labels_, full.labels_)
    assert part.n_violated_ == full.n_violated_
    with pytest.raises(InvalidParameterError, match="shrinkage"):
        cls(3, shrinkage=-1.0).fit_embedding(full.eigenvectors_, cons)
    with pytest.raises(ValueError, match="n_clusters"):
        cls(200).fit_embedding(full.eigenvectors_, cons)
