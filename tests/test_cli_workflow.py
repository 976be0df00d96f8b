"""Command-line workflows on a user's own files: partial labels (``cluster --labeled``),
the embedding plot (``cluster --plot``), Parquet input, and pairs named by row ID
(``query --id-column`` answered and read back by ``cluster --constraints``)."""

from __future__ import annotations

import csv
import sys

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from _cli_helpers import assert_one_line_error as _assert_one_line_error
from _cli_helpers import run
from spectralink.cli import encode_labels, read_labels
from spectralink.metrics import adjusted_rand_score, clustering_error


def assert_one_line_error(code, err, needle):
    _assert_one_line_error(code, err, needle, prefix="spectralink: error:", exit_code=1)


@pytest.fixture
def blobs(tmp_path):
    X, y = make_blobs(n_samples=90, centers=3, cluster_std=0.6, random_state=1)
    np.savetxt(tmp_path / "x.csv", X, delimiter=",")
    return tmp_path, X, y


# ------------------------------------------------------------------ labels files
def test_read_labels_string_labels_under_a_header(tmp_path):
    names = ["ant", "bee", "ant", "cat"]
    (tmp_path / "y.csv").write_text("species\n" + "\n".join(names) + "\n")
    # the header is recognised from the row count...
    assert list(read_labels(tmp_path / "y.csv", 4)) == names
    # ...or, without one, from a usual column name found nowhere else
    (tmp_path / "l.csv").write_text("label\n" + "\n".join(names) + "\n")
    assert list(read_labels(tmp_path / "l.csv")) == names
    codes, classes = read_labels(tmp_path / "y.csv", 4, return_names=True)
    assert codes.tolist() == [0, 1, 0, 2] and classes.tolist() == ["ant", "bee", "cat"]


def test_read_labels_unlabelled_rows_among_names(tmp_path):
    # empty cells (also the last rows'), and negative numbers among names, are unlabelled
    (tmp_path / "y.csv").write_text("label\nant\n-1\n\nbee\n\n\n")
    codes, classes = read_labels(tmp_path / "y.csv", 6, return_names=True)
    assert codes.tolist() == [0, -1, -1, 1, -1, -1]
    assert classes.tolist() == ["ant", "bee"]
    codes, classes = encode_labels(np.array([3, -1, 7, 3]))
    assert codes.tolist() == [0, -1, 1, 0] and classes.tolist() == [3, 7]


# ------------------------------------------------------------------ --labeled
def _partial(y, every=6):
    """Labels known on every ``every``-th row; the others empty or -1, alternately."""
    names = np.array(["ant", "bee", "cat"])[y]
    return [v if t % every == 0 else ("" if t % 2 else "-1") for t, v in enumerate(names)]


