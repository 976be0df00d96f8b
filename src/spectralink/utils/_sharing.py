"""Results that depend on the data alone, shared by the many fits of a model search.

A search fits every candidate on every fold of the pairs; a graph's eigenvectors or the
neighbours of the rows do not depend on the pairs, so inside :func:`sharing` the library's
expensive pure steps keep their results in a :class:`BoundedCache` keyed by the content of
their input (:func:`content_hash`, equal in every process) and later fits take copies.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = [
    "SHARED_MAX_BYTES",
    "BoundedCache",
    "content_hash",
    "register_cache",
    "shared_scope",
    "sharing",
]

#: default memory bound of each cache inside a :func:`sharing` block
SHARED_MAX_BYTES = 256 * 2**20

#: ``(seed, max_bytes)`` of the innermost :func:`sharing` block (None: no sharing)
_SCOPE: ContextVar[tuple[int, int] | None] = ContextVar("spectralink_sharing", default=None)


def content_hash(a: Any) -> bytes:
    """Hash of a sparse or dense array's shape, dtype and values: equal arrays hash equal
    in any process."""
    h = hashlib.blake2b(digest_size=16)
    if sp.issparse(a):
        a = sp.csr_matrix(a)
        h.update(repr((a.shape, a.dtype.str, a.has_sorted_indices)).encode())
        for part in (a.indptr, a.indices, a.data):
            h.update(np.ascontiguousarray(part).tobytes())
    else:
        a = np.ascontiguousarray(a)
        h.update(repr((a.shape, a.dtype.str)).encode())
        h.update(a.tobytes())
    return h.digest()


class BoundedCache:
    """A least-recently-used cache of tuples of arrays, bounded in bytes, thread-safe.

    Stored arrays are read-only; :meth:`get_or_compute` hands out copies.
    """

    def __init__(self) -> None:
        self._items: OrderedDict[tuple, tuple] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_compute(
        self, key: tuple, compute: Callable[[], tuple], max_bytes: int
    ) -> tuple[tuple, bool]:
        """``(copies of the value, whether it was cached)``; ``compute()`` on a miss."""
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
        found = hit is not None
        if not found:
            hit = compute()
            for arr in hit:
                if isinstance(arr, np.ndarray):
                    arr.setflags(write=False)
            self._put(key, hit, max_bytes)
        return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in hit), found

    def _put(self, key: tuple, value: tuple, limit: int) -> None:
        size = _nbytes(value)
        with self._lock:
            if size > limit:
                return
            self._items[key] = value
            used = sum(_nbytes(v) for v in self._items.values())
            while used > limit:
                _, old = self._items.popitem(last=False)
                used -= _nbytes(old)

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def _nbytes(value: tuple) -> int:
    return sum(a.nbytes for a in value if isinstance(a, np.ndarray))


#: every cache that a :func:`sharing` block empties when it ends
_CACHES: list[BoundedCache] = []


def register_cache() -> BoundedCache:
    """A new :class:`BoundedCache`, emptied with the others when a sharing block ends."""
    cache = BoundedCache()
    _CACHES.append(cache)
    return cache


def shared_scope() -> tuple[int, int] | None:
    """``(seed, max_bytes)`` inside a :func:`sharing` block, else None."""
    return _SCOPE.get()


@contextlib.contextmanager
def sharing(
    seed: int = 0, *, clear: bool = True, max_bytes: int = SHARED_MAX_BYTES
) -> Iterator[None]:
    """Share the results that depend on the data alone inside the ``with`` block.

    ``seed`` replaces the callers' random state in the shared computations (a result must
    not depend on which fit computed it first); ``clear`` empties the caches when the block
    ends (worker processes pass False so that their later tasks reuse them, bounded by
    ``max_bytes`` per cache, least recently used first).
    """
    token = _SCOPE.set((int(seed), int(max_bytes)))
    try:
        yield
    finally:
        _SCOPE.reset(token)
        if clear:
            for cache in _CACHES:
                cache.clear()
