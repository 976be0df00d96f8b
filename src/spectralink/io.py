"""Files as users have them: feature files, label files, and writes that never half-finish.

:func:`read_features` picks the reader by the file's ending: text tables and Parquet files
through :mod:`spectralink.tables` (header, index column, ID column, text columns, empty
cells), ``.npy`` and ``.npz`` arrays here; :func:`read_labels` reads one label per row (or an
``id,label`` file matched to the rows by ID); :func:`atomic_write` replaces a file only once
its new content is complete.
"""

from __future__ import annotations

import contextlib
import csv
import os
import stat
import tempfile
import zipfile
from collections.abc import Iterator
from os import PathLike
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from .preprocessing import missing_value_hint
from .tables import (
    KEYWORDS,
    Spelling,
    Table,
    is_number,
    read_parquet_frame,
    read_parquet_table,
    read_text_table,
)
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
    "read_id_labels",
    "read_labels",
    "read_matrix",
    "read_parquet_labels",
    "read_parquet_table",
    "read_text_table",
]

#: file name endings read as Parquet
PARQUET_SUFFIXES = (".parquet", ".pq")


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
    missing: str = "error",
    categorical: str = "drop",
    spelling: Spelling = KEYWORDS,
) -> tuple[np.ndarray, np.ndarray | None, Table | None]:
    """``(X, y, table)`` of a feature file, as :func:`read_matrix` reads it.

    ``table`` is the :class:`Table` of a text or Parquet file (its row IDs with
    ``id_column``, the rows kept with ``missing="drop"``, the columns left out and the notes
    worth telling the user), ``None`` for ``.npy``/``.npz``. ``missing``, ``categorical``
    and ``spelling`` (how messages name these options) are those of
    :func:`~spectralink.tables.read_text_table`.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if not path.is_file():
        raise FileNotFoundError(2, "no such file", str(path))
    y = table = None
    if suffix in (".npy", ".npz"):
        options = {"columns": columns, "drop": drop, "id_column": id_column}
        options["missing"] = None if missing == "error" else missing
        given = [spelling(opt) for opt, v in options.items() if v is not None]
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
            raise ValueError(f"{spelling('header')} applies to text tables, not {path}.")
        table = read_parquet_table(
            path,
            columns=columns,
            drop=drop,
            id_column=id_column,
            missing=missing,
            categorical=categorical,
            spelling=spelling,
        )
        X = table.X
    elif suffix in (".csv", ".tsv", ".txt"):
        delimiter = csv_delimiter(path)
        table = read_text_table(
            path,
            delimiter,
            header=header,
            columns=columns,
            drop=drop,
            id_column=id_column,
            missing=missing,
            categorical=categorical,
            spelling=spelling,
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
    path: str | PathLike,
    n_samples: int | None = None,
    *,
    return_names: bool = False,
    ids: ArrayLike | None = None,
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

    With ``ids`` (the row IDs of the data), a text file may instead hold two columns,
    ``id,label`` (what ``spectralink cluster --id-column`` writes): each row's label is found
    by its ID, and rows the file does not name are unlabelled (:func:`read_id_labels`).

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
    elif ids is not None and _n_fields(path) > 1:
        y = read_id_labels(path, ids)
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
                    f"{path}:{lineno}: expected one label per line, got {len(row)} fields "
                    "(an id,label file needs the data's IDs: the data's ID column)."
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


def _n_fields(path: Path) -> int:
    """Fields on the first line of a text file that is not a comment."""
    with open(path, newline="") as fh:
        for row in csv.reader(fh):
            if row and not row[0].strip().startswith("#"):
                return len(row)
    return 0


def read_id_labels(path: str | PathLike, ids: ArrayLike) -> np.ndarray:
    """Labels of the rows named by ``ids`` from a text file of ``id,label`` lines (an
    optional header; columns named ``id`` and ``label`` are found among others).

    A row whose ID the file does not name is unlabelled; an ID named twice, or one that
    names no row, is an error naming its line.
    """
    path = Path(path)
    ids = [str(v) for v in np.asarray(ids)]
    position = {v: t for t, v in enumerate(ids)}
    with open(path, newline="") as fh:
        body = [
            (n, [c.strip() for c in r])
            for n, r in enumerate(csv.reader(fh), start=1)
            if r and any(c.strip() for c in r) and not r[0].strip().startswith("#")
        ]
    if not body:
        raise ValueError(f"{path}: holds no labels.")
    head = [c.lower() for c in body[0][1]]
    at_id, at_label = 0, 1
    if body[0][1][0] not in position or "id" in head:  # a header line
        at_id = head.index("id") if "id" in head else 0
        named = [j for j, c in enumerate(head) if c in _LABEL_HEADERS and j != at_id]
        at_label = named[0] if named else (1 if at_id != 1 else 0)
        body = body[1:]
    values = [""] * len(ids)
    seen: dict[str, int] = {}
    for lineno, row in body:
        if len(row) <= max(at_id, at_label):
            raise ValueError(f"{path}:{lineno}: expected an ID and a label, got {len(row)} fields.")
        key = row[at_id]
        if key not in position:
            raise ValueError(f"{path}:{lineno}: the ID {key!r} names no row of the data.")
        if key in seen:
            raise ValueError(f"{path}:{lineno}: the ID {key!r} is named again (line {seen[key]}).")
        seen[key] = lineno
        values[position[key]] = row[at_label]
    return labels_from_cells(values)


def read_parquet_labels(path: str | PathLike) -> np.ndarray:
    """The label column of a Parquet file: its only column, or the one with a usual label
    name (``label``, ``class``, ``y``, ...). Missing values and negative numbers become
    unlabelled (``-1`` among integers, ``""`` among names), as in text files."""
    path = Path(path)
    pd, df = read_parquet_frame(path)
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
