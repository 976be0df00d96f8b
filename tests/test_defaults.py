"""Every method at its defaults (its paper's method) against unconstrained NCut, and Auto.

With truthful constraints, each judged method's mean clustering error over three fixed draws
is at most NCut's (same defaults) plus ``TOL``, the tolerance of
``benchmarks/bench_defaults.py``, which measures the same on more datasets and counts; where
a paper's method is worse than that (:data:`KNOWN_WORSE`, the method as published), `Auto`,
which chooses between the methods and NCut from held-out pairs, must not be. A degenerate
partition warns (:class:`~spectralink.exceptions.DegeneratePartitionWarning`) and a clean
one does not.
"""

from __future__ import annotations

import warnings
from functools import cache

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine, make_blobs
from sklearn.preprocessing import StandardScaler

from spectralink import Auto, Constraints, NCut
from spectralink.exceptions import DegeneratePartitionWarning
from spectralink.metrics import clustering_error
from spectralink.registry import available_methods, get_method

#: the issue's tolerance on a mean error over the draws
TOL = 0.02
#: methods whose defaults are judged (the seed methods and SL)
JUDGED = ["sl", "ccsr", "ccskl", "e2cp", "lscp", "cosc", "scacs", "fcsc"]
#: methods made for labelled subsets (all pairs among labelled points)
LABELED = ["scacs", "fcsc"]
DRAWS = range(3)

#: cells where the paper's method misses the criterion, with the reason (reported in
#: docs/results/defaults/unguarded): the named estimators are the published methods, and
#: Auto (test_auto_not_worse_than_ncut) is what keeps a user safe there.
KNOWN_WORSE: dict[tuple, str] = {
    ("wine", "scacs", "labeled", 5): "SCACS's landmark graph is weaker than the k-NN graph "
    "on 178 points, and 15 labelled points do not make up for it",
    ("wine", "fcsc", "labeled", 5): "FCSC's dense RBF graph on 178 points, 15 labelled points",
    ("wine", "fcsc", "pairs", 50): "FCSC's dense RBF graph on 178 points, 50 pairs",
}

#: cells whose outcome on one draw depends on the CPU's floating-point rounding: k-way COSC's
#: recursive runs on wine end draw 2 in one of two optima (error 0.152 on one machine, 0.06 on
#: another, same library versions; docs/results/cosc/timing.md). The stable property is the
#: median over the draws, which one draw's optimum cannot move past the tolerance.
CHAOTIC = {("wine", "cosc", "pairs", 200)}


@cache
def dataset(name: str):
    if name == "blobs":
        return make_blobs(n_samples=600, centers=3, n_features=5, random_state=0)
    if name == "iris":
        return load_iris(return_X_y=True)
    if name == "digits":
        return load_digits(return_X_y=True)
    X, y = load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _fit(name, k, X, cons, seed):
    """Labels and the DegeneratePartitionWarnings of one default fit."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        labels = get_method(name)(k, random_state=seed).fit_predict(X, constraints=cons)
    degenerate = [w for w in caught if issubclass(w.category, DegeneratePartitionWarning)]
    return labels, degenerate


def _draw(y, protocol: str, count: int, seed: int) -> Constraints:
    """Random pairs, or all pairs among ``count`` labelled points per class."""
    if protocol == "pairs":
        return Constraints.from_labels(y, count, random_state=seed)
    return Constraints.from_labeled_subset(y, count * len(np.unique(y)), random_state=seed)


@cache  # the same NCut fits serve every case of a dataset
def _ncut_error(data: str) -> float:
    X, y = dataset(data)
    k = len(np.unique(y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return float(
            np.mean([clustering_error(y, NCut(k, random_state=s).fit_predict(X)) for s in DRAWS])
        )


CASES = [
    (data, name, "pairs", count)
    for data in ("wine", "iris", "blobs")
    for name in JUDGED
    for count in (50, 200)
]
CASES += [(data, name, "labeled", 5) for data in ("wine", "iris", "blobs") for name in LABELED]
# the papers' CCSR and CCSKL lose to NCut here (digits, 50 pairs: 0.28 / 0.26 vs 0.19);
# slow: 1797 points, seconds per case
CASES += [
    pytest.param("digits", name, "pairs", 50, marks=pytest.mark.slow) for name in ("ccsr", "ccskl")
]


@pytest.mark.parametrize(("data", "name", "protocol", "count"), CASES)
def test_not_worse_than_ncut(data, name, protocol, count, request):
    """Mean error over 3 draws (the median in a :data:`CHAOTIC` cell): random pairs, or all
    pairs among ``count`` labelled points per class."""
    if (data, name, protocol, count) in KNOWN_WORSE:
        pytest.skip(f"the paper's method is worse here: {KNOWN_WORSE[data, name, protocol, count]}")
    X, y = dataset(data)
    k = len(np.unique(y))
    errs = []
    for s in DRAWS:
        cons = _draw(y, protocol, count, s)
        errs.append(clustering_error(y, _fit(name, k, X, cons, s)[0]))
    base = _ncut_error(data)
    summary = np.median if (data, name, protocol, count) in CHAOTIC else np.mean
    assert summary(errs) <= base + TOL, (errs, base)


@pytest.mark.parametrize(("data", "name", "protocol", "count"), sorted(KNOWN_WORSE))
def test_auto_not_worse_than_ncut(data, name, protocol, count):
    """Where a paper's method is worse than NCut, Auto, among whose candidates it is,
    is not: mean error over the same 3 draws at most NCut's + ``TOL``."""
    X, y = dataset(data)
    k = len(np.unique(y))
    errs = []
    for s in DRAWS:
        cons = _draw(y, protocol, count, s)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            auto = Auto(k, methods=[name, "ccsr", "lscp"], random_state=s, verbose=0)
            errs.append(clustering_error(y, auto.fit_predict(X, constraints=cons)))
    assert np.mean(errs) <= _ncut_error(data) + TOL, errs


@pytest.mark.parametrize("name", [m for m in available_methods() if m != "sclc"])
def test_clean_partition_on_separable_blobs(name):
    """Three separable blobs, 60 truthful pairs: no warning, and NCut's (near-zero) error."""
    X, y = dataset("blobs")
    cons = Constraints.from_labels(y, 60, random_state=0)
    labels, degenerate = _fit(name, 3, X, cons, 0)
    assert not degenerate, [str(w.message) for w in degenerate]
    assert clustering_error(y, labels) <= TOL


def test_sl_paper_normalisation_collapses_and_warns():
    """Kamvar et al.'s additive normalisation isolates two points on standardised
    breast_cancer; the library says so, and the default (NJW) form does not collapse."""
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    cons = Constraints.from_labels(y, 100, random_state=0)
    with pytest.warns(DegeneratePartitionWarning, match="degenerate partition"):
        paper = get_method("sl")(2, normalization="additive", random_state=0, guard=None)
        paper.fit(X, constraints=cons)
    assert np.bincount(paper.labels_).min() < 6
    labels, degenerate = _fit("sl", 2, X, cons, 0)
    assert not degenerate
    base = clustering_error(y, NCut(2, random_state=0).fit_predict(X))
    assert clustering_error(y, labels) <= base + TOL
