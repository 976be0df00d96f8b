"""Feature tables as users have them: text and Parquet files turned into a float matrix.

What real tables hold, and what happens to it:

* a header row (also one of numeric names ``0,1,...`` as ``DataFrame.to_csv`` writes for an
  array), columns chosen or dropped by name or position, an ID column kept aside;
* **an index is never a feature**: an unnamed column, or one named like a pandas index
  (``Unnamed: 0``, ``index``, ``level_0``), holding distinct integers is left out with a note
  (it does not become the row ID by itself: rows stay named by their position, as in the
  same table written with ``index=False``; ``id_column`` names it explicitly);
* **text columns** are left out with a note naming them, or one-hot encoded
  (``categorical="encode"``); a text cell in a column of numbers is an error naming it;
* **empty cells** (also ``nan``, ``NA``, ``N/A``, ``null``) in the feature columns are an
  error (``missing="error"``) that counts them and names the options, or their rows are left
  out (``"drop"``: :attr:`Table.rows` keeps the positions of the rows kept), or they are
  filled with the column's mean (``"impute"``; the most frequent value of an encoded text
  column).

Messages point at the file's line and column (both 1-based). :func:`read_text_table` reads
delimited text, :func:`read_parquet_table` Parquet (through pandas and pyarrow, the optional
extra ``spectralink[parquet]``); :func:`describe_columns` is the one line saying which columns
are used.
"""

from __future__ import annotations

import csv
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from .cells import Column, is_number, numeric_column, parse_cells
from .exceptions import MissingExtraError
from .utils import StrOptions, validate_params

__all__ = [
    "CATEGORICAL_CHOICES",
    "FLAGS",
    "HEADER_CHOICES",
    "KEYWORDS",
    "MISSING_CHOICES",
    "Spelling",
    "Table",
    "describe_columns",
    "is_number",
    "read_parquet_frame",
    "read_parquet_table",
    "read_text_table",
]

HEADER_CHOICES = ("auto", "yes", "no")


@dataclass(frozen=True)
class Spelling:
    """How messages name the reading options (the keyword arguments of the readers): as
    themselves (:data:`KEYWORDS`, ``missing='drop'``) or as a command line's flags
    (:data:`FLAGS`, ``--missing drop``; ``renamed`` maps an option to another flag).

    The readers raise errors that name the option to change; the command line passes
    :data:`FLAGS` so that the same message names its flag.
    """

    flags: bool = False
    renamed: tuple[tuple[str, str], ...] = ()

    def __call__(self, option: str, value: str | None = None) -> str:
        """``option`` (with ``value``) as a user would write it."""
        if not self.flags:
            return option if value is None else f"{option}={value!r}"
        flag = dict(self.renamed).get(option, "--" + option.replace("_", "-"))
        return flag if value is None else f"{flag} {value}"


#: Options named as the readers' keyword arguments (the default).
KEYWORDS = Spelling()
#: Options named as ``spectralink``'s flags.
FLAGS = Spelling(flags=True)

#: What to do with empty cells in the feature columns (``missing``).
MISSING_CHOICES = ("error", "drop", "impute")
#: What to do with text columns (``categorical``): leave them out, or one-hot encode them.
CATEGORICAL_CHOICES = ("drop", "encode")

#: Cells read as missing (lower-cased): empty, and what pandas and R write for NaN / NA.
#: Column names pandas gives an index it writes or resets.
_INDEX_NAME = re.compile(r"^(|Unnamed: \d+|index|level_0)$")
#: Columns named in one line before it is shortened to the first and last few.
_SHOWN = 8


