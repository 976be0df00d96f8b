"""One column of a table's text cells parsed: numbers, empty cells, text.

The lowest step of reading a table (:mod:`spectralink.tables` decides from the parsed
columns which become features): a cell is a number, missing (empty, ``nan``, ``NA``,
``null``), or text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MISSING_CELLS", "Column", "is_number", "numeric_column", "parse_cells"]

#: Cell texts read as missing (compared in lower case).
MISSING_CELLS = frozenset({"", "nan", "na", "n/a", "null"})


def is_number(text: str) -> bool:
    """Whether ``text`` reads as a float (``"3"``, ``"-1e5"``, ``"nan"``)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


@dataclass
class Column:
    """One column's cells parsed: numbers (NaN where missing or not a number), which cells
    are missing, which hold text, and the cells themselves (for text columns)."""

    values: np.ndarray
    missing: np.ndarray
    text: np.ndarray
    cells: np.ndarray | None = None

    @property
    def is_text(self) -> bool:
        """Most non-missing cells are not numbers (a few are typos in a column of numbers)."""
        n_text = int(self.text.sum())
        return n_text > 0 and 2 * n_text > int((~self.missing).sum())

    def is_index(self) -> bool:
        """Distinct integers in every row: what pandas writes as an index."""
        v = self.values
        if self.missing.any() or self.text.any() or len(v) < 2:
            return False
        return bool(np.all(v == np.round(v)) and len(np.unique(v)) == len(v))


def parse_cells(cells: np.ndarray) -> Column:
    """Parse a column of text cells."""
    try:  # the common case, straight from the cells (no copy as text first)
        values = np.asarray(cells).astype(np.float64)
        return Column(values, np.isnan(values), np.zeros(len(values), bool))
    except ValueError:
        cells = np.asarray(cells, dtype=str)
    values = np.full(len(cells), np.nan)
    missing = np.zeros(len(cells), bool)
    text = np.zeros(len(cells), bool)
    for r, c in enumerate(cells):
        if c.lower() in MISSING_CELLS:
            missing[r] = True
        else:
            try:
                values[r] = float(c)
            except ValueError:
                text[r] = True
    missing |= np.isnan(values) & ~text
    return Column(values, missing, text, cells)


def numeric_column(values: np.ndarray) -> Column:
    """A column already numeric (Parquet, the fast path)."""
    values = np.asarray(values, dtype=np.float64)
    return Column(values, np.isnan(values), np.zeros(len(values), bool))
