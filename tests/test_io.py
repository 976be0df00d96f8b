"""Tests of reading files as users have them and of atomic writes (``spectralink.io``)."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from spectralink.io import atomic_write, read_text_table

X3 = np.array([[1.5, 2.0, -1.0], [0.5, 4.0, 3.0], [2.5, 0.0, 1.0], [7.0, 1.0, 2.0]])


def write(tmp_path, text, name="t.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def body(X, index=False, extra=None):
    rows = []
    for i, row in enumerate(X):
        cells = ([str(i)] if index else []) + [repr(float(v)) for v in row]
        rows.append(",".join(cells + ([extra[i]] if extra else [])))
    return "\n".join(rows) + "\n"


def test_pandas_index_column_is_dropped_with_a_note(tmp_path):
    path = write(tmp_path, ",a,b,c\n" + body(X3, index=True))
    t = read_text_table(path, ",")
    np.testing.assert_array_equal(t.X, X3)
    assert t.names == ["a", "b", "c"]
    assert len(t.notes) == 1 and "index" in t.notes[0]


def test_unnamed_first_column_of_distinct_integers_is_an_index(tmp_path):
    # df.dropna().to_csv(): the index no longer runs 0..n-1, and is still not a feature
    X = X3.copy()
    X[:, 0] = [3, 10, 2, 7]
    path = write(tmp_path, ",a,b\n" + body(X))
    t = read_text_table(path, ",")
    np.testing.assert_array_equal(t.X, X[:, 1:])
    assert t.names == ["a", "b"] and t.left_out == ["column 1 (index)"]
    assert "index" in t.notes[0] and "id_column='1'" in t.notes[0]
    # a column named like a pandas index anywhere, also in the row reader's path
    path = write(tmp_path, "a,index,b,id\n" + body(X[:, [1, 0, 2]], extra=list("pqrs")))
    t = read_text_table(path, ",", id_column="id")
    np.testing.assert_array_equal(t.X, X[:, 1:])
    assert t.left_out == ["index (index)", "id (ID)"]


def test_unnamed_first_column_that_is_not_integers_is_kept(tmp_path):
    X = X3.copy()
    X[:, 0] = [3.5, 1, 2, 0]
    path = write(tmp_path, ",a,b\n" + body(X))
    t = read_text_table(path, ",")
    np.testing.assert_array_equal(t.X, X)
    assert t.notes == []
    # --columns naming an index-like column keeps it: the user chose it
    X[:, 0] = [3, 1, 2, 0]
    path = write(tmp_path, "index,a,b\n" + body(X))
    np.testing.assert_array_equal(read_text_table(path, ",", columns="index,a,b").X, X)


@pytest.mark.parametrize(("header", "n_rows"), [("auto", 4), ("yes", 4), ("no", 5)])
def test_numeric_header_0_to_d_minus_1(tmp_path, header, n_rows):
    path = write(tmp_path, "0,1,2\n" + body(X3))
    t = read_text_table(path, ",", header=header)
    assert t.X.shape == (n_rows, 3)
    np.testing.assert_array_equal(t.X[-4:], X3)
    if header == "auto":
        assert t.names == ["0", "1", "2"] and "header='no'" in t.notes[0]


def test_numeric_first_row_other_than_0_to_d_minus_1_is_data(tmp_path):
    path = write(tmp_path, "0,1,3\n" + body(X3))
    assert read_text_table(path, ",").X.shape == (5, 3)


def test_header_yes_takes_a_numeric_first_row_as_names(tmp_path):
    path = write(tmp_path, body(X3))
    t = read_text_table(path, ",", header="yes")
    np.testing.assert_array_equal(t.X, X3[1:])


def test_columns_and_drop_by_name_or_position(tmp_path):
    path = write(tmp_path, "a,b,c\n" + body(X3))
    np.testing.assert_array_equal(read_text_table(path, ",", columns="c,1").X, X3[:, [2, 0]])
    np.testing.assert_array_equal(read_text_table(path, ",", drop="b").X, X3[:, [0, 2]])
    np.testing.assert_array_equal(read_text_table(path, ",", drop="2,3").X, X3[:, [0]])
    with pytest.raises(ValueError, match="no column named 'x'; the columns are 'a', 'b', 'c'"):
        read_text_table(path, ",", columns="x")
    with pytest.raises(ValueError, match="position 4 is out of range; positions run from 1 to 3"):
        read_text_table(path, ",", drop="4")
    with pytest.raises(ValueError, match="no feature columns are left"):
        read_text_table(path, ",", drop="a,b,c")


def test_text_column_left_out_with_a_note_or_encoded(tmp_path):
    path = write(tmp_path, "a,b,c,species\n" + body(X3, extra=["x", "y", "x", "z"]))
    t = read_text_table(path, ",")
    np.testing.assert_array_equal(t.X, X3)
    assert t.left_out == ["species (text)"]
    assert "text column(s) left out of the features: species" in t.notes[0]
    assert "categorical='encode'" in t.notes[0]
    t = read_text_table(path, ",", categorical="encode")
    assert t.names == ["a", "b", "c", "species=x", "species=y", "species=z"]
    np.testing.assert_array_equal(t.X[:, 3:], [[1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1]])
    np.testing.assert_array_equal(read_text_table(path, ",", drop="species").X, X3)
    # named in --columns, a text column is an error that names both ways out
    with pytest.raises(ValueError, match=r"line 2, column 4 \('species'\): 'x' is not a number"):
        read_text_table(path, ",", columns="a,species")
    # a text column with one value per row is a name, never encoded; the note says so
    path = write(tmp_path, "a,b,c,name\n" + body(X3, extra=["p", "q", "r", "s"]))
    t = read_text_table(path, ",", categorical="encode")
    assert t.names == ["a", "b", "c"] and "name: one value per row (id_column?)" in t.notes[0]


def test_a_text_cell_among_numbers_is_an_error_not_a_text_column(tmp_path):
    path = write(tmp_path, "a,b\n1,2\n3,4\n5,x6\n7,8\n")
    with pytest.raises(ValueError, match=r"line 4, column 2 \('b'\): 'x6' is not a number"):
        read_text_table(path, ",")


def test_missing_cells_error_drop_or_impute(tmp_path):
    text = "a,b,kind,id\n1,2,u,r0\n,4,v,r1\n5,NA,u,r2\n7,8,,r3\n9,10,v,r4\n"
    path = write(tmp_path, text)
    # error: the first empty cell, how many rows have one, and the three ways out
    with pytest.raises(ValueError, match=r"line 3, column 1 \('a'\): an empty cell \(2 of 5 "):
        read_text_table(path, ",", id_column="id")
    with pytest.raises(ValueError, match="missing='drop' .* missing='impute' .* drop='a'"):
        read_text_table(path, ",", id_column="id")
    # drop: rows with an empty feature cell left out (the empty text cell does not count)
    t = read_text_table(path, ",", id_column="id", missing="drop")
    np.testing.assert_array_equal(t.X, [[1, 2], [7, 8], [9, 10]])
    np.testing.assert_array_equal(t.rows, [0, 3, 4])
    assert list(t.ids) == ["r0", "r3", "r4"] and list(t.ids_read) == [f"r{i}" for i in range(5)]
    assert t.n_read == 5
    assert "missing='drop': 2 of 5 rows left out for empty cells (a 1, b 1; line 3, line 4)" in (
        t.notes
    )
    # ...but an encoded text column's empty cell does
    t = read_text_table(path, ",", id_column="id", missing="drop", categorical="encode")
    np.testing.assert_array_equal(t.rows, [0, 4])
    # impute: the column's mean; an encoded text column's most frequent value
    t = read_text_table(path, ",", id_column="id", missing="impute", categorical="encode")
    assert t.rows is None and t.names == ["a", "b", "kind=u", "kind=v"]
    np.testing.assert_allclose(t.X[1, 0], np.mean([1, 5, 7, 9]))
    np.testing.assert_allclose(t.X[2, 1], np.mean([2, 4, 8, 10]))
    np.testing.assert_array_equal(t.X[3, 2:], [1, 0])  # u: a tie with v broken by sort order
    assert "missing='impute': 3 empty cells" in t.notes[-1]


def test_describe_columns_names_used_and_left_out(tmp_path):
    from spectralink.tables import describe_columns

    path = write(tmp_path, ",a,b,c,species\n" + body(X3, index=True, extra=list("xyxz")))
    t = read_text_table(path, ",")
    line = describe_columns(t, 3)
    assert (
        line == "features (3 columns): a, b, c; left out (2 of 5): column 1 (index), species (text)"
    )
    many = ",".join(f"p{j}" for j in range(50))
    path = write(tmp_path, many + "\n" + ",".join(["1"] * 50) + "\n" + ",".join(["2"] * 50))
    line = describe_columns(read_text_table(path, ","), 50)
    assert line.startswith("features (50 columns): p0, p1,") and "(42 more), p48, p49" in line
    assert describe_columns(None, 64) == "features: all 64 columns of the array"


def test_id_column_kept_aside(tmp_path):
    path = write(tmp_path, "a,b,c,id\n" + body(X3, extra=["p1", "p2", "p3", "p4"]))
    t = read_text_table(path, ",", id_column="id")
    np.testing.assert_array_equal(t.X, X3)
    assert list(t.ids) == ["p1", "p2", "p3", "p4"]


def test_positions_are_the_files_lines_and_columns(tmp_path):
    # comment and blank lines count: the bad cell is on line 5 of the file, column 2
    text = "# made by hand\na,b,c\n1,2,3\n\n4,oops,6\n"
    path = write(tmp_path, text)
    with pytest.raises(ValueError, match=r"line 5, column 2 \('b'\): 'oops' is not a number"):
        read_text_table(path, ",")
    path = write(tmp_path, "1,2,3\n4,,6\n")
    with pytest.raises(ValueError, match="line 2, column 2: an empty cell"):
        read_text_table(path, ",")
    path = write(tmp_path, "1,2,3\n4,inf,6\n")
    with pytest.raises(ValueError, match="line 2, column 2: non-finite value 'inf'"):
        read_text_table(path, ",")
    path = write(tmp_path, "a,b,c\n1,2,3\n4,5\n")
    with pytest.raises(ValueError, match="line 3 has 2 fields, expected 3"):
        read_text_table(path, ",")


def test_whitespace_table(tmp_path):
    path = write(tmp_path, "x y z\n" + body(X3).replace(",", "  "), name="t.txt")
    np.testing.assert_array_equal(read_text_table(path, None).X, X3)


def test_row_reader_path_also_drops_the_index_and_reads_quoted_numbers(tmp_path):
    # quoted cells and an ID column are beyond NumPy's fast parser: the row reader
    # must reach the same table
    ids = ["u", "v", "w", "x"]
    rows = [f'{i},"{a}",{b},{c},{ids[i]}' for i, (a, b, c) in enumerate(X3.tolist())]
    path = write(tmp_path, "Unnamed: 0,a,b,c,id\n" + "\n".join(rows) + "\n")
    t = read_text_table(path, ",", id_column="5")
    np.testing.assert_array_equal(t.X, X3)
    assert list(t.ids) == ids and t.names == ["a", "b", "c"]
    assert "index" in t.notes[0]


def test_atomic_write_keeps_old_file_on_failure(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as fh:
            fh.write("half")
            raise RuntimeError("boom")
    assert target.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["out.txt"]
    with atomic_write(target) as fh:
        fh.write("new\n")
    assert target.read_text() == "new\n"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_atomic_write_gives_plain_open_permissions(tmp_path):
    # a temporary file is created owner-only; the result must not stay that way
    old = os.umask(0o022)
    try:
        with atomic_write(tmp_path / "new.txt") as fh:
            fh.write("x")
        assert stat.S_IMODE(os.stat(tmp_path / "new.txt").st_mode) == 0o644
        kept = tmp_path / "kept.txt"
        kept.write_text("old")
        os.chmod(kept, 0o640)
        with atomic_write(kept) as fh:
            fh.write("new")
        assert stat.S_IMODE(os.stat(kept).st_mode) == 0o640
    finally:
        os.umask(old)


def test_messages_name_flags_when_the_command_line_reads(tmp_path):
    """The readers name their keyword arguments; the command line passes FLAGS and the
    same message names its flags (compare renames its label column's flag)."""
    from spectralink.tables import FLAGS, Spelling

    path = write(tmp_path, "a,b,id\n1,2,r0\n,4,r1\n5,6,r2\n")
    with pytest.raises(ValueError, match="--missing drop .* --missing impute .* --drop a"):
        read_text_table(path, ",", id_column="id", spelling=FLAGS)
    renamed = Spelling(flags=True, renamed=(("id_column", "--label-column"),))
    with pytest.raises(ValueError, match="--label-column: no column named 'nope'"):
        read_text_table(path, ",", id_column="nope", spelling=renamed)
