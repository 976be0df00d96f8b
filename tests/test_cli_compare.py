"""``spectralink compare``: checks before any fit, runs that survive interruption,
``--data FILE``, and the plot (band label, ``--log-x``)."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from _cli_helpers import assert_one_line_error as _assert_one_line_error
from _cli_helpers import run
from spectralink import experiments
from spectralink.datasets import load
from spectralink.experiments import RecordLog, _protocol, read_record_log
from spectralink.plots import plot_metric_curves

BASE = ["compare", "-d", "iris", "-m", "ncut,sl", "-c", "0,20", "-t", "2", "--no-progress"]


def assert_one_line_error(code, err):
    _assert_one_line_error(code, err, prefix="spectralink: error:")


@pytest.fixture
def count_fits(monkeypatch):
    """Counts the fits of the protocol (one call of ``_fit_one`` per run)."""
    calls = []
    real = _protocol._fit_one

    def counting(name, *args, **kwargs):
        calls.append(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(_protocol, "_fit_one", counting)
    return calls


def read_runs(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def without_time(rows):
    return [{k: v for k, v in r.items() if k != "time_s"} for r in rows]


# --------------------------------------------------------------------------- checks first
@pytest.mark.parametrize(
    "argv, needle",
    [
        (["-m", "ncut,sclc"], "2 clusters only"),
        (["-m", "sclc"], "k=3"),
        (["-m", "ncut", "-p", "n_neighbors=ten"], "n_neighbors"),
        (["-m", "ncut", "-p", "n_neighbors=0"], "n_neighbors"),
        (["-m", "ncut,nope"], "unknown method"),
    ],
)
def test_compare_refuses_before_any_fit(capsys, tmp_path, count_fits, argv, needle):
    code, _, err = run(capsys, *BASE, *argv, "-o", str(tmp_path / "res"))
    assert_one_line_error(code, err)
    assert needle in err
    assert count_fits == []
    assert not (tmp_path / "res").exists()


def _failing_for(monkeypatch, method):
    """Every run of ``method`` fails (as COP-KMeans does on infeasible draws)."""
    real = _protocol._fit_one

    def fit(name, *args, **kwargs):
        if name == method:
            fields = {"time_s": 0.0, "status": "failed", "message": "RuntimeError: no"}
            return None, {**fields, "warnings": ""}
        return real(name, *args, **kwargs)

    monkeypatch.setattr(_protocol, "_fit_one", fit)


def test_compare_leaves_out_a_method_whose_runs_all_failed(capsys, tmp_path, monkeypatch):
    _failing_for(monkeypatch, "sl")
    out = tmp_path / "res"
    code, stdout, err = run(capsys, *BASE, "-o", str(out))
    assert code == 0, err
    assert "sl: every one of its 4 runs failed, so it is left out of the plot" in stdout
    assert (out / "iris_error.png").stat().st_size > 0
    assert len(read_runs(out / "iris_runs.csv")) == 8


def test_compare_writes_nothing_when_every_run_failed(capsys, tmp_path, monkeypatch):
    _failing_for(monkeypatch, "ncut")
    code, _, err = run(capsys, *BASE, "-m", "ncut", "-o", str(tmp_path / "res"))
    assert code == 1
    assert "every run failed, nothing written" in err
    assert not (tmp_path / "res").exists()


# --------------------------------------------------------------------------- resume
def test_compare_resume_skips_the_runs_on_disk(capsys, tmp_path, count_fits):
    out = tmp_path / "res"
    code, _, err = run(capsys, *BASE, "-t", "1", "-o", str(out))
    assert code == 0, err
    assert len(count_fits) == 2 * 1 * 2
    _, logged = read_record_log(out / "iris_runs.jsonl")
    assert len(logged) == 4

    count_fits.clear()
    code, stdout, err = run(capsys, *BASE, "-t", "2", "-o", str(out), "--resume")
    assert code == 0, err
    assert "resuming: 4 of 8 runs already" in stdout
    assert len(count_fits) == 4  # only trial 1 of each count and method
    assert len(read_runs(out / "iris_runs.csv")) == 8

    count_fits.clear()
    code, _, err = run(capsys, *BASE, "-o", str(out), "--resume")
    assert code == 0, err
    assert count_fits == []  # everything was on disk


@pytest.mark.parametrize(
    "change, needle",
    [
        (["--random-state", "1"], "random_state"),
        (["--protocol", "labeled"], "protocol"),
        (["-p", "sl.n_neighbors=7"], "parameters"),
    ],
)
def test_compare_resume_refuses_another_configuration(capsys, tmp_path, count_fits, change, needle):
    out = tmp_path / "res"
    code, _, err = run(capsys, *BASE, "-t", "1", "-o", str(out))
    assert code == 0, err
    before = (out / "iris_runs.jsonl").read_bytes()
    count_fits.clear()
    code, _, err = run(capsys, *BASE, "-t", "1", "-o", str(out), "--resume", *change)
    assert_one_line_error(code, err)
    assert "--resume" in err and needle in err
    assert count_fits == []
    assert (out / "iris_runs.jsonl").read_bytes() == before


def test_compare_interrupted_then_resumed_equals_an_uninterrupted_run(
    capsys, tmp_path, monkeypatch
):
    whole = tmp_path / "whole"
    code, _, err = run(capsys, *BASE, "-o", str(whole))
    assert code == 0, err

    real = _protocol._fit_one
    calls = []

    def interrupted(*args, **kwargs):
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(_protocol, "_fit_one", interrupted)
    part = tmp_path / "part"
    code, stdout, err = run(capsys, *BASE, "-o", str(part))
    assert code == 130
    assert "partial: 3 of 8 runs" in stdout
    assert err.strip().splitlines()[-1].endswith(f"-o {part} --resume")
    assert len(read_runs(part / "iris_runs.csv")) == 3
    assert "Partial" in (part / "iris_summary.md").read_text()
    assert (part / "iris_error.png").stat().st_size > 0
    _, logged = read_record_log(part / "iris_runs.jsonl")
    assert len(logged) == 3

    count_fits = []

    def counting(*args, **kwargs):
        count_fits.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(_protocol, "_fit_one", counting)
    code, _, err = run(capsys, *BASE, "-o", str(part), "--resume")
    assert code == 0, err
    assert len(count_fits) == 5
    assert without_time(read_runs(part / "iris_runs.csv")) == without_time(
        read_runs(whole / "iris_runs.csv")
    )
    summary = (part / "iris_summary.md").read_text()
    assert "Partial" not in summary
    # the tables hold no times: the summaries agree line for line but for time_s
    strip = lambda text: text.split("## time_s")[0]  # noqa: E731
    assert strip(summary) == strip((whole / "iris_summary.md").read_text())


def test_record_log_ignores_a_line_cut_short(tmp_path):
    path = tmp_path / "runs.jsonl"
    rec = {"method": "ncut", "n_constraints": 0, "trial": 0, "seed": 1, "error": math.nan}
    with RecordLog(path, {"dataset": "x"}) as log:
        log.append(rec, params={})
        log.append({**rec, "trial": 1})
    with open(path, "a") as fh:
        fh.write('{"method": "ncut", "n_constr')  # killed while writing
    header, records = read_record_log(path)
    assert header == {"dataset": "x"}
    assert [r["trial"] for r in records] == [0, 1]
    assert math.isnan(records[0]["error"]) and records[0]["params"] == {}
    # carried over into a new log, the cut line is gone and appends start on a new line
    with RecordLog(path, header, keep=records) as log:
        log.append({**rec, "trial": 2})
    assert [r["trial"] for r in read_record_log(path)[1]] == [0, 1, 2]
    lines = path.read_text().splitlines()
    assert all(json.loads(line) for line in lines)


# --------------------------------------------------------------------------- --data FILE
@pytest.fixture
def iris_table(tmp_path):
    X, y = load("iris")
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    path = tmp_path / "flowers.csv"
    with open(path, "w") as fh:
        fh.write("sl,sw,species,pl,pw\n")
        for row, name in zip(X, names, strict=True):
            fh.write(f"{row[0]:g},{row[1]:g},{name},{row[2]:g},{row[3]:g}\n")
    return path


def test_compare_data_file_with_label_column(capsys, tmp_path, iris_table):
    out = tmp_path / "res"
    argv = ["compare", "--data", str(iris_table), "--label-column", "species"]
    argv += ["-m", "ncut", "-c", "0,20", "-t", "2", "--no-progress", "-o", str(out)]
    code, stdout, err = run(capsys, *argv)
    assert code == 0, err
    assert "flowers: n=150, d=4, k=3" in stdout
    rows = read_runs(out / "flowers_runs.csv")
    assert len(rows) == 4 and {r["status"] for r in rows} == {"ok"}
    # the same features and classes as the bundled set: the same scores
    ref = tmp_path / "ref"
    code, _, err = run(capsys, *BASE, "-m", "ncut", "-o", str(ref))
    assert code == 0, err
    assert [r["error"] for r in rows] == [r["error"] for r in read_runs(ref / "iris_runs.csv")]
    doc = json.loads((out / "flowers_runs.json").read_text())
    assert doc["config"]["data"] == str(iris_table)


@pytest.mark.parametrize(
    "extra, needle",
    [
        ([], "needs --label-column"),
        (["--label-column", "kind"], "--label-column: no column named 'kind'"),
        (["--label-column", "species", "--drop", "sw"], None),
    ],
)
def test_compare_data_file_options(capsys, tmp_path, iris_table, extra, needle):
    argv = ["compare", "--data", str(iris_table), *extra]
    argv += ["-m", "ncut", "-c", "0", "-t", "1", "--no-progress", "-o", str(tmp_path / "r")]
    code, stdout, err = run(capsys, *argv)
    if needle is None:
        assert code == 0, err
        assert "flowers: n=150, d=3, k=3" in stdout
    else:
        assert_one_line_error(code, err)
        assert needle in err
        assert not (tmp_path / "r").exists()


def test_compare_data_and_dataset_are_exclusive(capsys, tmp_path, iris_table):
    code, _, err = run(capsys, "compare", "-d", "iris", "--data", str(iris_table))
    assert code == 2 and "not allowed with" in err


# --------------------------------------------------------------------------- plot
def _records(counts=(0, 50, 100, 200)):
    recs = []
    for c in counts:
        for trial, err in enumerate((0.3, 0.1)):
            for method in ("a", "b"):
                ok = method == "a"
                recs.append(
                    {
                        "dataset": "d",
                        "method": method,
                        "n_constraints": c,
                        "trial": trial,
                        "error": err if ok else math.nan,
                        "status": "ok" if ok else "failed",
                    }
                )
    return recs


def test_plot_band_label_log_x_and_left_out_method(tmp_path):
    fig = plot_metric_curves(_records(), tmp_path / "p.png", log_x=True)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["a", "±1 std over draws"]  # b never succeeded: not drawn
    assert ax.get_xscale() == "symlog"
    assert "linear below 50" in ax.get_xlabel()
    assert any("every run failed: b" in t.get_text() for t in fig.texts)
    assert plot_metric_curves(_records((10, 100))).axes[0].get_xscale() == "linear"
    assert plot_metric_curves(_records((10, 100)), log_x=True).axes[0].get_xscale() == "log"
    with pytest.raises(ValueError, match="no successful run"):
        plot_metric_curves([r for r in _records() if r["method"] == "b"])


def test_compare_log_x(capsys, tmp_path):
    out = tmp_path / "res"
    code, _, err = run(capsys, *BASE, "-m", "ncut", "--log-x", "-o", str(out))
    assert code == 0, err
    assert (out / "iris_error.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_data_refuses_unlabelled_rows(capsys, tmp_path):
    X, y = load("iris")
    path = tmp_path / "part.csv"
    y = y.copy()
    y[7] = -1  # unlabelled, as everywhere in spectralink
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header="a,b,c,d,y", comments="")
    argv = ["compare", "--data", str(path), "--label-column", "y", "-m", "ncut"]
    code, _, err = run(capsys, *argv, "-c", "0", "-t", "1", "-o", str(tmp_path / "r"))
    assert_one_line_error(code, err)
    assert "1 row(s) without a class" in err and "data row 8" in err
    np.savez(tmp_path / "d.npz", X=X, y=y)
    code, _, err = run(
        capsys, "compare", "--data", str(tmp_path / "d.npz"), "-o", str(tmp_path / "r")
    )
    assert_one_line_error(code, err)
    assert "without a class" in err
    assert not (tmp_path / "r").exists()


# --------------------------------------------------------------------------- library
def test_run_protocol_checks_first_and_reuses_done_runs(count_fits):
    X, y = load("iris")
    with pytest.raises(ValueError, match="2 clusters only"):
        experiments.run_protocol(X, y, ["ncut", "sclc"], [0], n_trials=1, progress=False)
    with pytest.raises(ValueError, match="n_neighbors"):
        experiments.run_protocol(
            X, y, {"ncut": {"n_neighbors": "ten"}}, [0], n_trials=1, progress=False
        )
    assert count_fits == []
    experiments.check_methods(["sclc"], 2, 10)  # k = 2 is fine

    kw = {"n_trials": 2, "progress": False}
    first = experiments.run_protocol(X, y, ["ncut"], [0, 20], n_trials=1, progress=False)
    count_fits.clear()
    new = []
    again = experiments.run_protocol(
        X, y, ["ncut"], [0, 20], done=first, on_record=new.append, **kw
    )
    assert len(count_fits) == 2 and len(new) == 2  # trial 1 of each count
    assert [r["trial"] for r in new] == [1, 1]
    assert [(r["n_constraints"], r["trial"]) for r in again] == [(0, 0), (0, 1), (20, 0), (20, 1)]
    assert again[0] == first[0] and again[2] == first[1]
