"""The terminal session of ``spectralink query --interactive``: questions in, answers saved.

Only input and output live here: the pairs are chosen, answered, kept and refitted by
:func:`spectralink.active.query_loop`, the loop :func:`spectralink.active.learn` runs too;
the person at the terminal is its oracle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from os import PathLike

import numpy as np
from numpy.typing import ArrayLike

from ..active import AnswerReport, PairSelector, StopAsking, query_loop
from ..constraints import Constraints, as_constraints, write_pairs_csv

_PROMPT = "same group? [y/n/s(kip)/q(uit)] "
_REPLIES = {"y": True, "yes": True, "n": False, "no": False, "s": None, "skip": None}


def _row_text(X: np.ndarray, i: int, n_values: int = 8) -> str:
    row = np.asarray(X[i]).ravel()
    vals = " ".join(f"{v:.4g}" for v in row[:n_values])
    more = f" ... ({len(row)} values)" if len(row) > n_values else ""
    return f"  row {i}: {vals}{more}"


def ask_in_terminal(
    X: ArrayLike,
    n_pairs: int,
    *,
    n_clusters: int,
    output: str | PathLike,
    constraints: Constraints | tuple | None = None,
    estimator: object | None = None,
    strategy: str = "auto",
    refit_every: int = 10,
    random_state: int | np.random.RandomState | None = None,
    input_fn: Callable[[str], str] | None = None,
    print_fn: Callable[..., None] | None = None,
    ids: Sequence[str] | None = None,
) -> AnswerReport:
    """Ask up to ``n_pairs`` pairs one by one in a terminal; save every answer at once.

    Each question shows the two rows' first feature values and reads ``y`` (same group),
    ``n`` (different groups), ``s`` (skip; not asked again in this run) or ``q`` (quit).
    After every kept answer the file ``output`` is rewritten atomically with the known
    ``constraints`` followed by the answers so far, so quitting, closing the input or
    Ctrl-C loses nothing. Nothing is written until the first answer.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_pairs : int
        Questions at most (skips included).
    n_clusters : int
    output : path
        The constraints file written (columns ``i,j,kind[,weight]``).
    constraints : Constraints, default=None
        Known answers; they are copied into ``output``.
    estimator : estimator, default=None
        Refitted every ``refit_every`` questions when the strategy reads the partition.
    strategy, random_state
        As in :func:`spectralink.active.select_pairs`.
    input_fn, print_fn : callable, default=None
        How questions are read and printed (``None``: the built-in ``input`` and
        ``print``).
    ids : sequence of str, default=None
        Row IDs: shown in the questions and written in ``output`` instead of indices.

    Returns
    -------
    AnswerReport
        ``stopped`` says why the session ended: ``"done"``, ``"quit"``, ``"eof"`` or
        ``"exhausted"``.

    Raises
    ------
    KeyboardInterrupt
        Re-raised after the answers given so far are saved.
    """
    input_fn = input if input_fn is None else input_fn
    print_fn = print if print_fn is None else print_fn
    selector = PairSelector(n_clusters, strategy=strategy, random_state=random_state).fit(X)
    cons = as_constraints(constraints, selector.n_samples_)
    Xv = np.asarray(X)
    rows_p = [tuple(p) for p in cons.pairs.tolist()]
    rows_k = ["ml"] * cons.n_must_link + ["cl"] * cons.n_cannot_link
    rows_w = list(cons.weights) if cons.is_weighted else None
    n_known = len(rows_p)
    n_shown = 0

    def person(i: int, j: int) -> bool | None:
        nonlocal n_shown
        n_shown += 1
        named = "" if ids is None else f" (IDs {ids[i]} and {ids[j]})"
        print_fn(f"pair {n_shown}/{n_pairs}: rows {i} and {j}{named}")
        print_fn(_row_text(Xv, i))
        print_fn(_row_text(Xv, j))
        while True:
            try:
                reply = input_fn(_PROMPT).strip().lower()
            except EOFError:
                raise StopAsking("eof") from None
            if reply in ("q", "quit"):
                raise StopAsking("quit")
            if reply in _REPLIES:
                return _REPLIES[reply]
            print_fn("please answer y, n, s or q.")

    def save(cons: Constraints, batch: AnswerReport, report: AnswerReport) -> None:
        dropped = {d["pair"] for d in batch.dropped}
        for d in batch.dropped:
            print_fn(f"  not kept: {d['reason']}.")
        kept = [
            (p, a)
            for p, a in zip(batch.asked, batch.answers, strict=True)
            if a is not None and p not in dropped
        ]
        for p, a in kept:
            rows_p.append(p)
            rows_k.append("ml" if a else "cl")
            if rows_w is not None:
                rows_w.append(1.0)
        if kept:
            write_pairs_csv(output, rows_p, rows_k, rows_w, ids=ids)

    try:
        _, report = query_loop(
            selector,
            X,
            person,
            n_pairs,
            constraints=cons,
            estimator=estimator,
            batch_size=1,
            refit_every=refit_every,
            on_answers=save,
        )
    except KeyboardInterrupt:
        print_fn(f"\ninterrupted; {len(rows_p) - n_known} answer(s) saved in {output}.")
        raise
    if report.stopped == "exhausted":
        print_fn("every pair is decided by the answers so far.")
    return report
