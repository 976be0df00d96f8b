"""CCSKL and its ordered NNLS solver."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

from spectralink import Constraints
from spectralink.graph import knn_affinity
from spectralink.methods.ccskl import CCSKL, ccskl_spectrum
from spectralink.methods.ncut import NCut
from spectralink.metrics import clustering_error
from spectralink.solvers.ordered_nnls import ordered_design, ordered_nnls
from spectralink.spectral import laplacian_eigenvectors


def two_stripes(n=300, seed=0):
    """Two long parallel stripes: the normalized cut splits them across, not apart."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    X = np.c_[rng.uniform(0, 12, n), 1.6 * y + rng.normal(0, 0.3, n)]
    return X, y


def _qp_problem(seed=0, m=12, n_pairs=300):
    X, y = make_blobs(250, centers=4, cluster_std=2.0, random_state=seed)
    _, F = laplacian_eigenvectors(knn_affinity(X, 10), m, random_state=0)
    rng = np.random.default_rng(seed)
    weights = rng.uniform(0.2, 3.0, n_pairs)
    # pairs with labels from a coarser partition, so the fit is not trivial
    cons = Constraints.from_labels(y % 2, n_pairs, random_state=seed)
    cons = Constraints(cons.must_link, cons.cannot_link, n_samples=len(y), weights=weights)
    return F, cons


@pytest.mark.parametrize("seed", [0, 1])
def test_nnls_equals_the_qp(seed):
    cp = pytest.importorskip("cvxpy")
    F, cons = _qp_problem(seed)
    res = ccskl_spectrum(F, cons)
    beta = res.beta
    assert np.all(beta >= 0)
    assert np.all(np.diff(beta) <= 1e-12 * beta.max())
    np.testing.assert_allclose(np.cumsum(res.delta[::-1])[::-1], beta)

    # the paper's QP (eq. 13-16) with c_ij = weight, c_ii = 1
    i, j, t, w = cons.targets
    Y = F[i] * F[j]
    b = cp.Variable(F.shape[1])
    obj = cp.sum(cp.multiply(w**2, cp.square(Y @ b - t)))
    prob = cp.Problem(cp.Minimize(obj), [b[:-1] >= b[1:], b[-1] >= 0])
    prob.solve(solver=cp.CLARABEL)
    ours = float(np.sum(w**2 * (Y @ beta - t) ** 2))
    assert np.isclose(ours, res.objective, rtol=1e-10)
    assert abs(ours - prob.value) <= 1e-6 * prob.value
    assert ours <= prob.value * (1 + 1e-9)
    np.testing.assert_allclose(beta, b.value, rtol=1e-3, atol=1e-4 * beta.max())
    assert res.kkt["grad_min"] >= -1e-8 * np.abs(res.kkt["grad_min"] + 1).max()


def test_kkt_conditions():
    F, cons = _qp_problem(2)
    i, j, t, w = cons.targets
    B, r = ordered_design(F, i, j, t, w)
    res = ordered_nnls(B, r)
    grad = 2 * B.T @ (B @ res.delta - r)
    scale = 2 * np.linalg.norm(B.T @ r)
    assert np.all(res.delta >= 0)
    assert grad.min() >= -1e-9 * scale
    assert abs(grad @ res.delta) <= 1e-9 * scale * np.linalg.norm(res.delta)


def test_ordered_design_is_cumulative():
    rng = np.random.default_rng(0)
    F = rng.standard_normal((10, 4))
    i, j = np.arange(10), np.roll(np.arange(10), 1)
    B, r = ordered_design(F, i, j, np.ones(10), np.full(10, 2.0))
    T = np.triu(np.ones((4, 4)))
    np.testing.assert_allclose(B, 2.0 * (F[i] * F[j]) @ T)
    np.testing.assert_allclose(r, 2.0)


def test_nnls_bad_input():
    with pytest.raises(ValueError, match="shape|\\(S"):
        ordered_nnls(np.ones((3, 2)), np.ones(4))
    with pytest.raises(ValueError, match="finite"):
        ordered_nnls(np.full((3, 2), np.inf), np.ones(3))


def test_constraints_improve_on_stripes():
    X, y = two_stripes()
    ncut_err = clustering_error(y, NCut(2, random_state=0).fit_predict(X))
    errs = [
        clustering_error(
            y,
            CCSKL(2, random_state=0).fit_predict(
                X, constraints=Constraints.from_labels(y, 100, random_state=s)
            ),
        )
        for s in range(3)
    ]
    assert ncut_err >= 0.4
    assert np.mean(errs) <= ncut_err - 0.1


