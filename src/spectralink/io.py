"""Reading feature tables as users have them: CSV/TSV/whitespace text files, and Parquet.

:func:`read_text_table` turns a delimited text file into a float matrix while
handling what real files hold: a header row (also one of numeric names ``0,1,...``
as written by ``DataFrame.to_csv`` of a NumPy array), the unnamed index column
pandas writes first, columns chosen or dropped by name or position, an ID column
kept aside, and errors that point at the file's line and column (both 1-based).
:func:`read_parquet_table` reads Parquet files through pandas and pyarrow (the optional
extra ``spectralink[parquet]``) with the same column options.
"""

from __future__ import annotations

import csv
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from os import PathLike
from pathlib import Path

import numpy as np

__all__ = ["PARQUET_SUFFIXES", "Table", "read_parquet_table", "read_text_table"]

HEADER_CHOICES = ("auto", "yes", "no")
#: file name endings read as Parquet
PARQUET_SUFFIXES = (".parquet", ".pq")


@dataclass
class Table:
    """Features read from a file, with what the reader decided on the way.

    Attributes
    ----------
    X : ndarray of shape (n_rows, n_features)
        The numeric features.
    names : list of str
        Column name of each feature (``"column J"`` when the file has no header).
    ids : ndarray of shape (n_rows,) or None
        Values of the ID column, as strings, when one was asked for.
    notes : list of str
        Decisions worth telling the user (a dropped index column, a numeric header).
    """

    X: np.ndarray
    names: list[str]
    ids: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _rows(path: Path, delimiter: str | None) -> Iterator[tuple[int, list[str]]]:
    """Non-blank, non-comment rows with their 1-based line numbers."""
    with open(path, newline="") as fh:
        if delimiter is None:
            for lineno, line in enumerate(fh, start=1):
                if line.strip() and not line.lstrip().startswith("#"):
                    yield lineno, line.split()
            return
        reader = csv.reader(fh, delimiter=delimiter)
        for row in reader:
            # reader.line_num is the line the row ends on (quoted fields may span lines)
            cells = [c.strip() for c in row]
            if not cells or all(c == "" for c in cells) or cells[0].startswith("#"):
                continue
            yield reader.line_num, cells


def _fast_numeric(path: Path, delimiter: str | None, skiprows: int) -> np.ndarray | None:
    """The whole table through NumPy's C parser, or None when it is not all finite numbers.

    The common case (a clean numeric file) is read at ``np.loadtxt`` speed; anything
    else falls back to the row reader, which locates the problem for the message.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "input contains no data": reported by the caller
        try:
            X = np.loadtxt(
                path,
                delimiter=delimiter,
                skiprows=skiprows,
                ndmin=2,
                dtype=np.float64,
                comments="#",
            )
        except ValueError:
            return None
    return X if X.size and np.isfinite(X).all() else None


def _is_numeric_header(first: list[str]) -> bool:
    """``0,1,...,d-1`` exactly: the column names of a DataFrame built from an array."""
    return [c.strip() for c in first] == [str(j) for j in range(len(first))]


def _resolve(spec: str, names: list[str] | None, n_cols: int, option: str) -> list[int]:
    """``"a,b,3"`` -> 0-based column indices: a header name first, else a 1-based position."""
    out = []
    for token in (t.strip() for t in spec.split(",")):
        if not token:
            continue
        if names is not None and token in names:
            out.append(names.index(token))
            continue
        try:
            pos = int(token)
        except ValueError:
            known = f"; the columns are {', '.join(map(repr, names))}" if names else ""
            raise ValueError(f"{option}: no column named {token!r}{known}.") from None
        if not 1 <= pos <= n_cols:
            raise ValueError(
                f"{option}: column position {pos} is out of range; positions run from 1 "
                f"to {n_cols}."
            )
        out.append(pos - 1)
    if not out:
        raise ValueError(f"{option} is empty; give column names or 1-based positions.")
    return out



def _choose_columns(
    path, names, n_cols: int, keep: list[int], columns, drop, id_column, id_option: str
) -> tuple[list[int], int | None]:
    """Feature columns (from ``keep``, or ``columns``, less ``drop`` and the ID column) and
    the ID column's index, for text and Parquet tables alike."""
    id_j = None if id_column is None else _resolve(id_column, names, n_cols, id_option)[0]
    if columns is not None:
        keep = list(dict.fromkeys(_resolve(columns, names, n_cols, "--columns")))
    keep = [j for j in keep if j != id_j]
    if drop is not None:
        dropped = set(_resolve(drop, names, n_cols, "--drop"))
        keep = [j for j in keep if j not in dropped]
    if not keep:
        raise ValueError(f"{path}: no feature columns are left to use.")
    return keep, id_j

