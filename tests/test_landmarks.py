"""Landmark sparse-coding graph (SCACS eq. 3): structure, sigma rules, chunking, §5.7 guards."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from spectralink import landmarks as lm


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    centers = rng.uniform(-6, 6, size=(4, 5))
    X = np.vstack([c + rng.randn(80, 5) for c in centers])
    return X


@pytest.fixture(scope="module")
def graph(data):
    return lm.build_landmark_graph(data, n_landmarks=40, n_nearest=3, random_state=0)


def test_code_columns_sum_to_one_with_r_nonzeros(graph, data):
    Z = graph.Z
    assert Z.shape == (graph.n_landmarks, data.shape[0])
    np.testing.assert_allclose(np.asarray(Z.sum(axis=0)).ravel(), 1.0, atol=1e-12)
    assert np.all(np.diff(Z.indptr) == 3)
    assert np.all(Z.data > 0)


def test_nearest_landmarks_match_brute_force(graph, data):
    D = cdist(data, graph.landmarks)
    expected = np.sort(np.argsort(D, axis=1)[:, :3], axis=1)
    np.testing.assert_array_equal(np.sort(graph.nearest, axis=1), expected)


def test_weights_are_eq3(graph, data):
    D2 = cdist(data, graph.landmarks, "sqeuclidean")
    K = np.exp(-np.take_along_axis(D2, graph.nearest, 1) / (2 * graph.sigma**2))
    np.testing.assert_allclose(graph.weights, K / K.sum(1, keepdims=True), rtol=1e-10)


def test_sigma_rules_are_means_over_all_pairs(data):
    g1 = lm.build_landmark_graph(data, 30, 3, random_state=1, chunk_size=37)
    D = cdist(data, g1.landmarks)
    assert g1.sigma_rule == "mean_distance"
    assert g1.sigma == pytest.approx(D.mean(), rel=1e-10)
    g2 = lm.build_landmark_graph(
        data, 30, 3, random_state=1, sigma_rule="mean_squared_distance", chunk_size=1000
    )
    assert g2.sigma == pytest.approx((D**2).mean(), rel=1e-10)
    g3 = lm.build_landmark_graph(data, 30, 3, random_state=1, sigma=2.5)
    assert g3.sigma == 2.5 and g3.sigma_rule == "given"


def test_chunking_does_not_change_the_graph(data):
    a = lm.build_landmark_graph(data, 30, 3, random_state=2, chunk_size=17)
    b = lm.build_landmark_graph(data, 30, 3, random_state=2, chunk_size=10_000)
    np.testing.assert_array_equal(a.nearest, b.nearest)
    np.testing.assert_allclose(a.S_hat, b.S_hat, atol=1e-13)


def test_G_hat_has_unit_row_sums_and_S_hat_spectrum(graph, data):
    Zh = graph.Z_hat
    ones = np.ones(data.shape[0])
    np.testing.assert_allclose(Zh.T @ (Zh @ ones), 1.0, atol=1e-10)
    np.testing.assert_allclose(Zh @ ones, graph.sqrt_degrees, atol=1e-12)
    np.testing.assert_allclose((Zh @ Zh.T).toarray(), graph.S_hat, atol=1e-12)
    vals = np.linalg.eigvalsh(graph.S_hat)
    assert vals.min() > -1e-12 and vals.max() == pytest.approx(1.0, abs=1e-10)
    d12 = graph.sqrt_degrees
    np.testing.assert_allclose(graph.S_hat @ d12, d12, atol=1e-10)
    A = graph.S_hat - graph.S_hat @ graph.S_hat
    assert np.linalg.eigvalsh(A).min() > -1e-12


def test_landmark_spectrum_basis_is_orthonormal(graph):
    vals, E = lm.landmark_spectrum(graph.S_hat)
    B = graph.Z_hat.T @ (E / np.sqrt(vals))
    np.testing.assert_allclose(B.T @ B, np.eye(len(vals)), atol=1e-8)
    assert vals[0] == pytest.approx(1.0) and np.all(np.diff(vals) <= 1e-12)


def test_singular_S_hat_is_restricted_to_its_range():
    vals, E = lm.landmark_spectrum(np.diag([1.0, 0.5, 1e-14, 0.0]))
    np.testing.assert_allclose(vals, [1.0, 0.5])
    assert E.shape == (4, 2)
    with pytest.raises(ValueError, match="zero"):
        lm.landmark_spectrum(np.zeros((3, 3)))


def test_zero_degree_landmarks_are_dropped():
    # every point is duplicated: with r = 1 one landmark of each identical pair wins
    base = np.random.RandomState(3).randn(10, 2)
    X = np.repeat(base, 2, axis=0)
    g = lm.build_landmark_graph(X, n_landmarks=20, n_nearest=1, random_state=0)
    assert g.n_dropped == 10
    assert g.n_landmarks == 10 and np.all(g.degrees > 0)
    assert g.nearest.max() < 10
    Zh = g.Z_hat
    np.testing.assert_allclose(Zh.T @ (Zh @ np.ones(20)), 1.0, atol=1e-12)


def test_encode_reproduces_training_code(graph, data):
    ind, w = lm.encode(data, graph)
    np.testing.assert_array_equal(ind, graph.nearest)
    np.testing.assert_allclose(w, graph.weights)


def test_embed_is_Z_transpose_times_M(graph):
    M = np.random.RandomState(0).randn(graph.n_landmarks, 3)
    np.testing.assert_allclose(
        lm.embed(graph.nearest, graph.weights, M, chunk_size=50), graph.Z.T @ M, atol=1e-12
    )


def test_kmeans_landmarks_and_determinism(data):
    a = lm.build_landmark_graph(data, 20, 3, init="kmeans", random_state=5)
    b = lm.build_landmark_graph(data, 20, 3, init="kmeans", random_state=5)
    assert a.landmark_indices is None
    np.testing.assert_array_equal(a.landmarks, b.landmarks)
    c = lm.build_landmark_graph(data, 20, 3, random_state=5)
    d = lm.build_landmark_graph(data, 20, 3, random_state=5)
    np.testing.assert_array_equal(c.landmark_indices, d.landmark_indices)
    np.testing.assert_array_equal(c.landmarks, data[c.landmark_indices])


def test_landmarks_capped_at_n_samples(data):
    g = lm.build_landmark_graph(data[:25], n_landmarks=500, n_nearest=3, random_state=0)
    assert g.n_landmarks <= 25


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_landmarks": 0}, "n_landmarks"),
        ({"n_nearest": 0}, "n_nearest"),
        ({"n_landmarks": 5, "n_nearest": 6}, "exceeds"),
        ({"sigma": -1.0}, "sigma"),
        ({"sigma_rule": "median"}, "sigma_rule"),
        ({"init": "grid"}, "init"),
    ],
)
def test_bad_parameters(data, kwargs, match):
    params = {"n_landmarks": 20, "n_nearest": 3, "random_state": 0}
    params.update(kwargs)
    with pytest.raises(ValueError, match=match):
        lm.build_landmark_graph(data, **params)


def test_non_finite_and_degenerate_input(data):
    X = data.copy()
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        lm.build_landmark_graph(X, 20, 3, random_state=0)
    with pytest.raises(ValueError, match="bandwidth"):
        lm.build_landmark_graph(np.ones((30, 2)), 10, 3, random_state=0)
