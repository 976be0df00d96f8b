"""Constraints from one or several files, merged, with every message in the user's terms:
the rows by their IDs (when the data has an ID column) and each pair by ``file:line``.

A pair given twice (in one file or several) is kept once, with a note; a pair that is a
must-link in one place and a cannot-link in another, or a cannot-link whose ends a chain of
must-links joins, is an error naming both sides.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from os import PathLike

from ._core import Constraints, InconsistentConstraintsError
from ._csv import PairRow, read_pair_rows

_KIND = {"ml": "must-link", "cl": "cannot-link"}
#: Duplicated pairs listed by name in the note (the rest are counted).
_SHOWN = 5


def read_constraints_files(
    paths: Sequence[str | PathLike],
    n_samples: int,
    *,
    skip_unanswered: bool = False,
    ids: Sequence[str] | None = None,
) -> tuple[Constraints, list[str]]:
    """``(constraints, notes)``: the pairs of every file in ``paths``, merged.

    Each file is read as :func:`~spectralink.constraints.read_constraints_csv` reads one
    (``ids`` makes ``i``, ``j`` row IDs). ``notes`` says which pairs appear more than once
    (kept once, with the larger weight); the returned object's ``n_unanswered`` counts the
    unanswered rows of all files.

    Raises
    ------
    ValueError
        When the pairs contradict each other (within a file or across files); the message
        names the rows by ID when ``ids`` is given, and the ``file:line`` of each pair.
    """
    rows: list[PairRow] = []
    unanswered = 0
    for path in paths:
        mine, skipped = read_pair_rows(path, n_samples, skip_unanswered=skip_unanswered, ids=ids)
        rows += mine
        unanswered += skipped
    name = (lambda t: str(t)) if ids is None else (lambda t: str(ids[t]))
    first: dict[tuple[int, int], PairRow] = {}
    repeats: list[tuple[PairRow, PairRow]] = []
    for r in rows:
        if not (0 <= r.i < n_samples and 0 <= r.j < n_samples):
            raise ValueError(
                f"{r.where}: {_KIND[r.kind]} pair ({r.i}, {r.j}) has an index out of range "
                f"[0, {n_samples})."
            )
        if r.i == r.j:
            raise ValueError(
                f"{r.where}: {_KIND[r.kind]} pair ({name(r.i)}, {name(r.j)}) joins a point with "
                "itself."
            )
        key = (min(r.i, r.j), max(r.i, r.j))
        seen = first.setdefault(key, r)
        if seen is r:
            continue
        if seen.kind != r.kind:
            ml_row, cl_row = (seen, r) if seen.kind == "ml" else (r, seen)
            raise ValueError(
                f"pair ({name(r.i)}, {name(r.j)}) is both a must-link ({ml_row.where}) and a "
                f"cannot-link ({cl_row.where}); the constraints are inconsistent: remove the "
                "wrong one."
            )
        repeats.append((seen, r))
    ml = [r for r in rows if r.kind == "ml"]
    cl = [r for r in rows if r.kind == "cl"]
    try:
        out = Constraints(
            [(r.i, r.j) for r in ml],
            [(r.i, r.j) for r in cl],
            n_samples=n_samples,
            weights=[r.weight for r in ml + cl],
        )
    except InconsistentConstraintsError as exc:
        raise ValueError(_inconsistency(exc, first, name)) from None
    out.n_unanswered = unanswered
    notes = []
    if repeats:
        shown = "; ".join(
            f"({name(b.i)}, {name(b.j)}) in {a.where} and {b.where}" for a, b in repeats[:_SHOWN]
        )
        more = f" and {len(repeats) - _SHOWN} more" if len(repeats) > _SHOWN else ""
        notes.append(f"{len(repeats)} pair(s) given more than once, kept once: {shown}{more}")
    return out, notes


def _inconsistency(exc: InconsistentConstraintsError, first: dict, name) -> str:
    """The constructor's message with the rows named by ``name`` and each pair's place."""

    def where(a: int, b: int) -> str:
        row = first.get((min(a, b), max(a, b)))
        return f" ({row.where})" if row is not None else ""

    i, j = exc.pair
    if exc.chain is None:  # the same pair both ways within one file
        return f"pair ({name(i)}, {name(j)}){where(i, j)} is both a must-link and a cannot-link."
    links = ", ".join(f"{name(a)} - {name(b)}{where(a, b)}" for a, b in pairwise(exc.chain))
    return (
        f"cannot-link ({name(i)}, {name(j)}){where(i, j)} joins two points linked by a chain "
        f"of must-links ({links}); the constraints are inconsistent."
    )
