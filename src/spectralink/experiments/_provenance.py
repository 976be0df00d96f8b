"""Where a measured figure comes from: the revision, the library versions, the machine and
its load when the record was made. Every record file the protocol writes carries it, and
every page says it in one line (:func:`provenance_line`)."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import os
import platform
import subprocess
from pathlib import Path

__all__ = ["provenance", "provenance_line"]

_LIBRARIES = ("spectralink", "numpy", "scipy", "scikit-learn", "dask", "faiss-cpu")


def _revision() -> str:
    """``git describe`` of the source tree spectralink runs from (``+dirty`` with
    uncommitted changes), else ``"release"`` (an installed wheel knows only its version)."""
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty=+dirty", "--abbrev=10"],
            cwd=here, capture_output=True, text=True, timeout=10, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return "release"
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "release"


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in _LIBRARIES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def _memory_gb() -> float | None:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return None


def provenance() -> dict:
    """``{"revision", "versions", "machine", "load", "utc"}`` now: what a record needs to be
    traced and compared (``load`` is the 1-minute load average, ``None`` where unknown)."""
    try:
        load = round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        load = None
    return {
        "revision": _revision(),
        "versions": _versions(),
        "machine": {
            "system": platform.system(),
            "cpu": platform.machine(),
            "cores": os.cpu_count(),
            "memory_gb": _memory_gb(),
        },
        "load": load,
        "utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def provenance_line(stamp: dict | None = None) -> str:
    """One Markdown line of :func:`provenance` (or of a ``stamp`` it gave earlier)."""
    p = provenance() if stamp is None else stamp
    versions = ", ".join(f"{k} {v}" for k, v in p["versions"].items())
    m = p["machine"]
    memory = f", {m['memory_gb']} GB" if m.get("memory_gb") else ""
    load = f", load {p['load']}" if p.get("load") is not None else ""
    return (
        f"*Made at revision {p['revision']} on {p['utc']}: {versions}; {m['cores']} cores "
        f"({m['system']} {m['cpu']}{memory}){load}.*"
    )