@dataclass
class Table:
    """Features read from a file, with what the reader decided on the way.

    Attributes
    ----------
    X : ndarray of shape (n_rows, n_features)
        The numeric features of the rows kept.
    names : list of str
        Column name of each feature (``"column J"`` when the file has no header; ``"col=value"``
        for a one-hot encoded text column).
    ids : ndarray of shape (n_rows,) or None
        Values of the ID column for the rows kept, as strings, when one was asked for.
    notes : list of str
        Decisions worth telling the user (an index column, text columns, rows left out).
    rows : ndarray of shape (n_rows,) or None
        Positions (0-based, among the data rows read) of the rows kept; ``None`` when every
        row was kept.
    n_read : int
        Data rows in the file.
    ids_read : ndarray of shape (n_read,) or None
        The ID of every data row read, the rows left out included.
    left_out : list of str
        The columns of the file that are not features, each with the reason (``"id (ID)"``).
    n_columns : int
        Columns in the file.
    """

    X: np.ndarray
    names: list[str]
    ids: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)
    rows: np.ndarray | None = None
    n_read: int = 0
    ids_read: np.ndarray | None = None
    left_out: list[str] = field(default_factory=list)
    n_columns: int = 0


def _shorten(items: list[str], shown: int = _SHOWN) -> str:
    """``a, b, c`` or, for many, the first and last few with the count between."""
    if len(items) <= shown:
        return ", ".join(items)
    head, tail = items[: shown - 2], items[-2:]
    return f"{', '.join(head)}, ... ({len(items) - shown} more), {', '.join(tail)}"


def describe_columns(table: Table | None, n_features: int) -> str:
    """One line naming the feature columns used and those left out (with why)."""
    if table is None:
        return f"features: all {n_features} columns of the array"
    total = table.n_columns
    line = f"features ({len(table.names)} columns): {_shorten(table.names)}"
    if table.left_out:
        line += f"; left out ({len(table.left_out)} of {total}): {_shorten(table.left_out)}"
    return line


# --------------------------------------------------------------------------- reading cells
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


