"""The benchmarks behind docs/results/ still run against today's API.

Every script is imported (an import of a renamed or removed name fails here, not months
later) and has a ``main``; the ones that accept a small size are run at it, in seconds.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.stem for p in (ROOT / "benchmarks").glob("*.py") if not p.stem.startswith("_"))


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_benchmark_imports_and_has_a_main(name, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))  # the scripts run from the repository's root
    module = importlib.import_module(f"benchmarks.{name}")
    assert callable(getattr(module, "main", None)), f"benchmarks/{name}.py has no main()"


SMOKE = {
    "bench_auto_cost": ["--datasets", "iris", "--pairs", "40", "--no-by-hand"],
    "bench_dask": [
        "--rows", "3000", "--dims", "4", "--k", "3", "--files", "2", "--pairs", "40",
        "--methods", "scacs", "--in-core",
    ],
    "bench_io": ["--rows", "2000", "--cols", "5"],
    "bench_sample_size": [
        "--sets", "blobs_overlap", "--n", "1500", "--methods", "ncut,ccskl",
        "--sizes", "300", "--pairs", "40", "--seeds", "1",
    ],
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(SMOKE))
def test_benchmark_runs_at_a_smoke_size(name, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(ROOT))
    module = importlib.import_module(f"benchmarks.{name}")
    monkeypatch.setattr(sys, "argv", [name, *SMOKE[name]])
    module.main()
    out = capsys.readouterr().out
    assert len(out.strip().splitlines()) >= 2, out


RESULT_PAGES = sorted((ROOT / "docs" / "results").rglob("*.md"))
REVISION = re.compile(r"revision[s]?\s*\**`?[0-9a-f]{7,}", re.IGNORECASE)
VERSIONS = re.compile(r"(numpy \d|scikit-learn \d|versions[^.\n]*not recorded)", re.IGNORECASE)


@pytest.mark.parametrize("page", RESULT_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_results_page_names_its_revision_and_versions(page):
    """A figure a maintainer cannot trace to the code and libraries that made it is not
    one they can trust: every page under docs/results/ names a revision and either the
    library versions or that they were not recorded."""
    text = page.read_text(encoding="utf-8")
    assert REVISION.search(text), f"{page.name} names no revision"
    assert VERSIONS.search(text), f"{page.name} names no library versions"
