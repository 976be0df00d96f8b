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


def test_unnamed_first_column_that_is_not_0_to_n_is_kept(tmp_path):
    X = X3.copy()
    X[:, 0] = [3, 1, 2, 0]
    path = write(tmp_path, ",a,b\n" + body(X))
    t = read_text_table(path, ",")
    np.testing.assert_array_equal(t.X, X)
    assert t.notes == []


@pytest.mark.parametrize(("header", "n_rows"), [("auto", 4), ("yes", 4), ("no", 5)])
def test_numeric_header_0_to_d_minus_1(tmp_path, header, n_rows):
    path = write(tmp_path, "0,1,2\n" + body(X3))
    t = read_text_table(path, ",", header=header)
    assert t.X.shape == (n_rows, 3)
    np.testing.assert_array_equal(t.X[-4:], X3)
    if header == "auto":
        assert t.names == ["0", "1", "2"] and "--header no" in t.notes[0]


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


def test_non_numeric_column_named_with_a_drop_hint(tmp_path):
    path = write(tmp_path, "a,b,c,species\n" + body(X3, extra=["x", "y", "x", "z"]))
    with pytest.raises(ValueError, match=r"line 2, column 4 \('species'\): 'x' is not a number"):
        read_text_table(path, ",")
    with pytest.raises(ValueError, match="--drop species"):
        read_text_table(path, ",")
    np.testing.assert_array_equal(read_text_table(path, ",", drop="species").X, X3)


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
