"""Fits for the labelling page, away from the threads that answer the page.

A fit holds Python's global interpreter lock for much of its time; in the server's own
process it would slow every click it runs beside. :class:`Fitter` runs fits in a worker
process (the data sent once, when it starts) or, for tests and small data, in a thread.
The result is the same fit: the same code, data and constraints.

The worker is a plain process fed through a pipe by one daemon thread, not a
``ProcessPoolExecutor``: ending that pool's worker while it sends a result leaves the
pool's manager thread waiting for the rest of the message, and the interpreter joins that
thread at exit, so the command would not end after Ctrl-C. Here nothing waits on the pipe
at exit: the thread that reads it is a daemon, and the worker is ended with the session.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import threading
import time
import warnings
from concurrent.futures import Future

import numpy as np

from ..constraints import Constraints

#: What the worker sends first, once it ignores Ctrl-C and is ready to fit.
_READY = "ready"


def _exit_with(parent: int) -> None:
    """End the worker when the server is gone (killed: nothing told the worker)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def _fit(estimator: object, constraints: Constraints, X: np.ndarray) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the page shows the partition, not the warnings
        estimator.fit(X, constraints=constraints)
    return estimator


def _serve(conn, X: np.ndarray) -> None:
    """The worker process: fit each ``(estimator, constraints)`` that comes through
    ``conn`` and send back ``(True, fitted)`` or ``(False, exception)``."""
    # Ctrl-C in a terminal reaches the whole process group: the server stops its worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with, args=(os.getppid(),), daemon=True).start()
    conn.send(_READY)
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        try:
            reply = (True, _fit(*job, X))
        except Exception as exc:
            reply = (False, exc)
        try:
            conn.send(reply)
        except Exception as exc:  # a result that does not pickle
            conn.send((False, RuntimeError(f"{type(exc).__name__}: {exc}")))


class Fitter:
    """One worker that fits estimators on ``X``, in order of submission.

    Parameters
    ----------
    X : ndarray
    processes : bool, default=True
        A worker process (a fresh interpreter: ``spawn``; started by :meth:`start` or at
        first use); ``False``: a thread of this process.
    """

    def __init__(self, X: np.ndarray, *, processes: bool = True) -> None:
        self.X = X
        self.processes = processes
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._closed = False
        self._ended: str | None = None  # why the worker is gone, when it is
        self._thread: threading.Thread | None = None
        self._proc = None
        self._conn = None

    def _launch(self) -> None:
        """Start the worker and its thread (under the lock), once."""
        if self._thread is not None:
            return
        if self.processes:
            # spawn, not fork: the server's threads hold locks a forked child would copy
            ctx = multiprocessing.get_context("spawn")
            self._conn, child = ctx.Pipe()
            # a daemon: ended by multiprocessing at exit if the session was not closed
            self._proc = ctx.Process(
                target=_serve, args=(child, self.X), name="spectralink-fitter", daemon=True
            )
            self._proc.start()
            child.close()  # the worker's end: its exit then reads as the pipe's end here
        self._thread = threading.Thread(
            target=self._dispatch, name="spectralink-fitter", daemon=True
        )
        self._thread.start()

    def start(self) -> Fitter:
        """Start the worker now and wait until it is ready (at first use it would start
        in the middle of the session, and a Ctrl-C could reach it half-started).

        Raises
        ------
        RuntimeError
            When the worker ended before it was ready.
        """
        with self._lock:
            if self._closed:
                raise RuntimeError("the fitter is shut down")
            self._launch()
        self._ready.wait()
        if self._ended is not None:
            raise RuntimeError(self._ended)
        return self

    def submit(self, estimator: object, constraints: Constraints) -> Future:
        """``estimator`` fitted on ``constraints``, as a future of the fitted estimator.
        A future cancelled before its fit starts is skipped.

        Raises
        ------
        RuntimeError
            After :meth:`shutdown`, or when the worker has ended.
        """
        future: Future = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the fitter is shut down")
            if self._ended is not None:
                raise RuntimeError(self._ended)
            self._launch()
            self._jobs.put((future, estimator, constraints))
        return future

    def _dispatch(self) -> None:
        """The thread that hands jobs to the worker in order and resolves their futures."""
        if self._conn is not None:
            try:
                if self._conn.recv() != _READY:
                    raise EOFError
            except (EOFError, OSError):
                self._end("the fitting worker ended before it was ready")
                return
        self._ready.set()
        while True:
            item = self._jobs.get()
            if item is None:
                return
            future, estimator, constraints = item
            if not future.set_running_or_notify_cancel():
                continue
            if self._conn is None:
                try:
                    future.set_result(_fit(estimator, constraints, self.X))
                except BaseException as exc:
                    future.set_exception(exc)
                continue
            try:
                self._conn.send((estimator, constraints))
                ok, result = self._conn.recv()
            except (EOFError, OSError):
                self._end("the fitting worker ended", future)
                return
            except Exception as exc:  # a job or a reply that does not (un)pickle
                future.set_exception(exc)
                continue
            if ok:
                future.set_result(result)
            else:
                future.set_exception(result)

    def _end(self, why: str, running: Future | None = None) -> None:
        """The worker is gone: the running fit and every queued one fail."""
        with self._lock:
            self._ended = why
        self._ready.set()
        if running is not None:
            running.set_exception(RuntimeError(why))
        self._cancel_queued()

    def _cancel_queued(self) -> None:
        while True:
            try:
                item = self._jobs.get_nowait()
            except queue.Empty:
                return
            if item is not None and item[0].cancel():
                item[0].set_running_or_notify_cancel()  # what wakes ``wait()`` on it

    def shutdown(self) -> None:
        """Stop: queued fits are dropped, and a worker process still fitting is ended
        (a long fit would otherwise hold the command's exit)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._cancel_queued()
        self._jobs.put(None)
        if self._proc is not None:
            self._proc.terminate()
            self._proc.join(5)
