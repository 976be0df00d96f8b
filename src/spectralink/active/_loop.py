"""The query loop: ask pairs, keep the answers under the contradiction policy, refit.

:func:`query_loop` is the one loop; :func:`learn` runs it with an oracle and fits the
estimator at the end, and the command line's interactive session runs it with a person at a
terminal. :func:`add_answers` is the contradiction policy on its own, for answers gathered
elsewhere.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import clone

from ..constraints import Constraints, as_constraints
from ..exceptions import ContradictoryAnswerWarning
from ..utils import Int, StrOptions, validate_params
from ._selector import PARTITION_STRATEGIES, PairSelector, resolve_strategy

#: An oracle: (i, j) -> True (same group), False (different groups) or None (skip).
Oracle = Callable[[int, int], "bool | None"]


class StopAsking(Exception):
    """Raised by an oracle to end :func:`query_loop` early (a person quits).

    The answers given before are kept; ``reason`` becomes the report's ``stopped``.
    """

    def __init__(self, reason: str = "stopped") -> None:
        super().__init__(reason)
        self.reason = reason


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


class LearnResult(NamedTuple):
    """What :func:`learn` returns: ``estimator, constraints, report = learn(...)``."""

    #: The estimator, fitted on ``constraints``.
    estimator: object
    #: Exactly the answered, kept pairs (at most ``n_queries``).
    constraints: Constraints
    #: The pairs asked, the answers, the dropped answers and why the loop stopped.
    report: AnswerReport


def add_answers(
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
    n = selector.n_samples_
    ask = _as_oracle(oracle, n)
    cons = as_constraints(constraints, n)
    uses_partition = estimator is not None and selector.strategy_ in PARTITION_STRATEGIES
    step = batch_size if refit_every == "auto" else refit_every
    report = AnswerReport(stopped="done")
    skipped: list[tuple[int, int]] = []
    guide = _guide(estimator) if uses_partition else estimator
    fitted_on = -1
    if uses_partition and n_queries:
        guide.fit(X, constraints=cons)
        _follow_k(selector, guide)
        fitted_on = len(cons)
    last_fit_at = 0
    while report.n_asked < n_queries:
        b = min(batch_size, n_queries - report.n_asked)
        labels = guide.labels_ if uses_partition else None
        pairs = selector.select(b, cons, labels, exclude=skipped)
        if len(pairs) == 0:
            report.stopped = "exhausted"
            break
        answers: list[bool | None] = []
        stop = None
        for i, j in pairs.tolist():
            try:
                answers.append(_check_answer(ask(i, j), i, j))
            except StopAsking as exc:
                stop = exc.reason
                break
        pairs = pairs[: len(answers)]
        cons, batch = add_answers(cons, pairs, answers, warn=False)
        report.extend(batch)
        skipped += [tuple(p) for p, a in zip(pairs.tolist(), answers, strict=True) if a is None]
        if on_answers is not None:
            on_answers(cons, batch, report)
        if stop is not None:
            report.stopped = stop
            break
        if uses_partition and report.n_asked - last_fit_at >= step and report.n_asked < n_queries:
            guide.fit(X, constraints=cons)
            _follow_k(selector, guide)
            fitted_on, last_fit_at = len(cons), report.n_asked
    if fit_at_end and estimator is not None:
        if guide is not estimator or fitted_on != len(cons) or not hasattr(estimator, "labels_"):
            estimator.fit(X, constraints=cons)
    return cons, report


#: A searching estimator (:class:`~spectralink.Auto`) inside the loop searches again once the
#: kept answers have grown by this factor since its last search, and refits only its choice
#: in between: a loop of n answers then runs about log2(n / SEARCH_MIN_PAIRS) searches
SEARCH_GROWTH = 2.0
#: ... and not before this many answers: with fewer, each of the search's 5 folds holds
#: fewer than 10 pairs and the choice is mostly noise (until then the estimator's
#: ``refit_choice`` fits what it uses without a search)
SEARCH_MIN_PAIRS = 50


class _SearchCheckpoints:
    """A searching estimator guiding the loop: its search at checkpoints, its choice
    refitted in between.

    ``fit`` runs the estimator's own ``fit`` (the search, with one repeat of the folds when
    the estimator has ``n_repeats``) when the kept answers reach :data:`SEARCH_MIN_PAIRS`
    and then each time they have grown by :data:`SEARCH_GROWTH` since the last search;
    otherwise its ``refit_choice``. ``searches`` counts the searches.
    """

    def __init__(self, estimator) -> None:
        self.estimator = clone(estimator)
        if self.estimator.get_params(deep=False).get("n_repeats") is not None:
            # its choice only guides the next questions: one repeat of the folds (a third
            # of the fits), the fit at the end searches as the estimator says
            self.estimator.set_params(n_repeats=1)
        self.searched_on = 0
        self.searches = 0

    def fit(self, X, constraints: Constraints):
        n = len(constraints)
        if n >= max(SEARCH_MIN_PAIRS, SEARCH_GROWTH * self.searched_on):
            self.estimator.fit(X, constraints=constraints)
            self.searched_on = n
            self.searches += 1
        else:
            self.estimator.refit_choice(X, constraints=constraints)
        return self

    @property
    def labels_(self) -> np.ndarray:
        return self.estimator.labels_

    @property
    def n_clusters_(self) -> int | None:
        return getattr(self.estimator, "n_clusters_", None)


def _follow_k(selector: PairSelector, guide) -> None:
    """A selector left to choose k (``n_clusters=None``) looks for the k the guiding
    estimator chose from the answers (``Auto(n_clusters=None)``'s ``n_clusters_``)."""
    k = getattr(guide, "n_clusters_", None)
    if selector.n_clusters is None and k is not None:
        selector.use_n_clusters(k)


def _guide(estimator):
    """The estimator whose partition guides the strategies during the loop: ``estimator``
    itself, a copy without its held-out guard (whose refits would multiply the loop's
    cost; the partition only chooses the next pairs, and the final fit keeps the guard),
    or, for an estimator that searches among methods and offers ``refit_choice``
    (:class:`~spectralink.Auto`), its search at checkpoints (:class:`_SearchCheckpoints`)."""
    if callable(getattr(estimator, "refit_choice", None)):
        return _SearchCheckpoints(estimator)
    params = estimator.get_params(deep=False)
    if params.get("guard") is None:
        return estimator
    return clone(estimator).set_params(guard=None)


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
