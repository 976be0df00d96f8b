"""The pages under ``docs/results`` that are generated from the records, rebuilt from them.

A generated page is a function of its tables in ``docs/results/records/`` (``_store.py``):
its script's report mode reads them and writes the page, ending with where its records are
and what made them. ``--check`` rebuilds every generated page in a copy of
``docs/results`` and lists each one that differs from the committed page (CI runs it, so
a page cannot drift from its records); ``--write`` rebuilds them in place, after new
records::

    python -m benchmarks.pages --check
    python -m benchmarks.pages --write

The other pages are written by hand around the figures a benchmark prints; each names the
command and the revision that made them.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchmarks._common import RESULTS, run_module

RESULTS_TOKEN = "{results}"


@dataclass(frozen=True)
class Generator:
    """A report command (``python -m benchmarks.<module> <args>``, ``{results}`` standing
    for the results folder) and the pages it writes, relative to that folder."""

    module: str
    args: tuple[str, ...]
    pages: tuple[str, ...]


FAMILY_PAGES = ("README", "anisotropic", "many", "noise", "overlap", "real", "unequal")


def families(folder: str) -> Generator:
    """The families' pages of ``bench_defaults --families`` run with ``--out <folder>``."""
    return Generator(
        "bench_defaults",
        ("--families", "all", "--report-only", "--out", f"{RESULTS_TOKEN}/{folder}"),
        tuple(f"{folder}/families/{page}.md" for page in FAMILY_PAGES),
    )


GENERATORS = (
    Generator("bench_defaults", ("--report-only",), ("defaults/README.md",)),
    Generator(
        "bench_defaults",
        ("--report-only", "--out", "{results}/defaults/unguarded"),
        ("defaults/unguarded/README.md",),
    ),
    families("defaults"),
    families("guard"),
    Generator("bench_model_selection", ("--report-only",), ("model_selection/results.md",)),
    Generator("bench_peers", ("--report-only",), ("model_selection/peers_measured.md",)),
    Generator("bench_scoring", ("--report-only",), ("model_selection/scoring.md",)),
    Generator("bench_active", ("--report-only",), ("active/README.md",)),
    Generator("bench_cosc_protocol", ("--report-only",), ("cosc/protocol.md",)),
    Generator(
        "bench_cosc_protocol",
        ("--report-only", "--out", "{results}/cosc/per_edge"),
        ("cosc/per_edge/protocol.md",),
    ),
    Generator(
        "bench_scacs_protocol",
        ("--from-csv",),
        tuple(f"scacs/protocol_{p}.md" for p in ("scale", "fcsc", "fcsc-knn")),
    ),
)


def rebuild(results: Path) -> list[str]:
    """Run every generator against the results folder ``results``; the failures."""
    env = {**os.environ, "SPECTRALINK_RESULTS": str(results), "MPLBACKEND": "Agg"}
    failed = []
    for gen in GENERATORS:
        args = [a.replace(RESULTS_TOKEN, str(results)) for a in gen.args]
        proc = run_module(f"benchmarks.{gen.module}", args, env=env)
        print(f"{gen.module} {' '.join(gen.args)}: exit {proc.returncode}", flush=True)
        if proc.returncode != 0:
            failed.append(f"{gen.module} {' '.join(gen.args)}:\n{proc.stderr[-2000:]}")
    return failed


def differences(rebuilt: Path) -> list[str]:
    """The generated pages whose text in ``rebuilt`` differs from the committed one, each
    with the start of its diff."""
    out = []
    for page in (p for gen in GENERATORS for p in gen.pages):
        old = (RESULTS / page).read_text(encoding="utf-8").splitlines()
        new_path = rebuilt / page
        new = new_path.read_text(encoding="utf-8").splitlines() if new_path.exists() else []
        if old != new:
            diff = difflib.unified_diff(old, new, f"committed {page}", f"rebuilt {page}", n=0)
            out.append("\n".join(line[:200] for line in list(diff)[:12]))
    return out


def check() -> bool:
    """Rebuild in a copy; print and return whether any page failed or differs."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "results"
        shutil.copytree(RESULTS, copy)
        failed = rebuild(copy)
        differ = differences(copy)
    n_pages = sum(len(gen.pages) for gen in GENERATORS)
    for text in failed + differ:
        print(text)
    print(f"{n_pages - len(differ)} of {n_pages} generated pages match their records")
    return bool(failed or differ)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--check", action="store_true", help="rebuild in a copy and compare")
    what.add_argument("--write", action="store_true", help="rebuild the pages in place")
    args = p.parse_args(argv)
    if args.write:
        failed = rebuild(RESULTS)
        print("\n".join(failed) or "rebuilt every generated page")
    else:
        failed = check()
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
