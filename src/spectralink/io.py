"""Files as users have them: feature tables, label files, and writes that never half-finish.

:func:`read_text_table` turns a delimited text file into a float matrix while handling
what real files hold: a header row (also one of numeric names ``0,1,...`` as written by
``DataFrame.to_csv`` of a NumPy array), the unnamed index column pandas writes first,
columns chosen or dropped by name or position, an ID column kept aside, and errors that
point at the file's line and column (both 1-based) and say how to mend a missing value.
:func:`read_parquet_table` reads Parquet files through pandas and pyarrow (the optional
extra ``spectralink[parquet]``) with the same column options. :func:`read_features` picks
the reader by the file's ending (also ``.npy``, ``.npz``); :func:`read_labels` reads one label
per row; :func:`atomic_write` replaces a file only once its new content is complete.
"""

from __future__ import annotations

import contextlib
import csv
import os
import stat
import tempfile
import warnings
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from os import PathLike
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from .preprocessing import missing_value_hint
from .utils import StrOptions, validate_params

__all__ = [
    "PARQUET_SUFFIXES",
    "Table",
    "atomic_write",
    "csv_delimiter",
    "encode_labels",
    "is_number",
    "labeled_mask",
    "labels_from_cells",
    "read_features",
    "read_labels",
    "read_matrix",
    "read_parquet_labels",
    "read_parquet_table",
    "read_text_table",
]

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


def is_number(text: str) -> bool:
    """Whether ``text`` reads as a float (``"3"``, ``"-1e5"``, ``"nan"``)."""
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


@validate_params({"header": [StrOptions(set(HEADER_CHOICES))]}, prefer_skip_nested_validation=True)
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
                if not is_number(text):
                    what = "an empty cell" if text == "" else f"{text!r} is not a number"
                    hint = missing_value_hint(names[j] if names and names[j] else str(j + 1))
                    raise ValueError(
                        f"{path}: line {lines[r]}, {label(j)}: {what}; {hint}."
                    ) from None
        raise
    bad = ~np.isfinite(X)
    if bad.any():
        r, jj = np.argwhere(bad)[0]
        raise ValueError(
            f"{path}: line {lines[r]}, {label(keep[jj])}: non-finite value {block[r, jj]!r}; "
            f"{missing_value_hint((names or [''] * n_cols)[keep[jj]] or str(keep[jj] + 1))}."
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
            f"{path}: row {r + 1}, column {keep[jj] + 1} ({names[keep[jj]]!r}): {what}; "
            f"{missing_value_hint(names[keep[jj]])}."
        )
    ids = None if id_j is None else df.iloc[:, id_j].astype(str).to_numpy()
    return Table(X=np.ascontiguousarray(X), names=[names[j] for j in keep], ids=ids, notes=notes)


# --------------------------------------------------------------------------- any feature file
def csv_delimiter(path: str | PathLike) -> str | None:
    """Field separator of a text table by its ending: ``,`` for ``.csv``, a tab for ``.tsv``,
    ``None`` (any whitespace) otherwise (``.txt``)."""
    return {".csv": ",", ".tsv": "\t"}.get(Path(path).suffix.lower())


