"""Tests of the evaluation protocol (``spectralink.experiments``) and the curves (plots.py)."""

from __future__ import annotations

import csv
import math
import os

import numpy as np
import pytest
import scipy.sparse as sp

from spectralink.datasets import load
from spectralink.experiments import (
    RECORD_FIELDS,
    _protocol,
    data_fingerprint,
    draw_constraints,
    format_table,
    read_records_json,
    run_protocol,
    summarize,
    write_records_csv,
    write_records_json,
)
from spectralink.methods import ConstrainedClusteringMixin
from spectralink.plots import plot_metric_curves
from spectralink.registry import get_method


@pytest.fixture(scope="module")
def iris():
    return load("iris")


class _Spy(ConstrainedClusteringMixin):
    """A trivial method that records what it was given (features or a graph)."""

    seen: list = []

    def __init__(
        self,
        n_clusters=2,
        *,
        affinity="knn",
        n_neighbors=20,
        sigma=None,
        fail_with_constraints=False,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.fail_with_constraints = fail_with_constraints
        self.random_state = random_state

    def _fit(self, X, constraints):
        type(self).seen.append((sp.issparse(X), X.shape, self.random_state))
        if self.fail_with_constraints and not constraints.is_empty:
            raise ValueError("no feasible assignment for point 3")
        self.labels_ = np.arange(X.shape[0]) % self.n_clusters


class _FeatureSpy(_Spy):
    _supports_precomputed = False
    seen: list = []


@pytest.fixture
def fake_registry(monkeypatch):
    fakes = {"spy": _Spy, "featurespy": _FeatureSpy}
    _Spy.seen, _FeatureSpy.seen = [], []

    def fake_get_method(name):
        return fakes[name] if name in fakes else get_method(name)

    monkeypatch.setattr(_protocol, "get_method", fake_get_method)
    return fakes


def test_records_cover_every_cell(iris):
    X, y = iris
    recs = run_protocol(X, y, ["ncut"], [0, 30], n_trials=2, progress=False, dataset="iris")
    assert len(recs) == 4
    assert [(r["n_constraints"], r["trial"]) for r in recs] == [(0, 0), (0, 1), (30, 0), (30, 1)]
    for r in recs:
        assert tuple(r) == RECORD_FIELDS
        assert r["status"] == "ok" and r["message"] == ""
        assert r["dataset"] == "iris" and r["method"] == "ncut"
        assert 0 <= r["error"] <= 1 and r["majority_error"] <= r["error"] + 1e-12
        assert -1 <= r["ari"] <= 1 and 0 <= r["nmi"] <= 1
        assert 0 <= r["violated"] <= 1 and np.isfinite(r["ncut"]) and r["time_s"] >= 0
        assert r["n_must_link"] + r["n_cannot_link"] == r["n_constraints"]
    # NCut ignores the constraints: its error is the unconstrained one
    assert recs[0]["error"] < 0.2


def test_deterministic_and_independent_of_other_counts(iris):
    X, y = iris
    a = run_protocol(X, y, ["ncut"], [0, 40], n_trials=2, random_state=3, progress=False)
    b = run_protocol(X, y, ["ncut"], [0, 40], n_trials=2, random_state=3, progress=False)
    c = run_protocol(X, y, ["ncut"], [40], n_trials=2, random_state=3, progress=False)
    d = run_protocol(X, y, ["ncut"], [40], n_trials=2, random_state=4, progress=False)

    def key(rs):
        return [(r["seed"], r["n_must_link"], r["error"], r["ncut"]) for r in rs]

    assert key(a) == key(b)
    assert key(a)[2:] == key(c)  # a cell's draw does not depend on the other counts
    assert [r["seed"] for r in c] != [r["seed"] for r in d]
    assert a[2]["seed"] != a[3]["seed"]  # trials draw different sets


def test_same_draw_for_every_method_and_failures_recorded(iris, fake_registry):
    X, y = iris
    methods = {"ncut": {}, "spy": {"fail_with_constraints": True}}
    recs = run_protocol(X, y, methods, [0, 25], n_trials=2, progress=False)
    assert len(recs) == 8
    for i in range(0, 8, 2):
        a, b = recs[i], recs[i + 1]
        assert (a["seed"], a["n_must_link"], a["n_cannot_link"]) == (
            b["seed"],
            b["n_must_link"],
            b["n_cannot_link"],
        )
    spy = [r for r in recs if r["method"] == "spy"]
    assert [r["status"] for r in spy] == ["ok", "ok", "failed", "failed"]
    assert "no feasible assignment" in spy[2]["message"]
    assert all(math.isnan(r["error"]) for r in spy[2:])
    # the trial seed is handed to the method
    assert [s[2] for s in _Spy.seen] == [r["seed"] for r in spy]


def test_errors_raise_mode(iris, fake_registry):
    X, y = iris
    with pytest.raises(ValueError, match="no feasible"):
        run_protocol(
            X,
            y,
            {"spy": {"fail_with_constraints": True}},
            [10],
            n_trials=1,
            errors="raise",
            progress=False,
        )


def test_graph_built_once_and_shared(iris, fake_registry, monkeypatch):
    X, y = iris
    built = []
    real = _protocol._build_graph

    def counting(X_, key, rs):
        built.append(key)
        return real(X_, key, rs)

    monkeypatch.setattr(_protocol, "_build_graph", counting)
    methods = {
        "ncut": {},
        "spy": {},
        "spy10": {"method": "spy", "n_neighbors": 10},
        "featurespy": {},
    }
    recs = run_protocol(X, y, methods, [0, 20], n_trials=2, progress=False)
    assert sorted(built, key=str) == sorted([(20, None), (10, None)], key=str)
    n = X.shape[0]
    assert all(s[0] and s[1] == (n, n) for s in _Spy.seen)  # precomputed graph
    assert all(not s[0] and s[1] == X.shape for s in _FeatureSpy.seen)  # features
    assert {r["method"] for r in recs} == set(methods)
    # same graph -> same NCut labels whether shared or not
    shared = [r["error"] for r in recs if r["method"] == "ncut"]
    own = run_protocol(X, y, ["ncut"], [0, 20], n_trials=2, share_graph=False, progress=False)
    assert shared == [r["error"] for r in own]


def test_labeled_protocol(iris):
    X, y = iris
    recs = run_protocol(X, y, ["ncut"], [10], n_trials=2, protocol="labeled", progress=False)
    for r in recs:
        assert r["n_must_link"] + r["n_cannot_link"] == 10 * 9 // 2
    c = draw_constraints(y, 10, "labeled", random_state=0)
    assert len(c.labeled_indices) == 10


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"methods": ["nope"]}, "unknown method"),
        ({"methods": []}, "no methods"),
        ({"methods": {"ncut": {"bogus": 1}}}, "invalid parameters"),
        ({"n_constraints": [-1]}, "non-negative"),
        ({"n_constraints": []}, "no constraint counts"),
        ({"n_trials": 0}, "n_trials"),
        ({"protocol": "triplets"}, "protocol"),
        ({"errors": "ignore"}, "errors"),
        ({"random_state": None}, "random_state"),
        ({"n_constraints": [10**6]}, "exceeds"),
    ],
)
def test_invalid_arguments(iris, kwargs, match):
    X, y = iris
    args = {"methods": ["ncut"], "n_constraints": [0], "n_trials": 1, "progress": False}
    args.update(kwargs)
    methods, counts = args.pop("methods"), args.pop("n_constraints")
    with pytest.raises(ValueError, match=match):
        run_protocol(X, y, methods, counts, **args)


