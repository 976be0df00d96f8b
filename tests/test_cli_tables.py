"""A real table through the command line in one go: the columns used named before any fit,
a pandas index never a feature, text columns and empty cells handled by options, pairs and
labels lined up with the rows kept, ``id,label`` files."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from _cli_helpers import assert_one_line_error, run

pd = pytest.importorskip("pandas")


def _frame(n=120, seed=0):
    """Three groups in three numeric columns; a text column, a name column, empty cells."""
    X, y = make_blobs(n_samples=n, centers=3, cluster_std=0.6, random_state=seed)
    X = np.hstack([X, X[:, :1] * 2 + 1])
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(X, columns=["length", "depth", "mass"])
    df.insert(0, "name", [f"p{t:03d}" for t in range(n)])
    df["island"] = rng.choice(["Biscoe", "Dream", "Torgersen"], size=n)
    df["sex"] = rng.choice(["male", "female"], size=n)
    holes = rng.choice(n, size=9, replace=False)
    df.loc[holes[:5], "length"] = np.nan
    df.loc[holes[5:], "mass"] = np.nan
    df.loc[holes[:2], "sex"] = np.nan
    return df, y, np.sort(holes)


def test_a_pandas_index_clusters_exactly_as_the_table_without_it(capsys, tmp_path):
    df, y, holes = _frame()
    df = df.drop(columns=["name", "island", "sex"])
    # sorted by group: an index used as a feature would give a perfect-looking partition
    order = np.argsort(y, kind="stable")
    df, y = df.iloc[order], y[order]
    clean = df.dropna()
    clean.to_csv(tmp_path / "with_index.csv")  # an unnamed index that no longer runs 0..n-1
    clean.to_csv(tmp_path / "plain.csv", index=False)
    out = {}
    for name in ("with_index", "plain"):
        code, stdout, err = run(
            capsys, "cluster", tmp_path / f"{name}.csv", "-k", 3, "-o", tmp_path / f"{name}.out"
        )
        assert code == 0, err
        assert "note: features (3 columns): length, depth, mass" in err
        out[name] = (tmp_path / f"{name}.out").read_text()
    assert out["with_index"] == out["plain"]
    code, _, err = run(
        capsys, "cluster", tmp_path / "with_index.csv", "-k", 3, "-o", tmp_path / "o.csv"
    )
    assert "column 1 (no name, distinct integers) is an index written by pandas" in err
    assert "left out (1 of 4): column 1 (index)" in err
    # saved and read again by pandas, the index is named "Unnamed: 0": still not a feature
    pd.read_csv(tmp_path / "with_index.csv").to_csv(tmp_path / "again.csv", index=False)
    code, _, err = run(capsys, "cluster", tmp_path / "again.csv", "-k", 3, "-o", tmp_path / "a.csv")
    assert code == 0 and (tmp_path / "a.csv").read_text() == out["plain"]
    assert "Unnamed: 0 (index)" in err


def test_text_columns_empty_cells_and_pairs_in_one_command(capsys, tmp_path):
    df, y, holes = _frame()
    df.to_csv(tmp_path / "t.csv", index=False)
    # pairs by ID, some naming rows with empty cells
    rng = np.random.default_rng(1)
    pairs = [(i, j) for i, j in rng.integers(0, len(y), size=(60, 2)) if i != j]
    pairs += [(int(holes[0]), int(holes[1]) if holes[1] != holes[0] else 0), (int(holes[2]), 7)]
    with open(tmp_path / "pairs.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["i", "j", "kind"])
        w.writerows([f"p{i:03d}", f"p{j:03d}", "ml" if y[i] == y[j] else "cl"] for i, j in pairs)
    lost = sum(1 for i, j in pairs if i in holes or j in holes)
    base = [
        "cluster",
        tmp_path / "t.csv",
        "-k",
        3,
        "--id-column",
        "name",
        "-c",
        tmp_path / "pairs.csv",
    ]
    # without --missing: one error naming the first empty cell, how many, and the options
    code, _, err = run(capsys, *base, "-o", tmp_path / "never.csv")
    assert_one_line_error(code, err, "an empty cell (9 of 120 rows have empty cells")
    assert "--missing drop" in err and "--missing impute" in err
    assert not (tmp_path / "never.csv").exists()
    code, out, err = run(capsys, *base, "--missing", "drop", "-o", tmp_path / "l.csv")
    assert code == 0, err
    assert "text column(s) left out of the features: island, sex" in err
    assert "--missing drop: 9 of 120 rows left out for empty cells (length 5, mass 4;" in err
    assert f"--missing drop: {lost} of " in err and "pairs name rows left out" in err
    assert "features (3 columns): length, depth, mass; left out (3 of 6): name (ID)" in err
    assert "111 points" in out and "(the 9 rows left out: empty label)" in out
    with open(tmp_path / "l.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["id"] for r in rows] == list(df["name"])  # every row, in the file's order
    assert [t for t, r in enumerate(rows) if r["label"] == ""] == list(holes)
    # --labels as id,label (what cluster writes with --id-column), scored on the rows kept
    with open(tmp_path / "truth.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["id", "label"])
        w.writerows(reversed([(f"p{t:03d}", int(v)) for t, v in enumerate(y)]))
    code, out, err = run(
        capsys, *base, "--missing", "drop", "-y", tmp_path / "truth.csv", "-o", tmp_path / "l.csv"
    )
    assert code == 0, err
    ari = float(next(line.split()[-1] for line in out.splitlines() if "ARI" in line))
    assert ari > 0.8  # matched by ID: the file lists the rows in reverse
    # impute keeps every row
    code, out, err = run(capsys, *base, "--missing", "impute", "-o", tmp_path / "i.csv")
    assert code == 0 and "120 points" in out and "--missing impute: 9 empty cells" in err


def test_id_label_file_needs_the_ids(capsys, tmp_path):
    df, y, _ = _frame()
    df = df.dropna()
    df.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "y.csv").write_text("id,label\n" + "".join(f"{n},1\n" for n in df["name"]))
    code, _, err = run(capsys, "cluster", tmp_path / "t.csv", "-k", 3, "-y", tmp_path / "y.csv",
                       "-o", tmp_path / "o.csv")  # fmt: skip
    assert_one_line_error(code, err, "expected one label per line, got 2 fields")
    assert "--id-column" in err
    (tmp_path / "y.csv").write_text("id,label\nnobody,1\n")
    code, _, err = run(capsys, "cluster", tmp_path / "t.csv", "-k", 3, "--id-column", "name",
                       "-y", tmp_path / "y.csv", "-o", tmp_path / "o.csv")  # fmt: skip
    assert_one_line_error(code, err, "y.csv:2: the ID 'nobody' names no row of the data")


def test_query_with_rows_left_out_names_rows_as_the_file_does(capsys, tmp_path):
    df, y, holes = _frame(n=60)
    df.drop(columns=["name"]).to_csv(tmp_path / "t.csv", index=False)
    code, out, err = run(capsys, "query", tmp_path / "t.csv", "-k", 3, "--missing", "drop",
                         "-n", 15, "-o", tmp_path / "ask.csv")  # fmt: skip
    assert code == 0, err
    asked = np.loadtxt(tmp_path / "ask.csv", delimiter=",", skiprows=1, usecols=(0, 1), dtype=int)
    assert not np.isin(asked, holes).any()  # positions in the file, never a row left out
    assert asked.max() >= 60 - len(holes) or len(asked) == 15


def test_warnings_are_one_line_without_a_library_path(capsys, tmp_path):
    # three far-apart blobs: the graph falls apart, and the library warns about it
    X, _ = make_blobs(n_samples=90, centers=3, cluster_std=0.05, random_state=0)
    np.savetxt(tmp_path / "b.csv", X, delimiter=",", header="a,b", comments="")
    code, _, err = run(capsys, "cluster", tmp_path / "b.csv", "-k", 3, "-o", tmp_path / "o.csv")
    assert code == 0, err
    warned = [line for line in err.splitlines() if "warning" in line.lower()]
    assert warned and all(line.startswith("spectralink: warning: ") for line in warned)
    assert ".py:" not in err and "Warning:" not in err
