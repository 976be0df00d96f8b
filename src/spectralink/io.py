"""Reading feature tables as users have them: CSV/TSV/whitespace text files.

:func:`read_text_table` turns a delimited text file into a float matrix while
handling what real files hold: a header row (also one of numeric names ``0,1,...``
as written by ``DataFrame.to_csv`` of a NumPy array), the unnamed index column
pandas writes first, columns chosen or dropped by name or position, an ID column
kept aside, and errors that point at the file's line and column (both 1-based).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

import numpy as np

__all__ = ["Table", "read_text_table"]

HEADER_CHOICES = ("auto", "yes", "no")


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
    lines : ndarray of shape (n_rows,)
        The file's line number (1-based) of each row, for messages.
    notes : list of str
        Decisions worth telling the user (a dropped index column, a numeric header).
    """

    X: np.ndarray
    names: list[str]
    ids: np.ndarray | None = None
    lines: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _rows(path: Path, delimiter: str | None) -> list[tuple[int, list[str]]]:
    """Non-blank, non-comment rows with their 1-based line numbers."""
    out = []
    with open(path, newline="") as fh:
        if delimiter is None:
            for lineno, line in enumerate(fh, start=1):
                if line.strip() and not line.lstrip().startswith("#"):
                    out.append((lineno, line.split()))
            return out
        reader = csv.reader(fh, delimiter=delimiter)
        for row in reader:
            # reader.line_num is the line the row ends on (quoted fields may span lines)
            cells = [c.strip() for c in row]
            if not cells or all(c == "" for c in cells) or cells[0].startswith("#"):
                continue
            out.append((reader.line_num, cells))
    return out


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


def read_text_table(
    path: str | PathLike,
    delimiter: str | None,
    *,
    header: str = "auto",
    columns: str | None = None,
    drop: str | None = None,
    id_column: str | None = None,
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
    rows = _rows(path, delimiter)
    if not rows:
        raise ValueError(f"{path}: holds no data rows.")
    notes: list[str] = []
    first = rows[0][1]
    if header == "auto":
        has_header = not all(_is_number(c) for c in first) or (
            len(rows) > 1 and _is_numeric_header(first)
        )
        if has_header and all(_is_number(c) for c in first):
            notes.append(
                f"{path}: line {rows[0][0]} ({','.join(first)}) read as column names; "
                "use --header no if it is data."
            )
    else:
        has_header = header == "yes"
    names = first if has_header else None
    body = rows[1:] if has_header else rows
    if not body:
        raise ValueError(f"{path}: holds no data rows (only a header).")
    n_cols = len(names) if names is not None else len(body[0][1])
    for lineno, cells in body:
        if len(cells) != n_cols:
            raise ValueError(
                f"{path}: line {lineno} has {len(cells)} fields, expected {n_cols}"
                + (" (as in the header)." if names is not None else " (as on the first row).")
            )
    cells = np.array([c for _, c in body], dtype=object)
    lines = np.array([ln for ln, _ in body], dtype=np.int64)
    n = len(body)

    keep = list(range(n_cols))
    if names is not None and names[0] == "" and n_cols > 1:
        if [str(v) for v in cells[:, 0]] == [str(i) for i in range(n)]:
            keep.remove(0)
            notes.append(
                f"{path}: the first column (no name, values 0..{n - 1}) is an index written "
                "by pandas; it is not used as a feature."
            )
    ids, id_j = None, None
    if id_column is not None:
        id_j = _resolve(id_column, names, n_cols, "--id-column")[0]
        ids = cells[:, id_j].astype(str)
    if columns is not None:
        keep = list(dict.fromkeys(_resolve(columns, names, n_cols, "--columns")))
    keep = [j for j in keep if j != id_j]
    if drop is not None:
        dropped = set(_resolve(drop, names, n_cols, "--drop"))
        keep = [j for j in keep if j not in dropped]
    if not keep:
        raise ValueError(f"{path}: no feature columns are left to use.")

    def label(j: int) -> str:
        return f"column {j + 1}" + (f" ({names[j]!r})" if names is not None and names[j] else "")

    block = cells[:, keep]
    try:
        X = block.astype(np.float64)
    except ValueError:
        X = None
    if X is None:
        for jj, j in enumerate(keep):
            for r in range(n):
                text = block[r, jj]
                if not _is_number(text):
                    what = "an empty cell" if text == "" else f"{text!r} is not a number"
                    name = names[j] if names is not None and names[j] else str(j + 1)
                    raise ValueError(
                        f"{path}: line {lines[r]}, {label(j)}: {what}; features must be "
                        f"numbers (leave a column out with --drop {name})."
                    )
    bad = ~np.isfinite(X)
    if bad.any():
        r, jj = np.argwhere(bad)[0]
        raise ValueError(
            f"{path}: line {lines[r]}, {label(keep[jj])}: non-finite value {block[r, jj]!r}."
        )
    col_names = [names[j] if names is not None and names[j] else f"column {j + 1}" for j in keep]
    return Table(X=X, names=col_names, ids=ids, lines=lines, notes=notes)