def read_text_table(
    path: str | PathLike,
    delimiter: str | None,
    *,
    header: str = "auto",
    columns: str | None = None,
    drop: str | None = None,
    id_column: str | None = None,
    id_option: str = "--id-column",
) -> Table:
    """Read a delimited text file of features.

    Parameters
    ----------
    path : str or path-like
        The file.
    delimiter : str or None
        Field separator; ``None`` splits on any whitespace.
    header : {"auto", "yes", "no"}, default="auto"
        Whether the first row holds column names. ``"auto"`` takes it as a header when
        one of its cells is not a number, or when it is exactly ``0,1,...,d-1`` (the
        names pandas gives the columns of an array); ``"yes"``/``"no"`` decide.
    columns : str, optional
        Comma-separated columns to use, by header name or 1-based position.
    drop : str, optional
        Comma-separated columns to leave out, by header name or 1-based position.
    id_column : str, optional
        A column (name or 1-based position) of row identifiers, kept aside in
        :attr:`Table.ids` and never used as a feature.
    id_option : str, default="--id-column"
        How messages name ``id_column`` (``compare`` reads its label column this way).

    Returns
    -------
    table : Table

    Notes
    -----
    With a header whose first cell is empty and a first column holding exactly
    ``0..n-1`` (what ``DataFrame.to_csv()`` writes), that column is an index, not a
    feature: it is dropped and a note says so. Line and column numbers in messages
    are the file's, 1-based.
    """
    path = Path(path)
    if header not in HEADER_CHOICES:
        raise ValueError(f"header must be one of {', '.join(HEADER_CHOICES)}, got {header!r}.")
    head = list(islice(_rows(path, delimiter), 2))
    if not head:
        raise ValueError(f"{path}: holds no data rows.")
    notes: list[str] = []
    first = head[0][1]
    if header == "auto":
        has_header = not all(_is_number(c) for c in first) or (
            len(head) > 1 and _is_numeric_header(first)
        )
        if has_header and all(_is_number(c) for c in first):
            notes.append(
                f"{path}: line {head[0][0]} (0,1,...,{len(first) - 1}) read as column "
                "names; use --header no if it is data."
            )
    else:
        has_header = header == "yes"
    names = first if has_header else None
    if has_header and len(head) < 2:
        raise ValueError(f"{path}: holds no data rows (only a header).")
    n_cols = len(first)

    def label(j: int) -> str:
        return f"column {j + 1}" + (f" ({names[j]!r})" if names is not None and names[j] else "")

    def select(first_col_is_range: bool) -> tuple[list[int], int | None]:
        keep = list(range(n_cols))
        # pandas writes the index unnamed; read and saved again, it is "Unnamed: 0"
        if names is not None and names[0] in ("", "Unnamed: 0") and n_cols > 1:
            if first_col_is_range:
                keep.remove(0)
                notes.append(
                    f"{path}: the first column (no name, values 0..n-1) is an index "
                    "written by pandas; it is not used as a feature."
                )
        return _choose_columns(path, names, n_cols, keep, columns, drop, id_column, id_option)

    def names_of(keep: list[int]) -> list[str]:
        return [names[j] if names is not None and names[j] else f"column {j + 1}" for j in keep]

    if id_column is None:
        X = _fast_numeric(path, delimiter, head[0][0] if has_header else 0)
        if X is not None and X.shape[1] == n_cols:
            keep, _ = select(np.array_equal(X[:, 0], np.arange(len(X))))
            if keep != list(range(n_cols)):
                X = np.ascontiguousarray(X[:, keep])
            return Table(X=X, names=names_of(keep), notes=notes)

    # the row reader: slower, but it knows each cell's line and column for the message
    body = list(_rows(path, delimiter))[1 if has_header else 0 :]
    for lineno, cells in body:
        if len(cells) != n_cols:
            raise ValueError(
                f"{path}: line {lineno} has {len(cells)} fields, expected {n_cols}"
                + (" (as in the header)." if names is not None else " (as on the first row).")
            )
    cells = np.array([c for _, c in body], dtype=object)
    lines = [ln for ln, _ in body]
    n = len(body)
    keep, id_j = select([str(v) for v in cells[:, 0]] == [str(i) for i in range(n)])
    ids = None if id_j is None else cells[:, id_j].astype(str)
    block = cells[:, keep]
    try:
        X = block.astype(np.float64)
    except ValueError:
        for jj, j in enumerate(keep):
            for r in range(n):
                text = block[r, jj]
                if not _is_number(text):
                    what = "an empty cell" if text == "" else f"{text!r} is not a number"
                    name = names[j] if names is not None and names[j] else str(j + 1)
                    raise ValueError(
                        f"{path}: line {lines[r]}, {label(j)}: {what}; features must be "
                        f"numbers (leave a column out with --drop {name})."
                    ) from None
        raise
    bad = ~np.isfinite(X)
    if bad.any():
        r, jj = np.argwhere(bad)[0]
        raise ValueError(
            f"{path}: line {lines[r]}, {label(keep[jj])}: non-finite value {block[r, jj]!r}."
        )
    return Table(X=X, names=names_of(keep), ids=ids, notes=notes)


