"""SCACS and LSC-R on a local in-process dask.distributed cluster = in-core results."""

import numpy as np
import pytest

from spectralink import LSCR, SCACS, Constraints
from spectralink import landmarks as lm

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    c = distributed.Client(
        processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0"
    )
    yield c
    c.close()


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(1)
    centers = rng.uniform(-5, 5, size=(5, 8))
    X = np.vstack([c + 1.5 * rng.randn(400, 8) for c in centers])
    y = np.repeat(np.arange(5), 400)
    perm = rng.permutation(len(y))
    return X[perm], y[perm]


def test_landmark_graph_on_dask_equals_in_core(client, data):
    X, _ = data
    a = lm.build_landmark_graph(X, 60, 3, random_state=0)
    b = lm.build_landmark_graph(da.from_array(X, chunks=(300, 4)), 60, 3, random_state=0)
    assert isinstance(b.nearest, da.Array)
    np.testing.assert_array_equal(a.landmark_indices, b.landmark_indices)
    np.testing.assert_array_equal(a.nearest, b.nearest.compute())
    np.testing.assert_allclose(a.weights, b.weights.compute(), rtol=1e-12)
    assert a.sigma == pytest.approx(b.sigma, rel=1e-12)
    np.testing.assert_allclose(a.degrees, b.degrees, rtol=1e-12)
    np.testing.assert_allclose(a.S_hat, b.S_hat, atol=1e-12)


def test_scacs_same_labels_on_dask(client, data):
    X, y = data
    cons = Constraints.from_labeled_subset(y, 100, random_state=0)
    a = SCACS(5, n_landmarks=60, random_state=3).fit(X, constraints=cons)
    Xd = da.from_array(X, chunks=(512, -1))
    b = SCACS(5, n_landmarks=60, random_state=3).fit(Xd, constraints=cons)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_allclose(a.embedding_, b.embedding_, atol=1e-10)
    assert a.beta_ == pytest.approx(b.beta_, rel=1e-10)
    np.testing.assert_array_equal(b.predict(Xd), b.labels_)
    np.testing.assert_array_equal(b.predict(X[:50]), a.labels_[:50])


def test_lscr_backend_dask_wraps_numpy(client, data):
    X, _ = data
    a = LSCR(5, n_landmarks=60, random_state=4).fit(X)
    b = LSCR(5, n_landmarks=60, random_state=4, backend="dask", chunk_size=333).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)


def test_dask_bad_input(client, data):
    X, y = data
    bad = X.copy()
    bad[7, 2] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        LSCR(5, n_landmarks=30, random_state=0).fit(da.from_array(bad, chunks=(500, -1)))
    with pytest.raises(ValueError, match="real numbers"):
        LSCR(5).fit(da.from_array(np.array([["a", "b"]] * 10)))


def test_scacs_on_dask_beyond_the_client_rows_refines_on_the_workers(client, data, monkeypatch):
    """Above KMEANS_CLIENT_ROWS k-means starts from a sample and Lloyd passes run on the
    workers: labels_ stay a dask array, and on separated blobs the partition is the
    in-core one."""
    import spectralink._dask as sd

    monkeypatch.setattr(sd, "KMEANS_CLIENT_ROWS", 400)
    X, y = data
    cons = Constraints.from_labeled_subset(y, 100, random_state=0)
    a = SCACS(5, n_landmarks=60, random_state=3).fit(X, constraints=cons)
    b = SCACS(5, n_landmarks=60, random_state=3).fit(
        da.from_array(X, chunks=(512, -1)), constraints=cons
    )
    assert isinstance(b.labels_, da.Array)
    from spectralink.metrics import adjusted_rand_score

    assert adjusted_rand_score(a.labels_, np.asarray(b.labels_)) == 1.0
    assert b.n_violated_ == a.n_violated_


def test_guard_is_refused_on_dask(client, data):
    X, y = data
    cons = Constraints.from_labeled_subset(y, 100, random_state=0)
    with pytest.raises(ValueError, match="guard='held_out' refits on the points in memory"):
        SCACS(5, n_landmarks=60, guard="held_out", random_state=3).fit(
            da.from_array(X, chunks=(512, -1)), constraints=cons
        )
