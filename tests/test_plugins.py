"""A method from another package joins spectralink through an entry point.

The fixture package ``tests/plugin_fixture/spectral_copkmeans`` is installed beside
spectralink the way pip would leave it: the module and a ``.dist-info`` folder whose
``entry_points.txt`` names it in the ``spectralink.methods`` group, on ``sys.path``. It must
then be listed by ``spectralink methods``, run with ``--method``, be a candidate of ``Auto``
and pass the checks every method of the library passes.
"""

from __future__ import annotations

import pickle
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_blobs

from _cli_helpers import run
from spectralink import Auto, Constraints
from spectralink.registry import ENTRY_POINT_GROUP, available_methods, get_method, method_name

NAME = "spectral_copkmeans"
FIXTURE = Path(__file__).parent / "plugin_fixture" / NAME


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """The fixture package installed in a folder on ``sys.path``."""
    shutil.copytree(FIXTURE, tmp_path / NAME)
    info = tmp_path / "spectral_copkmeans-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: spectral-copkmeans\nVersion: 0.1\n"
    )
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\n{NAME} = {NAME}:SpectralCOPKMeans\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(200, centers=3, cluster_std=1.0, random_state=0)
    return X, y, Constraints.from_labels(y, 80, random_state=0)


def test_not_there_without_the_package():
    assert NAME not in available_methods()


def test_registered_by_its_entry_point(installed):
    assert NAME in available_methods()
    cls = get_method(NAME)
    assert cls.__name__ == "SpectralCOPKMeans"
    assert method_name(cls(3)) == NAME
    assert get_method("ccsr").__name__ == "CCSR"  # the library's names stay its own


def test_passes_the_common_checks(installed, blobs):
    X, y, cons = blobs
    est = get_method(NAME)(3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a clean fit on separable blobs says nothing
        est.fit(X, constraints=cons)
    assert est.labels_.shape == (len(y),) and est.n_violated_ == 0
    assert est.guard is None and not est.fallback_  # the method as written, by default
    # predict through the graph (a weighted vote of the neighbours): the training labels,
    # but for a point or two on a boundary
    predicted = est.predict(X)
    assert np.mean(predicted == est.labels_) >= 0.95
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X[:20]), predicted[:20])
    assert clone(est).get_params() == est.get_params()
    guarded = get_method(NAME)(3, random_state=0, guard="held_out").fit(X, constraints=cons)
    assert guarded.guard_ is None or not guarded.fallback_  # the pairs help, or agree
    with pytest.raises(ValueError, match="n_clusters"):
        get_method(NAME)(1).fit(X, constraints=cons)


def test_a_candidate_of_auto(installed, blobs):
    X, y, cons = blobs
    auto = Auto(3, methods=[NAME, "ccsr"], sigmas=None, random_state=0, verbose=0)
    auto.fit(X, constraints=cons)
    names = [method_name(p["estimator"]) for p in auto.search_.cv_results_["params"]]
    assert names == ["ncut", NAME, "ccsr"]
    assert auto.labels_.shape == (len(y),)


def test_listed_and_run_by_the_command_line(installed, blobs, capsys, tmp_path):
    code, out, _ = run(capsys, "methods")
    assert code == 0 and NAME in out
    X, y, cons = blobs
    data = tmp_path / "points.csv"
    np.savetxt(data, X, delimiter=",", header="a,b", comments="")
    pairs = tmp_path / "pairs.csv"
    cons.to_csv(pairs)
    out_file = tmp_path / "labels.csv"
    code, _, err = run(
        capsys, "cluster", data, "-k", 3, "--method", NAME, "--constraints", pairs,
        "-o", out_file,
    )  # fmt: skip
    assert code == 0, err
    assert len(out_file.read_text().splitlines()) == len(y) + 1
