"""A user's raw table clustered right on the first try: features in their units (``--scale``,
the spread note, the scikit-learn ``Pipeline`` idiom) and the first-try edges (repeated
``--constraints`` merged, the query round trip keeping the known pairs, parameter values
clipped or overflowing, contradictions by ID and ``file:line``, missing values)."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from _cli_helpers import assert_one_line_error as _assert_one_line_error
from _cli_helpers import run
from spectralink.constraints import Constraints, read_constraints_files
from spectralink.preprocessing import (
    SPREAD_FACTOR,
    column_spread_ratio,
    make_scaler,
    missing_value_hint,
    resolve_scale,
    scale_features,
    spread_note,
)


def assert_one_line_error(code, err, needle):
    _assert_one_line_error(code, err, needle, prefix="spectralink: error:", exit_code=1)


def _notes(err: str) -> list[str]:
    """The notes but the line naming the feature columns (every command prints it)."""
    return [
        line
        for line in err.splitlines()
        if line.startswith("spectralink: note:")
        and not line.startswith(
            ("spectralink: note: features (", "spectralink: note: features: all")
        )
    ]


@pytest.fixture
def wide(tmp_path):
    """Three blobs in two columns, and a third column of noise 1000 times wider (a column in
    other units): raw distances follow the noise. Rows named by ID."""
    X, y = make_blobs(n_samples=90, centers=3, cluster_std=0.5, random_state=3)
    noise = np.random.default_rng(0).normal(scale=1000.0, size=(90, 1))
    X = np.hstack([X, noise])
    ids = [f"p{t:02d}" for t in range(90)]
    with open(tmp_path / "x.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["id", "a", "b", "c"])
        w.writerows([ids[t], *(repr(float(v)) for v in X[t])] for t in range(90))
    (tmp_path / "y.csv").write_text("label\n" + "\n".join(map(str, y)) + "\n")
    return tmp_path, X, y, ids


def _error(out: str) -> float:
    return float(next(line.split()[-1] for line in out.splitlines() if "error" in line))


def _cluster(capsys, d, *extra):
    return run(
        capsys,
        "cluster",
        d / "x.csv",
        "-k",
        3,
        "--id-column",
        "id",
        "-y",
        d / "y.csv",
        "-o",
        d / "labels.csv",
        *extra,
    )


# ------------------------------------------------------------------ the library
def test_spread_ratio_and_auto_choice():
    rng = np.random.default_rng(0)
    same = rng.normal(size=(50, 4))
    assert column_spread_ratio(same) < SPREAD_FACTOR
    assert resolve_scale("auto", same) == "none"
    wide = same * np.array([1.0, 1.0, 1.0, 500.0])
    assert column_spread_ratio(wide) > SPREAD_FACTOR
    assert resolve_scale("auto", wide) == "standard"
    # constant columns are left out; fewer than two varying columns: no ratio to speak of
    assert column_spread_ratio(np.c_[same[:, :1], np.zeros(50)]) == 1.0
    scaled, used = scale_features(wide, "auto")
    assert used == "standard" and np.allclose(scaled.std(axis=0), 1.0)
    assert scale_features(wide, "none")[0] is not None and scale_features(wide, "none")[1] == "none"
    assert scale_features(wide, "robust")[1] == "robust"
    # the note: unscaled and wide only, and it names the option
    assert spread_note(wide, "none") is not None and "--scale standard" in spread_note(wide, "none")
    assert spread_note(wide, "standard") is None and spread_note(same, "none") is None
    with pytest.raises(ValueError, match="scale must be one of"):
        resolve_scale("minmax", same)
    with pytest.raises(ValueError, match="resolve 'auto' first"):
        make_scaler("auto")


def test_scale_line_names_the_option_as_the_caller_spells_it():
    """The library's line names its keyword; the command line passes its flags."""
    from spectralink.preprocessing import scale_line
    from spectralink.tables import FLAGS

    assert "(scale='auto':" in scale_line("auto", "standard", 12.0)
    assert "scale='none' keeps them" in scale_line("auto", "standard", 12.0)
    assert "(--scale auto:" in scale_line("auto", "standard", 12.0, FLAGS)
    assert "--scale standard (or robust)" in scale_line("none", "none", 12.0, FLAGS)