def read_matrix(
    path: str | PathLike,
    *,
    header: str = "auto",
    columns: str | None = None,
    drop: str | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Features from ``.csv``/``.tsv``/``.txt`` (optional header), ``.parquet``, ``.npy``
    or ``.npz``.

    Returns ``(X, y)``; ``y`` is the ``y`` array of an ``.npz`` file, else ``None``.
    ``header``, ``columns`` and ``drop`` apply to text tables, see :func:`read_text_table`
    (a pandas index column is dropped); ``columns`` and ``drop`` also to Parquet files
    (:func:`read_parquet_table`, which needs ``spectralink[parquet]``).
    """
    X, y, _ = read_features(path, header=header, columns=columns, drop=drop)
    return X, y


def read_features(
    path: str | PathLike,
    *,
    header: str = "auto",
    columns: str | None = None,
    drop: str | None = None,
    id_column: str | None = None,
) -> tuple[np.ndarray, np.ndarray | None, Table | None]:
    """``(X, y, table)`` of a feature file, as :func:`read_matrix` reads it.

    ``table`` is the :class:`Table` of a text or Parquet file (its row IDs with
    ``id_column``, and the notes worth telling the user), ``None`` for ``.npy``/``.npz``.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if not path.is_file():
        raise FileNotFoundError(2, "no such file", str(path))
    y = table = None
    if suffix in (".npy", ".npz"):
        options = {"--columns": columns, "--drop": drop, "--id-column": id_column}
        given = [opt for opt, v in options.items() if v is not None]
        if given:
            raise ValueError(
                f"{given[0]} applies to text tables (.csv, .tsv, .txt) and Parquet files, "
                f"not {path}."
            )
    if suffix == ".npy":
        X = _load_npy(path)
    elif suffix == ".npz":
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files if k in ("X", "y")}
                found = sorted(data.files)
        except (OSError, EOFError, ValueError, AttributeError, zipfile.BadZipFile) as exc:
            raise ValueError(f"{path}: not a readable .npz file ({exc})") from None
        if "X" not in arrays:
            raise ValueError(
                f"{path}: an .npz file must hold an array 'X' "
                f"(found {', '.join(found) or 'nothing'})."
            )
        X, y = arrays["X"], arrays.get("y")
    elif suffix in PARQUET_SUFFIXES:
        if header != "auto":
            raise ValueError(f"--header applies to text tables, not {path}.")
        table = read_parquet_table(path, columns=columns, drop=drop, id_column=id_column)
        X = table.X
    elif suffix in (".csv", ".tsv", ".txt"):
        delimiter = csv_delimiter(path)
        table = read_text_table(
            path, delimiter, header=header, columns=columns, drop=drop, id_column=id_column
        )
        X = table.X
    else:
        raise ValueError(
            f"{path}: unsupported data format {suffix or '(none)'!r}; "
            "use .csv, .tsv, .txt, .parquet, .npy or .npz."
        )
    if X.ndim == 1:
        X = X.reshape(-1, 1)
    if X.ndim != 2:
        raise ValueError(f"{path}: expected a 2-d table of features, got shape {X.shape}.")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{path}: holds no data rows.")
    if not np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.complexfloating):
        raise ValueError(f"{path}: features must be real numbers, got dtype {X.dtype}.")
    if not np.all(np.isfinite(X)):
        r, c = np.argwhere(~np.isfinite(X))[0]
        raise ValueError(
            f"{path}: non-finite value {X[r, c]} at row index {r}, column index {c} (0-based); "
            f"{missing_value_hint(str(c + 1))}."
        )
    return X.astype(np.float64, copy=False), y, table


def _load_npy(path: Path) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, EOFError) as exc:
        raise ValueError(f"{path}: not a readable .npy file ({exc}).") from None
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


# --------------------------------------------------------------------------- labels
#: first lines taken as a column name above labels that are themselves names
_LABEL_HEADERS = {"label", "labels", "y", "class", "classes", "target", "cluster", "truth"}


