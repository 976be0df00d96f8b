"""k-NN Gaussian graphs, the sigma rule, precomputed affinity checks, connectivity."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import cdist

from spectralink.graph import (
    DisconnectedGraphWarning,
    adaptive_knn_affinity,
    check_affinity,
    check_connectivity,
    degrees,
    gaussian_knn_graph,
    kneighbors,
    knn_affinity,
    normalized_adjacency,
    normalized_laplacian,
    sigma_from_distances,
    sigma_grid,
)


@pytest.fixture(scope="module")
def points():
    rng = np.random.RandomState(0)
    return np.vstack([rng.normal(0, 1, (60, 3)), rng.normal(4, 1, (60, 3))])


def _exact_knn(X, k):
    D = cdist(X, X)
    np.fill_diagonal(D, np.inf)
    ind = np.argsort(D, axis=1)[:, :k]
    return np.take_along_axis(D, ind, axis=1), ind


def test_knn_affinity_structure(points):
    W = knn_affinity(points, n_neighbors=5)
    assert sp.isspmatrix_csr(W) or sp.issparse(W) and W.format == "csr"
    A = W.toarray()
    np.testing.assert_array_equal(A, A.T)
    np.testing.assert_array_equal(np.diag(A), 0)
    assert np.all(A >= 0) and np.all(A <= 1)
    # every point keeps at least its k neighbours ("or" rule), and at most n-1
    assert np.all((A > 0).sum(axis=1) >= 5)


def test_default_sigma_and_weights_follow_the_rule(points):
    k = 7
    dist, ind = _exact_knn(points, k)
    r = dist[:, -1].mean()
    assert sigma_from_distances(dist) == pytest.approx(r)
    W = knn_affinity(points, n_neighbors=k).toarray()
    D = cdist(points, points)
    edges = np.zeros_like(D, dtype=bool)
    edges[np.repeat(np.arange(len(points)), k), ind.ravel()] = True
    edges_or = edges | edges.T  # j in N_k(i) or i in N_k(j)
    np.testing.assert_array_equal(W > 0, edges_or)
    expected = np.exp(-(D**2) / (2 * r**2))
    np.testing.assert_allclose(W[edges_or], expected[edges_or], rtol=1e-10)


def test_explicit_sigma(points):
    W = knn_affinity(points, n_neighbors=4, sigma=0.5).toarray()
    D = cdist(points, points)
    mask = W > 0
    np.testing.assert_allclose(W[mask], np.exp(-(D[mask] ** 2) / 0.5), rtol=1e-10)
    with pytest.raises(ValueError, match="sigma must be positive"):
        knn_affinity(points, n_neighbors=4, sigma=0.0)


def test_kneighbors_excludes_self_and_matches_brute_force(points):
    dist, ind = kneighbors(points, 6, method="exact")
    d_ref, i_ref = _exact_knn(points, 6)
    assert not np.any(ind == np.arange(len(points))[:, None])
    np.testing.assert_allclose(dist, d_ref, rtol=1e-10)
    np.testing.assert_array_equal(np.sort(ind, axis=1), np.sort(i_ref, axis=1))


def test_kneighbors_errors(points):
    with pytest.raises(ValueError, match="smaller than the number of samples"):
        kneighbors(points, len(points))
    with pytest.raises(ValueError, match="at least 1"):
        kneighbors(points, 0)
    with pytest.raises(ValueError, match="method must be"):
        kneighbors(points, 3, method="fast")


def test_duplicate_points_are_not_their_own_neighbours():
    X = np.repeat(np.arange(10.0)[:, None], 3, axis=0)  # every point thrice
    dist, ind = kneighbors(X, 2, method="exact")
    assert not np.any(ind == np.arange(len(X))[:, None])
    np.testing.assert_array_equal(dist, 0.0)
    with pytest.raises(ValueError, match="duplicate points"):
        sigma_from_distances(dist)


def test_approximate_neighbours_agree_with_exact():
    rng = np.random.RandomState(1)
    X = rng.normal(size=(600, 5))
    _, exact = kneighbors(X, 10, method="exact")
    _, approx = kneighbors(X, 10, method="approximate", random_state=0)
    assert approx.shape == exact.shape
    assert not np.any(approx == np.arange(len(X))[:, None])
    hits = sum(len(np.intersect1d(a, e)) for a, e in zip(approx, exact, strict=True))
    assert hits / exact.size > 0.9


def test_sigma_grid():
    r = 2.0
    grid = sigma_grid(r)
    assert len(grid) == 9
    assert grid.min() == pytest.approx(0.1 * r) and grid.max() == pytest.approx(10 * r)
    assert np.all(np.diff(grid) > 0)
    np.testing.assert_allclose(grid[:5], np.linspace(0.2, 2.0, 5))
    np.testing.assert_allclose(grid[4:], np.linspace(2.0, 20.0, 5))


def test_gaussian_knn_graph_or_rule_by_hand():
    # 0's neighbour is 1, 1's is 2, 2's is 1: edge (0, 1) exists only from 0's side
    dist = np.array([[1.0], [2.0], [2.0]])
    ind = np.array([[1], [2], [1]])
    W = gaussian_knn_graph(dist, ind, sigma=1.0).toarray()
    expected = np.zeros((3, 3))
    expected[0, 1] = expected[1, 0] = np.exp(-0.5)
    expected[1, 2] = expected[2, 1] = np.exp(-2.0)
    np.testing.assert_allclose(W, expected)


# --------------------------------------------------------------------------- precomputed


def test_check_affinity_accepts_dense_and_sparse():
    A = np.array([[1.0, 0.5, 0.0], [0.5, 0.0, 2.0], [0.0, 2.0, 3.0]])
    for given in (A, sp.csr_matrix(A), sp.coo_matrix(A), A.tolist()):
        W = check_affinity(given)
        assert sp.issparse(W) and W.format == "csr"
        expected = A.copy()
        np.fill_diagonal(expected, 0)  # self-loops removed
        np.testing.assert_array_equal(W.toarray(), expected)


@pytest.mark.parametrize(
    ("A", "pattern"),
    [
        (np.ones((3, 4)), "must be square"),
        (sp.csr_matrix(np.ones((2, 3))), "must be square"),
        (np.ones(4), "2-d square matrix"),
        (np.array([[0, np.nan], [np.nan, 0]]), "NaN or infinite"),
        (sp.csr_matrix(np.array([[0, np.inf], [np.inf, 0]])), "NaN or infinite"),
        (np.array([[0, -1.0], [-1.0, 0]]), "negative entries"),
        (np.array([[0, 1.0], [0.5, 0]]), "not symmetric"),
        (sp.csr_matrix(np.array([[0, 1.0], [0.0, 0]])), "not symmetric"),
    ],
)
def test_check_affinity_errors(A, pattern):
    with pytest.raises(ValueError, match=pattern):
        check_affinity(A)


# ------------------------------------------------------------------ Laplacian, connectivity


def test_normalized_laplacian(points):
    W = knn_affinity(points, n_neighbors=5)
    L = normalized_laplacian(W).toarray()
    d = degrees(W)
    expected = np.eye(len(d)) - W.toarray() / np.sqrt(np.outer(d, d))
    np.testing.assert_allclose(L, expected, atol=1e-12)
    np.testing.assert_allclose(L @ np.sqrt(d), 0, atol=1e-10)
    S, d2 = normalized_adjacency(W)
    np.testing.assert_allclose(d2, d)
    np.testing.assert_allclose(S.toarray(), np.eye(len(d)) - L, atol=1e-12)


def test_isolated_point_gets_unit_degree():
    W = sp.csr_matrix(np.array([[0, 1.0, 0], [1.0, 0, 0], [0, 0, 0]]))
    S, d = normalized_adjacency(W)
    np.testing.assert_array_equal(d, [1.0, 1.0, 1.0])
    assert np.all(np.isfinite(S.toarray()))


def test_disconnected_graph_warns(points):
    blob = points[:60]
    far = np.vstack([blob, blob + 1000.0])
    W = knn_affinity(far, n_neighbors=10)
    with pytest.warns(DisconnectedGraphWarning, match="2 connected components"):
        n_comp, labels = check_connectivity(W)
    assert n_comp == 2
    assert len(np.unique(labels[:60])) == 1 and labels[0] != labels[-1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_connectivity(W, warn=False)
        check_connectivity(knn_affinity(blob, n_neighbors=10))


def test_disconnected_warning_advises_only_beyond_n_clusters(points):
    blob = points[:60]
    W = knn_affinity(np.vstack([blob, blob + 1000.0, blob - 1000.0]), n_neighbors=10)
    # as many components as clusters: information, no advice to change parameters
    for k in (3, 5):
        with pytest.warns(DisconnectedGraphWarning) as rec:
            check_connectivity(W, n_clusters=k)
        msg = str(rec[0].message)
        assert "3 connected components" in msg and f"at most the {k} clusters" in msg
        assert "Increase" not in msg
    # more components than clusters, or clusters unknown: advice
    with pytest.warns(DisconnectedGraphWarning, match="more than the 2 clusters") as rec:
        check_connectivity(W, n_clusters=2)
    assert "increase n_neighbors or sigma" in str(rec[0].message)
    with pytest.warns(DisconnectedGraphWarning, match="increase n_neighbors or sigma"):
        check_connectivity(W)


# ----------------------------------------------------------------- COSC's adaptive graph
def _paper_adaptive_graph(X, k):
    """The paper's construction by brute force: each point's distance column sorted
    stably (equal distances: smaller index first), the point itself skipped, the first k
    kept; w = exp(-4 d^2 / sigma_i^2), sigma_i the k-th distance; max-symmetrised."""
    n = len(X)
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    A = np.zeros((n, n))
    for i in range(n):
        order = [j for j in np.argsort(D[:, i], kind="stable") if j != i][:k]
        sig = D[order[-1], i]
        A[i, order] = np.exp(-4.0 * D[order, i] ** 2 / sig**2)
    return np.maximum(A, A.T)


def test_exact_kneighbors_breaks_ties_by_smaller_index():
    # integer coordinates (exact distances, many ties) and 15 duplicated rows
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(120, 3)).astype(float)
    X = np.vstack([X, X[:15]])[rng.permutation(135)]
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    dist, ind = kneighbors(X, 7, method="exact")
    for i in range(len(X)):
        order = [j for j in np.argsort(D[i], kind="stable") if j != i][:7]
        assert ind[i].tolist() == order
        assert np.allclose(dist[i], D[i, order])


def test_adaptive_knn_affinity_is_the_papers_graph_with_duplicates():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 10, size=(90, 2)).astype(float)  # ties at every distance
    X = np.vstack([X, X[:10], X[:3]])  # rows with one and with two duplicates
    W = adaptive_knn_affinity(X, 10)
    ref = _paper_adaptive_graph(X, 10)
    assert np.array_equal(W.toarray() > 0, ref > 0)
    assert np.allclose(W.toarray(), ref, rtol=1e-12, atol=0)
    # the exact path is the default up to ann_threshold, and method="exact" forces it
    W2 = adaptive_knn_affinity(X, 10, method="exact", ann_threshold=10)
    assert (W2 != W).nnz == 0
