"""Spectral core: iterative eigensolvers against the dense one, signs, k-means on rows."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.linalg import subspace_angles

from spectralink.graph import DisconnectedGraphWarning, degrees, knn_affinity
from spectralink.spectral import (
    kmeans_rows,
    laplacian_eigenvectors,
    normalize_rows,
    shared_eigenvectors,
    sign_flip,
)

M = 6


@pytest.fixture(scope="module")
def graph_3000():
    """A connected 3000-node k-NN graph with a clear gap after the 5th eigenvalue."""
    rng = np.random.RandomState(0)
    centers = rng.normal(0, 3.0, size=(5, 4))
    X = np.vstack([c + rng.normal(size=(600, 4)) for c in centers])
    W = knn_affinity(X, n_neighbors=10)
    vals, vecs = laplacian_eigenvectors(W, M, solver="dense")
    return W, vals, vecs


@pytest.fixture(scope="module")
def chain_graph():
    """Points along a curve: distinct eigenvalues, so eigenvectors are unique up to sign."""
    rng = np.random.RandomState(2)
    t = np.linspace(0, 6, 400) + rng.uniform(0, 0.005, 400)
    X = np.column_stack([t, np.sin(t)]) + 0.01 * rng.normal(size=(400, 2))
    return knn_affinity(X, n_neighbors=8)


def _check_against_dense(W, vals, vecs, solver):
    lam, V = laplacian_eigenvectors(W, M, solver=solver, random_state=0)
    np.testing.assert_allclose(lam, vals, atol=1e-6)
    # same invariant subspace: all principal angles ~ 0, i.e. singular values of V^T V_dense ~ 1
    assert np.max(subspace_angles(V, vecs)) < 1e-4
    s = np.linalg.svd(V.T @ vecs, compute_uv=False)
    np.testing.assert_allclose(s, 1.0, atol=1e-6)
    np.testing.assert_allclose(V.T @ V, np.eye(M), atol=1e-8)


@pytest.mark.parametrize("solver", ["arpack", "lobpcg"])
def test_iterative_solvers_match_dense(graph_3000, solver):
    W, vals, vecs = graph_3000
    assert vals[0] == pytest.approx(0.0, abs=1e-10)
    # the eigen-gap the comparison relies on
    assert vals[5] - vals[4] > 10 * (vals[4] - vals[0]) / 4
    _check_against_dense(W, vals, vecs, solver)


def test_dense_eigenpairs_satisfy_the_equation(graph_3000):
    W, vals, vecs = graph_3000
    d = degrees(W)
    s = 1 / np.sqrt(d)
    L = sp.identity(W.shape[0]) - sp.diags(s) @ W @ sp.diags(s)
    np.testing.assert_allclose(L @ vecs, vecs * vals, atol=1e-10)
    assert np.all(np.diff(vals) >= -1e-12) and np.all((vals >= 0) & (vals <= 2))


def test_trivial_eigenvector(chain_graph):
    d = degrees(chain_graph)
    for solver in ("dense", "arpack"):
        lam, V = laplacian_eigenvectors(chain_graph, 3, solver=solver, random_state=0)
        assert lam[0] == pytest.approx(0.0, abs=1e-8)
        np.testing.assert_allclose(V[:, 0], np.sqrt(d) / np.linalg.norm(np.sqrt(d)), atol=1e-7)


def test_signs_are_deterministic(chain_graph):
    ref_vals, ref = laplacian_eigenvectors(chain_graph, 4, solver="dense")
    assert np.all(np.diff(ref_vals) > 1e-4)  # simple eigenvalues
    idx = np.argmax(np.abs(ref), axis=0)
    assert np.all(ref[idx, np.arange(4)] > 0)
    for seed in (0, 1, 2):
        _, V = laplacian_eigenvectors(chain_graph, 4, solver="arpack", random_state=seed)
        np.testing.assert_allclose(V, ref, atol=1e-6)


def test_sign_flip():
    V = np.array([[1.0, -3.0, 0.0], [-2.0, 1.0, 0.0]])
    F = sign_flip(V)
    np.testing.assert_array_equal(F, [[-1.0, 3.0, 0.0], [2.0, -1.0, 0.0]])
    np.testing.assert_array_equal(sign_flip(-V), F)


def test_laplacian_eigenvectors_errors(chain_graph):
    with pytest.raises(ValueError, match="n_components=0"):
        laplacian_eigenvectors(chain_graph, 0)
    with pytest.raises(ValueError, match="solver must be"):
        laplacian_eigenvectors(chain_graph, 2, solver="magic")


def test_disconnected_graph_warns_and_keeps_components_apart():
    block = np.ones((3, 3)) - np.eye(3)
    W = sp.block_diag([block, block]).tocsr()
    with pytest.warns(DisconnectedGraphWarning):
        lam, V = laplacian_eigenvectors(W, 2, solver="dense")
    np.testing.assert_allclose(lam, [0.0, 0.0], atol=1e-12)
    labels = kmeans_rows(V, 2, normalize=True, random_state=0)
    assert len(set(labels[:3])) == 1 and len(set(labels[3:])) == 1 and labels[0] != labels[3]


def test_normalize_rows_and_kmeans_rows():
    F = np.array([[3.0, 4.0], [0.0, 0.0], [0.0, -2.0]])
    np.testing.assert_allclose(normalize_rows(F), [[0.6, 0.8], [0, 0], [0, -1]])
    rng = np.random.RandomState(0)
    F = np.vstack([rng.normal(0, 0.1, (20, 2)) + c for c in ([5, 0], [0, 5], [-5, -5])])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = kmeans_rows(F, 3, random_state=0)
    b = kmeans_rows(F, 3, random_state=0)
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.int64
    assert all(len(set(a[i : i + 20])) == 1 for i in (0, 20, 40))
    assert len(set(a)) == 3


@pytest.fixture(scope="module")
def disconnected_graph():
    """Three separate clusters plus two isolated points, with the dense eigenpairs."""
    rng = np.random.RandomState(1)
    X = np.vstack([rng.normal(c, 0.3, size=(900, 2)) for c in (0.0, 50.0, 100.0)])
    blocks = [knn_affinity(X[i * 900 : (i + 1) * 900], n_neighbors=8) for i in range(3)]
    W = sp.block_diag(blocks + [sp.csr_matrix((2, 2))]).tocsr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DisconnectedGraphWarning)
        vals, vecs = laplacian_eigenvectors(W, 8, solver="dense")
    return W, vals, vecs


@pytest.mark.parametrize("solver", ["arpack", "lobpcg"])
def test_repeated_zero_eigenvalue_of_disconnected_graph(disconnected_graph, solver):
    """Single-vector Lanczos finds a repeated eigenvalue once; the solver must not skip any.

    Three separate clusters plus two isolated points: eigenvalue 0 has multiplicity 3, and the
    iterative solvers must return the same spectrum as the dense one.
    """
    W, vals, vecs = disconnected_graph
    m = 8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DisconnectedGraphWarning)
        lam, V = laplacian_eigenvectors(W, m, solver=solver, random_state=0)
    np.testing.assert_allclose(vals[:3], 0.0, atol=1e-10)
    np.testing.assert_allclose(lam, vals, atol=1e-6)
    assert np.max(subspace_angles(V, vecs)) < 1e-4


def test_arpack_non_convergence_falls_back_to_dense(chain_graph, monkeypatch):
    # a bandwidth far below the neighbour distances makes Lanczos stall for hours; a capped
    # ARPACK must hand over to the dense solver (small n) or fail with a clear error (large n)
    import spectralink.spectral as spectral

    dense_vals, dense_vecs = laplacian_eigenvectors(chain_graph, M, solver="dense")
    monkeypatch.setattr(spectral, "ARPACK_MAXITER", 1)
    monkeypatch.setattr(spectral, "DENSE_QUIET_MAX", 10)  # chain_graph is larger: it warns
    with pytest.warns(RuntimeWarning, match="did not converge"):
        vals, vecs = laplacian_eigenvectors(chain_graph, M, solver="arpack", random_state=0)
    np.testing.assert_allclose(vals, dense_vals, atol=1e-10)
    assert np.max(subspace_angles(vecs, dense_vecs)) < 1e-6
    monkeypatch.setattr(spectral, "DENSE_FALLBACK_MAX", 100)
    with pytest.raises(ValueError, match="did not converge.*Increase sigma"):
        laplacian_eigenvectors(chain_graph, M, solver="arpack", random_state=0)


def test_small_graph_arpack_hands_over_to_dense_within_its_budget(monkeypatch):
    # a bandwidth far below the neighbour distances crowds eigenvalues near 0: ARPACK is
    # stopped once it has cost what a dense solve would, and the dense result is returned
    # without a warning (it is exact); a graph without edges takes the same path
    import spectralink.spectral as spectral

    rng = np.random.RandomState(0)
    n = 400
    W = knn_affinity(rng.rand(n, 5), n_neighbors=10, sigma=0.03)  # r is about 0.3
    products = []
    real = spectral._arpack

    def spy(S, d, m, tol, random_state, max_matvecs=None):
        products.append(max_matvecs)
        return real(S, d, m, tol, random_state, max_matvecs=max_matvecs)

    monkeypatch.setattr(spectral, "_arpack", spy)
    dense_vals, _ = laplacian_eigenvectors(W, 5, solver="dense", check_connected=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        vals, vecs = laplacian_eigenvectors(W, 5, solver="arpack", random_state=0,
                                            check_connected=False)  # fmt: skip
        empty = sp.csr_matrix((n, n))
        e_vals, _ = laplacian_eigenvectors(empty, 3, solver="arpack", random_state=0,
                                           check_connected=False)  # fmt: skip
    assert products[0] is not None and products[0] >= 100
    with pytest.raises(spectral._OverBudget):  # the case does exercise the hand-over
        S, d = spectral.normalized_adjacency(W)
        real(S, d, 5, 1e-8, 0, max_matvecs=products[0])
    np.testing.assert_allclose(vals, dense_vals, atol=1e-8)
    np.testing.assert_allclose(vecs.T @ vecs, np.eye(5), atol=1e-8)
    assert e_vals.shape == (3,)


def test_auto_solver_is_dense_only_on_small_graphs():
    from spectralink.spectral import DENSE_EIGEN_MAX, _resolve_solver

    assert _resolve_solver("auto", DENSE_EIGEN_MAX, 5) == "dense"
    assert _resolve_solver("auto", DENSE_EIGEN_MAX + 1, 5) == "arpack"
    assert _resolve_solver("auto", 1797, 10) == "arpack"
    assert _resolve_solver("auto", 1000, 300) == "dense"  # many vectors: dense is cheaper


def test_shared_eigenvectors_decompose_each_graph_once(chain_graph, monkeypatch):
    import spectralink.spectral as spectral

    calls = []
    real = spectral._laplacian_eigenvectors

    def counting(W, m, solver, tol, random_state):
        calls.append((m, random_state))
        return real(W, m, solver, tol, random_state)

    monkeypatch.setattr(spectral, "_laplacian_eigenvectors", counting)
    copy = chain_graph.copy()  # equal content, another object: found by its hash
    with shared_eigenvectors(seed=3):
        a = laplacian_eigenvectors(chain_graph, M, solver="arpack", random_state=0)
        b = laplacian_eigenvectors(copy, M, solver="arpack", random_state=1)
        laplacian_eigenvectors(chain_graph, M + 1, solver="arpack")
        other = chain_graph.copy()
        other.data[0] *= 2.0  # another graph
        laplacian_eigenvectors(other, M, solver="arpack")
        b[1][:] = 0.0  # callers get copies: the cache is not changed through them
        c = laplacian_eigenvectors(chain_graph, M, solver="arpack")
    # one decomposition per (graph, m), seeded by the block, not by the callers
    assert calls == [(M, 3), (M + 1, 3), (M, 3)]
    np.testing.assert_array_equal(a[1], c[1])
    assert not np.any(c[1] == 0.0)
    # outside the block nothing is cached, and the caller's seed is used again
    laplacian_eigenvectors(chain_graph, M, solver="arpack", random_state=5)
    assert calls[-1] == (M, 5) and len(calls) == 4
    assert not spectral._CACHE  # emptied when the block ended
    # the result equals an ordinary decomposition with the block's seed
    ref = laplacian_eigenvectors(chain_graph, M, solver="arpack", random_state=3)
    np.testing.assert_array_equal(ref[1], a[1])


def test_shared_eigenvectors_bounded_and_nested(chain_graph):
    import spectralink.spectral as spectral

    n = chain_graph.shape[0]
    one = 8 * (n * M + M)
    with shared_eigenvectors(max_bytes=int(1.5 * one)):
        laplacian_eigenvectors(chain_graph, M, solver="dense")
        laplacian_eigenvectors(chain_graph, M - 1, solver="dense")
        assert len(spectral._CACHE) == 1  # the older entry was dropped to stay in bounds
        with shared_eigenvectors(clear=False):  # an inner block keeps the outer's cache
            laplacian_eigenvectors(chain_graph, M - 2, solver="dense")
        assert len(spectral._CACHE) == 2
    assert not spectral._CACHE
