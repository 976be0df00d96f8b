"""Warnings are one line of at most 200 characters; the detail is in an attribute.

A named method is its paper's method, so what it can say about a fit is a diagnostic: a
degenerate partition, a partition further from the given pairs than NCut's
(``n_violated_`` against ``n_violated_reference_``). Commands that fit many times print one
line per kind of warning.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from _cli_helpers import run
from spectralink import CCSKL, CCSR, Constraints
from spectralink.exceptions import (
    WARNING_MAX_CHARS,
    ConstraintsViolatedWarning,
    DegeneratePartitionWarning,
    DisconnectedGraphWarning,
    one_line,
)
from spectralink.methods.ncut import NCut


def _caught(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return caught


def _assert_one_line(caught):
    for w in caught:
        text = str(w.message)
        assert "\n" not in text and len(text) <= WARNING_MAX_CHARS, text


def test_one_line_cuts_at_a_word():
    text = "word " * 100
    short = one_line(text)
    assert len(short) <= WARNING_MAX_CHARS and short.endswith("...")
    assert one_line("a\n  b") == "a b"


@pytest.mark.parametrize("cls", [CCSR, CCSKL])
def test_pairs_from_another_partition_are_flagged_against_ncut(cls):
    # three separable blobs and pairs drawn from a random partition: NCut's partition of the
    # same eigenvectors is at hand, and the method that follows the pairs violates more
    X, y = make_blobs(300, centers=3, cluster_std=0.5, random_state=0)
    noise = np.random.RandomState(1).randint(3, size=len(y))
    cons = Constraints.from_labels(noise, 150, random_state=0)
    est = cls(3, random_state=0)
    caught = _caught(lambda: est.fit(X, constraints=cons))
    _assert_one_line(caught)
    ncut = NCut(3, random_state=0).fit(X)
    assert est.n_violated_reference_ == int(cons.violated(ncut.labels_).sum())
    flagged = [w for w in caught if w.category is ConstraintsViolatedWarning]
    assert bool(flagged) == (est.n_violated_ > est.n_violated_reference_)
    assert [str(w.message) for w in flagged] == est.diagnostics_[
        -len(flagged) or len(est.diagnostics_) :
    ]


def test_truthful_pairs_say_nothing():
    X, y = make_blobs(300, centers=3, cluster_std=0.5, random_state=0)
    cons = Constraints.from_labels(y, 100, random_state=0)
    est = CCSR(3, random_state=0)
    caught = _caught(lambda: est.fit(X, constraints=cons))
    caught = [w for w in caught if w.category is not DisconnectedGraphWarning]  # 2 components
    assert not caught and est.diagnostics_ == []
    assert est.n_violated_ == 0 and est.n_violated_reference_ == 0


def test_degenerate_and_disconnected_are_one_line_each():
    # two far blobs and k = 3 on a 5-NN graph: components and a split blob, as warned
    X, _ = make_blobs(120, centers=[[0, 0], [100, 100]], cluster_std=0.3, random_state=0)
    X = np.vstack([X, [[300, 300]]])  # one isolated point: a cluster of one
    cons = Constraints([(0, 1)], [], n_samples=len(X))
    caught = _caught(lambda: CCSR(3, n_neighbors=5, random_state=0).fit(X, constraints=cons))
    kinds = {w.category for w in caught}
    assert DisconnectedGraphWarning in kinds
    _assert_one_line(caught)
    degenerate = [w for w in caught if w.category is DegeneratePartitionWarning]
    assert len(degenerate) <= 1


def test_compare_prints_one_line_per_kind_of_warning(capsys, tmp_path):
    code, out, err = run(
        capsys, "compare", "--trials", "2", "--constraints", "0,50,200", "--no-progress",
        "--out", str(tmp_path / "res"),
    )  # fmt: skip
    assert code == 0
    lines = [
        line for line in (out + err).splitlines() if "Warning in " in line or "warning" in line
    ]
    assert len(lines) <= 5, lines
    assert all(len(line) <= WARNING_MAX_CHARS + 40 for line in lines)


class _OneCluster(CCSR):
    """CCSR whose solve ends in one cluster: a degenerate partition, warned for sure."""

    def _fit_embedding(self, F, constraints, diag_gram=None):
        super()._fit_embedding(F, constraints, diag_gram)
        self.labels_ = np.zeros(F.shape[0], dtype=np.int64)


@pytest.mark.parametrize("entry", ["fit", "fit_embedding"])
def test_a_diagnostic_points_at_the_users_line(entry):
    """Whichever public entry point ran the fit contract, the warning names this file."""
    X, y = make_blobs(300, centers=3, cluster_std=0.5, random_state=0)
    cons = Constraints.from_labels(y, 50, random_state=0)
    est = _OneCluster(3, random_state=0)
    if entry == "fit":
        caught = _caught(lambda: est.fit(X, constraints=cons))
    else:
        F = CCSR(3, random_state=0).fit(X).eigenvectors_
        caught = _caught(lambda: est.fit_embedding(F, cons))
    degenerate = [w for w in caught if w.category is DegeneratePartitionWarning]
    assert degenerate
    assert all(w.filename == __file__ for w in degenerate)


def test_a_missing_extra_is_one_error_naming_the_feature_and_the_extra():
    from spectralink.exceptions import MissingExtraError, import_extra

    with pytest.raises(MissingExtraError, match=r"^--dask needs no_such_module_x: pip install "):
        import_extra("no_such_module_x", "dask", "--dask")
    with pytest.raises(ImportError, match=r"'spectralink\[dask\]'"):  # code catching that works
        import_extra("no_such_module_x", "dask", "--dask")
    assert import_extra("json", "dask", "x").__name__ == "json"
