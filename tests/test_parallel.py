"""The library's thread setting and the right-sizing of small steps."""

import numpy as np
import pytest
from threadpoolctl import threadpool_info

import spectralink
from spectralink import parallel
from spectralink.parallel import limit_threads, n_threads, threads_for


@pytest.fixture(autouse=True)
def clean(monkeypatch):
    monkeypatch.delenv(parallel.ENV_VAR, raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    spectralink.set_config(n_jobs=None)
    yield
    spectralink.set_config(n_jobs=None)


def test_precedence_config_env_omp_cpus(monkeypatch):
    assert n_threads() == parallel._cpu_count()
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert n_threads() == 3
    monkeypatch.setenv(parallel.ENV_VAR, "5")
    assert n_threads() == 5
    spectralink.set_config(n_jobs=2)
    assert n_threads() == 2 and spectralink.get_config() == {"n_jobs": 2}
    spectralink.set_config(n_jobs=-1)
    assert n_threads() == parallel._cpu_count()
    monkeypatch.setenv(parallel.ENV_VAR, "0")
    spectralink.set_config(n_jobs=None)
    assert n_threads() == parallel._cpu_count()


def test_config_context_restores():
    spectralink.set_config(n_jobs=3)
    with spectralink.config_context(n_jobs=1):
        assert n_threads() == 1
    assert n_threads() == 3


@pytest.mark.parametrize("bad", [0, -2, 1.5, "2", True])
def test_bad_n_jobs(bad):
    with pytest.raises(ValueError, match="n_jobs"):
        spectralink.set_config(n_jobs=bad)


def test_bad_environment(monkeypatch):
    monkeypatch.setenv(parallel.ENV_VAR, "many")
    with pytest.raises(ValueError, match="SPECTRALINK_NUM_THREADS"):
        n_threads()


def test_threads_for_grows_with_work():
    spectralink.set_config(n_jobs=4)
    assert threads_for(0) == 1
    assert threads_for(parallel.WORK_PER_THREAD * 1.9) == 1
    assert threads_for(parallel.WORK_PER_THREAD * 3) == 3
    assert threads_for(1e30) == 4
    # a 2000 x 2000 eigendecomposition (about 1e10 operations) stays on one thread
    assert threads_for(4.0 / 3.0 * 2000**3) == 1


def test_limit_threads_sets_every_pool():
    from threadpoolctl import threadpool_limits

    np.linalg.eigh(np.eye(3))  # BLAS loaded
    spectralink.set_config(n_jobs=2)
    with limit_threads(0) as count:
        assert count == 1
        assert all(lib["num_threads"] == 1 for lib in threadpool_info())

    def counts():
        return {lib["filepath"]: lib["num_threads"] for lib in threadpool_info()}

    # what threadpoolctl itself reaches with 2 (a single-threaded BLAS build stays at 1)
    with threadpool_limits(limits=1):
        with threadpool_limits(limits=2):
            expected = counts()
        with limit_threads() as count:
            assert count == 2
            assert counts() == expected
    assert 2 in expected.values()
