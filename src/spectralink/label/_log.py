"""The answers file: every answer appended and on disk before the page hears back.

The file is in the constraints CSV format (``i,j,kind``, rows named by ID when the data has
an ID column), so ``spectralink cluster --constraints`` reads it as it is. A skipped pair is
a row with an empty kind: the clustering commands skip it (and say so), the labelling page
reads it back as a skip and does not ask the pair again.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from os import PathLike
from pathlib import Path

import numpy as np

from ..constraints import write_pairs_csv

_KINDS = {"ml": True, "cl": False, "": None}
_KIND_OF = {True: "ml", False: "cl", None: ""}

#: One answer: the pair (row positions) and True (same group), False (different) or None.
Record = tuple[int, int, "bool | None"]


class AnswerLog:
    """Append-only answers file (undo rewrites it whole, atomically).

    Parameters
    ----------
    path : path
        The file; created with its header on the first answer.
    n_samples : int
    ids : sequence of str, default=None
        Row IDs: the file names rows by ID instead of position.
    """

    def __init__(
        self, path: str | PathLike, n_samples: int, ids: Sequence[str] | None = None
    ) -> None:
        self.path = Path(path)
        self.n_samples = n_samples
        self.ids = None if ids is None else [str(v) for v in ids]
        self._position = None if ids is None else {v: t for t, v in enumerate(self.ids)}

    def read(self) -> list[Record]:
        """The answers in the file, in order (empty when it does not exist yet)."""
        if not self.path.exists():
            return []
        out: list[Record] = []
        with open(self.path, newline="") as fh:
            for lineno, row in enumerate(csv.reader(fh), start=1):
                row = [c.strip() for c in row]
                if not row or all(c == "" for c in row):
                    continue
                if lineno == 1 and row[:2] == ["i", "j"]:
                    continue
                where = f"{self.path}:{lineno}"
                if len(row) not in (2, 3) or (len(row) == 3 and row[2].lower() not in _KINDS):
                    raise ValueError(
                        f"{where}: expected 'i,j,kind' with kind ml, cl or empty (skipped), "
                        f"got {','.join(row)!r}; is this an answers file of spectralink label?"
                    )
                i, j = (self._row(v, where) for v in row[:2])
                out.append((i, j, _KINDS[row[2].lower()] if len(row) == 3 else None))
        return out

    def _row(self, text: str, where: str) -> int:
        if self._position is not None:
            if text not in self._position:
                raise ValueError(f"{where}: no row has the ID {text!r}.")
            return self._position[text]
        try:
            t = int(text)
        except ValueError:
            raise ValueError(f"{where}: row {text!r} is not an integer index.") from None
        if not 0 <= t < self.n_samples:
            raise ValueError(f"{where}: row {t} is out of range [0, {self.n_samples}).")
        return t

    def _name(self, t: int) -> str:
        return str(t) if self.ids is None else self.ids[t]

    def append(self, i: int, j: int, answer: bool | None) -> None:
        """Add one answer at the end of the file and push it to the disk."""
        new = not self.path.exists() or self.path.stat().st_size == 0
        with open(self.path, "a", newline="") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            if new:
                writer.writerow(["i", "j", "kind"])
            writer.writerow([self._name(i), self._name(j), _KIND_OF[answer]])
            fh.flush()
            os.fsync(fh.fileno())

    def drop_last(self) -> Record | None:
        """Remove the last answer (the file is rewritten whole or not at all); it, or
        ``None`` when the file holds none."""
        records = self.read()
        if not records:
            return None
        keep = records[:-1]
        pairs = np.asarray([(i, j) for i, j, _ in keep], dtype=np.int64).reshape(-1, 2)
        write_pairs_csv(self.path, pairs, [_KIND_OF[a] for *_, a in keep], ids=self.ids)
        return records[-1]