def test_bundled_pixel_data_stays_raw_and_wine_is_standardised():
    from spectralink.datasets import load

    assert resolve_scale("auto", load("digits")[0]) == "none"
    assert resolve_scale("auto", load("iris")[0]) == "none"
    assert resolve_scale("auto", load("wine")[0]) == "standard"
    assert resolve_scale("auto", load("breast_cancer")[0]) == "standard"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["usps", "mnist", "segmentation", "sonar"])
def test_benchmark_sets_better_raw_stay_raw(name):
    # measured in docs/results/scaling.md: these are better (or no worse) unscaled
    from spectralink.datasets import DatasetNotFoundError, load

    try:
        X = load(name)[0]
    except DatasetNotFoundError:
        pytest.skip(f"{name} is not in the data directory")
    assert resolve_scale("auto", X) == "none"


def test_estimators_work_inside_a_pipeline():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from spectralink import CCSR, NCut

    X, y = make_blobs(n_samples=60, centers=3, cluster_std=0.5, random_state=0)
    X = X * np.array([1.0, 300.0])
    cons = Constraints.from_labels(y, n_pairs=30, random_state=0)
    for est in (NCut(n_clusters=3, random_state=0), CCSR(n_clusters=3, random_state=0)):
        model = make_pipeline(StandardScaler(), est)
        step = model.steps[-1][0]
        model.fit(X, **{f"{step}__constraints": cons})
        assert len(np.unique(model[-1].labels_)) == 3
        assert model.predict(X[:5]).shape == (5,)


# ------------------------------------------------------------------ --scale and the note
def test_scale_auto_standardises_wide_columns_and_says_so(capsys, wide):
    d, X, y, ids = wide
    code, out, err = _cluster(capsys, d)
    assert code == 0, err
    (line,) = _notes(err)
    assert "features standardised (--scale auto" in line and "--scale none" in line
    auto_error = _error(out)
    code, out, err = _cluster(capsys, d, "--scale", "standard")
    assert code == 0 and _error(out) == auto_error
    assert _notes(err) == ["spectralink: note: features standardised (--scale standard)"]
    code, out, err = _cluster(capsys, d, "--scale", "none")
    assert code == 0, err
    (line,) = _notes(err)
    assert "features used as given (--scale none), and the widest" in line
    assert "--scale standard" in line
    assert _error(out) > auto_error + 0.2  # the noise column decided the raw clustering
    code, out, err = _cluster(capsys, d, "--scale", "robust")
    assert code == 0 and _notes(err) == [
        "spectralink: note: features robust-scaled (--scale robust)"
    ]


def _percentages(path, ratio, seed=0):
    """Columns in one unit (percent) whose spreads differ ``ratio`` times, each as telling
    of the three classes relative to its own spread (benchmarks/bench_scale_default.py)."""
    rng = np.random.default_rng(seed)
    spread = np.array([0.3, 0.5, 0.8, 1.0, 1.0, 0.3 * ratio, 0.6 * ratio, ratio])
    y = np.repeat(np.arange(3), 200)
    X = (rng.normal(scale=1.2, size=(3, 8))[y] + rng.normal(size=(600, 8))) * spread + 10 * spread
    np.savetxt(path, X, delimiter=",", header=",".join(f"c{j}" for j in range(8)), comments="")
    (path.parent / "y.csv").write_text("label\n" + "\n".join(map(str, y)) + "\n")
    return X


def test_scale_auto_on_percentages_whose_spreads_differ_9x(capsys, tmp_path):
    X = _percentages(tmp_path / "p.csv", 9.0)
    assert 8 < column_spread_ratio(X) < 10  # under the factor of 10 the default used to have
    ari = {}
    for scale in ("auto", "standard", "none"):
        code, out, err = run(capsys, "cluster", tmp_path / "p.csv", "-k", 3, "--scale", scale,
                             "-y", tmp_path / "y.csv", "-o", tmp_path / "o.csv")  # fmt: skip
        assert code == 0, err
        ari[scale] = float(next(x.split()[-1] for x in out.splitlines() if "ARI" in x))
        if scale == "auto":
            assert "features standardised (--scale auto: the widest column's spread is" in err
    assert abs(ari["auto"] - ari["standard"]) <= 0.01 and ari["standard"] > ari["none"] + 0.2


