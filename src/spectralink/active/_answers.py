"""Answers kept under the contradiction policy, and the report of what happened to them."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ..constraints import Constraints
from ..exceptions import ContradictoryAnswerWarning


@dataclass
class AnswerReport:
    """What happened to the answers given to a query loop or to :func:`add_answers`.

    Attributes
    ----------
    asked : list of (i, j)
        Every pair put to the oracle, in order.
    answers : list of bool or None
        The answers (True: same group, False: different groups, None: skipped).
    dropped : list of dict
        Answers dropped by the contradiction policy: ``pair``, ``answer`` and ``reason``.
    stopped : str
        Why a query loop ended: ``"done"`` (budget spent), ``"exhausted"`` (every pair
        decided) or the reason of the oracle's :class:`StopAsking` (the terminal session:
        ``"quit"``, ``"eof"``); empty for :func:`add_answers`.
    """

    asked: list = field(default_factory=list)
    answers: list = field(default_factory=list)
    dropped: list = field(default_factory=list)
    stopped: str = ""

    @property
    def n_asked(self) -> int:
        return len(self.asked)

    @property
    def n_skipped(self) -> int:
        return sum(a is None for a in self.answers)

    @property
    def n_kept(self) -> int:
        """Answers kept: asked, neither skipped nor dropped."""
        return self.n_asked - self.n_skipped - len(self.dropped)

    def extend(self, other: AnswerReport) -> None:
        """Append the pairs, answers and dropped answers of ``other``."""
        self.asked += other.asked
        self.answers += other.answers
        self.dropped += other.dropped


# PLR0915 (statements): the union-find and its nested helpers share its arrays; one pass
# over the answers.
def add_answers(  # noqa: PLR0915
    constraints: Constraints,
    pairs: ArrayLike,
    answers: Sequence[bool | None],
    *,
    warn: bool = True,
) -> tuple[Constraints, AnswerReport]:
    """Add answered pairs to known constraints under the contradiction policy.

    Policy: answers are taken in order; an answer is **kept** unless it contradicts the
    transitive closure of the constraints kept so far (the known ones, then the earlier
    kept answers): "same group" for two points whose must-link components are
    cannot-linked, or "different groups" for two points of one must-link component. A
    contradicting answer is **dropped** (the earlier, consistent set wins), recorded in the
    report and, with ``warn=True``, reported by one
    :class:`~spectralink.exceptions.ContradictoryAnswerWarning`. An answer the closure
    already implies is kept (it is consistent). ``None`` (skipped) adds nothing.

    Parameters
    ----------
    constraints : Constraints
        The known constraints (consistent, as every :class:`Constraints` is).
    pairs : array-like of shape (m, 2)
    answers : sequence of bool or None, length m
        True: same group (must-link); False: different groups (cannot-link).
    warn : bool, default=True

    Returns
    -------
    constraints : Constraints
        The known constraints plus the kept answers (weights of the known pairs kept,
        weight 1 for the new ones; a known pair answered again keeps the larger).
    report : AnswerReport
    """
    n = constraints.n_samples
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    if len(answers) != len(pairs):
        raise ValueError(f"{len(pairs)} pairs but {len(answers)} answers.")
    if len(pairs) and (pairs.min() < 0 or pairs.max() >= n):
        raise ValueError(f"pair indices must be in [0, {n}).")
    parent = np.arange(n)

    def find(a):
        root = a
        while parent[root] != root:
            root = parent[root]
        while parent[a] != root:
            parent[a], a = root, parent[a]
        return root

    for a, b in constraints.must_link.tolist():
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra
    cl_adj: dict[int, set] = {}
    for a, b in constraints.cannot_link.tolist():
        ra, rb = find(a), find(b)
        cl_adj.setdefault(ra, set()).add(rb)
        cl_adj.setdefault(rb, set()).add(ra)

    report = AnswerReport()
    new_ml, new_cl = [], []
    for (i, j), ans in zip(pairs.tolist(), answers, strict=True):
        report.asked.append((i, j))
        ans = None if ans is None else bool(ans)
        report.answers.append(ans)
        if ans is None:
            continue
        if i == j:
            report.dropped.append({"pair": (i, j), "answer": ans, "reason": "a point with itself"})
            continue
        ri, rj = find(i), find(j)
        if ans and rj in cl_adj.get(ri, ()):
            report.dropped.append(
                {
                    "pair": (i, j),
                    "answer": ans,
                    "reason": "same group, but earlier answers put the two in different groups",
                }
            )
            continue
        if not ans and ri == rj:
            report.dropped.append(
                {
                    "pair": (i, j),
                    "answer": ans,
                    "reason": "different groups, but earlier answers put the two in one group",
                }
            )
            continue
        if ans:
            new_ml.append((i, j))
            if ri != rj:
                parent[rj] = ri
                moved = cl_adj.pop(rj, set())
                for s in moved:
                    cl_adj[s].discard(rj)
                    cl_adj[s].add(ri)
                cl_adj.setdefault(ri, set()).update(moved)
        else:
            new_cl.append((i, j))
            cl_adj.setdefault(ri, set()).add(rj)
            cl_adj.setdefault(rj, set()).add(ri)
    if report.dropped and warn:
        first = report.dropped[0]
        warnings.warn(
            f"{len(report.dropped)} answer(s) contradicted earlier answers and were dropped "
            f"(first: pair {first['pair']}: {first['reason']}); the earlier answers are kept.",
            ContradictoryAnswerWarning,
            stacklevel=2,
        )
    return constraints | Constraints(new_ml, new_cl, n_samples=n), report
