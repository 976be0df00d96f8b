"""Neighbour search: exact = brute force with ties by index, calibrated approximate search."""

import subprocess
import sys

import numpy as np
import pytest

import spectralink
from spectralink import neighbors as nb
from spectralink.neighbors import kneighbors, round_distances, search


def brute_force(Q, B, k, exclude_self=False):
    """Float64 brute force, distances rounded as the library does, ties by the smaller index."""
    # blocks of query rows: one (n, n, d) difference array would take 1.6 GB on digits
    D = np.vstack(
        [
            np.einsum("ijk,ijk->ij", diff, diff)
            for diff in (Q[i : i + 64, None, :] - B[None, :, :] for i in range(0, len(Q), 64))
        ]
    )
    D = round_distances(D)
    if exclude_self:
        np.fill_diagonal(D, np.inf)
    order = np.lexsort((np.broadcast_to(np.arange(B.shape[0]), D.shape), D), axis=-1)[:, :k]
    return np.sqrt(np.take_along_axis(D, order, axis=1)), order


def mixture(n, d=10, k=8, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((k, d)) * 3
    return centers[rng.integers(k, size=n)] + rng.standard_normal((n, d))


def recall(ind, truth):
    return np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(ind, truth, strict=True)])


def test_exact_equals_brute_force_with_ties_by_index():
    # integer grid: many exactly equal distances, which must come in index order
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(300, 3)).astype(float)
    dist, ind = kneighbors(X, 7, method="exact")
    bd, bi = brute_force(X, X, 7, exclude_self=True)
    np.testing.assert_array_equal(ind, bi)
    np.testing.assert_array_equal(dist, bd)
    assert ind.dtype == np.int64 and not np.any(ind == np.arange(300)[:, None])
    assert np.all(np.diff(dist, axis=1) >= 0)


@pytest.mark.parametrize("name", ["iris", "wine", "digits"])
def test_exact_equals_brute_force_on_real_data(name):
    from spectralink.datasets import load

    X, _ = load(name)
    dist, ind = kneighbors(X, 10, method="exact")
    bd, bi = brute_force(X, X, 10, exclude_self=True)
    np.testing.assert_array_equal(ind, bi)
    np.testing.assert_allclose(dist, bd, rtol=1e-12)


def test_duplicates_never_return_self():
    # every point has 5 exact copies: self may be pushed out of the candidates
    X = np.repeat(np.arange(40, dtype=float)[:, None] * [1.0, 2.0], 6, axis=0)
    dist, ind = kneighbors(X, 3, method="exact")
    assert not np.any(ind == np.arange(len(X))[:, None])
    np.testing.assert_array_equal(dist, 0.0)
    # the copies of a point, in index order without itself
    np.testing.assert_array_equal(ind[7], [6, 8, 9])


def test_round_distances_merges_last_bits_only():
    a = np.array([0.07, np.nextafter(0.07, 1.0), 0.0700001, 0.0, np.inf])
    r = round_distances(a)
    assert r[0] == r[1] and r[2] > r[1] and r[3] == 0.0 and np.isinf(r[4])
    np.testing.assert_allclose(r, a, rtol=1e-12)


def test_search_queries_against_data():
    rng = np.random.default_rng(1)
    B = rng.standard_normal((500, 6))
    Q = np.vstack([rng.standard_normal((50, 6)), B[:5]])
    dist, ind = search(Q, B, 4)
    bd, bi = brute_force(Q, B, 4)
    np.testing.assert_array_equal(ind, bi)
    np.testing.assert_allclose(dist, bd, rtol=1e-12)
    np.testing.assert_array_equal(ind[-5:, 0], np.arange(5))  # a data row finds itself
    sq, _ = search(Q, B, 4, squared=True)
    np.testing.assert_allclose(sq, bd**2, rtol=1e-12)
    with pytest.raises(ValueError, match="features"):
        search(Q[:, :3], B, 2)


def test_approximate_reaches_its_calibrated_recall():
    X = mixture(4000)
    _, truth = kneighbors(X, 15, method="exact")
    _, ind, info = kneighbors(X, 15, method="approximate", random_state=0, return_info=True)
    assert info.method == "approximate" and info.recall >= nb.TARGET_RECALL
    assert info.n_probe < info.n_lists and info.candidates < nb.EXACT_COST_FRACTION
    # the sample estimate is honest: recall over all points is close to it
    assert abs(recall(ind, truth) - info.recall) < 0.02
    assert not np.any(ind == np.arange(len(X))[:, None])