def test_attributes_and_empty_constraints():
    X, y = make_blobs(150, centers=3, random_state=0)
    a = CCSKL(3, random_state=0).fit(X)
    b = NCut(3, random_state=0).fit(X)
    assert adjusted_rand_score(a.labels_, b.labels_) == 1.0
    np.testing.assert_array_equal(a.betas_, [1.0] * 3 + [0.0] * 17)
    cons = Constraints.from_labels(y, 50, random_state=0)
    c = CCSKL(3, n_components=8, random_state=0).fit(X, constraints=cons)
    assert c.betas_.shape == (8,)
    assert c.embedding_.shape == (150, 8)
    np.testing.assert_allclose(c.embedding_, c.eigenvectors_ * np.sqrt(c.betas_))


def test_weighted_constraints_change_the_fit():
    X, y = two_stripes(120)
    cons = Constraints.from_labels(y, 40, random_state=0)
    heavy = Constraints(
        cons.must_link, cons.cannot_link, n_samples=len(y), weights=np.full(len(cons), 5.0)
    )
    a = CCSKL(2, random_state=0).fit(X, constraints=cons)
    b = CCSKL(2, random_state=0).fit(X, constraints=heavy)
    assert not np.allclose(a.betas_, b.betas_)


def test_deterministic():
    X, y = two_stripes(120)
    cons = Constraints.from_labels(y, 40, random_state=0)
    a = CCSKL(2, random_state=5).fit(X, constraints=cons)
    b = CCSKL(2, random_state=5).fit(X, constraints=cons)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.betas_, b.betas_)


@pytest.mark.parametrize("n_components", [0, -1, 1.5, None])
def test_bad_n_components(n_components):
    X, _ = make_blobs(40, random_state=0)
    with pytest.raises(ValueError, match="n_components"):
        CCSKL(2, n_components=n_components).fit(X)


def test_bad_input():
    X, _ = make_blobs(40, random_state=0)
    with pytest.raises(ValueError, match="n_clusters"):
        CCSKL(1).fit(X)
    with pytest.raises(ValueError, match="affinity"):
        CCSKL(2, affinity="rbf").fit(X)


def test_paper_setting_reproduces_the_previous_algorithm():
    """shrinkage=0 is the QP of eq. 13-16 solved exactly and k-means on raw rows."""
    from spectralink.spectral import kmeans_rows

    X, y = make_blobs(200, centers=3, cluster_std=2.0, random_state=1)
    cons = Constraints.from_labels(y, 40, random_state=0)
    # the method's own partition: where rounding makes it differ from NCut's by a point,
    # the held-out guard may return NCut's instead (seen with the oldest supported versions)
    est = CCSKL(3, shrinkage=0, guard=None, random_state=0).fit(X, constraints=cons)
    F = est.eigenvectors_
    beta = ordered_nnls(*ordered_design(F, *cons.targets)).beta
    np.testing.assert_allclose(est.betas_, beta, rtol=1e-10, atol=1e-12)
    expected = kmeans_rows(F * np.sqrt(beta), 3, normalize=False, n_init=10, random_state=0)
    np.testing.assert_array_equal(est.labels_, expected)
    assert est.shrinkage_ == 0.0


def test_numeric_shrinkage_pulls_toward_ncut():
    X, y = two_stripes(120)
    cons = Constraints.from_labels(y, 40, random_state=0)
    est = CCSKL(2, shrinkage=1e8, random_state=0).fit(X, constraints=cons)
    assert est.shrinkage_ == 1e8
    np.testing.assert_allclose(est.betas_ / est.betas_[0], [1.0, 1.0] + [0.0] * 18, atol=1e-3)


@pytest.mark.parametrize("shrinkage", [-1.0, "paper", False, np.nan])
def test_bad_shrinkage(shrinkage):
    X, _ = make_blobs(40, random_state=0)
    with pytest.raises(ValueError, match="shrinkage"):
        CCSKL(2, shrinkage=shrinkage).fit(X)


def test_bad_normalize_rows():
    X, _ = make_blobs(40, random_state=0)
    with pytest.raises(ValueError, match="normalize_rows"):
        CCSKL(2, normalize_rows="sometimes").fit(X)
