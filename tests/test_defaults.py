"""Constraints never hurt: every method at its defaults against unconstrained NCut.

With truthful random pairs, each method's mean clustering error over a few fixed draws is
at most NCut's (same defaults) plus ``TOL``; a degenerate partition warns
(:class:`~spectralink.exceptions.DegeneratePartitionWarning`) and a clean one does not.
``benchmarks/bench_defaults.py`` measures the same on more datasets and counts.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_wine, make_blobs
from sklearn.preprocessing import StandardScaler

from spectralink import Constraints, NCut
from spectralink.exceptions import DegeneratePartitionWarning
from spectralink.methods import available_methods, get_method
from spectralink.metrics import clustering_error

#: the issue's tolerance on a mean error over the draws
TOL = 0.02
#: methods whose defaults are judged (the seed methods and SL)
JUDGED = ["sl", "ccsr", "ccskl", "e2cp", "lscp", "cosc", "scacs", "fcsc"]


def _fit(name, k, X, cons, seed):
    """Labels and the DegeneratePartitionWarnings of one default fit."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        labels = get_method(name)(k, random_state=seed).fit_predict(X, constraints=cons)
    degenerate = [w for w in caught if issubclass(w.category, DegeneratePartitionWarning)]
    return labels, degenerate


def _standardised(loader):
    X, y = loader(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="module")
def wine():
    return _standardised(load_wine)


@pytest.fixture(scope="module")
def blobs():
    return make_blobs(n_samples=600, centers=3, n_features=5, random_state=0)


#: cells known to miss the criterion, with the reason (reported in docs/results/defaults)
KNOWN_WORSE = {
    ("scacs", 50): (
        "SCACS's landmark graph is weaker than the k-NN graph on 178 points (LSC-R 0.067 "
        "against NCut's 0.034); with 50 pairs SCACS keeps LSC-R's partition"
    ),
}


@pytest.mark.parametrize("name", JUDGED)
@pytest.mark.parametrize("n_pairs", [50, 200])
def test_not_worse_than_ncut_on_wine(wine, name, n_pairs, request):
    if (name, n_pairs) in KNOWN_WORSE:
        request.applymarker(pytest.mark.xfail(reason=KNOWN_WORSE[name, n_pairs], strict=True))
    X, y = wine
    draws = [Constraints.from_labels(y, n_pairs, random_state=s) for s in range(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        base = np.mean(
            [clustering_error(y, NCut(3, random_state=s).fit_predict(X)) for s in range(3)]
        )
    errs = [clustering_error(y, _fit(name, 3, X, c, s)[0]) for s, c in enumerate(draws)]
    assert np.mean(errs) <= base + TOL, (errs, base)


@pytest.mark.parametrize("name", [m for m in available_methods() if m != "sclc"])
def test_clean_partition_on_separable_blobs(blobs, name):
    """Three separable blobs, 60 truthful pairs: no warning, and NCut's (near-zero) error."""
    X, y = blobs
    cons = Constraints.from_labels(y, 60, random_state=0)
    labels, degenerate = _fit(name, 3, X, cons, 0)
    assert not degenerate, [str(w.message) for w in degenerate]
    assert clustering_error(y, labels) <= TOL


def test_sl_paper_normalisation_collapses_and_warns():
    """Kamvar et al.'s additive normalisation isolates two points on standardised
    breast_cancer; the library says so, and the default (NJW) form does not collapse."""
    X, y = _standardised(load_breast_cancer)
    cons = Constraints.from_labels(y, 100, random_state=0)
    with pytest.warns(DegeneratePartitionWarning, match="degenerate partition"):
        paper = get_method("sl")(2, normalization="additive", random_state=0)
        paper.fit(X, constraints=cons)
    assert np.bincount(paper.labels_).min() < 6
    labels, degenerate = _fit("sl", 2, X, cons, 0)
    assert not degenerate
    base = clustering_error(y, NCut(2, random_state=0).fit_predict(X))
    assert clustering_error(y, labels) <= base + TOL
