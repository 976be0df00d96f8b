"""Named datasets: bundled sets, the data directory and its precedence, errors, subsets."""

from __future__ import annotations

import numpy as np
import pytest

from spectralink import datasets
from spectralink.datasets import DatasetNotFoundError, data_home, list_datasets, load, load_subset


@pytest.mark.parametrize(
    ("name", "shape", "k"),
    [("iris", (150, 4), 3), ("wine", (178, 13), 3), ("breast_cancer", (569, 30), 2)],
)
def test_bundled(name, shape, k, monkeypatch, tmp_path):
    monkeypatch.setenv("SPECTRALINK_DATA", str(tmp_path))  # bundled never touch the directory
    X, y = load(name)
    assert X.shape == shape and X.dtype == np.float64
    assert y.dtype == np.int64 and len(np.unique(y)) == k
    assert list_datasets()[name] is True


def _write(directory, name, n=12, d=3, k=3, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    y = np.arange(n) % k
    directory.mkdir(parents=True, exist_ok=True)
    np.savez(directory / f"{name}.npz", X=X, y=y)
    return X, y


def test_missing_file_names_file_and_directory(tmp_path):
    with pytest.raises(DatasetNotFoundError) as info:
        load("segmentation", data_home=tmp_path)
    msg = str(info.value)
    assert "segmentation.npz" in msg and str(tmp_path) in msg
    assert isinstance(info.value, FileNotFoundError)
    with pytest.raises(DatasetNotFoundError, match="known names"):
        load("no_such_set", data_home=tmp_path)


def test_data_home_precedence(tmp_path, monkeypatch):
    env_dir, arg_dir = tmp_path / "env", tmp_path / "arg"
    X_env, _ = _write(env_dir, "toy", seed=1)
    X_arg, _ = _write(arg_dir, "toy", seed=2)
    monkeypatch.setenv("SPECTRALINK_DATA", str(env_dir))
    assert data_home() == env_dir
    np.testing.assert_array_equal(load("toy")[0], X_env)
    np.testing.assert_array_equal(load("toy", data_home=arg_dir)[0], X_arg)
    assert data_home(arg_dir) == arg_dir


def test_default_cache_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("SPECTRALINK_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert data_home() == tmp_path / "spectralink"
    X, y = _write(tmp_path / "spectralink", "toy")
    np.testing.assert_array_equal(load("toy")[0], X)
    listing = list_datasets()
    assert listing["toy"] is True and listing["segmentation"] is False


def test_malformed_files(tmp_path):
    np.savez(tmp_path / "bad.npz", A=np.zeros(3))
    with pytest.raises(ValueError, match="must contain arrays 'X' and 'y'"):
        load("bad", data_home=tmp_path)
    np.savez(tmp_path / "ragged.npz", X=np.zeros((4, 2)), y=np.zeros(3))
    with pytest.raises(ValueError, match="one label per row"):
        load("ragged", data_home=tmp_path)


def test_file_alias(tmp_path):
    X, _ = _write(tmp_path, "breast_cancer")
    np.testing.assert_array_equal(load("breast_cancer_ljubljana", data_home=tmp_path)[0], X)
    assert "breast_cancer_ljubljana" in datasets.BENCHMARK_DATASETS


def test_load_subset(tmp_path):
    X, y = _write(tmp_path, "toy", n=30, k=3)
    Xs, ys = load_subset("toy", classes=[2, 0], data_home=tmp_path)
    keep = np.isin(y, [2, 0])
    np.testing.assert_array_equal(Xs, X[keep])
    np.testing.assert_array_equal(ys, np.where(y[keep] == 2, 0, 1))
    Xp, yp = load_subset("toy", per_class=4, data_home=tmp_path)
    assert len(yp) == 12 and np.all(np.bincount(yp) == 4)
    # the first per_class points of each class, in data order
    np.testing.assert_array_equal(Xp, X[:12])
    with pytest.raises(ValueError, match=r"has no class \[7\]"):
        load_subset("toy", classes=[0, 7], data_home=tmp_path)


def test_real_segmentation_if_present(dataset):
    X, y = dataset("segmentation")
    assert X.shape == datasets.BENCHMARK_DATASETS["segmentation"][:2]
    assert len(np.unique(y)) == 7
