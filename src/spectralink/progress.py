"""Stage timing and progress bars, reported on the ``spectralink`` logger.

Every shared step of a fit runs inside a :func:`stage` (``neighbours``, ``graph``,
``eigenvectors``, ``assignment``; each estimator's ``fit`` is the ``method`` stage). When
the ``spectralink`` logger is enabled for INFO (``spectralink cluster -v``, or
``logging.basicConfig(level=logging.INFO)`` in a program) a stage logs one line when it
ends: its name, its own wall time (the time of stages nested in it is reported on their
own lines, so the lines add up to the total) and a detail; a stage that lasts longer than
:data:`PROGRESS_DELAY` seconds shows a progress bar (tqdm, on stderr) meanwhile. Otherwise
a stage costs one logger level check.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import sys
import threading
import time
from collections.abc import Iterator

__all__ = ["PROGRESS_DELAY", "Stage", "announce", "current_stage", "logger", "stage"]

logger = logging.getLogger("spectralink")
#: Seconds a stage runs before its progress bar appears.
PROGRESS_DELAY = 2.0


class Stage:
    """A running stage: advance its progress bar with :meth:`update`, add a ``detail``."""

    def __init__(
        self, name: str, total: int | None = None, unit: str = "it", active: bool = True
    ) -> None:
        self.name = name
        self.detail = ""
        self.nested = 0.0  # seconds spent in stages inside this one
        self._bar = None
        self._done = threading.Event()
        if active:
            from tqdm.auto import tqdm

            # disable=None: no bar when stderr is not a terminal (a log file)
            fmt = "{desc}: {elapsed}" if total is None and unit == "it" else None
            self._bar = tqdm(
                total=total,
                desc=name,
                unit=unit,
                delay=PROGRESS_DELAY,
                leave=False,
                dynamic_ncols=True,
                bar_format=fmt,
                disable=None,
            )
            # redraw once a second after the delay, so that the elapsed time moves also
            # for stages that report no progress units
            threading.Thread(target=self._tick, daemon=True).start()

    def _tick(self) -> None:
        if self._bar.disable or self._done.wait(PROGRESS_DELAY):
            return
        while not self._done.wait(1.0):
            self._bar.refresh()

    def update(self, n: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        self._done.set()
        if self._bar is not None:
            self._bar.close()


_INACTIVE = Stage("", active=False)
_current: contextvars.ContextVar[Stage | None] = contextvars.ContextVar(
    "spectralink_stage", default=None
)


def current_stage() -> Stage:
    """The innermost running stage (an inactive one that ignores updates when none runs or
    logging is off), for steps that report progress from inside a decorated function."""
    return _current.get() or _INACTIVE


@contextlib.contextmanager
def stage(name: str, *, total: int | None = None, unit: str = "it") -> Iterator[Stage]:
    """Time the block as stage ``name`` (also usable as a decorator); see the module docstring.

    ``total`` is the number of progress units the block will report with
    :meth:`Stage.update` (``None``: a counter without a total).
    """
    if not logger.isEnabledFor(logging.INFO):
        yield _INACTIVE
        return
    st = Stage(name, total, unit)
    parent = _current.get()
    token = _current.set(st)
    t0 = time.perf_counter()
    try:
        yield st
    finally:
        elapsed = time.perf_counter() - t0
        _current.reset(token)
        st.close()
        if parent is not None:
            parent.nested += elapsed
        own = elapsed - st.nested
        logger.info("%-12s %8.2f s%s", name, own, f"  {st.detail}" if st.detail else "")


def announce(text: str, verbose: int) -> None:
    """One line on stderr for a stage of a long fit (``Auto``'s k scan, search, refit) when
    ``verbose`` and stderr is not a terminal (a pipe, a log file), where no progress bar
    shows; on a terminal the bar says it."""
    if verbose and not sys.stderr.isatty():
        print(f"spectralink: {text}", file=sys.stderr, flush=True)
