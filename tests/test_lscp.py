"""The LSCP estimator: learnt graph + E2CP + NJW."""

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from spectralink import E2CP, LSCP, Constraints
from spectralink.similarity import learn_similarity


def _moons_like(seed=0, n_per=60):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, np.pi, n_per)
    a = np.column_stack([np.cos(t), np.sin(t)])
    b = np.column_stack([1 - np.cos(t), 0.4 - np.sin(t)])
    X = np.vstack([a, b]) + 0.12 * rng.standard_normal((2 * n_per, 2))
    return X, np.repeat([0, 1], n_per)


def test_lscp_constraints_help():
    X, y = _moons_like()
    base = adjusted_rand_score(y, LSCP(2, random_state=0).fit_predict(X))
    cons = Constraints.from_labels(y, 150, random_state=0)
    model = LSCP(2, random_state=0).fit(X, constraints=cons)
    assert adjusted_rand_score(y, model.labels_) >= max(base + 0.1, 0.7)
    assert model.similarity_.shape == (len(y), len(y))
    R = model.affinity_matrix_
    assert R.data.min() >= 0 and R.data.max() <= 1
    assert model.embedding_.shape == (len(y), 2)


def test_lscp_equals_e2cp_on_learnt_graph():
    X, y = _moons_like(seed=1)
    cons = Constraints.from_labels(y, 80, random_state=1)
    lscp = LSCP(2, n_neighbors=7, lam=0.2, mu=0.3, random_state=0).fit(X, constraints=cons)
    W = learn_similarity(X, cons, n_neighbors=7, lam=0.2, mu=0.3)
    e2cp = E2CP(2, affinity="precomputed", random_state=0).fit(W, constraints=cons)
    np.testing.assert_array_equal(lscp.labels_, e2cp.labels_)
    assert abs(lscp.affinity_matrix_ - e2cp.affinity_matrix_).max() < 1e-12


def test_lscp_deterministic_and_masked_path():
    X, y = _moons_like(seed=2)
    cons = Constraints.from_labels(y, 100, random_state=2)
    a = LSCP(2, random_state=3).fit(X, constraints=cons)
    b = LSCP(2, random_state=3).fit(X, constraints=cons)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    m = LSCP(2, refinement="masked", random_state=3).fit(X, constraints=cons)
    assert m.refinement_ == "masked" and a.refinement_ == "dense"
    assert m.affinity_matrix_.nnz < a.affinity_matrix_.nnz


def _stripes(seed, n_per=100, gap=1.2):
    # two long parallel stripes: the unconstrained cut splits both across their length
    rng = np.random.default_rng(seed)
    X = np.vstack(
        [
            np.column_stack([rng.uniform(0, 10, n_per), rng.normal(0, 0.3, n_per) + offset])
            for offset in (0, gap)
        ]
    )
    return X, np.repeat([0, 1], n_per)


@pytest.mark.filterwarnings("ignore::spectralink.exceptions.DegeneratePartitionWarning")
def test_lscp_sampled_path_keeps_the_fill_in():
    X, y = _stripes(seed=3)
    cons = Constraints.from_labels(y, 100, random_state=3)
    d = LSCP(2, random_state=0).fit(X, constraints=cons)
    s = LSCP(2, refinement="sampled", random_state=0).fit(X, constraints=cons)
    m = LSCP(2, refinement="masked", random_state=0).fit(X, constraints=cons)
    assert s.refinement_ == "sampled"
    assert d.affinity_matrix_.nnz > s.affinity_matrix_.nnz > m.affinity_matrix_.nnz
    # the propagation's gain is in the fill-in: kept by the sampled path, lost when masked
    assert adjusted_rand_score(y, d.labels_) > 0.8
    assert adjusted_rand_score(y, s.labels_) > 0.8
    assert adjusted_rand_score(y, m.labels_) < 0.3
    # above dense_max the default is the sampled path
    assert LSCP(2, dense_max=50, random_state=0).fit(X, constraints=cons).refinement_ == "sampled"


def test_lscp_bad_input():
    X, y = _moons_like(seed=3)
    with pytest.raises(ValueError, match="precomputed"):
        LSCP(2, affinity="precomputed").fit(np.eye(5))
    with pytest.raises(ValueError, match="lam"):
        LSCP(2, lam=-0.1).fit(X)
    with pytest.raises(ValueError, match="kernel"):
        LSCP(2, kernel="rbf").fit(X)
    with pytest.raises(ValueError, match="NaN"):
        LSCP(2).fit(np.full((10, 2), np.nan))
    with pytest.raises(ValueError, match="n_clusters"):
        LSCP(1).fit(X)
