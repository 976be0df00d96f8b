"""Exact small solvers shared by the methods (pure functions, no estimator state)."""

from functools import cache
from importlib import import_module
from types import ModuleType


@cache
def compiled_module(name: str) -> ModuleType | None:
    """The numba-compiled sibling module ``name`` (imported once), or None without numba."""
    try:
        return import_module(f"{__name__}.{name}")
    except ImportError:  # pragma: no cover - numba comes with pynndescent
        return None
