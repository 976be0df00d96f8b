"""What several benchmarks share: process memory, seeds, record files, the papers' pair generator.

Run a benchmark from the repository root as ``python -m benchmarks.<name>``; this module is
not a script.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from spectralink import Constraints

#: the repository root, from which ``python -m benchmarks.<name>`` runs
ROOT = Path(__file__).resolve().parents[1]
#: where every benchmark writes its pages and records; ``SPECTRALINK_RESULTS`` points a run
#: at a copy (``benchmarks.pages`` regenerates the pages there to compare them)
RESULTS = Path(os.environ.get("SPECTRALINK_RESULTS") or ROOT / "docs" / "results")


def run_module(module: str, args: Sequence[str], **kwargs: object) -> subprocess.CompletedProcess:
    """``python -m <module> <args>`` in a fresh interpreter from the repository root, so that
    the child's ``ru_maxrss`` is its own peak; output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
        check=False, **kwargs,
    )  # fmt: skip


# --------------------------------------------------------------------------- memory
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


# --------------------------------------------------------------------------- estimators
def without_guard(est):
    """``est`` with ``guard=None`` when it has the parameter (the constrained methods; not
    NCut, LSC-R or Auto): the papers' behaviour, which the recorded figures reproduce.
    Returns ``est``."""
    if "guard" in est.get_params(deep=False):
        est.set_params(guard=None)
    return est


# --------------------------------------------------------------------------- constraints
def genpwc(y: np.ndarray, s: int, rng: np.random.RandomState) -> Constraints:
    """The CCSR / CCSKL authors' generator: ``s`` must-links per class and ``s`` cannot-links
    per pair of classes, drawn with replacement."""
    classes = np.unique(y)
    members = [np.flatnonzero(y == c) for c in classes]
    ml, cl = [], []
    for a, ma in enumerate(members):
        ml.append(np.column_stack([rng.choice(ma, s), rng.choice(ma, s)]))
        for mb in members[a + 1 :]:
            cl.append(np.column_stack([rng.choice(ma, s), rng.choice(mb, s)]))
    ml = np.concatenate(ml)
    ml = ml[ml[:, 0] != ml[:, 1]]  # a self must-link carries no information
    return Constraints(ml, np.concatenate(cl), n_samples=len(y))