def test_cluster_labeled_rows_become_all_their_pairs(capsys, blobs):
    d, X, y = blobs
    part = _partial(y)
    (d / "partial.csv").write_text("label\n" + "".join(f"{v}\n" for v in part))
    names = np.array(["ant", "bee", "cat"])[y]
    (d / "truth.csv").write_text("species\n" + "".join(f"{v}\n" for v in names))
    code, out, err = run(
        capsys,
        "cluster",
        d / "x.csv",
        "-k",
        3,
        "-m",
        "fcsc",
        "--labeled",
        d / "partial.csv",
        "--labels",
        d / "truth.csv",
        "-o",
        d / "out.csv",
    )
    assert code == 0, err
    given = np.array([v not in ("", "-1") for v in part])
    m = int(given.sum())
    counts = np.bincount(y[given])
    n_ml = int(sum(c * (c - 1) // 2 for c in counts))
    assert f"{m * (m - 1) // 2} constraints ({n_ml} must-link" in out
    assert f"{m} labelled rows in 3 classes (ant, bee, cat)" in err
    # scored on the rows --labeled does not give, and the printed scores are theirs
    assert f"scored on the {90 - m} of 90 points not labelled by --labeled" in out
    labels = np.loadtxt(d / "out.csv", skiprows=1, dtype=int)
    rest = ~given
    acc = 1 - clustering_error(y[rest], labels[rest])
    assert f"accuracy   {acc:.4f}" in out
    assert f"ARI        {adjusted_rand_score(y[rest], labels[rest]):.4f}" in out
    assert acc > 0.95
    assert "violated   0.0000" in out


def test_cluster_labeled_without_truth_prints_no_scores(capsys, blobs):
    d, X, y = blobs
    (d / "partial.csv").write_text("".join(f"{v}\n" for v in _partial(y)))
    code, out, err = run(
        capsys,
        "cluster",
        d / "x.csv",
        "-k",
        3,
        "-m",
        "ccsr",
        "--labeled",
        d / "partial.csv",
        "-o",
        d / "out.csv",
    )
    assert code == 0, err
    assert "accuracy" not in out and "ARI" not in out


def test_cluster_labeled_joins_the_constraints_file(capsys, blobs):
    d, X, y = blobs
    part = ["" for _ in y]
    part[0], part[1] = "a", "b"  # one cannot-link
    (d / "partial.csv").write_text("".join(f"{v}\n" for v in part))
    i, j = np.flatnonzero((y == y[5]) & (np.arange(90) > 1))[:2]
    (d / "pairs.csv").write_text(f"i,j,kind\n{i},{j},ml\n0,1,cl\n")
    code, out, err = run(
        capsys,
        "cluster",
        d / "x.csv",
        "-k",
        3,
        "--labeled",
        d / "partial.csv",
        "--constraints",
        d / "pairs.csv",
        "-o",
        d / "out.csv",
    )
    assert code == 0, err
    assert "2 constraints (1 must-link, 1 cannot-link)" in out  # the duplicate merged


def test_cluster_labeled_needs_two_labelled_rows(capsys, blobs):
    d, X, y = blobs
    (d / "partial.csv").write_text("a\n" + "\n" * 89)
    code, out, err = run(
        capsys,
        "cluster",
        d / "x.csv",
        "-k",
        3,
        "--labeled",
        d / "partial.csv",
        "-o",
        d / "out.csv",
    )
    assert_one_line_error(code, err, "1 labelled row(s); pairs need at least 2")
    assert not (d / "out.csv").exists()


# ------------------------------------------------------------------ pairs named by ID
@pytest.fixture
def id_table(tmp_path):
    X, y = make_blobs(n_samples=60, centers=3, cluster_std=0.6, random_state=1)
    ids = [f"pt, {t:03d}" for t in range(60)][::-1]  # IDs hold a comma; not the row order
    with open(tmp_path / "x.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["a", "name", "b"])
        w.writerows([r[0], v, r[1]] for r, v in zip(X, ids, strict=True))
    return tmp_path, X, y, ids


def _answer(path, y, ids):
    """Fill the kind column of a pairs file written with IDs, from the truth ``y``."""
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    row_of = {v: t for t, v in enumerate(ids)}
    assert rows[0] == ["i", "j", "kind"]
    for r in rows[1:]:
        assert r[0] in row_of and r[1] in row_of and r[2] == ""
        r[2] = "ml" if y[row_of[r[0]]] == y[row_of[r[1]]] else "cl"
    with open(path, "w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    return [(row_of[a], row_of[b], k) for a, b, k in rows[1:]]


def test_query_writes_ids_and_cluster_reads_them_back(capsys, id_table):
    d, X, y, ids = id_table
    code, out, err = run(
        capsys,
        "query",
        d / "x.csv",
        "-k",
        3,
        "--id-column",
        "name",
        "-n",
        6,
        "-o",
        d / "ask.csv",
    )
    assert code == 0, err
    answered = _answer(d / "ask.csv", y, ids)
    assert len(answered) == 6
    n_ml = sum(k == "ml" for _, _, k in answered)
    code, out, err = run(
        capsys,
        "cluster",
        d / "x.csv",
        "-k",
        3,
        "-m",
        "ccsr",
        "--id-column",
        "name",
        "--constraints",
        d / "ask.csv",
        "-o",
        d / "labels.csv",
    )
    assert code == 0, err
    assert f"6 constraints ({n_ml} must-link, {6 - n_ml} cannot-link)" in out
    assert "violated   0.0000" in out
    with open(d / "labels.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["id", "label"] and [r[0] for r in rows[1:]] == ids
    labels = np.array([int(r[1]) for r in rows[1:]])
    # the constraints reached the rows their IDs name
    for i, j, kind in answered:
        assert (labels[i] == labels[j]) == (kind == "ml")
    # and a next round of questions, given the answers by ID, asks none of them again
    code, out, err = run(
        capsys,
        "query",
        d / "x.csv",
        "-k",
        3,
        "--id-column",
        "name",
        "-n",
        4,
        "--constraints",
        d / "ask.csv",
        "-o",
        d / "ask2.csv",
    )
    assert code == 0, err
    with open(d / "ask2.csv", newline="") as fh:
        rows = list(csv.reader(fh))[1:]
    # the known pairs come first, answered, so that the answered file is the whole set
    asked = {frozenset((ids[i], ids[j])) for i, j, _ in answered}
    assert {frozenset(r[:2]) for r in rows[:6]} == asked and all(r[2] for r in rows[:6])
    again = {frozenset(r[:2]) for r in rows[6:]}
    assert len(again) == 4 and all(pair <= set(ids) for pair in again)
    assert all(r[2] == "" for r in rows[6:])
    assert not again & asked


def test_pairs_naming_an_unknown_id_are_one_line(capsys, id_table):
    d, X, y, ids = id_table
    (d / "pairs.csv").write_text(f'i,j,kind\n"{ids[0]}",nobody,ml\n')
    code, out, err = run(
        capsys,
        "cluster",
        d / "x.csv",
        "-k",
        3,
        "--id-column",
        "name",
        "--constraints",
        d / "pairs.csv",
        "-o",
        d / "labels.csv",
    )
    assert_one_line_error(code, err, "pairs.csv:2: no row has the ID 'nobody'")
    assert not (d / "labels.csv").exists()


def test_query_refuses_duplicate_ids(capsys, tmp_path):
    (tmp_path / "x.csv").write_text("id,a\nu,1\nv,2\nu,3\nw,4\n")
    code, out, err = run(
        capsys, "query", tmp_path / "x.csv", "-k", 2, "--id-column", "id", "-o", tmp_path / "q.csv"
    )
    assert_one_line_error(code, err, "the ID 'u' names more than one row")
    assert not (tmp_path / "q.csv").exists()


def test_interactive_answers_are_saved_by_id(tmp_path):
    from spectralink.cli._prompt import ask_in_terminal
    from spectralink.constraints import Constraints

    X, y = make_blobs(n_samples=30, centers=2, random_state=0)
    ids = [f"r{t}" for t in range(30)]
    shown = []
    report = ask_in_terminal(
        X,
        3,
        n_clusters=2,
        output=tmp_path / "a.csv",
        input_fn=lambda _: "y",
        print_fn=shown.append,
        random_state=0,
        ids=ids,
    )
    assert report.n_asked == 3
    assert any("(IDs r" in line for line in shown)
    back = Constraints.from_csv(tmp_path / "a.csv", 30, ids=ids)
    assert back.n_must_link == 3
    with open(tmp_path / "a.csv", newline="") as fh:
        assert all(r[0] in ids and r[1] in ids for r in list(csv.reader(fh))[1:])


# ------------------------------------------------------------------ --plot
def test_cluster_plot_draws_embedding_and_constraints(capsys, blobs):
    import matplotlib.image

    d, X, y = blobs
    (d / "pairs.csv").write_text("i,j,kind\n0,1,cl\n2,3,cl\n")
    same = np.flatnonzero(y == y[10])[:2]
    with open(d / "pairs.csv", "a") as fh:
        fh.write(f"{same[0]},{same[1]},ml\n")
    code, out, err = run(
        capsys,
        "cluster",
        d / "x.csv",
        "-k",
        3,
        "-m",
        "ncut",
        "-c",
        d / "pairs.csv",
        "--plot",
        d / "fig.png",
        "-o",
        d / "out.csv",
    )
    assert code == 0, err
    assert "plot written to" in out and "NCut embedding coordinates" in out
    img = matplotlib.image.imread(d / "fig.png")
    assert img.ndim == 3 and img.shape[0] > 100
    assert sorted(p.name for p in d.iterdir()) == ["fig.png", "out.csv", "pairs.csv", "x.csv"]


def test_plot_clustering_styles_must_and_cannot_links(blobs):
    from spectralink.constraints import Constraints
    from spectralink.plots import plot_clustering

    d, X, y = blobs
    cons = Constraints([(0, 1), (2, 3)], [(0, 50)], n_samples=len(X))
    fig = plot_clustering(X, y, cons)
    ax = fig.axes[0]
    lines = {c.get_label(): c for c in ax.collections if c.get_label().endswith(")")}
    assert set(lines) == {"must-link (2)", "cannot-link (1)"}
    # solid: no dash pattern; dashed: a dash pattern with gaps
    assert lines["must-link (2)"].get_linestyle()[0][1] is None
    assert lines["cannot-link (1)"].get_linestyle()[0][1] is not None
    seg = lines["cannot-link (1)"].get_segments()[0]
    np.testing.assert_allclose(seg, X[[0, 50]])
    scatter = [c for c in ax.collections if c.get_label().startswith("cluster")]
    assert len(scatter) == 3 and sum(len(c.get_offsets()) for c in scatter) == len(X)


def test_embedding_2d_spectral_coordinates_or_pca(blobs):
    from spectralink import COPKMeans, NCut
    from spectralink.plots import embedding_2d

    d, X, y = blobs
    # overlapping blobs: a connected graph, whose first eigenvector is the trivial one
    Xo, _ = make_blobs(n_samples=90, centers=3, cluster_std=2.5, random_state=0)
    ncut = NCut(n_clusters=3, random_state=0).fit(Xo)
    coords, axes = embedding_2d(ncut, Xo)
    assert axes[0].startswith("NCut embedding")
    # the trivial first eigenvector (one sign) is skipped: the next two are drawn
    first = ncut.embedding_[:, 0]
    assert (first > 0).all() or (first < 0).all()
    np.testing.assert_allclose(coords, ncut.embedding_[:, 1:3])
    cop = COPKMeans(n_clusters=3, random_state=0).fit(X)
    coords, axes = embedding_2d(cop, X)
    assert axes == ("principal component 1", "principal component 2")
    Xc = X - X.mean(axis=0)
    # PCA of 2-d data is a rotation: distances are kept
    np.testing.assert_allclose(
        np.linalg.norm(coords, axis=1), np.linalg.norm(Xc, axis=1), rtol=1e-10
    )


def test_cluster_plot_bad_path_writes_nothing(capsys, blobs):
    d, X, y = blobs
    for bad, needle in (
        (d / "nodir" / "f.png", "output directory does not exist"),
        (d / "f.pdf", "name it .png"),
    ):
        code, out, err = run(
            capsys, "cluster", d / "x.csv", "-k", 3, "--plot", bad, "-o", d / "out.csv"
        )
        assert_one_line_error(code, err, needle)
        assert not (d / "out.csv").exists()


# ------------------------------------------------------------------ Parquet
def test_parquet_input_with_the_column_options(capsys, tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    X, y = make_blobs(n_samples=60, centers=3, cluster_std=0.6, random_state=2)
    df = pd.DataFrame({"name": [f"p{t}" for t in range(60)], "a": X[:, 0], "b": X[:, 1]})
    df["note"] = "text"
    df["noise"] = np.arange(60) * 100.0
    df.to_parquet(tmp_path / "x.parquet")
    code, out, err = run(
        capsys,
        "cluster",
        tmp_path / "x.parquet",
        "-k",
        3,
        "--id-column",
        "name",
        "--drop",
        "note,5",
        "-y",
        _save_labels(tmp_path, y),
        "-o",
        tmp_path / "out.csv",
    )
    assert code == 0, err
    assert "ARI        1.0000" in out
    with open(tmp_path / "out.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["id", "label"] and rows[1][0] == "p0" and len(rows) == 61
    # --columns by name gives the same; a text column used as a feature is refused
    code, out, err = run(
        capsys,
        "cluster",
        tmp_path / "x.parquet",
        "-k",
        3,
        "--columns",
        "a,b",
        "-o",
        tmp_path / "out2.csv",
    )
    assert code == 0, err
    a = np.loadtxt(tmp_path / "out2.csv", skiprows=1)
    b = np.array([int(r[1]) for r in rows[1:]])
    assert adjusted_rand_score(a, b) == 1.0
    code, out, err = run(
        capsys,
        "cluster",
        tmp_path / "x.parquet",
        "-k",
        3,
        "--drop",
        "note",
        "-o",
        tmp_path / "out3.csv",
    )
    # text columns are left out, named: 'name', one value per row, looks like an ID
    assert code == 0, err
    assert "left out of the features: name (" in err
    assert "name: one value per row (--id-column?)" in err
    assert "features (3 columns): a, b, noise" in err


def _save_labels(d, y):
    np.save(d / "y.npy", y)
    return d / "y.npy"


def test_parquet_named_index_and_missing_values(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from spectralink.io import read_parquet_table

    df = pd.DataFrame({"id": ["u", "v", "w"], "a": [1.0, 2.0, 3.0]}).set_index("id")
    df.to_parquet(tmp_path / "i.parquet")
    t = read_parquet_table(tmp_path / "i.parquet", id_column="id")
    assert t.ids.tolist() == ["u", "v", "w"] and t.X.ravel().tolist() == [1.0, 2.0, 3.0]
    assert any("saved index (id)" in note for note in t.notes)
    pd.DataFrame({"a": [1.0, None, 3.0]}).to_parquet(tmp_path / "m.parquet")
    with pytest.raises(ValueError, match=r"row 2, column 1 \('a'\): an empty cell"):
        read_parquet_table(tmp_path / "m.parquet")


def test_parquet_without_the_extra_names_it(capsys, tmp_path, monkeypatch):
    (tmp_path / "x.parquet").write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import fails
    code, out, err = run(
        capsys, "cluster", tmp_path / "x.parquet", "-k", 2, "-o", tmp_path / "o.csv"
    )
    assert_one_line_error(code, err, "reading Parquet needs pyarrow")
    assert "pip install 'spectralink[parquet]'" in err
    assert not (tmp_path / "o.csv").exists()


def test_parquet_labels_and_partial_labels(capsys, tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    X, y = make_blobs(n_samples=60, centers=3, cluster_std=0.6, random_state=2)
    np.savetxt(tmp_path / "x.csv", X, delimiter=",")
    names = np.array(["ant", "bee", "cat"])[y]
    pd.DataFrame({"label": names}).to_parquet(tmp_path / "y.parquet")
    assert list(read_labels(tmp_path / "y.parquet", 60)) == list(names)
    # a label column among others is found by its name; missing and negative = unlabelled
    part = np.where(np.arange(60) < 30, y, -1).astype(float)
    part[0] = np.nan
    pd.DataFrame({"id": np.arange(60), "class": part}).to_parquet(tmp_path / "p.parquet")
    got = read_labels(tmp_path / "p.parquet", 60)
    assert got.dtype == np.int64
    assert got[0] == -1 and np.all(got[30:] == -1) and np.array_equal(got[1:30], y[1:30])
    code, out, err = run(
        capsys,
        "cluster",
        tmp_path / "x.csv",
        "-k",
        3,
        "--method",
        "ccsr",
        "--labeled",
        tmp_path / "p.parquet",
        "-y",
        tmp_path / "y.parquet",
        "-o",
        tmp_path / "out.csv",
    )
    assert code == 0, err
    assert "ARI        1.0000" in out
    # two columns, neither named like a label: one clear line
    pd.DataFrame({"a": y, "b": y}).to_parquet(tmp_path / "bad.parquet")
    code, out, err = run(
        capsys,
        "cluster",
        tmp_path / "x.csv",
        "-k",
        3,
        "-y",
        tmp_path / "bad.parquet",
        "-o",
        tmp_path / "o2.csv",
    )
    assert_one_line_error(code, err, "expected one label column")
    assert not (tmp_path / "o2.csv").exists()
