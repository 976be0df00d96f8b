"""Fits for the labelling page, away from the threads that answer the page.

A fit holds Python's global interpreter lock for much of its time; in the server's own
process it would slow every click it runs beside. :class:`Fitter` runs fits in a worker
process (the data sent once, when it starts) or, for tests and small data, in a thread.
The result is the same fit: the same code, data and constraints.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
import warnings
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np

from ..constraints import Constraints

_X: np.ndarray | None = None


def _init_worker(X: np.ndarray) -> None:
    global _X
    _X = X
    # Ctrl-C in a terminal reaches the whole process group: the server stops its worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with, args=(os.getppid(),), daemon=True).start()


def _exit_with(parent: int) -> None:
    """End the worker when the server is gone (killed: nothing told the worker)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def _fit(estimator: object, constraints: Constraints, X: np.ndarray | None = None) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the page shows the partition, not the warnings
        estimator.fit(_X if X is None else X, constraints=constraints)
    return estimator


class Fitter:
    """One worker that fits estimators on ``X``, in order of submission.

    Parameters
    ----------
    X : ndarray
    processes : bool, default=True
        A worker process (started on first use, a fresh interpreter: ``spawn``);
        ``False``: a thread of this process.
    """

    def __init__(self, X: np.ndarray, *, processes: bool = True) -> None:
        self.X = X
        self.processes = processes
        self._pool: ProcessPoolExecutor | ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._before: set = set()
        self._workers: set = set()

    def _executor(self):
        if self._pool is None:
            if self.processes:
                # spawn, not fork: the server's threads hold locks a forked child would copy
                ctx = multiprocessing.get_context("spawn")
                self._before = set(multiprocessing.active_children())
                self._pool = ProcessPoolExecutor(
                    1, mp_context=ctx, initializer=_init_worker, initargs=(self.X,)
                )
            else:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="spectralink-fit")
        return self._pool

    def start(self) -> Fitter:
        """Start the worker now and wait until it is ready (at first use it would start
        in the middle of the session, and a Ctrl-C could reach it half-started)."""
        with self._lock:
            future = self._executor().submit(os.getpid)
            if self.processes:
                self._workers |= set(multiprocessing.active_children()) - self._before
        future.result()
        return self

    def submit(self, estimator: object, constraints: Constraints) -> Future:
        """``estimator`` fitted on ``constraints``, as a future of the fitted estimator.

        Raises
        ------
        RuntimeError
            After :meth:`shutdown`.
        """
        args = (estimator, constraints) if self.processes else (estimator, constraints, self.X)
        with self._lock:
            if self._closed:
                raise RuntimeError("the fitter is shut down")
            future = self._executor().submit(_fit, *args)
            if self.processes:
                self._workers |= set(multiprocessing.active_children()) - self._before
        return future

    def shutdown(self) -> None:
        """Stop: queued fits are dropped, and a worker process still fitting is ended
        (a long fit would otherwise hold the command's exit)."""
        with self._lock:
            self._closed = True
            if self._pool is None:
                return
            self._pool.shutdown(wait=False, cancel_futures=True)
            for worker in self._workers:
                worker.terminate()
