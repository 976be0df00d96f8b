"""The benchmarks behind docs/results/ still run against today's API.

Every script is imported (an import of a renamed or removed name fails here, not months
later) and has a ``main``; every one in ``SMOKE`` is run at a small size, in seconds, with its
files written to a temporary folder (``docs/results`` is checked unchanged).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import shutil
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


#: in an argument, the test's temporary folder: a smoke run writes nothing into the repository
TMP = "{tmp}"

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
    "bench_active": [
        "--datasets", "digits", "--methods", "ccsr", "--strategies", "random,spectral",
        "--seeds", "0",
    ],
    "bench_auto_families": [TMP],
    "bench_auto_gain": [TMP, "--write", f"{TMP}/gain.md", "--before", TMP],
    "bench_auto_rules": [
        "--datasets", "iris", "--counts", "50", "--trials", "1", "--pairs-only",
        "--out", f"{TMP}/rules", "--named", f"{TMP}/records",
    ],
    "bench_auto_loop": ["--dataset", "iris", "--queries", "20", "--pairs", "40"],
    "bench_ccsr_ccskl_protocol": [
        "--datasets", "iris", "--draws", "1", "--n-init", "1", "--n-counts", "2",
        "--default-sigma-only", "--out", TMP,
    ],
    "bench_choose_k": ["--sets", "iris", "--pairs", "0,40", "--draws", "1", "--auto-pairs", "40"],
    "bench_cosc_protocol": [
        "--datasets", "sonar", "--trials", "1", "--counts", "20", "--n-starts", "1",
        "--n-recursions", "1", "--out", TMP,
    ],
    "bench_cosc_search": [
        "--datasets", "sonar", "--seeds", "1", "--counts", "20",
        "--standard", '{"n_starts": 2}', "--thorough", '{"n_starts": 2}', "--out", f"{TMP}/search",
    ],
    "bench_defaults": [
        "--datasets", "iris", "--methods", "ncut,ccsr,scacs", "--counts", "0,50",
        "--per-class", "5", "--trials", "1", "--no-progress", "--out", TMP,
    ],
    "bench_graph_spectral": ["--data", "3000", "--impls", "faiss,sklearn"],
    "bench_guard": [
        "--datasets", "iris", "--methods", "ccsr,cosc,scacs", "--counts", "50", "--draws", "1",
    ],
    "bench_label": ["--clicks", "2", "--settings", "default"],
    "bench_lscp_protocol": [
        "--quick", "--datasets", "wine", "--trials", "1", "--k-dataset", "wine",
        "--k-count", "50", "--masked-dataset", "wine", "--masked-counts", "50",
    ],
    "bench_lscp_scale": ["--n-samples", "2000", "--n-constraints", "200", "--repeats", "1"],
    "bench_model_selection": [
        "--part", "select", "--datasets", "iris", "--counts", "50", "--draws", "1",
        "--no-progress", "--out", TMP,
    ],
    "bench_paper_defaults": ["--cases", "propagation,segmentation,sonar,usps", "--draws", "1"],
    "bench_peers": [
        "--datasets", "iris", "--methods", "gmm", "--counts", "50", "--draws", "1", "--out", TMP,
    ],
    "bench_scacs_protocol": [
        "--datasets", "segmentation,ImageSeg", "--draws", "1", "--counts", "100", "--n-init", "1",
    ],
    "bench_scacs_scale": [
        "--datasets", "synthetic", "--n-syn", "10000", "--backends", "numpy", "--n-init", "1",
        "--threads", "1",
    ],
    # every generated page rebuilt from the records in a copy of docs/results, compared
    "pages": ["--check"],
    "record_labels": ["--methods", "ncut,ccsr,scacs", "--out", f"{TMP}/labels.jsonl.gz"],
    "bench_auto_race": ["--datasets", "iris", "--pairs", "40", "--draws", "1"],
    "bench_auto_subsample": ["--datasets", "iris", "--pairs", "40", "--sizes", "60,all"],
    "bench_eigensolver": ["--part", "sklearn", "--data", "blobs500", "--repeats", "1"],
    "bench_scale_default": ["--datasets", "iris,wine"],
    "bench_scoring": [
        "--datasets", "iris", "--kinds", "peers", "--peer-counts", "50", "--peer-draws", "1",
        "--out", TMP,
    ],
}  # fmt: skip

#: scripts that read what another one wrote: that one runs first, into the same folder
#: (bench_auto_families also reads the guard's records under docs/results/records/guard/families)
BEFORE = {
    "bench_auto_families": [
        "bench_defaults", "--families", "overlap", "--instances", "overlap-std1-n500-s2",
        "--methods", "ncut,auto", "--counts", "50,200", "--draws", "1", "--no-progress",
        "--out", TMP,
    ],
    "bench_auto_gain": [
        "bench_defaults", "--datasets", "iris", "--methods", "ncut,ccsr,auto", "--counts", "50",
        "--trials", "1", "--pairs-only", "--no-progress", "--out", TMP,
    ],
    "bench_auto_rules": [
        "bench_defaults", "--datasets", "iris", "--methods", "ncut,ccsr", "--counts", "50",
        "--trials", "1", "--pairs-only", "--no-progress", "--out", TMP,
    ],
}  # fmt: skip

#: the module constant naming the folder a script writes into, where no option names it
OUTPUT = {
    "bench_active": "OUT",
    "bench_lscp_protocol": "OUT",
    "bench_lscp_scale": "OUT",
    "bench_scacs_protocol": "OUT",
    "bench_scacs_scale": "OUT",
}

#: the files a smoke run reads from the data directory (SPECTRALINK_DATA); skipped without them
DATA = {
    "bench_cosc_protocol": ("sonar",),
    "bench_cosc_search": ("sonar",),
    "bench_label": ("usps",),
    "bench_lscp_scale": ("usps", "mnist"),
    "bench_paper_defaults": ("ionosphere", "segmentation", "sonar", "usps"),
    "bench_scacs_protocol": ("segmentation",),
}

#: what a script prints when a run in a child process failed (it reports it and goes on)
CHILD_FAILED = {"bench_graph_spectral": "skipped: failed", "bench_scacs_scale": " FAILED"}

#: run by a plain ``pytest`` too; the others are marked slow (``pytest -m ""`` runs them)
QUICK = ("bench_auto_cost", "bench_dask", "bench_io", "bench_sample_size")


def _need_browser() -> None:
    """bench_label drives the system's Chromium with Playwright, as the browser tests do
    (tests/test_label_browser.py): it goes with them to continuous integration's other core,
    and skips when either is missing (fails under SPECTRALINK_REQUIRE_BROWSER)."""
    if os.environ.get("SPECTRALINK_BROWSER_TESTS") == "elsewhere":
        pytest.skip("the browser runs on the other core (SPECTRALINK_BROWSER_TESTS=elsewhere)")
    missing = []
    if importlib.util.find_spec("playwright") is None:
        missing.append("Playwright (pip install playwright)")
    if not (os.environ.get("SPECTRALINK_CHROMIUM") or shutil.which("chromium")):
        missing.append("Chromium (Debian: apt-get install chromium)")
    if missing:
        what = " and ".join(missing) + " missing"
        if os.environ.get("SPECTRALINK_REQUIRE_BROWSER"):
            pytest.fail(f"{what}, and SPECTRALINK_REQUIRE_BROWSER is set")
        pytest.skip(what)


def _need_data(name: str) -> None:
    from spectralink.datasets import list_datasets

    found = list_datasets()
    for data in DATA.get(name, ()):
        if not found.get(data):
            pytest.skip(f"{data}.npz not in the data directory (set SPECTRALINK_DATA)")


def _results_state() -> dict:
    results = ROOT / "docs" / "results"
    return {
        str(p.relative_to(results)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in results.rglob("*")
        if p.is_file()
    }


def _run(name: str, argv: list[str], tmp_path: Path, monkeypatch) -> None:
    module = importlib.import_module(f"benchmarks.{name}")
    if name in OUTPUT:
        monkeypatch.setattr(module, OUTPUT[name], tmp_path)
    monkeypatch.setattr(sys, "argv", [name, *(a.replace(TMP, str(tmp_path)) for a in argv)])
    module.main()


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=() if n in QUICK else pytest.mark.slow) for n in sorted(SMOKE)]
)
def test_benchmark_runs_at_a_smoke_size(name, tmp_path, monkeypatch, capsys):
    if name == "bench_label":
        _need_browser()
    _need_data(name)
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.chdir(tmp_path)  # a file written to a relative path lands there
    before = _results_state()
    if name in BEFORE:
        _run(BEFORE[name][0], BEFORE[name][1:], tmp_path, monkeypatch)
        capsys.readouterr()
    _run(name, SMOKE[name], tmp_path, monkeypatch)
    out = capsys.readouterr().out
    assert len(out.strip().splitlines()) >= 2, out
    if name in CHILD_FAILED:
        assert CHILD_FAILED[name] not in out, out
    assert _results_state() == before, f"benchmarks/{name}.py wrote into docs/results"


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


def test_every_kept_benchmark_has_a_smoke_run():
    """A benchmark that backs a page is run at a smoke size (``SMOKE``); a finished
    investigation is removed from the tree, its page naming the revision that holds it."""
    assert sorted(set(SCRIPTS) - set(SMOKE)) == []