def read_labels(
    path: str | PathLike, n_samples: int | None = None, *, return_names: bool = False
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """One label per line from ``.csv``/``.txt`` (optional header), a 1-d ``.npy``, or a
    Parquet file's label column (:func:`read_parquet_labels`).

    Integer labels stay integers; other labels are kept as strings. An empty cell (a
    blank line between labels, or ``nan``) means unlabelled: it becomes ``-1`` among
    integer labels and ``""`` among string labels, which
    :meth:`Constraints.from_labels` and :meth:`Constraints.from_labeled_subset` skip.

    The first line is a header when it is not a number and the next is; when the file
    has exactly ``n_samples + 1`` lines; or when it is a usual column name (``label``,
    ``class``, ``y``, ...) found nowhere else in the file.

    With ``return_names=True`` returns ``(codes, names)``: integer codes ``0..c-1``
    indexing ``names`` (the distinct labels, sorted), and ``-1`` for unlabelled rows
    (see :func:`encode_labels`).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(2, "no such file", str(path))
    if path.suffix.lower() == ".npy":
        y = np.asarray(_load_npy(path))
        if y.ndim == 2 and 1 in y.shape:
            y = y.ravel()
        if y.ndim != 1:
            raise ValueError(f"{path}: labels must be a 1-d array, got shape {y.shape}.")
    elif path.suffix.lower() in PARQUET_SUFFIXES:
        y = read_parquet_labels(path)
    else:
        y = _read_text_labels(path, n_samples)
    if n_samples is not None and len(y) != n_samples:
        raise ValueError(f"{path}: has {len(y)} labels but the data has {n_samples} rows.")
    return encode_labels(y) if return_names else y


def _read_text_labels(path: Path, n_samples: int | None) -> np.ndarray:
    values = []
    with open(path, newline="") as fh:
        for lineno, row in enumerate(csv.reader(fh), start=1):
            row = [v.strip() for v in row]
            if row and row[0].startswith("#"):
                continue
            if len(row) > 1:
                raise ValueError(
                    f"{path}:{lineno}: expected one label per line, got {len(row)} fields."
                )
            values.append(row[0] if row else "")
    n_lines = len(values)
    while values and values[-1] == "":  # trailing blank lines are not rows...
        values.pop()
    first, second = (values + ["", ""])[:2]
    if (
        first
        and not is_number(first)
        and (
            is_number(second)  # a name above numeric labels
            or (n_samples is not None and len(values) == n_samples + 1)
            or (first.lower() in _LABEL_HEADERS and first not in values[1:])
        )
    ):
        values = values[1:]
        n_lines -= 1
    if n_samples is not None and len(values) < n_samples <= n_lines:
        # ...unless the rows need them: the last rows' labels are empty (unlabelled)
        values += [""] * (n_samples - len(values))
    if not values:
        raise ValueError(f"{path}: holds no labels.")
    return labels_from_cells(values)


def read_parquet_labels(path: str | PathLike) -> np.ndarray:
    """The label column of a Parquet file: its only column, or the one with a usual label
    name (``label``, ``class``, ``y``, ...). Missing values and negative numbers become
    unlabelled (``-1`` among integers, ``""`` among names), as in text files."""
    path = Path(path)
    pd, df = _read_parquet_frame(path)
    names = [str(c) for c in df.columns]
    if len(names) == 1:
        col = df.iloc[:, 0]
    else:
        hits = [j for j, c in enumerate(names) if c.lower() in _LABEL_HEADERS]
        if len(hits) != 1:
            raise ValueError(
                f"{path}: expected one label column, got {len(names)} columns "
                f"({', '.join(names[:6])}{', ...' if len(names) > 6 else ''}) and "
                f"{'no' if not hits else 'more than one'} column named like a label "
                f"({', '.join(sorted(_LABEL_HEADERS))})."
            )
        col = df.iloc[:, hits[0]]
    if len(col) == 0:
        raise ValueError(f"{path}: holds no labels.")
    if pd.api.types.is_bool_dtype(col):
        col = col.astype(int)
    missing = col.isna().to_numpy()
    cells = ["" if m else str(x).strip() for x, m in zip(col, missing, strict=True)]
    return labels_from_cells(cells)


def labels_from_cells(values: list[str]) -> np.ndarray:
    """Labels from the text of their cells. Empty, ``nan`` and negative numbers (even among
    names) are unlabelled; integers (``3`` or ``3.0``) when every other cell is one, with
    ``-1`` for unlabelled, else strings with ``""`` for unlabelled."""
    values = ["" if v.lower() == "nan" or (is_number(v) and float(v) < 0) else v for v in values]
    known = [v for v in values if v != ""]
    if known and all(_is_integral(v) for v in known):
        return np.array([int(float(v)) if v else -1 for v in values], dtype=np.int64)
    return np.array(values)


def _is_integral(text: str) -> bool:
    """``"3"`` or ``"3.0"`` (pandas writes integer columns holding NaN as floats)."""
    try:
        v = float(text)
    except ValueError:
        return False
    return np.isfinite(v) and v == int(v)


def labeled_mask(y: ArrayLike) -> np.ndarray:
    """True where ``y`` holds a label; negative numbers, NaN, None and "" are unlabelled."""
    y = np.asarray(y)
    if y.dtype.kind in "iu":
        return y >= 0
    if y.dtype.kind == "f":
        return ~np.isnan(y) & (y >= 0)
    if y.dtype.kind == "b":
        return np.ones(len(y), dtype=bool)
    number = (int, float, np.integer, np.floating)
    known = [
        not (v is None or (isinstance(v, str) and v.strip() == ""))
        and (not isinstance(v, number) or isinstance(v, bool) or not (np.isnan(v) or v < 0))
        for v in y
    ]
    return np.array(known, dtype=bool)


def encode_labels(y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, names)``: labels as integer codes into ``names``, ``-1`` when unlabelled.

    ``names`` holds the distinct labels (sorted); a negative number, NaN or an empty
    string is unlabelled (:func:`labeled_mask`, the rule of :meth:`Constraints.from_labels`).
    """
    y = np.asarray(y)
    known = labeled_mask(y)
    names, inverse = np.unique(y[known], return_inverse=True)
    codes = np.full(len(y), -1, dtype=np.int64)
    codes[known] = inverse.ravel()
    return codes, names


# --------------------------------------------------------------------------- writing
@contextlib.contextmanager
@validate_params({"mode": [StrOptions({"w", "wb"})]}, prefer_skip_nested_validation=True)
def atomic_write(path: str | PathLike, mode: str = "w", **open_kwargs: object) -> Iterator:
    """Open a temporary file beside ``path``; on success move it over ``path``.

    The old content of ``path`` is kept if anything fails before the end of the block,
    and no temporary file is left behind. ``mode`` is ``"w"`` or ``"wb"``. The file gets
    the permissions a plain ``open`` would give it (those of the file it replaces, else
    ``0o666`` minus the umask), not the owner-only ones of a temporary file.
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, mode, **open_kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, _file_mode(path))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _file_mode(path: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)  # the only portable way to read the umask is to set it
        os.umask(umask)
        return 0o666 & ~umask