def test_scale_on_query_and_compare(capsys, wide, tmp_path):
    d, X, y, ids = wide
    code, out, err = run(
        capsys, "query", d / "x.csv", "-k", 3, "--id-column", "id", "--scale", "none",
        "-n", 3, "-o", d / "ask.csv",
    )  # fmt: skip
    assert code == 0, err
    assert "features used as given (--scale none), and" in err
    np.savez(tmp_path / "w.npz", X=X, y=y)
    code, out, err = run(
        capsys, "compare", "--data", tmp_path / "w.npz", "-m", "ncut", "-c", "0", "-t", "1",
        "--scale", "standard", "-o", tmp_path / "res", "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    assert "features used as given" not in err
    assert '"scale": "standard"' in (tmp_path / "res" / "w_runs.json").read_text()


def test_scale_choices_are_checked(capsys, wide):
    d, *_ = wide
    code, out, err = _cluster(capsys, d, "--scale", "minmax")
    assert code == 2 and "invalid choice" in err


# ------------------------------------------------------------------ repeated --constraints
def _pairs(path, rows):
    path.write_text("i,j,kind\n" + "".join(f"{a},{b},{k}\n" for a, b, k in rows))
    return path


def test_repeated_constraints_files_are_merged(capsys, wide):
    d, X, y, ids = wide
    same = [(a, b) for a in range(90) for b in range(a + 1, 90) if y[a] == y[b]][:30]
    apart = [(a, b) for a in range(90) for b in range(a + 1, 90) if y[a] != y[b]][:30]
    first = [(ids[a], ids[b], "ml") for a, b in same[:20]] + [
        (ids[a], ids[b], "cl") for a, b in apart[:20]
    ]
    # the second file repeats one pair of the first (in the other order) and adds 20 more
    second = [(ids[same[0][1]], ids[same[0][0]], "ml")]
    second += [(ids[a], ids[b], "ml") for a, b in same[20:]]
    second += [(ids[a], ids[b], "cl") for a, b in apart[20:]]
    a, b = _pairs(d / "a.csv", first), _pairs(d / "b.csv", second)
    code, out, err = _cluster(capsys, d, "-c", a, "-c", b)
    assert code == 0, err
    assert "60 constraints (30 must-link, 30 cannot-link)" in out
    notes = _notes(err)
    dup = next(n for n in notes if "more than once" in n)
    assert f"({ids[same[0][1]]}, {ids[same[0][0]]})" in dup
    assert f"{a}:2" in dup and f"{b}:2" in dup
    assert any("2 files merged into 60 pairs" in n for n in notes)
    # the library function: the same set, and the note
    cons, lib_notes = read_constraints_files([a, b], 90, ids=ids)
    assert len(cons) == 60 and lib_notes == [dup.removeprefix("spectralink: note: ")]


def test_contradictions_across_files_name_ids_and_lines(capsys, wide):
    d, X, y, ids = wide
    a = _pairs(d / "a.csv", [(ids[0], ids[1], "ml"), (ids[1], ids[2], "ml")])
    b = _pairs(d / "b.csv", [(ids[5], ids[6], "cl"), (ids[1], ids[0], "cl")])
    code, out, err = _cluster(capsys, d, "-c", a, "-c", b, "--scale", "standard")
    assert_one_line_error(
        code, err, f"pair (p01, p00) is both a must-link ({a}:2) and a cannot-link ({b}:3)"
    )
    # a cannot-link across a chain of must-links: rows by ID, each link by file:line
    c = _pairs(d / "c.csv", [(ids[0], ids[2], "cl")])
    code, out, err = _cluster(capsys, d, "-c", a, "-c", c, "--scale", "standard")
    assert_one_line_error(code, err, f"cannot-link (p00, p02) ({c}:2) joins two points")
    assert f"p00 - p01 ({a}:2), p01 - p02 ({a}:3)" in err
    assert "(0, 2)" not in err and not (d / "labels.csv").exists()


def test_contradiction_in_one_file_by_index_names_lines(tmp_path):
    path = _pairs(tmp_path / "p.csv", [(0, 1, "ml"), (2, 3, "ml"), (1, 0, "cl")])
    with pytest.raises(ValueError, match=r"is both a must-link \(.*p.csv:2\) and a cannot-link"):
        Constraints.from_csv(path, 5)


# ------------------------------------------------------------------ the query round trip
def test_query_output_keeps_the_known_pairs(capsys, wide):
    d, X, y, ids = wide
    known = _pairs(d / "known.csv", [(ids[0], ids[1], "ml"), (ids[0], ids[50], "cl")])
    code, out, err = run(
        capsys, "query", d / "x.csv", "-k", 3, "--id-column", "id", "-c", known,
        "-n", 4, "-o", d / "ask.csv",
    )  # fmt: skip
    assert code == 0, err
    assert "below the 2 known pair(s)" in out
    with open(d / "ask.csv", newline="") as fh:
        rows = list(csv.reader(fh))[1:]
    assert rows[:2] == [[ids[0], ids[1], "ml"], [ids[0], ids[50], "cl"]]
    assert len(rows) == 6 and all(r[2] == "" for r in rows[2:])
    # answered, the one file is the whole set: known pairs and new answers
    pos = {v: t for t, v in enumerate(ids)}
    for r in rows[2:]:
        r[2] = "ml" if y[pos[r[0]]] == y[pos[r[1]]] else "cl"
    with open(d / "ask.csv", "w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows([["i", "j", "kind"], *rows])
    code, out, err = _cluster(capsys, d, "-c", d / "ask.csv")
    assert code == 0, err
    assert "6 constraints" in out


# ------------------------------------------------------------------ parameter values
def test_overflowing_parameter_is_a_clear_error(capsys, wide):
    d, *_ = wide
    code, out, err = _cluster(capsys, d, "--param", "sigma=1e300", "--scale", "standard")
    assert_one_line_error(code, err, "--param sigma=1e+300 overflows floating point")
    assert not (d / "labels.csv").exists()


def test_clipped_and_ignored_parameters_get_one_line_each(capsys, wide):
    d, *_ = wide
    code, out, err = _cluster(capsys, d, "--param", "n_neighbors=1000000")
    assert code == 0, err
    (line,) = [n for n in _notes(err) if "n_neighbors" in n]
    assert "n_neighbors=1000000" in line and "clips it to 89" in line
    code, out, err = _cluster(
        capsys, d, "-m", "cosc", "--param", "n_starts=3", "--param", "n_neighbors=10"
    )
    assert code == 0, err
    (line,) = [n for n in _notes(err) if "n_starts" in n]
    assert "n_starts=3 is ignored by COSC with k=3" in line
    assert not [n for n in _notes(err) if "n_neighbors" in n]


def test_clipped_parameter_in_compare(capsys, tmp_path):
    X, y = make_blobs(n_samples=40, centers=2, random_state=0)
    np.savez(tmp_path / "b.npz", X=X, y=y)
    code, out, err = run(
        capsys, "compare", "--data", tmp_path / "b.npz", "-m", "ncut", "-c", "0", "-t", "1",
        "-p", "n_neighbors=500", "-o", tmp_path / "res", "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    assert "n_neighbors=500 is more than the 39 other rows" in err


# ------------------------------------------------------------------ missing values
def test_missing_value_offers_the_row_and_imputing(capsys, tmp_path):
    (tmp_path / "x.csv").write_text("a,b\n1,2\n3,\n5,6\n")
    code, out, err = run(capsys, "cluster", tmp_path / "x.csv", "-k", 2, "-o", tmp_path / "l.csv")
    assert_one_line_error(code, err, "line 3")
    assert "--missing drop" in err and "--missing impute" in err and "--drop b" in err
    (tmp_path / "n.csv").write_text("a,b\n1,2\n3,nan\n5,6\n")
    code, out, err = run(capsys, "cluster", tmp_path / "n.csv", "-k", 2, "-o", tmp_path / "l.csv")
    assert_one_line_error(code, err, "line 3, column 2 ('b'): an empty cell (1 of 3 rows")
    (tmp_path / "n.csv").write_text("a,b\n1,2\n3,inf\n5,6\n")
    code, out, err = run(capsys, "cluster", tmp_path / "n.csv", "-k", 2, "-o", tmp_path / "l.csv")
    assert_one_line_error(code, err, "non-finite value 'inf'")
    assert "--drop b" in err and "mean" not in err
    assert "SimpleImputer" in missing_value_hint("b")