def _fastnumeric_column(path: Path, delimiter: str | None, skiprows: int) -> np.ndarray | None:
    """The whole table through NumPy's C parser, or None when it is not all finite numbers.

    The common case (a clean numeric file) is read at ``np.loadtxt`` speed; anything
    else falls back to the row reader, which locates the problem for the message.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "input contains no data": reported by the caller
        try:
            X = np.loadtxt(path, delimiter=delimiter, skiprows=skiprows, ndmin=2, comments="#")
        except ValueError:
            return None
    return X if X.size and np.isfinite(X).all() else None


def _is_numeric_header(first: list[str]) -> bool:
    """``0,1,...,d-1`` exactly: the column names of a DataFrame built from an array."""
    return [c.strip() for c in first] == [str(j) for j in range(len(first))]


# --------------------------------------------------------------------------- columns
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


@dataclass
class _Reading:
    """What one read needs besides the cells: the options and how to name places."""

    path: Path
    names: list[str] | None
    n_cols: int
    where: Callable[[int], str]  # row position -> "line 5" / "row 4"
    columns: str | None
    drop: str | None
    id_column: str | None
    spell: Spelling
    missing: str
    categorical: str

    def name(self, j: int) -> str:
        return self.names[j] if self.names is not None and self.names[j] else f"column {j + 1}"

    def label(self, j: int) -> str:
        named = self.names is not None and self.names[j]
        return f"column {j + 1}" + (f" ({self.names[j]!r})" if named else "")

    def option_name(self, j: int) -> str:
        """How ``drop`` names column ``j``: its name, else its position."""
        named = self.names is not None and self.names[j] and "," not in self.names[j]
        return self.names[j] if named else str(j + 1)


def _assemble(rd: _Reading, column: Callable[[int], Column], n: int, ids_cells) -> Table:
    """The table from its parsed columns: index, ID, text and missing cells decided."""
    notes: list[str] = []
    left_out: dict[int, str] = {}  # column -> "name (why)"
    keep, id_j, chosen = _choose_columns(rd, left_out)
    parsed = {j: column(j) for j in keep}
    if chosen is None:  # an index written by pandas is never a feature, unless --columns names it
        keep = _drop_index_columns(rd, keep, parsed, left_out, notes)
    text_cols = [j for j in keep if parsed[j].is_text]
    _check_stray_text(rd, keep, parsed, text_cols)
    encoded: dict[int, np.ndarray] = {}
    if text_cols:
        keep, encoded = _text_columns(rd, keep, parsed, text_cols, chosen, left_out, notes)
    _check_infinite(rd, keep, parsed, encoded)
    missing = np.column_stack([parsed[j].missing for j in keep])
    rows = None
    if missing.any():
        rows, note = _missing(rd, keep, missing, encoded, n)
        notes.append(note)
    take = slice(None) if rows is None else rows
    X, names = _fill(rd, keep, parsed, encoded, take, n if rows is None else len(rows))
    ids_read = None if id_j is None else np.asarray(ids_cells(id_j)).astype(str)
    return Table(
        X=X,
        names=names,
        ids=None if ids_read is None else ids_read[take],
        notes=notes,
        rows=rows,
        n_read=n,
        ids_read=ids_read,
        left_out=[left_out[j] for j in sorted(left_out)],
        n_columns=rd.n_cols,
    )


def _choose_columns(rd: _Reading, left_out: dict[int, str]) -> tuple[list[int], Any, Any]:
    """``(keep, id_column, chosen)``: the feature columns ``id_column``, ``columns`` and
    ``drop`` leave, the ID column, and the columns ``columns`` names (or None); the
    others are noted in ``left_out``."""
    id_j = None
    if rd.id_column is not None:
        id_j = _resolve(rd.id_column, rd.names, rd.n_cols, rd.spell("id_column"))[0]
        left_out[id_j] = f"{rd.name(id_j)} (ID)"
    chosen = None
    if rd.columns is not None:
        chosen = list(dict.fromkeys(_resolve(rd.columns, rd.names, rd.n_cols, rd.spell("columns"))))
    dropped = (
        set() if rd.drop is None else set(_resolve(rd.drop, rd.names, rd.n_cols, rd.spell("drop")))
    )
    keep = []
    for j in range(rd.n_cols) if chosen is None else chosen:
        if j == id_j:
            continue
        if j in dropped:
            left_out[j] = f"{rd.name(j)} ({rd.spell('drop')})"
            continue
        keep.append(j)
    if chosen is not None:
        for j in range(rd.n_cols):
            if j not in chosen and j != id_j and j not in dropped:
                left_out[j] = f"{rd.name(j)} (not in {rd.spell('columns')})"
    if not keep:
        raise ValueError(f"{rd.path}: no feature columns are left to use.")
    return keep, id_j, chosen


def _drop_index_columns(rd, keep: list[int], parsed, left_out, notes) -> list[int]:
    """``keep`` without the columns that are an index written by pandas (noted)."""
    if rd.names is None or rd.n_cols <= 1:
        return keep
    out = list(keep)
    for j in keep:
        if _INDEX_NAME.match(rd.names[j]) and parsed[j].is_index():
            out.remove(j)
            left_out[j] = f"{rd.name(j)} (index)"
            what = "no name" if not rd.names[j] else f"named {rd.names[j]!r}"
            notes.append(
                f"{rd.path}: {rd.label(j)} ({what}, distinct integers) is an index written by "
                f"pandas: not a feature ({rd.spell('id_column', str(j + 1))} names the rows by it)"
            )
    return out


def _check_stray_text(rd, keep: list[int], parsed, text_cols: list[int]) -> None:
    """A few text cells among numbers are typos to mend, not a text column: an error."""
    for j in keep:
        col = parsed[j]
        if col.text.any() and j not in text_cols:
            r = int(np.flatnonzero(col.text)[0])
            raise ValueError(
                f"{rd.path}: {rd.where(r)}, {rd.label(j)}: {str(col.cells[r])!r} is not a number "
                f"(the column's other cells are); correct the cell, or leave the column out "
                f"with {rd.spell('drop', rd.option_name(j))}."
            )


def _text_columns(rd, keep, parsed, text_cols, chosen, left_out, notes) -> tuple:
    """``(keep, encoded)``: the text columns left out (noted) or, with ``--categorical
    encode``, their levels to one-hot encode (a column of one value per row is an ID)."""
    if chosen is not None and rd.categorical == "drop":
        j = text_cols[0]
        r = int(np.flatnonzero(parsed[j].text)[0])
        raise ValueError(
            f"{rd.path}: {rd.where(r)}, {rd.label(j)}: {str(parsed[j].cells[r])!r} is not a "
            f"number: {rd.spell('columns')} names a text column; "
            f"{rd.spell('categorical', 'encode')} one-hot encodes it, or leave it out of "
            f"{rd.spell('columns')}."
        )
    unique = {j: _text_levels(parsed[j]) for j in text_cols}
    ids_like = [j for j in text_cols if len(unique[j]) == int((~parsed[j].missing).sum())]
    encoded = {}
    if rd.categorical == "encode":
        encoded = {j: unique[j] for j in text_cols if j not in ids_like}
    plain = [j for j in text_cols if j not in encoded]
    for j in plain:
        left_out[j] = f"{rd.name(j)} (text)"
    if plain:
        encode = rd.spell("categorical", "encode")
        hint = f"{encode} one-hot encodes them" if rd.categorical == "drop" else ""
        if ids_like and rd.id_column is None:
            names = ", ".join(rd.option_name(j) for j in ids_like)
            hint += (
                "; " if hint else ""
            ) + f"{names}: one value per row ({rd.spell('id_column')}?)"
        notes.append(
            f"{rd.path}: text column(s) left out of the features: "
            f"{', '.join(rd.name(j) for j in plain)}" + (f" ({hint})" if hint else "")
        )
    keep = [j for j in keep if j not in plain]
    if not keep:
        raise ValueError(
            f"{rd.path}: every column chosen holds text; features must be numbers "
            f"({rd.spell('categorical', 'encode')} one-hot encodes text columns)."
        )
    if encoded:
        notes.append(
            f"{rd.path}: text column(s) one-hot encoded: "
            + ", ".join(f"{rd.name(j)} ({len(encoded[j])} values)" for j in encoded)
        )
    return keep, encoded


def _check_infinite(rd, keep: list[int], parsed, encoded) -> None:
    """Infinities are errors whatever ``--missing`` says."""
    for j in keep:
        col = parsed[j]
        bad = np.flatnonzero(np.isinf(col.values))
        if len(bad) and j not in encoded:
            r = int(bad[0])
            cell = str(col.cells[r]) if col.cells is not None else str(col.values[r])
            raise ValueError(
                f"{rd.path}: {rd.where(r)}, {rd.label(j)}: non-finite value {cell!r}; correct "
                f"the cell, or leave the column out with {rd.spell('drop', rd.option_name(j))}."
            )


def _fill(rd, keep: list[int], parsed, encoded, take, n_rows: int) -> tuple[np.ndarray, list]:
    """``(X, names)``: the rows ``take`` of the kept columns in one array, text columns
    one-hot encoded, empty cells imputed with ``--missing impute``."""
    names: list[str] = []
    for j in keep:
        names += [f"{rd.name(j)}={v}" for v in encoded[j]] if j in encoded else [rd.name(j)]
    X = np.empty((n_rows, len(names)))
    at = 0
    for j in keep:
        col = parsed[j]
        if j in encoded:
            levels = encoded[j]
            cells = np.char.strip(col.cells[take].astype(str))
            if rd.missing == "impute":
                known = ~col.missing[take]
                values, counts = np.unique(cells[known], return_counts=True)
                cells = np.where(known, cells, values[np.argmax(counts)])
            X[:, at : at + len(levels)] = cells[:, None] == levels[None, :]
            at += len(levels)
        else:
            X[:, at] = col.values[take]
            if rd.missing == "impute":
                hole = np.isnan(X[:, at])
                X[hole, at] = np.nanmean(col.values)
            at += 1
    return X, names


def _text_levels(col: Column) -> np.ndarray:
    """The distinct values of a text column (sorted), missing cells left out."""
    return np.unique(np.char.strip(col.cells[~col.missing].astype(str)))


def _missing(
    rd: _Reading, keep: list[int], missing: np.ndarray, encoded: dict, n: int
) -> tuple[np.ndarray | None, str]:
    """``(rows kept or None, the note)`` for the empty cells ``missing`` of the features."""
    counts = missing.sum(axis=0)
    per_column = ", ".join(f"{rd.name(j)} {int(c)}" for j, c in zip(keep, counts, strict=True) if c)
    bad_rows = np.flatnonzero(missing.any(axis=1))
    if rd.missing == "error":
        r = int(bad_rows[0])
        j = keep[int(np.flatnonzero(missing[r])[0])]
        fill = "the column's mean" + (" (a text column's most frequent value)" if encoded else "")
        raise ValueError(
            f"{rd.path}: {rd.where(r)}, {rd.label(j)}: an empty cell ({len(bad_rows)} of {n} "
            f"rows have empty cells: {per_column}); {rd.spell('missing', 'drop')} leaves those "
            f"rows out, {rd.spell('missing', 'impute')} fills the cells with {fill}, or "
            f"{rd.spell('drop', rd.option_name(j))} leaves the column out."
        )
    where = _shorten([rd.where(int(r)) for r in bad_rows], 6)
    if rd.missing == "drop":
        rows = np.flatnonzero(~missing.any(axis=1))
        if len(rows) == 0:
            raise ValueError(
                f"{rd.path}: every row has an empty cell ({per_column}); "
                f"{rd.spell('missing', 'drop')} leaves none to cluster ({rd.spell('drop')} the "
                f"emptiest columns, or {rd.spell('missing', 'impute')})."
            )
        return rows, (
            f"{rd.spell('missing', 'drop')}: {len(bad_rows)} of {n} rows left out for empty cells "
            f"({per_column}; {where})"
        )
    return None, (
        f"{rd.spell('missing', 'impute')}: {int(counts.sum())} empty cells filled with the "
        "column's mean"
        + (" (text: the most frequent value)" if encoded else "")
        + f" ({per_column})"
    )


# --------------------------------------------------------------------------- text files
@validate_params(
    {
        "header": [StrOptions(set(HEADER_CHOICES))],
        "missing": [StrOptions(set(MISSING_CHOICES))],
        "categorical": [StrOptions(set(CATEGORICAL_CHOICES))],
    },
    prefer_skip_nested_validation=True,
)
def read_text_table(
    path: str | PathLike,
    delimiter: str | None,
    *,
    header: str = "auto",
    columns: str | None = None,
    drop: str | None = None,
    id_column: str | None = None,
    missing: str = "error",
    categorical: str = "drop",
    spelling: Spelling = KEYWORDS,
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
    missing : {"error", "drop", "impute"}, default="error"
        Empty cells in the feature columns: an error, their rows left out, or filled.
    categorical : {"drop", "encode"}, default="drop"
        Text columns: left out with a note, or one-hot encoded.
    spelling : Spelling, default=KEYWORDS
        How messages and notes name these options: as keyword arguments
        (``missing='drop'``), or as a command line's flags (:data:`FLAGS`: ``--missing
        drop``).

    Returns
    -------
    table : Table

    Notes
    -----
    An unnamed column, or one named like a pandas index (``Unnamed: 0``, ``index``), holding
    distinct integers is an index, not a feature: it is left out and a note says so. Line
    and column numbers in messages are the file's, 1-based.
    """
    path = Path(path)
    head = list(islice(_rows(path, delimiter), 2))
    if not head:
        raise ValueError(f"{path}: holds no data rows.")
    notes: list[str] = []
    first = head[0][1]
    if header == "auto":
        has_header = not all(is_number(c) for c in first) or (
            len(head) > 1 and _is_numeric_header(first)
        )
        if has_header and all(is_number(c) for c in first):
            notes.append(
                f"{path}: line {head[0][0]} (0,1,...,{len(first) - 1}) read as column "
                f"names; use {spelling('header', 'no')} if it is data."
            )
    else:
        has_header = header == "yes"
    names = first if has_header else None
    if has_header and len(head) < 2:
        raise ValueError(f"{path}: holds no data rows (only a header).")
    n_cols = len(first)

    X = None
    if id_column is None:
        X = _fastnumeric_column(path, delimiter, head[0][0] if has_header else 0)
        X = X if X is not None and X.shape[1] == n_cols else None
    if X is not None:  # a clean numeric file: np.loadtxt's speed
        rd = _Reading(
            path, names, n_cols, lambda r: f"row {r + 1}", columns, drop, None, spelling,
            missing, categorical,
        )  # fmt: skip
        table = _assemble(rd, lambda j: numeric_column(X[:, j]), len(X), None)
        table.notes[:0] = notes
        return table

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
    rd = _Reading(
        path, names, n_cols, lambda r: f"line {lines[r]}", columns, drop, id_column, spelling,
        missing, categorical,
    )  # fmt: skip
    table = _assemble(rd, lambda j: parse_cells(cells[:, j]), len(body), lambda j: cells[:, j])
    table.notes[:0] = notes
    return table


