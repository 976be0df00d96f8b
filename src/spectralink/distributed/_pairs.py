"""Pairs on a few rows of a large table: the constraints over the rows they name, and
those rows' global positions, built without an object of the table's size."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike

import numpy as np

from ..constraints import Constraints, read_constraints_files
from ._table import DaskTable

__all__ = ["RowPairs", "ids_named", "read_row_pairs"]


@dataclass(frozen=True)
class RowPairs:
    """Constraints over the ``len(rows)`` rows that pairs name.

    Attributes
    ----------
    constraints : Constraints
        Over ``0 .. len(rows) - 1``: point ``t`` is the table's row ``rows[t]``.
    rows : ndarray of int
        Increasing global row positions.
    notes : tuple of str
        What reading the files merged or skipped, for the user.
    """

    constraints: Constraints
    rows: np.ndarray
    notes: tuple[str, ...] = ()

    def on_all(self, n_rows: int) -> Constraints:
        """The same pairs over every row of the table (``n_rows`` points)."""
        c = self.constraints
        return Constraints(
            self.rows[c.must_link] if len(c.must_link) else None,
            self.rows[c.cannot_link] if len(c.cannot_link) else None,
            n_samples=n_rows,
            weights=np.concatenate([c.ml_weights, c.cl_weights]),
        )


def ids_named(paths: Sequence[str | PathLike]) -> set[str]:
    """Every text in the first two fields of the rows of ``paths`` (a header's names
    included: they are looked up like the rest and simply not found)."""
    out: set[str] = set()
    for path in paths:
        with open(path, newline="") as fh:
            for row in csv.reader(fh):
                cells = [c.strip() for c in row[:2]]
                if len(cells) == 2 and not cells[0].startswith("#"):
                    out.update(cells)
    return out


def read_row_pairs(table: DaskTable, paths: Sequence[str | PathLike]) -> RowPairs:
    """The pairs of the constraint files ``paths`` (``i,j,kind[,weight]``, merged as
    :func:`~spectralink.constraints.read_constraints_files` merges them, rows without an
    answer skipped) on the rows of ``table``: by ID when it has an ID column, else by
    0-based global row position."""
    paths = list(paths)
    if table.id_column is not None:
        found = table.find_ids(ids_named(paths))
        order = sorted(found, key=found.get)
        cons, notes = read_constraints_files(
            paths, max(len(order), 1), skip_unanswered=True, ids=order or ["\0"]
        )
        rows = np.array([found[name] for name in order], dtype=np.int64)
    else:
        full, notes = read_constraints_files(paths, table.n_rows, skip_unanswered=True)
        rows = full.constrained_points
        cons = full.subset(rows)
        cons.n_unanswered = full.n_unanswered
    if cons.n_unanswered:
        notes = [f"{cons.n_unanswered} row(s) without a kind (not answered) skipped", *notes]
    return RowPairs(cons, rows, tuple(notes))
