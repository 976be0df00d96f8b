"""FCSC: KKT conditions of the selected vectors, exact solver, limits."""

import warnings

import numpy as np
import pytest
import scipy.linalg as la
from sklearn.metrics import adjusted_rand_score

from spectralink import FCSC, Constraints
from spectralink.methods.fcsc import (
    fcsc_basis,
    fcsc_beta,
    fcsc_eigenpairs,
    fcsc_rbf_affinity,
    fcsc_solve,
)
from spectralink.metrics import clustering_error
from spectralink.solvers.constrained_pencil import (
    definite_pencil_eigh,
    lowrank_pencil_positive,
    q_factor,
)


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.RandomState(0)
    centers = rng.uniform(-4, 4, size=(3, 4))
    X = np.vstack([c + rng.randn(60, 4) for c in centers])
    return X, np.repeat(np.arange(3), 60)


def _dense_q(cons):
    Q = cons.signed_matrix.toarray()
    P = cons.constrained_points
    Q[P, P] = 1.0
    return Q


@pytest.mark.parametrize("labelled", [True, False])
def test_q_factor_reproduces_Q(blobs, labelled):
    _, y = blobs
    if labelled:
        cons = Constraints.from_labeled_subset(y, 30, random_state=0)
    else:
        cons = Constraints.from_labels(y, 80, random_state=0)
    P, R, J = q_factor(cons)
    Q = np.zeros((len(y), len(y)))
    Q[np.ix_(P, P)] = (R * J) @ R.T
    np.testing.assert_allclose(Q, _dense_q(cons), atol=1e-12)
    assert set(np.unique(J)) <= {-1.0, 1.0}


def test_kkt_of_selected_vectors(blobs):
    X, y = blobs
    cons = Constraints.from_labeled_subset(y, 30, random_state=1)
    m = FCSC(3, affinity="rbf", beta="paper", normalize=False, random_state=0, guard=None)
    m.fit(X, constraints=cons)
    W = m.affinity_matrix_
    d = W.sum(1)
    s = 1 / np.sqrt(d)
    L = np.eye(len(d)) - W * s[:, None] * s[None, :]
    Qb = _dense_q(cons) * s[:, None] * s[None, :]
    B = Qb - m.beta_ * np.eye(len(d))
    out = fcsc_solve(fcsc_basis(W), cons, 3, random_state=0)
    assert out["vectors"].shape[1] == 2
    for j in range(2):
        v, lam = out["vectors"][:, j], out["eigenvalues"][j]
        assert lam > 0
        assert v @ B @ v >= 0  # feasibility: v^T (Q_bar - beta/vol I) v >= 0
        assert v @ L @ v == pytest.approx(lam * (v @ B @ v), rel=1e-8)  # cost = lambda v^T B v
        assert np.linalg.norm(L @ v - lam * B @ v) < 1e-8
        assert v @ L @ v == pytest.approx(out["costs"][j], rel=1e-8)


def test_eigenpairs_match_qz(blobs):
    X, y = blobs
    W = fcsc_rbf_affinity(X)
    basis = fcsc_basis(W)
    cons = Constraints.from_labeled_subset(y, 20, random_state=2)
    P, R, J = q_factor(cons)
    d = basis.degrees
    s = 1 / np.sqrt(d)
    Qb = _dense_q(cons) * s[:, None] * s[None, :]
    b = fcsc_beta(la.eigvalsh(Qb), 3)
    lam, _ = fcsc_eigenpairs(basis, P, R, J, b)
    L = np.eye(len(d)) - W * s[:, None] * s[None, :]
    w = la.eig(L, Qb - b * np.eye(len(d)), right=False)
    w = w[np.isfinite(w)]
    w = np.real(w[np.abs(w.imag) <= 1e-8 * np.abs(w)])
    np.testing.assert_allclose(lam, np.sort(w[w > 1e-9]), rtol=1e-7)


