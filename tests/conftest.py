"""Test-suite wide settings: which tests are ``slow``.

A plain ``pytest`` deselects tests marked ``slow`` (``addopts`` in pyproject.toml); the full
suite, as continuous integration runs it, is ``pytest -m ""``. Besides the tests marked
where they are defined, the generic checks parametrized over every method are slow for
``Auto`` (each of its fits is a cross-validated search over some 30 candidate fits); Auto's
own behaviour is tested quickly in ``test_auto.py``.

With ``SPECTRALINK_BROWSER_TESTS=elsewhere`` the browser tests (``test_label_browser.py``)
are left out: continuous integration runs them on its other core.
"""

from __future__ import annotations

import os

import pytest

#: modules whose tests are parametrized over every method of the registry
_PER_METHOD_MODULES = {
    "test_estimator_checks.py",
    "test_predict.py",
    "test_params.py",
    "test_defaults.py",
}


def _is_auto(value) -> bool:
    return value == "auto" if isinstance(value, str) else type(value).__name__ == "Auto"


def pytest_collection_modifyitems(config, items):
    if os.environ.get("SPECTRALINK_BROWSER_TESTS") == "elsewhere":
        # continuous integration runs the browser tests on its other core (.ci/run)
        moved = [item for item in items if item.path.name == "test_label_browser.py"]
        if moved:
            config.hook.pytest_deselected(items=moved)
            items[:] = [item for item in items if item not in moved]
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None or item.path.name not in _PER_METHOD_MODULES:
            continue
        if any(_is_auto(v) for v in callspec.params.values()):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def dataset():
    """``dataset(name)``: ``(X, y)`` of a data set in the data directory, or the test skipped
    when it is not there (the papers' sets are not shipped; ``SPECTRALINK_DATA`` points at
    them)."""
    from spectralink.datasets import DatasetNotFoundError, load

    def load_or_skip(name: str):
        try:
            return load(name)
        except DatasetNotFoundError:
            pytest.skip(f"{name}.npz not in the data directory (set SPECTRALINK_DATA)")

    return load_or_skip
