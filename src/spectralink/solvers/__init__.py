"""Exact small solvers shared by the methods (pure functions, no estimator state)."""

from functools import cache
from importlib import import_module
from types import ModuleType

from ..parallel import n_threads


@cache
def _import_compiled(name: str) -> ModuleType | None:
    try:
        return import_module(f"{__name__}.{name}")
    except ImportError:  # pragma: no cover - numba is a dependency
        return None


def compiled_module(name: str) -> ModuleType | None:
    """The numba-compiled sibling module ``name`` (imported once), or None without numba.

    Sets numba's thread count to the library's (:func:`spectralink.parallel.n_threads`).
    """
    module = _import_compiled(name)
    if module is not None:
        import numba

        numba.set_num_threads(max(1, min(n_threads(), numba.config.NUMBA_NUM_THREADS)))
    return module
