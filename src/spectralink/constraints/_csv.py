"""The constraints file format ``i,j,kind[,weight]``: parsing and writing rows of pairs.

:class:`~spectralink.constraints.Constraints` reads and writes whole sets through these
(``from_csv`` / ``to_csv``); :func:`write_pairs_csv` also writes files of questions, pairs
whose ``kind`` a person fills in.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from os import PathLike
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ..io import atomic_write

_KIND_ALIASES = {
    "ml": "ml",
    "must-link": "ml",
    "must_link": "ml",
    "mustlink": "ml",
    "1": "ml",
    "+1": "ml",
    "cl": "cl",
    "cannot-link": "cl",
    "cannot_link": "cl",
    "cannotlink": "cl",
    "-1": "cl",
}


class PairRow(NamedTuple):
    """One answered row of a constraints file: where it is, the pair (row positions), its
    kind (``"ml"``/``"cl"``) and weight."""

    path: str
    line: int
    i: int
    j: int
    kind: str
    weight: float

    @property
    def where(self) -> str:
        """``file:line``, for messages."""
        return f"{self.path}:{self.line}"


def read_pair_rows(
    path: str | PathLike,
    n_samples: int,
    *,
    skip_unanswered: bool = False,
    ids: Sequence[str] | None = None,
) -> tuple[list[PairRow], int]:
    """``(rows, n_unanswered)``: the answered rows of a constraints file with their line
    numbers, IDs already turned into row positions."""
    position = None if ids is None else id_positions(ids, n_samples)

    def is_row(text: str) -> bool:
        return text in position if position is not None else _is_int(text)

    out: list[PairRow] = []
    unanswered = 0
    with open(path, newline="") as fh:
        rows: Iterable[list[str]] = csv.reader(fh)
        for lineno, row in enumerate(rows, start=1):
            row = [c.strip() for c in row]
            if not row or all(c == "" for c in row) or row[0].startswith("#"):
                continue
            if lineno == 1 and not is_row(row[0]):
                continue  # header
            if skip_unanswered and len(row) in (2, 3, 4) and (len(row) == 2 or row[2] == ""):
                if is_row(row[0]) and is_row(row[1]):
                    unanswered += 1
                    continue
            if len(row) not in (3, 4):
                raise ValueError(
                    f"{path}:{lineno}: expected 'i,j,kind[,weight]', got {','.join(row)!r}."
                )
            if position is not None:
                unknown = [v for v in row[:2] if v not in position]
                if unknown:
                    raise ValueError(
                        f"{path}:{lineno}: no row has the ID {unknown[0]!r} (pairs name rows "
                        "by their ID when the data has an ID column)."
                    )
                row[:2] = [str(position[row[0]]), str(position[row[1]])]
            if not (_is_int(row[0]) and _is_int(row[1])):
                raise ValueError(
                    f"{path}:{lineno}: indices must be integers, got {row[0]!r}, {row[1]!r}."
                )
            kind = _KIND_ALIASES.get(row[2].lower())
            if kind is None:
                raise ValueError(
                    f"{path}:{lineno}: kind {row[2]!r} is not one of ml, cl, must-link, "
                    "cannot-link, 1, -1."
                )
            try:
                weight = float(row[3]) if len(row) == 4 and row[3] != "" else 1.0
            except ValueError:
                raise ValueError(f"{path}:{lineno}: weight {row[3]!r} is not a number.") from None
            out.append(PairRow(str(path), lineno, int(row[0]), int(row[1]), kind, weight))
    return out, unanswered


def id_positions(ids: ArrayLike, n_samples: int) -> dict[str, int]:
    """Row of every ID; the IDs must be one distinct string per row."""
    ids = [str(v) for v in ids]
    if len(ids) != n_samples:
        raise ValueError(f"{len(ids)} IDs for {n_samples} rows.")
    position = {v: t for t, v in enumerate(ids)}
    if len(position) != len(ids):
        seen: set[str] = set()
        dup = next(v for v in ids if v in seen or seen.add(v))
        raise ValueError(f"the ID {dup!r} names more than one row; IDs must be distinct.")
    return position


def write_pairs_csv(
    path: str | PathLike,
    pairs: ArrayLike,
    kinds: Sequence[str] | None = None,
    weights: ArrayLike | None = None,
    ids: Sequence[str] | None = None,
) -> None:
    """Write pairs in the constraints CSV format (``i,j,kind[,weight]``), atomically.

    ``kinds`` (``"ml"``/``"cl"`` per pair) ``None`` leaves the ``kind`` column empty: a
    file of questions that a person fills with ``ml`` or ``cl``, read back with
    ``skip_unanswered=True`` until then. ``weights`` adds the weight column. ``ids`` (one
    per row of the data) names the rows by ID instead of index, as
    :func:`~spectralink.constraints.read_constraints_csv` reads them back with the same
    ``ids``. The file is written whole or not at all;
    :meth:`~spectralink.constraints.Constraints.to_csv` writes a whole set.
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    kinds = [""] * len(pairs) if kinds is None else list(kinds)
    if len(kinds) != len(pairs):
        raise ValueError(f"{len(pairs)} pairs but {len(kinds)} kinds.")
    if weights is not None and len(weights) != len(pairs):
        raise ValueError(f"{len(pairs)} pairs but {len(weights)} weights.")
    names = pairs.tolist() if ids is None else [[str(ids[i]), str(ids[j])] for i, j in pairs]
    with atomic_write(path, "w", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")  # quotes an ID holding a comma
        writer.writerow(["i", "j", "kind"] + (["weight"] if weights is not None else []))
        for r, ((i, j), kind) in enumerate(zip(names, kinds, strict=True)):
            extra = [_weight_text(weights[r])] if weights is not None else []
            writer.writerow([i, j, kind, *extra])


def _weight_text(weight) -> str:
    """Short form (``2``, ``0.5``) when it reads back exactly, else every digit."""
    w = float(weight)
    short = f"{w:g}"
    return short if float(short) == w else repr(w)


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True
