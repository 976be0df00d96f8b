"""How many threads the library uses: one setting for every stage, few threads for small steps.

The thread count ``T`` comes from, in order of precedence:

1. ``spectralink.set_config(n_jobs=...)`` (or the ``config_context`` context manager);
2. the ``SPECTRALINK_NUM_THREADS`` environment variable;
3. the ``OMP_NUM_THREADS`` environment variable, if set;
4. the number of CPUs this process may run on.

``n_jobs=-1`` (or ``0`` in the environment) means all CPUs. Every stage honours ``T``: the
neighbour search (faiss's OpenMP threads), BLAS and OpenMP inside NumPy, SciPy and
scikit-learn (through threadpoolctl, for the duration of every estimator's ``fit``), and
the joblib workers of :class:`~spectralink.model_selection.ConstraintSearchCV`, which share
``T`` between them.

Small dense steps (a dense eigendecomposition of a few thousand rows, k-means on a few
thousand points, the small solves of the methods) run on fewer threads: :func:`threads_for`
gives each thread at least :data:`WORK_PER_THREAD` floating-point operations (about half a
second of one core). On a machine whose cores are busy with other work, parallel BLAS and
OpenMP on small problems spend most of their time waiting for each other (a 2000 x 2000
``eigh``: 0.5 s on one thread, 15 s on two busy cores); on one thread they do not.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator

__all__ = [
    "ENV_VAR",
    "WORK_PER_THREAD",
    "blas_threads",
    "config_context",
    "get_config",
    "limit_threads",
    "n_threads",
    "set_config",
    "threads_for",
]

#: Environment variable holding the default thread count (``0`` or ``-1``: all CPUs).
ENV_VAR = "SPECTRALINK_NUM_THREADS"
#: Floating-point operations a step needs per thread before it runs on more than one.
WORK_PER_THREAD = 1e10

_UNSET = object()
_config: dict = {"n_jobs": None}
# config_context's setting: local to the thread (or task) that entered it
_local: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "spectralink_config", default=None
)


def _check_n_jobs(n_jobs) -> int | None:
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"n_jobs must be None, -1 or a positive integer, got {n_jobs!r}.")
    return n_jobs


def set_config(*, n_jobs: int | None = _UNSET) -> None:
    """Set the library's parallelism.

    Parameters
    ----------
    n_jobs : int or None
        Threads used by every stage (neighbour search, BLAS, k-means, joblib workers all
        together). ``-1`` means all CPUs; ``None`` restores the default
        (``SPECTRALINK_NUM_THREADS``, else ``OMP_NUM_THREADS``, else all CPUs).
    """
    if n_jobs is not _UNSET:
        _config["n_jobs"] = _check_n_jobs(n_jobs)


def get_config() -> dict:
    """The settings in effect (a copy): :func:`set_config`'s, or an enclosing
    :func:`config_context`'s."""
    return dict(_local.get() or _config)


@contextlib.contextmanager
def config_context(*, n_jobs: int | None = _UNSET) -> Iterator[None]:
    """:func:`set_config` for the duration of a ``with`` block, in this thread only."""
    new = get_config()
    if n_jobs is not _UNSET:
        new["n_jobs"] = _check_n_jobs(n_jobs)
    token = _local.set(new)
    try:
        yield
    finally:
        _local.reset(token)


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _env_threads(name: str) -> int | None:
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{name}={text!r} is not an integer number of threads.") from None
    if value < -1:
        raise ValueError(f"{name}={text!r} must be -1, 0 (all CPUs) or a positive integer.")
    return value if value > 0 else _cpu_count()


def n_threads() -> int:
    """The thread count ``T`` every stage may use (see the module docstring)."""
    n_jobs = get_config()["n_jobs"]
    if n_jobs is None:
        return _env_threads(ENV_VAR) or _env_threads("OMP_NUM_THREADS") or _cpu_count()
    return resolve_n_jobs(n_jobs)


def resolve_n_jobs(n_jobs: int | None) -> int:
    """An estimator's ``n_jobs`` as a thread count: ``None`` follows :func:`n_threads`,
    ``-1`` is every CPU this process may use."""
    if n_jobs is None:
        return n_threads()
    return _cpu_count() if n_jobs == -1 else int(n_jobs)


def threads_for(work: float) -> int:
    """Threads for a step of ``work`` floating-point operations: 1 per
    :data:`WORK_PER_THREAD`, at least 1, at most :func:`n_threads`."""
    return max(1, min(n_threads(), int(work // WORK_PER_THREAD)))


@contextlib.contextmanager
def limit_threads(work: float | None = None) -> Iterator[int]:
    """Run the block with ``threads_for(work)`` threads (``n_threads()`` when ``work`` is None)
    in every BLAS and OpenMP library loaded so far (threadpoolctl). Yields the count."""
    count = n_threads() if work is None else threads_for(work)
    with _controller().limit(limits=count):
        yield count


@contextlib.contextmanager
def blas_threads(count: int) -> Iterator[None]:
    """Run the block with ``count`` threads in the BLAS libraries loaded so far (OpenMP
    runtimes left as they are): for loops of many small dense operations, where threads
    only add overhead. Costs microseconds (the controller is cached), not a scan."""
    with _controller().limit(limits=count, user_api="blas"):
        yield


_controller_cache: list = []


def _controller():
    """threadpoolctl's view of the loaded BLAS/OpenMP libraries, built once per set of
    imported modules: building it scans every loaded shared object (~5 ms), which made
    the thread limits of a few hundred small fits cost seconds. A library that brings its
    own BLAS or OpenMP runtime arrives through an import, which changes ``sys.modules``."""
    import sys

    from threadpoolctl import ThreadpoolController

    key = len(sys.modules)
    if not _controller_cache or _controller_cache[0] != key:
        _controller_cache[:] = [key, ThreadpoolController()]
    return _controller_cache[1]