def test_mismatched_y(iris):
    X, y = iris
    with pytest.raises(ValueError, match="one label per row"):
        run_protocol(X, y[:-1], ["ncut"], [0], n_trials=1, progress=False)


def _fake_records():
    recs = []
    vals = {("a", 0): [0.1, 0.3], ("a", 5): [0.2, 0.2, 0.5], ("b", 0): [0.4]}
    for (m, c), vs in vals.items():
        for t, v in enumerate(vs):
            recs.append(
                {
                    "dataset": "toy",
                    "method": m,
                    "n_constraints": c,
                    "trial": t,
                    "error": v,
                    "status": "ok",
                }
            )
    recs.append(
        {
            "dataset": "toy",
            "method": "b",
            "n_constraints": 5,
            "trial": 0,
            "error": math.nan,
            "status": "failed",
        }
    )
    return recs, vals


def test_summarize_mean_std_and_failures():
    recs, vals = _fake_records()
    rows = summarize(recs, "error")
    assert [(r["method"], r["n_constraints"]) for r in rows] == [
        ("a", 0),
        ("a", 5),
        ("b", 0),
        ("b", 5),
    ]
    for r in rows[:3]:
        v = np.array(vals[(r["method"], r["n_constraints"])])
        assert r["mean"] == pytest.approx(v.mean())
        assert r["std"] == pytest.approx(v.std(ddof=1) if len(v) > 1 else 0.0)
        assert (r["n_ok"], r["n_failed"]) == (len(v), 0)
    assert rows[3]["n_ok"] == 0 and rows[3]["n_failed"] == 1 and math.isnan(rows[3]["mean"])
    with pytest.raises(ValueError, match="metric"):
        summarize(recs, "accuracy")


def test_format_table():
    recs, _ = _fake_records()
    md = format_table(summarize(recs))
    lines = md.splitlines()
    assert lines[0] == "| constraints | a | b |"
    assert len(lines) == 4 and "0.200 ± 0.141" in lines[2] and "failed (1/1)" in lines[3]
    plain = format_table(summarize(recs), markdown=False)
    assert "|" not in plain and len(plain.splitlines()) == 3


