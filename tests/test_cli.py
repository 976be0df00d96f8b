"""Tests of the ``spectralink`` command line (in-process through ``main`` and once as a
console script)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from _cli_helpers import assert_one_line_error, run
from spectralink.cli import main, read_labels, read_matrix
from spectralink.constraints import Constraints
from spectralink.datasets import load
from spectralink.registry import available_methods


@pytest.fixture(scope="module")
def iris_files(tmp_path_factory):
    """iris features (CSV with a header), labels and a consistent constraints file."""
    d = tmp_path_factory.mktemp("iris")
    X, y = load("iris")
    with open(d / "X.csv", "w") as fh:
        fh.write("a,b,c,d\n")
        fh.writelines(",".join(f"{v:g}" for v in row) + "\n" for row in X)
    np.save(d / "X.npy", X)
    (d / "y.csv").write_text("label\n" + "".join(f"{v}\n" for v in y))
    (d / "pairs.csv").write_text("i,j,kind\n0,1,ml\n0,60,cl\n55,120,cannot-link\n70,80,1\n")
    return d, X, y


def test_cluster_csv_with_constraints_and_labels(capsys, tmp_path, iris_files):
    d, X, y = iris_files
    out = tmp_path / "labels.csv"
    code, stdout, err = run(
        capsys,
        "cluster",
        str(d / "X.csv"),
        "-k",
        "3",
        "--method",
        "ncut",
        "--constraints",
        str(d / "pairs.csv"),
        "--labels",
        str(d / "y.csv"),
        "--param",
        "n_neighbors=15",
        "--random-state",
        "1",
        "-o",
        str(out),
    )
    assert code == 0, err
    assert "4 constraints (2 must-link, 2 cannot-link)" in stdout
    for name in ("error", "ARI", "NMI", "violated"):
        assert name in stdout
    labels = read_labels(out)
    assert labels.shape == (150,) and set(labels) <= {0, 1, 2}
    from spectralink.metrics import clustering_error

    assert f"{clustering_error(y, labels):.4f}" in stdout
    assert os.listdir(tmp_path) == ["labels.csv"]

    # the .npy input gives the same labels with the same seed and parameters
    out2 = tmp_path / "labels2.csv"
    code, _, err = run(
        capsys,
        "cluster",
        str(d / "X.npy"),
        "-k",
        "3",
        "-p",
        "n_neighbors=15",
        "-c",
        str(d / "pairs.csv"),
        "--random-state",
        "1",
        "-o",
        str(out2),
    )
    assert code == 0, err
    assert np.array_equal(read_labels(out2), labels)


def test_cluster_verbose_prints_stages_with_times(capsys, tmp_path, iris_files):
    data = str(iris_files[0] / "X.csv")
    out = str(tmp_path / "l.csv")
    code, _, err = run(capsys, "cluster", data, "-k", "3", "-v", "-o", out)
    assert code == 0
    skip = ("spectralink: warning", "spectralink: note")
    lines = [line for line in err.splitlines() if not line.startswith(skip)]
    stages = [line.split()[1] for line in lines]
    assert stages == ["neighbours", "graph", "eigenvectors", "assignment", "method", "total"]
    assert all(line.startswith("spectralink: ") and " s" in line for line in lines)
    assert "exact" in lines[0]
    # without -v nothing is logged
    code, _, err = run(capsys, "cluster", data, "-k", "3", "-o", out)
    assert code == 0 and "neighbours" not in err


def test_cluster_method_auto_prints_its_choice(capsys, tmp_path, iris_files):
    d, X, y = iris_files
    from spectralink import Constraints

    cons = Constraints.from_labels(y, 60, random_state=0)
    pairs = tmp_path / "pairs60.csv"
    pairs.write_text(
        "i,j,kind\n"
        + "".join(f"{i},{j},ml\n" for i, j in cons.must_link)
        + "".join(f"{i},{j},cl\n" for i, j in cons.cannot_link)
    )
    out = tmp_path / "labels.csv"
    argv = ["cluster", str(d / "X.npy"), "-k", "3", "--method", "auto", "-o", str(out)]
    code, stdout, err = run(
        capsys, *argv, "-c", str(pairs), "-p", "methods=['ccsr']", "-p", "sigmas=[0.5, 2]"
    )
    assert code == 0, err
    line = next(x for x in stdout.splitlines() if x.strip().startswith("chose"))
    assert "5-fold x 3 cross-validated accuracy score" in line and "NCut" in line
    assert ("ccsr (sigma=" in line) or ("ncut:" in line)
    assert read_labels(out).shape == (150,)
    # four pairs cannot be split into five folds: a warning, the documented fallback
    code, stdout, err = run(capsys, *argv, "-c", str(d / "pairs.csv"))
    assert code == 0, err
    assert "spectralink: warning: Auto cannot cross-validate" in err
    assert "chose      ccsr: too few constraints, no cross-validation" in stdout


def test_cluster_k_auto_chooses_k_and_draws_the_scan(capsys, tmp_path, iris_files):
    d, X, y = iris_files
    from spectralink import Constraints

    cons = Constraints.from_labels(y, 60, random_state=0)
    pairs = tmp_path / "pairs60.csv"
    pairs.write_text(
        "i,j,kind\n"
        + "".join(f"{i},{j},ml\n" for i, j in cons.must_link)
        + "".join(f"{i},{j},cl\n" for i, j in cons.cannot_link)
    )
    out, scan_png = tmp_path / "labels.csv", tmp_path / "k.png"
    code, stdout, err = run(
        capsys, "cluster", d / "X.npy", "-k", "auto", "--method", "auto", "-c", pairs,
        "-p", "methods=['ccskl']", "-p", "sigmas=None", "--plot-k", scan_png, "-o", out,
    )  # fmt: skip
    assert code == 0, err
    assert "auto: 150 points, k=3 (chosen)" in stdout
    assert "chose      k=3 (of 2-10): " in stdout
    assert scan_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # k auto is Auto's: another method needs k; and a bad k is one clean line
    code, _, err = run(capsys, "cluster", d / "X.npy", "-k", "auto", "-o", out)
    assert_one_line_error(code, err, "-k auto needs --method auto")
    code, _, err = run(capsys, "cluster", d / "X.npy", "-k", "three", "-o", out)
    assert code == 2 and "give a number of clusters, or 'auto'" in err
    code, _, err = run(
        capsys, "cluster", d / "X.npy", "-k", "3", "--method", "auto", "--plot-k", scan_png,
        "-o", out,
    )  # fmt: skip
    assert_one_line_error(code, err, "--plot-k draws the choice of k")
    # query without -k: k from the known pairs; a method that needs k says so
    ask = tmp_path / "ask.csv"
    code, stdout, err = run(
        capsys, "query", d / "X.npy", "-c", pairs, "--n-pairs", 5, "-o", ask
    )  # fmt: skip
    assert code == 0, err
    assert len(ask.read_text().strip().splitlines()) == 1 + len(cons) + 5
    code, _, err = run(capsys, "query", d / "X.npy", "--method", "ccsr", "-o", ask)
    assert_one_line_error(code, err, "choosing k (-k auto, or no -k) needs --method auto")


def test_cluster_no_progress_silences_auto_on_a_terminal(capsys, tmp_path, iris_files, monkeypatch):
    import sys

    import spectralink.model_selection._search as search_module
    from spectralink import Constraints

    class Terminal:
        text = ""

        def isatty(self):
            return True

        def write(self, s):
            Terminal.text += s
            return len(s)

        def flush(self):
            pass

    d, X, y = iris_files
    cons = Constraints.from_labels(y, 40, random_state=0)
    pairs = tmp_path / "pairs40.csv"
    cons.to_csv(pairs)
    out = tmp_path / "labels.csv"
    argv = ["cluster", str(d / "X.npy"), "-k", "3", "--method", "auto", "-o", str(out),
            "-c", str(pairs), "-p", "methods=['ccskl']", "-p", "sigmas=None"]  # fmt: skip
    monkeypatch.setattr(search_module, "PROGRESS_DELAY", 0.0)
    monkeypatch.setattr(sys, "stderr", Terminal())
    code, _, _ = run(capsys, *argv)
    assert code == 0 and "model search: 2 candidates" in Terminal.text
    Terminal.text = ""
    code, _, _ = run(capsys, *argv, "--no-progress")
    assert code == 0 and "model search" not in Terminal.text


def test_compare_draws_auto(capsys, tmp_path):
    out = tmp_path / "res"
    code, stdout, err = run(
        capsys,
        "compare",
        "--methods",
        "ncut,auto",
        "--constraints",
        "0,40",
        "--trials",
        "1",
        "--param",
        "auto.methods=['lscp']",
        "--out",
        str(out),
        "--no-progress",
    )
    assert code == 0, err
    assert "auto" in stdout.split("mean ± std")[1]
    assert (out / "iris_error.png").stat().st_size > 0
    with open(out / "iris_runs.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["method"] == "auto"]
    assert len(rows) == 2 and all(r["status"] == "ok" for r in rows)


def test_read_matrix_and_labels(tmp_path):
    (tmp_path / "x.csv").write_text("1,2\n3,4\n5,6\n")
    X, y = read_matrix(tmp_path / "x.csv")
    assert X.shape == (3, 2) and y is None
    np.savez(tmp_path / "d.npz", X=np.eye(3), y=np.array([0, 1, 1]))
    X, y = read_matrix(tmp_path / "d.npz")
    assert X.shape == (3, 3) and list(y) == [0, 1, 1]
    (tmp_path / "y.csv").write_text("cat\ndog\ncat\n")
    assert list(read_labels(tmp_path / "y.csv", 3)) == ["cat", "dog", "cat"]


def test_read_labels_empty_cells_are_unlabelled(tmp_path):
    # pandas writes an integer column with missing values as floats and empty cells
    (tmp_path / "y.csv").write_text("y\n0.0\n\n1.0\nnan\n2.0\n\n")
    y = read_labels(tmp_path / "y.csv", 5)
    assert y.dtype.kind == "i" and list(y) == [0, -1, 1, -1, 2]
    (tmp_path / "s.csv").write_text("cat\n\ndog\n")
    assert list(read_labels(tmp_path / "s.csv", 3)) == ["cat", "", "dog"]
    c = Constraints.from_labels(read_labels(tmp_path / "s.csv"), 1, random_state=0)
    assert c.constrained_points.tolist() == [0, 2]


def test_cluster_scores_only_labelled_rows(capsys, tmp_path):
    X, y = make_blobs(n_samples=60, centers=3, random_state=0)
    np.savetxt(tmp_path / "x.csv", X, delimiter=",")
    y = y.astype(float)
    y[::2] = np.nan
    (tmp_path / "y.csv").write_text("".join("\n" if np.isnan(v) else f"{int(v)}\n" for v in y))
    code, stdout, err = run(
        capsys,
        "cluster",
        str(tmp_path / "x.csv"),
        "-k",
        "3",
        "-y",
        str(tmp_path / "y.csv"),
        "-o",
        str(tmp_path / "out.csv"),
    )
    assert code == 0, err
    assert "scored on the 30 labelled of 60 points" in stdout


def test_compare_writes_runs_summary_and_plot(capsys, tmp_path):
    methods = [m for m in ("ncut", "sl", "copkmeans") if m in available_methods()]
    out = tmp_path / "res"
    code, stdout, err = run(
        capsys,
        "compare",
        "--dataset",
        "iris",
        "--methods",
        ",".join(methods),
        "--constraints",
        "0,20",
        "--trials",
        "2",
        "--out",
        str(out),
        "--no-progress",
    )
    assert code == 0, err
    assert "mean ± std" in stdout
    for m in methods:
        assert m in stdout
    files = sorted(os.listdir(out))
    assert files == [
        "iris_error.png",
        "iris_runs.csv",
        "iris_runs.json",
        "iris_runs.jsonl",  # the record log, one line per run as it finished
        "iris_summary.md",
    ]
    with open(out / "iris_runs.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 * 2 * len(methods)
    assert {r["method"] for r in rows} == set(methods)
    assert {int(r["n_constraints"]) for r in rows} == {0, 20}
    doc = json.loads((out / "iris_runs.json").read_text())
    assert doc["config"]["dataset"] == "iris" and len(doc["records"]) == len(rows)
    assert (out / "iris_error.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = (out / "iris_summary.md").read_text()
    assert "| constraints |" in summary and "## ari" in summary


def test_compare_param_and_metric(capsys, tmp_path):
    code, stdout, err = run(
        capsys,
        "compare",
        "-d",
        "iris",
        "-m",
        "ncut",
        "-c",
        "0",
        "-t",
        "1",
        "-p",
        "ncut.n_neighbors=10",
        "--metric",
        "ari",
        "--protocol",
        "labeled",
        "-o",
        str(tmp_path),
        "--no-progress",
    )
    assert code == 0, err
    assert (tmp_path / "iris_ari.png").is_file()
    doc = json.loads((tmp_path / "iris_runs.json").read_text())
    assert doc["config"]["methods"] == {"ncut": {"n_neighbors": 10}}
    assert doc["config"]["protocol"] == "labeled"
    assert "| labelled points |" in (tmp_path / "iris_summary.md").read_text()


def test_datasets_lists_names_and_directory(capsys, tmp_path):
    np.savez(tmp_path / "toy.npz", X=np.eye(3), y=np.arange(3))
    code, stdout, err = run(capsys, "datasets", "--data-dir", str(tmp_path))
    assert code == 0, err
    assert str(tmp_path) in stdout.splitlines()[0]
    lines = {ln.split()[0]: ln for ln in stdout.splitlines()[1:]}
    assert "bundled" in lines["iris"]
    assert "available" in lines["toy"]
    assert "missing" in lines["usps"]


@pytest.fixture
def bad_files(tmp_path, iris_files):
    d, X, y = iris_files
    (tmp_path / "bad.csv").write_text("1,2\n3,oops\n")
    (tmp_path / "ragged.csv").write_text("1,2\n3\n")
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "data.xlsx").write_text("x")
    (tmp_path / "incons.csv").write_text("0,1,ml\n1,2,ml\n0,2,cl\n")
    (tmp_path / "range.csv").write_text("0,1000,ml\n")
    (tmp_path / "kind.csv").write_text("0,1,maybe\n")
    (tmp_path / "short_y.csv").write_text("0\n1\n")
    (tmp_path / "garbage.npz").write_bytes(b"not a zip file")
    (tmp_path / "garbage.npy").write_bytes(b"not an array")
    np.save(tmp_path / "nan.npy", np.array([[0.0, 1.0], [np.nan, 2.0], [3.0, 4.0]]))
    return d, tmp_path


CLUSTER_ERRORS = [
    (["missing.csv", "-k", "3"], "missing.csv"),
    (["{t}/bad.csv", "-k", "2"], "bad.csv: line 2, column 2: 'oops' is not a number"),
    (["{t}/ragged.csv", "-k", "2"], "ragged.csv: line 2 has 1 fields, expected 2"),
    (["{t}/empty.csv", "-k", "2"], "no data"),
    (["{t}/data.xlsx", "-k", "2"], "unsupported"),
    (["{t}/garbage.npz", "-k", "2"], "garbage.npz"),
    (["{t}/garbage.npy", "-k", "2"], "garbage.npy"),
    (["{t}/nan.npy", "-k", "2"], "non-finite value nan at row index 1, column index 0 (0-based)"),
    (["{d}/X.csv", "-k", "1"], "n_clusters"),
    (["{d}/X.csv", "-k", "500"], "n_clusters"),
    (["{d}/X.csv", "-k", "3", "--method", "nope"], "unknown method"),
    (["{d}/X.csv", "-k", "3", "-c", "{t}/incons.csv"], "chain of must-links"),
    (["{d}/X.csv", "-k", "3", "-c", "{t}/range.csv"], "out of range"),
    (["{d}/X.csv", "-k", "3", "-c", "{t}/kind.csv"], "kind"),
    (["{d}/X.csv", "-k", "3", "-y", "{t}/short_y.csv"], "2 labels"),
    (["{d}/X.csv", "-k", "3", "-p", "bogus=1"], "no parameter 'bogus'"),
    (["{d}/X.csv", "-k", "3", "-p", "novalue"], "KEY=VALUE"),
    (["{d}/X.csv", "-k", "3", "-p", "n_neighbors=-3"], "n_neighbors"),
    (["{d}/X.csv", "-k", "three"], "invalid int"),
]


@pytest.mark.parametrize("argv, needle", CLUSTER_ERRORS)
def test_cluster_errors_are_one_line(capsys, tmp_path, bad_files, argv, needle):
    d, t = bad_files
    out = tmp_path / "out" / "labels.csv"
    out.parent.mkdir()
    out.write_text("old\n")
    argv = [a.format(d=d, t=t) for a in argv]
    code, _, err = run(capsys, "cluster", *argv, "-o", str(out))
    assert_one_line_error(code, err)
    assert needle in err
    # a failed run leaves the previous output untouched and no temporary file
    assert out.read_text() == "old\n"
    assert os.listdir(out.parent) == ["labels.csv"]


def test_cluster_missing_output_dir(capsys, tmp_path, iris_files):
    d, _, _ = iris_files
    code, _, err = run(
        capsys, "cluster", str(d / "X.csv"), "-k", "3", "-o", str(tmp_path / "nodir" / "labels.csv")
    )
    assert_one_line_error(code, err)
    assert "nodir" in err


COMPARE_ERRORS = [
    (["--dataset", "no_such_set"], "no_such_set"),
    (["--dataset", "usps", "--data-dir", "{t}"], "usps.npz"),
    (["--methods", "ncut,nope"], "unknown method"),
    (["--methods", ","], "empty"),
    (["--constraints", "0,x"], "not an integer"),
    (["--constraints", "-5"], ">= 0"),
    (["--constraints", "0,99999999"], "exceeds"),
    (["--trials", "0"], "--trials"),
    (["--metric", "accuracy"], "invalid choice"),
    (["--protocol", "triplets"], "invalid choice"),
    (["-p", "nope.sigma=1"], "not in --methods"),
    (["-m", "ncut", "-p", "bogus=1"], "bogus"),
]


@pytest.mark.parametrize("argv, needle", COMPARE_ERRORS)
def test_compare_errors_are_one_line(capsys, tmp_path, argv, needle):
    argv = [a.format(t=tmp_path) for a in argv]
    # defaults first; argparse lets the options given later win
    code, _, err = run(
        capsys,
        "compare",
        "-d",
        "iris",
        "-t",
        "1",
        "-c",
        "0",
        *argv,
        "--out",
        str(tmp_path / "res"),
        "--no-progress",
    )
    assert_one_line_error(code, err)
    assert needle in err
    assert not (tmp_path / "res").exists()


def test_no_command_and_help(capsys):
    code, _, err = run(capsys)
    assert_one_line_error(code, err)
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "compare" in out
    code, out, _ = run(capsys, "compare", "--help")
    assert code == 0 and "--constraints" in out


def test_debug_shows_the_exception(tmp_path):
    with pytest.raises(FileNotFoundError):
        main(
            [
                "cluster",
                str(tmp_path / "none.csv"),
                "-k",
                "2",
                "-o",
                str(tmp_path / "o.csv"),
                "--debug",
            ]
        )


@pytest.mark.parametrize("before", [True, False], ids=["before", "after"])
def test_debug_before_or_after_the_subcommand(tmp_path, before):
    argv = ["cluster", str(tmp_path / "none.csv"), "-k", "2", "-o", str(tmp_path / "o.csv")]
    with pytest.raises(FileNotFoundError):
        main(["--debug", *argv] if before else [*argv, "--debug"])


@pytest.mark.parametrize(
    ("param", "expected"),
    [
        ("n_neighbors=ten", ["'n_neighbors'", "int in the range [1, inf)", "'ten'"]),
        ("n_neighbors=10.5", ["'n_neighbors'", "int in the range [1, inf)", "10.5"]),
        ("sigma=auto", ["'sigma'", "float in the range (0.0, inf)", "'auto'"]),
    ],
)
def test_bad_parameter_value_is_one_line_naming_it(capsys, tmp_path, param, expected):
    X, _ = make_blobs(n_samples=30, centers=2, random_state=0)
    np.savetxt(tmp_path / "x.csv", X, delimiter=",")
    out = tmp_path / "o.csv"
    code, _, err = run(
        capsys, "cluster", str(tmp_path / "x.csv"), "-k", "2", "--param", param, "-o", str(out)
    )
    assert_one_line_error(code, err)
    for text in expected:
        assert text in err
    assert not out.exists()


def _blobs_csv(path, header, index=False, extra=None):
    X, y = make_blobs(n_samples=90, centers=3, cluster_std=0.5, random_state=0)
    rows = [header] if header is not None else []
    for i, row in enumerate(X):
        cells = ([str(i)] if index else []) + [repr(float(v)) for v in row]
        rows.append(",".join(cells + ([extra(i)] if extra else [])))
    path.write_text("\n".join(rows) + "\n")
    return y


def _cluster_ari(capsys, tmp_path, data, y, *extra):
    np.savetxt(tmp_path / "y.csv", y, fmt="%d")
    code, out, err = run(
        capsys,
        "cluster",
        str(data),
        "-k",
        "3",
        "-y",
        str(tmp_path / "y.csv"),
        "-o",
        str(tmp_path / "o.csv"),
        *extra,
    )
    assert code == 0, err
    ari = float(next(line for line in out.splitlines() if "ARI" in line).split()[-1])
    return ari, err


def test_pandas_index_column_is_not_a_feature(capsys, tmp_path):
    # DataFrame.to_csv(): an unnamed index column 0..n-1 first
    y = _blobs_csv(tmp_path / "x.csv", ",0,1", index=True)
    ari, err = _cluster_ari(capsys, tmp_path, tmp_path / "x.csv", y)
    assert ari > 0.9
    assert "note:" in err and "index" in err


@pytest.mark.parametrize(("header", "rows"), [("auto", 90), ("yes", 90), ("no", 91)])
def test_numeric_header_and_the_header_option(capsys, tmp_path, header, rows):
    y = _blobs_csv(tmp_path / "x.csv", "0,1")
    np.savetxt(tmp_path / "y.csv", y, fmt="%d")
    code, out, err = run(
        capsys,
        "cluster",
        str(tmp_path / "x.csv"),
        "-k",
        "3",
        "--header",
        header,
        "-o",
        str(tmp_path / "o.csv"),
    )
    assert code == 0, err
    assert out.startswith(f"ncut: {rows} points")


def test_text_column_left_out_with_a_note(capsys, tmp_path):
    y = _blobs_csv(tmp_path / "x.csv", "a,b,species", extra=lambda i: "ab"[i % 2])
    ari, err = _cluster_ari(capsys, tmp_path, tmp_path / "x.csv", y)
    assert ari > 0.9
    assert "text column(s) left out of the features: species" in err
    assert "note: features (2 columns): a, b; left out (1 of 3): species (text)" in err
    # named in --columns, it is an error naming the way to encode it
    out = tmp_path / "not-written.csv"
    code, _, err = run(
        capsys, "cluster", tmp_path / "x.csv", "-k", 3, "--columns", "a,species", "-o", out
    )
    assert_one_line_error(code, err, "line 2, column 3 ('species'): 'a' is not a number")
    assert "--categorical encode" in err and not out.exists()
    ari, err = _cluster_ari(capsys, tmp_path, tmp_path / "x.csv", y, "--categorical", "encode")
    assert "features (4 columns): a, b, species=a, species=b" in err
    ari, _ = _cluster_ari(capsys, tmp_path, tmp_path / "x.csv", y, "--drop", "species")
    assert ari > 0.9
    ari, _ = _cluster_ari(capsys, tmp_path, tmp_path / "x.csv", y, "--columns", "a,2")
    assert ari > 0.9


def test_id_column_written_beside_the_labels(capsys, tmp_path):
    ids = [f"p{i}" if i != 5 else "a,b" for i in range(90)]  # one ID needs CSV quoting
    y = _blobs_csv(tmp_path / "x.csv", "x1,x2,name", extra=lambda i: f'"{ids[i]}"')
    ari, _ = _cluster_ari(capsys, tmp_path, tmp_path / "x.csv", y, "--id-column", "name")
    assert ari > 0.9  # the ID column is not a feature
    with open(tmp_path / "o.csv", newline="") as fh:
        out = list(csv.DictReader(fh))
    assert [r["id"] for r in out] == ids
    # the same run without IDs writes the same labels in the same order
    code, _, err = run(
        capsys,
        "cluster",
        str(tmp_path / "x.csv"),
        "-k",
        "3",
        "--drop",
        "name",
        "-o",
        str(tmp_path / "plain.csv"),
    )
    assert code == 0, err
    assert [int(r["label"]) for r in out] == list(read_labels(tmp_path / "plain.csv"))


def test_columns_on_a_binary_file_is_refused(capsys, tmp_path):
    np.save(tmp_path / "x.npy", np.eye(4))
    code, _, err = run(
        capsys,
        "cluster",
        str(tmp_path / "x.npy"),
        "-k",
        "2",
        "--columns",
        "1",
        "-o",
        str(tmp_path / "o.csv"),
    )
    assert_one_line_error(code, err)
    assert "--columns applies to text tables" in err


def _console_command():
    exe = shutil.which("spectralink")
    return [exe] if exe else [sys.executable, "-m", "spectralink"]


def test_console_script(tmp_path):
    # one real process: the installed entry point runs and a user error has no traceback
    proc = subprocess.run(
        [
            *_console_command(),
            "cluster",
            str(tmp_path / "none.csv"),
            "-k",
            "2",
            "-o",
            str(tmp_path / "o.csv"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "MPLBACKEND": "Agg"},
        timeout=300,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().startswith("spectralink: error:")
    assert "none.csv" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o.csv").exists()


def test_closed_pipe_ends_quietly():
    # `spectralink datasets | head`: the reader leaves early; no "Broken pipe" error
    proc = subprocess.Popen(
        [*_console_command(), "datasets"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=300) == 141
    assert err == ""
