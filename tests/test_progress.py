"""Stage timing on the ``spectralink`` logger."""

import logging
import time

import numpy as np

from spectralink import NCut
from spectralink.progress import current_stage, stage


def test_stages_log_own_time_and_nest(caplog):
    with caplog.at_level(logging.INFO, logger="spectralink"):
        with stage("outer") as outer:
            outer.detail = "the rest"
            with stage("inner", total=3) as inner:
                assert current_stage() is inner
                inner.update(3)
                time.sleep(0.05)
            assert current_stage() is outer
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith("inner") and lines[1].startswith("outer")
    assert lines[1].endswith("the rest")
    inner_s = float(lines[0].split()[1])
    outer_s = float(lines[1].split()[1])
    assert inner_s >= 0.05 and outer_s < 0.05  # the outer line excludes the inner stage


def test_silent_when_logging_is_off(caplog):
    with caplog.at_level(logging.WARNING, logger="spectralink"):
        with stage("quiet") as st:
            st.update(5)  # an inactive stage ignores progress
            assert current_stage() is st
    assert not caplog.records


def test_fit_reports_every_stage(caplog):
    X = np.random.default_rng(0).standard_normal((120, 3))
    with caplog.at_level(logging.INFO, logger="spectralink"):
        NCut(2, random_state=0).fit(X)
    names = [r.getMessage().split()[0] for r in caplog.records if r.name == "spectralink"]
    assert names == ["neighbours", "graph", "eigenvectors", "assignment", "method"]


class _Terminal:
    """A stderr that says it is a terminal and keeps what is written to it."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass


def _auto_fit(monkeypatch, stderr, **params):
    import sys

    from sklearn.datasets import make_blobs

    import spectralink.model_selection._search as search_module
    from spectralink import Auto, Constraints

    monkeypatch.setattr(search_module, "PROGRESS_DELAY", 0.0)  # this search is short
    monkeypatch.setattr(sys, "stderr", stderr)
    X, y = make_blobs(90, centers=3, random_state=0)
    c = Constraints.from_labels(y, 40, random_state=0)
    Auto(3, methods=["ccskl"], sigmas=None, cv=3, n_repeats=1, random_state=0, **params).fit(
        X, constraints=c
    )


def test_auto_shows_its_search_on_a_terminal_by_default(monkeypatch):
    term = _Terminal()
    _auto_fit(monkeypatch, term)
    assert "model search: 2 candidates x 3 folds" in term.text  # NCut and CCSKL
    assert "6/6" in term.text


def test_auto_is_silent_when_asked_and_says_its_stages_on_a_pipe(monkeypatch):
    term = _Terminal()
    _auto_fit(monkeypatch, term, verbose=0)
    assert term.text == ""
    # a pipe gets no bar, one line per stage (the search, then the choice's refit)
    pipe = _Terminal()
    pipe.isatty = lambda: False
    _auto_fit(monkeypatch, pipe)
    lines = pipe.text.splitlines()
    assert len(lines) == 2 and all(line.startswith("spectralink: Auto: ") for line in lines)
    assert "searching" in lines[0] and "fitting its choice" in lines[1]
