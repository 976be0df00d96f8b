"""The Dask cluster a command runs on: a scheduler's address, or a local one started here."""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator

from ..exceptions import import_extra

__all__ = ["WorkerMemory", "connect", "parse_address"]

_LOCAL = re.compile(r"^local(?::(\d+))?$")


def parse_address(address: str) -> tuple[str, int | None]:
    """``("local", n_workers)`` for ``local`` or ``local:N`` (``None``: one per core),
    else ``("address", None)`` for a scheduler's address such as ``tcp://host:8786``."""
    match = _LOCAL.match(address.strip())
    if match is None:
        if not address.strip():
            raise ValueError("the Dask address is empty: give local, local:N or host:port.")
        return "address", None
    n = None if match.group(1) is None else int(match.group(1))
    if n is not None and n < 1:
        raise ValueError(f"local:{n}: a local cluster needs at least one worker.")
    return "local", n


def _import_distributed():
    distributed = import_extra("dask.distributed", "dask", "--dask")
    return distributed.Client, distributed.LocalCluster


@contextlib.contextmanager
def connect(address: str, *, memory_limit: str | None = None, timeout: float = 30) -> Iterator:
    """A ``dask.distributed.Client`` for the length of the block.

    ``local`` or ``local:N`` starts a ``LocalCluster`` of N worker processes with one
    thread each (N omitted: one per core), each limited to ``memory_limit`` (such as
    ``"4GB"``; ``None``: the machine's memory shared out), and closes it on exit. Any
    other text is the address of a running scheduler (``tcp://host:8786``), which is left
    running; ``memory_limit`` is then the workers' own setting and an error to give.
    """
    kind, n_workers = parse_address(address)
    Client, LocalCluster = _import_distributed()
    if kind == "address":
        if memory_limit is not None:
            raise ValueError(
                "a worker's memory limit is set where the worker starts; it applies only to "
                "a local cluster (local or local:N)."
            )
        try:
            client = Client(address, timeout=timeout)
        except OSError as exc:
            raise ConnectionError(
                f"no Dask scheduler answered at {address} within {timeout:g} s ({exc})."
            ) from None
        with client:
            yield client
        return
    cluster = LocalCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        processes=True,
        memory_limit=memory_limit if memory_limit is not None else "auto",
        dashboard_address=":0",
        silence_logs=50,
    )
    with cluster, Client(cluster) as client:
        yield client


class WorkerMemory:
    """The largest memory any worker held while the block ran, polled from the
    scheduler's heartbeat figures (``peak`` bytes; 0 when none was read).

    ::

        with WorkerMemory(client) as memory:
            ...
        print(memory.peak)
    """

    def __init__(self, client, interval: float = 0.5):
        self.client = client
        self.interval = interval
        self.peak = 0
        self.limit = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _read(self) -> None:
        with contextlib.suppress(Exception):  # a scheduler gone away ends the readings
            for worker in self.client.scheduler_info()["workers"].values():
                self.peak = max(self.peak, int(worker["metrics"]["memory"]))
                self.limit = max(self.limit, int(worker.get("memory_limit") or 0))

    def _poll(self) -> None:
        while not self._stop.wait(self.interval):
            self._read()

    def __enter__(self) -> WorkerMemory:
        self._read()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._read()