def test_lowrank_solver_equals_definite_pencil():
    rng = np.random.RandomState(0)
    n, r = 40, 4
    s = np.concatenate([[0.0], rng.uniform(0.05, 1.5, n - 1)])
    G = rng.randn(n, r)
    J = np.array([1.0, 1.0, -1.0, 1.0])
    b = 0.7
    lam, Y = lowrank_pencil_positive(s, G, J, b)
    w = la.eig(np.diag(s), (G * J) @ G.T - b * np.eye(n), right=False)
    w = np.real(w[np.isfinite(w)])
    np.testing.assert_allclose(lam, np.sort(w[w > 1e-12]), rtol=1e-8)
    # the regularised symmetric-definite route agrees to its regularisation
    lam2, _ = definite_pencil_eigh((G * J) @ G.T - b * np.eye(n), np.diag(s))
    np.testing.assert_allclose(lam, lam2, rtol=1e-5)
    for j in range(len(lam)):
        res = s * Y[:, j] - lam[j] * ((G * J) @ (G.T @ Y[:, j]) - b * Y[:, j])
        assert np.linalg.norm(res) < 1e-9 * max(1, lam[j])
    with pytest.raises(ValueError, match="b > 0"):
        lowrank_pencil_positive(s, G, J, 0.0)


def test_two_way_and_k_way_accuracy():
    rng = np.random.RandomState(3)
    X = np.vstack([rng.randn(70, 3), rng.randn(70, 3) + [6, 0, 0]])
    y = np.repeat([0, 1], 70)
    cons = Constraints.from_labeled_subset(y, 16, random_state=0)
    m = FCSC(2, affinity="knn", n_neighbors=10, beta="paper", random_state=0)
    m.fit(X, constraints=cons)
    assert clustering_error(y, m.labels_) < 0.05
    assert m.embedding_.shape == (140, 1) and m.eigenvalues_[0] > 0
    assert m.beta_ == pytest.approx(
        0.5
        * np.abs(
            np.linalg.eigvalsh(
                _dense_q(cons)
                / np.sqrt(np.outer(m.affinity_matrix_.sum(1), m.affinity_matrix_.sum(1)))
            )
        ).max(),
        rel=1e-8,
    )


def test_precomputed_and_determinism(blobs):
    X, y = blobs
    cons = Constraints.from_labeled_subset(y, 30, random_state=4)
    W = fcsc_rbf_affinity(X)
    a = FCSC(3, affinity="precomputed", random_state=1).fit_predict(W, constraints=cons)
    b = FCSC(3, affinity="rbf", random_state=1).fit_predict(X, constraints=cons)
    np.testing.assert_array_equal(a, b)


def test_errors(blobs):
    X, y = blobs
    cons = Constraints.from_labeled_subset(y, 30, random_state=0)
    with pytest.raises(ValueError, match="max_samples"):
        FCSC(3, max_samples=100).fit(X, constraints=cons)
    with pytest.raises(ValueError, match="needs constraints"):
        FCSC(3).fit(X)
    with pytest.raises(ValueError, match="no feasible"):
        FCSC(3, beta=1e6).fit(X, constraints=cons)
    with pytest.raises(ValueError, match="affinity"):
        FCSC(3, affinity="cosine").fit(X, constraints=cons)
    with pytest.raises(ValueError, match="constant"):
        FCSC(2, affinity="rbf").fit(
            np.ones((10, 2)), constraints=Constraints([(0, 1)], [(1, 2)], n_samples=10)
        )
    with pytest.raises(ValueError, match="'beta' parameter of FCSC"):
        FCSC(3, beta="large").fit(X, constraints=cons)


def test_definite_pencil_helper():
    A = np.diag([0.0, 1.0, 2.0])
    B = np.diag([1.0, 1.0, -1.0])
    lam, U = definite_pencil_eigh(B, A)
    # A u = lam B u: lam = 1 (e_2); e_1 has lam = 0 (excluded: mu infinite -> huge)
    assert np.any(np.isclose(lam, 1.0))
    assert np.all(lam > 0)


# ---------------------------------------------------------------- "constraints never hurt"
@pytest.fixture(scope="module")
def separable():
    from sklearn.datasets import make_blobs

    return make_blobs(n_samples=600, centers=3, n_features=5, random_state=0)


def test_k3_separable_blobs_balanced(separable):
    X, y = separable
    cons = Constraints.from_labeled_subset(y, 15, random_state=0)
    m = FCSC(3, random_state=0).fit(X, constraints=cons)
    assert np.bincount(m.labels_, minlength=3).min() >= 190
    assert clustering_error(y, m.labels_) == 0.0
    # v orthogonal to the trivial D^{1/2} 1 ("auto"), within round-off
    d = np.asarray(m.affinity_matrix_.sum(axis=1)).ravel()
    V = m.embedding_ * np.sqrt(d)[:, None]
    assert np.abs(np.sqrt(d) @ V).max() < 1e-8 * np.abs(V).max() * np.sqrt(d).sum()


