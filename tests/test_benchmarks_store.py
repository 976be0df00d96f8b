"""The records store behind docs/results/ (benchmarks/_store.py): one format, in one place."""

from __future__ import annotations

import gzip
import json
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import _store as store  # noqa: E402


def test_a_table_round_trips_with_nan_as_null(tmp_path):
    path = tmp_path / "t.jsonl.gz"
    records = [{"method": "a", "error": math.nan, "n": 3}, {"method": "b", "error": 0.25}]
    store.write_table(records, path, config={"dataset": "d"})
    with gzip.open(path, "rt") as fh:
        lines = [json.loads(line) for line in fh]
    assert lines[0]["config"] == {"dataset": "d"} and "revision" in lines[0]["provenance"]
    assert lines[1]["error"] is None  # JSON has no NaN
    config, back = store.read_table(path)
    assert config == {"dataset": "d"} and math.isnan(back[0]["error"]) and back[1] == records[1]
    assert store.load_doc(path)["records"][0]["error"] is None  # as stored


def test_the_same_records_give_the_same_bytes(tmp_path):
    head = {"config": {}, "provenance": {"revision": "abc1234"}}
    a, b = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    store.write_lines(a, head, [{"x": 1}])
    store.write_lines(b, head, [{"x": 1}])
    assert a.read_bytes() == b.read_bytes()  # no time stamp in the gzip header


def test_a_rewritten_table_keeps_the_stamps_of_its_earlier_records(tmp_path):
    path = tmp_path / "t.jsonl.gz"
    old = {"revision": "0123456789", "versions": {"numpy": "1.0"}, "machine": {"cores": 8}}
    store.write_lines(path, {"config": {}, "provenance": old}, [{"x": 1}])
    doc = store.load_doc(path)  # the records kept carry their table's stamp
    doc["records"].append({"x": 2})
    store.save_doc(path, doc)
    stamp = store.read_header(path)["provenance"]
    assert stamp["earlier"] == [old] and stamp["revision"] != old["revision"]
    note = store.records_note([path])
    assert "`0123456`" in note and "numpy 1.0" in note


def test_new_records_written_over_a_table_carry_only_todays_stamp(tmp_path):
    path = tmp_path / "t.jsonl.gz"
    store.write_lines(path, {"config": {}, "provenance": {"revision": "0123456789"}}, [{"x": 1}])
    store.write_table([{"x": 2}], path)
    assert "earlier" not in store.read_header(path)["provenance"]


def test_a_table_log_resumes_after_an_interruption_and_seals(tmp_path):
    path = store.table_path(tmp_path, "runs")
    assert path == tmp_path / "records" / "runs.jsonl.gz"  # outside docs/results
    with pytest.raises(RuntimeError), store.TableLog(path, {"n": 1}) as log:
        log.append({"method": "a", "error": 0.5})
        raise RuntimeError("interrupted")
    assert not path.exists() and store.log_path(path).exists()
    config, done = store.read_progress(path)
    assert config == {"n": 1} and done[0]["method"] == "a"
    with store.TableLog(path, config, keep=done) as log:
        log.append({"method": "b"})
    assert not store.log_path(path).exists()
    rows = store.load_doc(path)["records"]
    assert rows == [{"method": "a", "error": 0.5}, {"method": "b"}]  # as written, no fields added


def test_records_of_a_results_folder_live_in_the_store():
    page_folder = store.RESULTS / "defaults" / "families"
    assert store.records_dir(page_folder) == store.STORE / "defaults" / "families"


def test_every_raw_record_is_in_the_store():
    """One place, one format: no record file left beside the pages."""
    loose = [
        p.relative_to(store.RESULTS).as_posix()
        for p in store.RESULTS.rglob("*")
        if p.suffix in {".csv", ".json", ".jsonl"} and store.STORE not in p.parents
    ]
    assert loose == []
    assert all(p.name.endswith(store.SUFFIX) for p in store.STORE.rglob("*") if p.is_file())