def test_approximate_target_recall_is_honoured():
    X = mixture(3000, seed=3)
    _, truth = kneighbors(X, 10, method="exact")
    low = kneighbors(
        X, 10, method="approximate", target_recall=0.6, random_state=0, return_info=True
    )
    high = kneighbors(
        X, 10, method="approximate", target_recall=0.99, random_state=0, return_info=True
    )
    assert 0.6 <= low[2].recall < high[2].recall and high[2].recall >= 0.99
    assert low[2].n_probe < high[2].n_probe
    assert recall(low[1], truth) < recall(high[1], truth)


def test_approximate_is_deterministic_and_thread_independent():
    X = mixture(3000, seed=5)
    runs = []
    for n_jobs in (1, 2, 1):
        with spectralink.config_context(n_jobs=n_jobs):
            runs.append(kneighbors(X, 10, method="approximate", random_state=7))
    for dist, ind in runs[1:]:
        np.testing.assert_array_equal(ind, runs[0][1])
        np.testing.assert_array_equal(dist, runs[0][0])


def test_threshold_switches_paths():
    X = mixture(2000, seed=2)
    *_, info = kneighbors(X, 5, ann_threshold=1999, random_state=0, return_info=True)
    assert info.method == "approximate"
    *_, info = kneighbors(X, 5, ann_threshold=2000, random_state=0, return_info=True)
    assert info.method == "exact" and info.recall == 1.0


def test_unstructured_data_falls_back_to_exact():
    # uniform points in 40 dimensions: no cell structure, calibrated probing would cost
    # more than half a brute-force search
    X = np.random.default_rng(0).uniform(size=(2000, 40))
    dist, ind, info = kneighbors(X, 10, method="approximate", random_state=0, return_info=True)
    assert info.method == "exact"
    np.testing.assert_array_equal(ind, kneighbors(X, 10, method="exact")[1])


def test_sklearn_reference_agrees_without_ties():
    X = mixture(600, seed=4)
    d1, i1 = kneighbors(X, 8, method="exact")
    d2, i2 = kneighbors(X, 8, method="sklearn")
    np.testing.assert_array_equal(i1, i2)
    np.testing.assert_allclose(d1, d2, rtol=1e-9)


@pytest.mark.slow  # PyNNDescent compiles its kernels with numba in every new process
def test_nndescent_optional_method():
    pytest.importorskip("pynndescent")
    X = mixture(3000)
    _, truth = kneighbors(X, 10, method="exact")
    _, ind, info = kneighbors(X, 10, method="nndescent", random_state=0, return_info=True)
    assert info.method == "nndescent" and info.recall is None
    assert recall(ind, truth) > 0.9


def test_errors():
    X = mixture(50)
    with pytest.raises(ValueError, match="smaller than the number of samples"):
        kneighbors(X, 50)
    with pytest.raises(ValueError, match="at least 1"):
        kneighbors(X, 0)
    with pytest.raises(ValueError, match="method"):
        kneighbors(X, 3, method="fast")
    with pytest.raises(ValueError, match="target_recall"):
        kneighbors(X, 3, target_recall=1.5)
    with pytest.raises(ValueError, match="NaN"):
        kneighbors(np.full((5, 2), np.nan), 2)
    with pytest.raises(ValueError, match="2-d"):
        kneighbors(np.zeros(5), 2)


def test_import_spectralink_is_light():
    code = (
        "import sys, spectralink; "
        "print(' '.join(m for m in ('faiss', 'numba', 'pynndescent', 'dask', 'matplotlib') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_shared_search_inside_a_model_search_block(monkeypatch):
    """Inside ``shared_eigenvectors`` (a model search) a search on equal rows is made once,
    with the block's seed; callers get copies; the cache is emptied when the block ends."""
    from spectralink.spectral import shared_eigenvectors

    calls = []
    real = nb._search

    def counting(X, k, method, random_state, target_recall):
        calls.append((k, method, random_state))
        return real(X, k, method, random_state, target_recall)

    monkeypatch.setattr(nb, "_search", counting)
    X = np.random.default_rng(0).normal(size=(120, 4))
    with shared_eigenvectors(seed=7):
        d1, i1 = kneighbors(X, 5, random_state=1)
        d2, i2 = kneighbors(X.copy(), 5, random_state=2)  # equal content: found by its hash
        i2[:] = -1  # a copy: the cache is not changed through it
        d3, i3 = kneighbors(X, 6)
        _, i4 = kneighbors(X, 5)
    assert calls == [(5, "exact", 7), (6, "exact", 7)]
    np.testing.assert_array_equal(i1, i4)
    np.testing.assert_array_equal(d1, d2)
    assert len(nb._CACHE) == 0
    kneighbors(X, 5, random_state=3)  # outside the block: searched again, caller's seed
    assert calls[-1] == (5, "exact", 3)
