"""The query loop: ask pairs, keep the answers under the contradiction policy, refit.

:func:`query_loop` is the one loop; :func:`learn` runs it with an oracle and fits the
estimator at the end, and the command line's interactive session runs it with a person at a
terminal. :func:`add_answers` is the contradiction policy on its own, for answers gathered
elsewhere.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ..constraints import Constraints
from ..exceptions import ContradictoryAnswerWarning
from ..utils import Int, StrOptions, validate_params
from ._answers import AnswerReport
from ._selector import PairSelector, resolve_strategy
from ._session import QuerySession

#: An oracle: (i, j) -> True (same group), False (different groups) or None (skip).
Oracle = Callable[[int, int], "bool | None"]


class StopAsking(Exception):
    """Raised by an oracle to end :func:`query_loop` early (a person quits).

    The answers given before are kept; ``reason`` becomes the report's ``stopped``.
    """

    def __init__(self, reason: str = "stopped") -> None:
        super().__init__(reason)
        self.reason = reason


class LearnResult(NamedTuple):
    """What :func:`learn` returns: ``estimator, constraints, report = learn(...)``."""

    #: The estimator, fitted on ``constraints``.
    estimator: object
    #: Exactly the answered, kept pairs (at most ``n_queries``).
    constraints: Constraints
    #: The pairs asked, the answers, the dropped answers and why the loop stopped.
    report: AnswerReport


@validate_params(
    {
        "selector": [PairSelector],
        "n_queries": [Int(0, None)],
        "batch_size": [Int(1, None)],
        "refit_every": [Int(1, None), StrOptions({"auto"})],
        "fit_at_end": ["boolean"],
        "on_answers": [callable, None],
    },
    prefer_skip_nested_validation=True,
)
def query_loop(
    selector: PairSelector,
    X: ArrayLike,
    oracle: Oracle | ArrayLike,
    n_queries: int,
    *,
    constraints: Constraints | tuple | None = None,
    estimator: object | None = None,
    batch_size: int = 10,
    refit_every: int | str = "auto",
    fit_at_end: bool = False,
    on_answers: Callable[[Constraints, AnswerReport, AnswerReport], None] | None = None,
) -> tuple[Constraints, AnswerReport]:
    """Ask up to ``n_queries`` pairs chosen by ``selector``, in batches.

    Each round chooses a batch (never a pair known, skipped before or decided by the
    answers so far), asks the oracle every pair, adds the answers under the contradiction
    policy of :func:`add_answers`, and refits ``estimator`` when the selector's strategy
    reads the partition and ``refit_every`` queries have passed since the last fit (not
    after the last round).

    Parameters
    ----------
    selector : PairSelector
        Fitted on ``X``.
    X : array-like
        What ``estimator`` is fitted on (features, or an affinity).
    oracle : callable (i, j) -> bool or None, or array-like of shape (n_samples,)
        True: same group, False: different groups, None: skip (a query that adds
        nothing; the pair is not asked again). An array of labels answers
        ``y[i] == y[j]``. Raising :class:`StopAsking` ends the loop.
    n_queries : int
        Budget: the number of pairs put to the oracle.
    constraints : Constraints, (must_link, cannot_link) or None
        Answers known before the loop.
    estimator : estimator of the library's contract, default=None
        Its partition (``labels_``) guides the strategies that read one; ``None``: the
        selector's own NCut partition, never refitted. While it only guides, a constrained
        estimator is refitted as a copy without its held-out guard (``guard=None``); the
        estimator itself is fitted by ``fit_at_end``, guard included.
        :class:`~spectralink.Auto` (an estimator with ``refit_choice``) runs its search
        only at checkpoints (from :data:`SEARCH_MIN_PAIRS` answers on, each time they
        have grown by :data:`SEARCH_GROWTH`; one repeat of its folds) and otherwise
        refits its last choice; its fit at the end is its whole search on all the answers.
    batch_size : int, default=10
        Pairs chosen per round.
    refit_every : int or "auto", default="auto"
        Queries between refits (``"auto"``: every batch).
    fit_at_end : bool, default=False
        Fit ``estimator`` on all kept answers at the end, unless the last fit saw them.
    on_answers : callable (constraints, batch, report), default=None
        Called after every round with the constraints so far, the round's
        :class:`AnswerReport` and the loop's.

    Returns
    -------
    constraints : Constraints
        The known constraints plus the kept answers.
    report : AnswerReport
        Every pair asked, the answers, the dropped answers and ``stopped``.
    """
    ask = _as_oracle(oracle, selector.n_samples_)
    session = QuerySession(
        selector,
        X,
        n_queries,
        constraints=constraints,
        estimator=estimator,
        batch_size=batch_size,
        refit_every=refit_every,
        on_answers=on_answers,
        undo_batches=0,
    )
    while (pair := session.pending()) is not None:
        try:
            answer = _check_answer(ask(*pair), *pair)
        except StopAsking as exc:
            session.stop(exc.reason)
            break
        session.answer(answer)
    cons, report = session.constraints, session.report
    if fit_at_end and estimator is not None:
        last_fit_saw_all = session.guide is estimator and session.fitted_on == len(cons)
        if not last_fit_saw_all or not hasattr(estimator, "labels_"):
            estimator.fit(X, constraints=cons)
    return cons, report


@validate_params(
    {
        "n_queries": [Int(0, None)],
        "batch_size": [Int(1, None)],
        "strategy": [str],
        "refit_every": [Int(1, None), StrOptions({"auto"})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    },
    prefer_skip_nested_validation=True,
)
def learn(
    estimator: object,
    X: ArrayLike,
    oracle: Oracle | ArrayLike,
    n_queries: int,
    *,
    batch_size: int = 10,
    strategy: str = "auto",
    refit_every: int | str = "auto",
    random_state: int | np.random.RandomState | None = None,
    verbose: int = 0,
) -> LearnResult:
    """The query loop: ask ``n_queries`` pairs in batches, then fit the estimator.

    Each round chooses a batch (:class:`PairSelector`), asks the oracle every pair, adds
    the answers under the contradiction policy of :func:`add_answers`, and refits the
    estimator when the strategy reads the partition and ``refit_every`` queries have
    passed since the last fit (:func:`query_loop`). The estimator is fitted once more at
    the end on all kept answers (unless the last refit already saw them).

    Parameters
    ----------
    estimator : estimator of the library's contract
        Fitted in place (``fit(X, constraints=...)``); ``n_clusters`` is read from it.
        With ``Auto(n_clusters=None)`` the strategies start from the eigengap's k and
        then look for the k its searches choose from the answers.
    X : array-like
        Features, or an affinity when the estimator has ``affinity="precomputed"``.
    oracle : callable (i, j) -> bool or None, or array-like of shape (n_samples,)
        True when i and j belong together, False when not, None to skip the pair (it
        counts as a query and is not asked again). An array of labels answers
        ``y[i] == y[j]``. Raising :class:`StopAsking` ends the loop early.
    n_queries : int
        Budget: the number of pairs put to the oracle.
    batch_size : int, default=10
        Pairs chosen per round.
    strategy : str, default="auto"
        One of :data:`STRATEGIES` or ``"auto"`` (:data:`AUTO_STRATEGY`).
    refit_every : int or "auto", default="auto"
        Queries between refits for the strategies that read the partition (``"auto"``:
        every batch, as the papers refit after every answer); the other strategies fit
        only at the end.
    random_state : int, RandomState or None
        Seeds the selection (not the estimator, which keeps its own ``random_state``).
    verbose : int, default=0
        1: one line per round.

    Returns
    -------
    LearnResult
        A named tuple ``(estimator, constraints, report)``: the fitted estimator; exactly
        the answered, kept pairs (at most ``n_queries``); and the :class:`AnswerReport` of
        the loop (pairs asked, answers, dropped answers, why it stopped).

    Warns
    -----
    ContradictoryAnswerWarning
        When answers were dropped by the contradiction policy (only possible with an
        oracle whose answers depend on more than the pair; the pairs chosen here are
        never decided by earlier answers).
    UserWarning
        When every pair is decided before the budget is spent (the loop stops early).
    """
    strat = resolve_strategy(strategy)
    if not hasattr(estimator, "fit") or not hasattr(estimator, "get_params"):
        raise TypeError("estimator must be an estimator of the library's contract.")
    k = getattr(estimator, "n_clusters", None)
    if not (k is None or isinstance(k, numbers.Integral)):
        k = None  # a range of k (Auto): the selector starts from the eigengap's
    affinity = "precomputed" if getattr(estimator, "affinity", None) == "precomputed" else "knn"
    selector = PairSelector(k, strategy=strat, affinity=affinity, random_state=random_state).fit(X)

    def progress(cons: Constraints, batch: AnswerReport, report: AnswerReport) -> None:
        print(
            f"[active] {report.n_asked}/{n_queries} queries, {cons.n_must_link} must-link, "
            f"{cons.n_cannot_link} cannot-link, {len(report.dropped)} dropped, "
            f"{report.n_skipped} skipped"
        )

    cons, report = query_loop(
        selector,
        X,
        oracle,
        n_queries,
        estimator=estimator,
        batch_size=batch_size,
        refit_every=refit_every,
        fit_at_end=True,
        on_answers=progress if verbose else None,
    )
    if report.stopped == "exhausted":
        warnings.warn(
            f"every pair is decided by the {len(cons)} kept answers; stopping after "
            f"{report.n_asked} of {n_queries} queries.",
            UserWarning,
            stacklevel=2,
        )
    if report.dropped:
        first = report.dropped[0]
        warnings.warn(
            f"{len(report.dropped)} answer(s) contradicted earlier answers and were dropped "
            f"(first: pair {first['pair']}: {first['reason']}); see the returned report.",
            ContradictoryAnswerWarning,
            stacklevel=2,
        )
    return LearnResult(estimator, cons, report)


def _check_answer(ans: object, i: int, j: int) -> bool | None:
    if ans is None or isinstance(ans, (bool, np.bool_)):
        return None if ans is None else bool(ans)
    if isinstance(ans, numbers.Integral) and ans in (0, 1):
        return bool(ans)
    raise ValueError(
        f"the oracle answered {ans!r} for pair ({i}, {j}); expected True, False or None."
    )


def _as_oracle(oracle, n: int) -> Callable[[int, int], bool | None]:
    if callable(oracle):
        return oracle
    y = np.asarray(oracle)
    if y.ndim != 1 or len(y) != n:
        raise ValueError(
            "oracle must be a callable (i, j) -> bool or an array of n_samples labels; "
            f"got an array of shape {y.shape} for {n} samples."
        )
    return lambda i, j: bool(y[i] == y[j])