# --------------------------------------------------------------------------- Parquet
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
        raise MissingExtraError(
            f"{path}: reading Parquet needs {' and '.join(missing)}; install them with "
            "pip install 'spectralink[parquet]'."
        )
    return pd


def read_parquet_frame(path: str | PathLike):
    """``(pandas, DataFrame)`` of a Parquet file; a bad file is one clear ``ValueError``."""
    path = Path(path)
    pd = _import_pandas_for_parquet(path)
    try:
        df = pd.read_parquet(path, engine="pyarrow")
    except Exception as exc:  # pyarrow raises its own types for every kind of bad file
        raise ValueError(
            f"{path}: not a readable Parquet file ({' '.join(str(exc).split())})"
        ) from None
    return pd, df


@validate_params(
    {
        "missing": [StrOptions(set(MISSING_CHOICES))],
        "categorical": [StrOptions(set(CATEGORICAL_CHOICES))],
    },
    prefer_skip_nested_validation=True,
)
def read_parquet_table(
    path: str | PathLike,
    *,
    columns: str | None = None,
    drop: str | None = None,
    id_column: str | None = None,
    missing: str = "error",
    categorical: str = "drop",
    spelling: Spelling = KEYWORDS,
) -> Table:
    """Read a Parquet file of features (through pandas and pyarrow).

    Parameters
    ----------
    path : str or path-like
        The file.
    columns, drop, id_column, missing, categorical, spelling
        As in :func:`read_text_table`: columns by name or 1-based position.

    Returns
    -------
    table : Table

    Notes
    -----
    A DataFrame's index saved in the file is not a feature: a named one (``id`` after
    ``df.set_index("id")``) becomes a column, first, that ``id_column`` can name; an
    unnamed one is left out. Rows in messages are 1-based.
    """
    path = Path(path)
    pd, df = read_parquet_frame(path)
    notes: list[str] = []
    if not isinstance(df.index, pd.RangeIndex) or not df.index.equals(pd.RangeIndex(len(df))):
        named = [str(name) for name in df.index.names if name is not None]
        if named:
            df = df.reset_index()
            notes.append(
                f"{path}: the saved index ({', '.join(named)}) is read as the first "
                f"column(s); name it with {spelling('id_column')} or leave it out with "
                f"{spelling('drop')}."
            )
        else:
            notes.append(f"{path}: the saved (unnamed) index is not used as a feature.")
    if len(df) == 0 or df.shape[1] == 0:
        raise ValueError(f"{path}: holds no data rows.")
    names = [str(c) for c in df.columns]

    def column(j: int) -> Column:
        col = df.iloc[:, j]
        if pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            return numeric_column(col.to_numpy(dtype=np.float64, na_value=np.nan))
        cells = np.array(["" if m else str(v) for v, m in zip(col, col.isna(), strict=True)])
        return parse_cells(cells)

    rd = _Reading(
        path, names, len(names), lambda r: f"row {r + 1}", columns, drop, id_column,
        spelling, missing, categorical,
    )  # fmt: skip
    table = _assemble(rd, column, len(df), lambda j: df.iloc[:, j].astype(str).to_numpy())
    table.notes[:0] = notes
    return table