def _import_pandas_for_parquet(path: Path):
    """pandas, when it and a Parquet engine are installed; else a message naming the extra."""
    missing = []
    try:
        import pandas as pd
    except ImportError:
        pd = None
        missing.append("pandas")
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        missing.append("pyarrow")
    if missing:
        raise ValueError(
            f"{path}: reading Parquet needs {' and '.join(missing)}; install them with "
            "pip install 'spectralink[parquet]'."
        )
    return pd


def _read_parquet_frame(path: Path):
    """``(pandas, DataFrame)`` of a Parquet file; a bad file is one clear ``ValueError``."""
    pd = _import_pandas_for_parquet(path)
    try:
        df = pd.read_parquet(path, engine="pyarrow")
    except Exception as exc:  # pyarrow raises its own types for every kind of bad file
        raise ValueError(
            f"{path}: not a readable Parquet file ({' '.join(str(exc).split())})"
        ) from None
    return pd, df


def read_parquet_table(
    path: str | PathLike,
    *,
    columns: str | None = None,
    drop: str | None = None,
    id_column: str | None = None,
) -> Table:
    """Read a Parquet file of features (through pandas and pyarrow).

    Parameters
    ----------
    path : str or path-like
        The file.
    columns, drop, id_column : str, optional
        As in :func:`read_text_table`: columns by name or 1-based position.

    Returns
    -------
    table : Table

    Notes
    -----
    A DataFrame's index saved in the file is not a feature: a named one (``id`` after
    ``df.set_index("id")``) becomes a column, first, that ``--id-column`` can name; an
    unnamed one is left out. Rows in messages are 1-based.
    """
    path = Path(path)
    pd, df = _read_parquet_frame(path)
    notes: list[str] = []
    if not isinstance(df.index, pd.RangeIndex) or not df.index.equals(pd.RangeIndex(len(df))):
        named = [str(name) for name in df.index.names if name is not None]
        if named:
            df = df.reset_index()
            notes.append(
                f"{path}: the saved index ({', '.join(named)}) is read as the first "
                "column(s); name it with --id-column or leave it out with --drop."
            )
        else:
            notes.append(f"{path}: the saved (unnamed) index is not used as a feature.")
    if len(df) == 0 or df.shape[1] == 0:
        raise ValueError(f"{path}: holds no data rows.")
    names = [str(c) for c in df.columns]
    n_cols = len(names)
    keep, id_j = _choose_columns(
        path, names, n_cols, list(range(n_cols)), columns, drop, id_column, "--id-column"
    )
    for j in keep:
        col = df.iloc[:, j]
        if not (pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col)):
            raise ValueError(
                f"{path}: column {j + 1} ({names[j]!r}) holds {col.dtype} values; features "
                f"must be numbers (leave a column out with --drop {names[j]})."
            )
    X = df.iloc[:, keep].to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(X)
    if bad.any():
        r, jj = np.argwhere(bad)[0]
        what = "a missing value" if np.isnan(X[r, jj]) else f"non-finite value {X[r, jj]}"
        raise ValueError(
            f"{path}: row {r + 1}, column {keep[jj] + 1} ({names[keep[jj]]!r}): {what}."
        )
    ids = None if id_j is None else df.iloc[:, id_j].astype(str).to_numpy()
    return Table(X=np.ascontiguousarray(X), names=[names[j] for j in keep], ids=ids, notes=notes)
