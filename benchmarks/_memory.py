"""Resident memory of the benchmark process, shared by the scripts that report it."""

from __future__ import annotations

import os
import resource
import sys


def peak_rss_mib() -> float:
    """The process's peak resident set so far, MiB (``ru_maxrss``: KiB on Linux, bytes on macOS)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (2**20 if sys.platform == "darwin" else 2**10)


def rss_mib() -> float:
    """The process's current resident set, MiB (Linux ``/proc``; nan elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return float("nan")