def test_csv_and_json_roundtrip(tmp_path, iris):
    X, y = iris
    recs = run_protocol(X, y, ["ncut"], [0, 10], n_trials=1, compute_ncut=False, progress=False)
    assert all(math.isnan(r["ncut"]) for r in recs)
    write_records_csv(recs, tmp_path / "runs.csv")
    write_records_json(recs, tmp_path / "runs.json", config={"seed": 0, "x": math.nan})
    with open(tmp_path / "runs.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 and tuple(rows[0]) == RECORD_FIELDS
    assert float(rows[1]["error"]) == pytest.approx(recs[1]["error"])
    back = read_records_json(tmp_path / "runs.json")
    assert [r["error"] for r in back] == [r["error"] for r in recs]
    assert all(math.isnan(r["ncut"]) for r in back)
    assert sorted(os.listdir(tmp_path)) == ["runs.csv", "runs.json"]


def test_plot_writes_png(tmp_path):
    recs, _ = _fake_records()
    path = tmp_path / "curve.png"
    fig = plot_metric_curves(recs, path, metric="error")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ax = fig.axes[0]
    # "b" has one failed run out of two
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "a",
        "b (1/2 runs failed)",
        "±1 std over draws",
    ]
    assert os.listdir(tmp_path) == ["curve.png"]
    with pytest.raises(ValueError):
        plot_metric_curves([], tmp_path / "empty.png")


# --------------------------------------------------------------------------- fingerprint
def test_data_fingerprint_ignores_last_bit_differences_and_sees_changed_data():
    # float64 data computed with another BLAS or LAPACK differs in its last bits; casting
    # to float32 is exact IEEE rounding, so the outcome here is the same on every machine
    rng = np.random.RandomState(0)
    X, y = rng.uniform(-10, 10, size=(300, 4)), rng.randint(0, 3, 300)
    bumped = np.nextafter(X, np.inf)
    # no value of this draw sits next to a float32 rounding boundary
    assert (np.float32(X) != np.float32(bumped)).sum() == 0
    base = data_fingerprint(X, y)
    assert data_fingerprint(bumped, y) == base
    assert data_fingerprint(-0.0 * np.zeros_like(X), y) == data_fingerprint(np.zeros_like(X), y)
    changed = X.copy()
    changed[7, 2] += 1e-3
    assert data_fingerprint(changed, y) != base
    assert data_fingerprint(X, np.roll(y, 1)) != base
    assert data_fingerprint(X.reshape(600, 2), y) != base


def test_record_files_and_pages_say_where_they_were_made(tmp_path):
    import json

    from spectralink.experiments import RecordLog, provenance, write_records_json

    stamp = provenance()
    assert set(stamp) == {"revision", "versions", "machine", "load", "utc"}
    assert stamp["versions"]["numpy"] and stamp["machine"]["cores"] >= 1
    with RecordLog(tmp_path / "log.jsonl", {"dataset": "x"}) as log:
        log.append({"method": "ncut"})
    first = json.loads((tmp_path / "log.jsonl").read_text().splitlines()[0])
    assert first["config"] == {"dataset": "x"} and first["provenance"]["revision"]
    write_records_json([], tmp_path / "r.json")
    assert "revision" in json.loads((tmp_path / "r.json").read_text())["provenance"]


def test_comparison_plans_runs_writes_and_resumes(tmp_path):
    """What ``spectralink compare`` orchestrates, as a library object: every run recorded
    as it is made, the files written, and a resumed plan that refits nothing done."""
    from sklearn.datasets import make_blobs

    from spectralink.experiments import Comparison, read_record_log

    X, y = make_blobs(60, centers=2, random_state=0)
    comparison = Comparison(
        "blobs", X, y, {"ncut": {}, "copkmeans": {}}, [0, 10], n_trials=2,
        protocol="pairs", random_state=0,
    )  # fmt: skip
    log = tmp_path / "blobs_runs.jsonl"
    plan = comparison.plan(log, resume=False)
    assert plan.total == 8 and not plan.done and not plan.notes
    records, interrupted = comparison.run(log, plan, progress=False)
    assert not interrupted and len(records) == 8
    header, logged = read_record_log(log)
    assert header["data_sha256"] == comparison.header()["data_sha256"] and len(logged) == 8
    paths = comparison.write(tmp_path, records, "error", plan.total)
    assert [p.name for p in paths] == ["blobs_runs.csv", "blobs_runs.json", "blobs_summary.md"]
    assert all(p.is_file() for p in paths)
    again = comparison.plan(log, resume=True)
    assert len(again.done) == 8  # nothing left to fit
    replaced = comparison.plan(log, resume=False)
    assert replaced.notes and "replacing" in replaced.notes[0]