def test_zero_degree_point_is_handled(blobs):
    X, y = blobs
    cons = Constraints.from_labeled_subset(y, 30, random_state=0)
    # precomputed: the isolated point gets a unit self-loop (its own component)
    W = fcsc_rbf_affinity(X)
    W[0, :] = W[:, 0] = 0
    with pytest.warns(UserWarning, match="zero degree"):
        m = FCSC(3, affinity="precomputed", random_state=0).fit(W, constraints=cons)
    assert m.labels_.shape == (len(y),)
    # rbf: an underflowed point is linked to its nearest neighbour and follows it
    X2 = np.vstack([X, X[5] + 1e-3])
    X2 = np.hstack([X2, np.zeros((len(X2), 10))])
    X2[-1, -10:] = 1.0  # an outlier on 10 new features: all its RBF affinities underflow
    y2 = np.append(y, y[5])
    cons2 = Constraints.from_labeled_subset(y2[:-1], 30, random_state=0)
    cons2 = Constraints(cons2.must_link, cons2.cannot_link, n_samples=len(y2))
    with pytest.warns(UserWarning, match="nearest neighbour"):
        m2 = FCSC(3, affinity="rbf", random_state=0).fit(X2, constraints=cons2)
    assert m2.affinity_matrix_[-1].sum() > 0


def test_paper_setting_reproduces_previous_behaviour(blobs):
    X, y = blobs
    cons = Constraints.from_labeled_subset(y, 30, random_state=3)
    m = FCSC(3, affinity="rbf", beta="paper", normalize=False, random_state=0, guard=None)
    m.fit(X, constraints=cons)
    W = fcsc_rbf_affinity(X)
    basis = fcsc_basis(W)
    P, R, J = q_factor(cons)
    Qb = _dense_q(cons) / np.sqrt(np.outer(basis.degrees, basis.degrees))
    assert m.beta_ == pytest.approx(fcsc_beta(la.eigvalsh(Qb), 3), rel=1e-8)
    # beta=None (the function default) is the same rule and the same partition (compared
    # up to the clusters' numbering: k-means inside and outside the estimator's thread
    # limit may number the same clusters differently, as the oldest versions do)
    out = fcsc_solve(basis, cons, 3, beta=None, random_state=0)
    assert adjusted_rand_score(out["labels"], m.labels_) == 1.0
    assert np.all(out["costs"] > 1e-10)


@pytest.mark.slow  # real data, several full fits
def test_falls_back_to_the_unconstrained_cut_when_it_fits_the_constraints_better(dataset):
    """Standardised segmentation, k = 7, 200 random pairs: the cheapest feasible vectors
    concentrate on a few outlying points and FCSC's partition puts 2297 of 2310 points in
    one cluster; the unconstrained cut of the same graph violates far fewer pairs."""
    from sklearn.preprocessing import StandardScaler

    from spectralink.metrics import violated_fraction

    X, y = dataset("segmentation")
    X = StandardScaler().fit_transform(X)
    cons = Constraints.from_labels(y, 200, random_state=1)
    m = FCSC(7, random_state=0, guard="held_out")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        m.fit(X, constraints=cons)
        basis = fcsc_basis(m.affinity_matrix_)
        raw = fcsc_solve(basis, cons, 7, beta="auto", normalize=True, random_state=0)
    assert m.fallback_
    assert np.bincount(raw["labels"]).max() > 0.9 * len(y)
    assert violated_fraction(m.labels_, cons) < violated_fraction(raw["labels"], cons)


def test_fallback_on_raw_segmentation_is_ncuts_partition(dataset):
    # raw segmentation: a k-NN graph in several near-components, where a k-means of FCSC's
    # dense basis and NCut's eigensolver part ways (repeated near-zero eigenvalues). The
    # guard's unconstrained partition is NCut's of the same graph, so a fallback returns
    # what NCut at its defaults gives (FCSC's own partition has 2 clusters of 7 here)
    from spectralink.methods._guard import same_partition
    from spectralink.methods.ncut import NCut

    X, y = dataset("segmentation")
    cons = Constraints.from_labels(y, 1000, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = FCSC(7, random_state=0, guard="held_out").fit(X, constraints=cons)
        ncut = NCut(7, random_state=0).fit(X)
    assert m.fallback_
    assert same_partition(m.labels_, ncut.labels_)
