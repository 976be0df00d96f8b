"""The query loop one answer at a time: for a person who answers when they like.

:class:`QuerySession` is :func:`~spectralink.active.query_loop` turned inside out: the
caller asks for the pending pair, gives its answer, and may take the last answers back.
``query_loop`` (and so :func:`~spectralink.active.learn` and the terminal session) runs on
it, so a person answering through a session is asked exactly the pairs ``learn`` would ask
an oracle giving the same answers.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..constraints import Constraints, as_constraints
from ._answers import AnswerReport, add_answers
from ._guide import copy_for_refit, follow_k, guide_for, keeps_state
from ._selector import PARTITION_STRATEGIES, PairSelector

#: How many closed batches :meth:`QuerySession.undo` can reopen (for a searching guide,
#: :class:`~spectralink.Auto`, each keeps a copy of it as it was before the batch's refit).
UNDO_BATCHES = 50


class AheadFit:
    """A refit of the loop's guiding estimator prepared before the answer that starts it
    (:meth:`QuerySession.fit_ahead`): ``estimator`` (a copy) is to be fitted on
    ``constraints``; the session takes the result when the answer comes.
    """

    def __init__(self, estimator: object, constraints: Constraints) -> None:
        self.estimator = estimator
        self.constraints = constraints
        self._done = threading.Event()
        self._fitted: object | None = None

    def run(self, X: ArrayLike) -> None:
        """Fit here (any thread) and deliver."""
        try:
            self.estimator.fit(X, constraints=self.constraints)
        except Exception:
            self.fail()
            raise
        self.deliver(self.estimator)

    def deliver(self, fitted: object) -> None:
        """Hand over ``estimator`` fitted elsewhere (another process)."""
        self._fitted = fitted
        self._done.set()

    def fail(self) -> None:
        """The fit will not come: the session refits itself when the answer comes."""
        self._done.set()

    def result(self) -> object | None:
        """The fitted estimator, waiting for it; ``None`` when it failed."""
        self._done.wait()
        return self._fitted


@dataclass
class _Closed:
    """What closing a batch changed, to put back on undo."""

    pairs: np.ndarray
    answers: list
    constraints: Constraints
    n_report: int
    n_skipped: int
    guide: object
    fitted_on: int
    last_fit_at: int
    n_clusters: int
    rng_state: tuple


class QuerySession:
    """The query loop of :func:`~spectralink.active.query_loop`, advanced by the caller.

    ``pending()`` is the pair to ask now (a new batch is chosen when the last one is
    answered); ``answer(a)`` records the answer to it; at the end of a batch the answers
    are added under the contradiction policy of :func:`~spectralink.active.add_answers`
    and the guiding estimator is refitted as ``query_loop`` does. ``undo()`` takes the last
    answer back and asks its pair again, also across the end of a batch (the refit and the
    draw of the next batch are undone with it, up to :data:`UNDO_BATCHES` batches back).
    ``fit_ahead(a)`` prepares the refit that answering ``a`` to the pending pair would start,
    so that it can run while the person thinks (the same fit, on the same constraints, from
    a copy of the same estimator: the loop is unchanged).

    Parameters
    ----------
    selector : PairSelector
        Fitted on ``X``.
    X : array-like
        What ``estimator`` is fitted on.
    n_queries : int or None
        Budget (``None``: until every pair is decided or the caller stops).
    constraints, estimator, batch_size, refit_every, on_answers
        As in :func:`~spectralink.active.query_loop`.
    undo_batches : int, default=UNDO_BATCHES
        Closed batches :meth:`undo` can reopen (0: undo only within the open batch, and no
        copy of the guiding estimator is kept).

    Attributes
    ----------
    constraints : Constraints
        The known constraints plus the kept answers of the closed batches.
    report : AnswerReport
        Every pair asked and answered so far (the open batch's included).
    """

    def __init__(
        self,
        selector: PairSelector,
        X: ArrayLike,
        n_queries: int | None = None,
        *,
        constraints: Constraints | tuple | None = None,
        estimator: object | None = None,
        batch_size: int = 10,
        refit_every: int | str = "auto",
        on_answers: Callable[[Constraints, AnswerReport, AnswerReport], None] | None = None,
        undo_batches: int = UNDO_BATCHES,
    ) -> None:
        self.selector = selector
        self.X = X
        self.n_queries = n_queries
        self.batch_size = batch_size
        self.on_answers = on_answers
        self.undo_batches = undo_batches
        self.constraints = as_constraints(constraints, selector.n_samples_)
        self.uses_partition = estimator is not None and selector.strategy_ in PARTITION_STRATEGIES
        self._step = batch_size if refit_every == "auto" else refit_every
        self.report = AnswerReport(stopped="done")
        self._closed_report = AnswerReport()
        self._skipped: list[tuple[int, int]] = []
        self.estimator = estimator
        self.guide = guide_for(estimator) if self.uses_partition else estimator
        self.fitted_on = -1
        if self.uses_partition and (n_queries is None or n_queries > 0):
            self.guide.fit(X, constraints=self.constraints)
            follow_k(selector, self.guide)
            self.fitted_on = len(self.constraints)
        self._last_fit_at = 0
        self._batch = np.empty((0, 2), dtype=np.int64)
        self._answers: list[bool | None] = []
        self._rng_after_draw: tuple | None = None
        self._history: list[_Closed] = []
        self._ahead: dict[tuple, AheadFit] = {}
        self.finished = False

    # ------------------------------------------------------------------ state
    @property
    def n_asked(self) -> int:
        """Pairs answered (or skipped) so far, the open batch's included."""
        return self._closed_report.n_asked + len(self._answers)

    def open_answers(self) -> list[tuple[tuple[int, int], bool | None]]:
        """The answers of the open batch, not yet added to :attr:`constraints`."""
        return [(tuple(p), a) for p, a in zip(self._open_pairs(), self._answers, strict=True)]

    def pending(self) -> tuple[int, int] | None:
        """The pair to ask now, or ``None`` when the loop is over (``report.stopped``
        says why: ``"done"``, the budget spent, or ``"exhausted"``, every pair decided)."""
        if self.finished:
            return None
        if len(self._answers) < len(self._batch):
            return tuple(int(v) for v in self._batch[len(self._answers)])
        if self.n_queries is not None and self.n_asked >= self.n_queries:
            self.finished = True
            return None
        b = self.batch_size
        if self.n_queries is not None:
            b = min(b, self.n_queries - self.n_asked)
        labels = self.guide.labels_ if self.uses_partition else None
        pairs = self.selector.select(b, self.constraints, labels, exclude=self._skipped)
        self._rng_after_draw = self.selector.rng_state()
        if len(pairs) == 0:
            self.report.stopped = "exhausted"
            self.finished = True
            return None
        self._batch, self._answers = pairs, []
        return tuple(int(v) for v in pairs[0])

    # ------------------------------------------------------------------ answers
    def answer(self, answer: bool | None) -> AnswerReport | None:
        """Record the answer to :meth:`pending` (True: same group, False: different
        groups, None: skip); the batch's :class:`AnswerReport` when it closed the batch."""
        if self.pending() is None:
            raise ValueError("no pair is pending: the session is over.")
        self._answers.append(None if answer is None else bool(answer))
        self._sync_report()
        if len(self._answers) == len(self._batch):
            return self._close_batch(refit=True)
        return None

    def stop(self, reason: str = "stopped") -> AnswerReport | None:
        """End the session: the open batch's answers are added (no refit), ``reason``
        becomes ``report.stopped``; the batch's report when it held answers."""
        batch = self._close_batch(refit=False) if self._answers else None
        self.report.stopped = reason
        self.finished = True
        return batch

    def undo(self) -> tuple[int, int] | None:
        """Take the last answer back; the pair it answered (asked again next), or
        ``None`` when there is nothing to take back."""
        if self._answers:
            self._answers.pop()
        elif self._history:
            self._reopen(self._history.pop())
            self._answers.pop()
        else:
            return None
        self.finished = False
        self.report.stopped = "done"
        self._sync_report()
        return tuple(int(v) for v in self._batch[len(self._answers)])

    # ------------------------------------------------------------------ refits ahead
    def closes_with_refit(self) -> bool:
        """Whether answering the pending pair closes its batch and refits the guide."""
        if self.pending() is None or not self.uses_partition:
            return False
        if len(self._answers) + 1 < len(self._batch):
            return False
        after = self.n_asked + 1
        under_budget = self.n_queries is None or after < self.n_queries
        return under_budget and after - self._last_fit_at >= self._step

    def fit_ahead(self, answer: bool | None) -> AheadFit | None:
        """The refit that answering ``answer`` to the pending pair would start, prepared
        ahead of the answer (``None`` when that answer starts no refit, or it is prepared
        already). Prepare it where the session is not changing; fit it anywhere
        (:meth:`AheadFit.run`, or another process and :meth:`AheadFit.deliver`): when that
        answer comes, the refit waits for it and takes its result. Every prepared fit must
        end in ``run``, ``deliver`` or ``fail``."""
        if not self.closes_with_refit():
            return None
        answers = [*self._answers, None if answer is None else bool(answer)]
        pairs = self._batch[: len(answers)]
        cons, _ = add_answers(self.constraints, pairs, answers, warn=False)
        key = self._ahead_key(cons, len(answers))
        if key in self._ahead:
            return None
        self._ahead[key] = job = AheadFit(copy_for_refit(self.guide), cons)
        return job

    def _ahead_key(self, cons: Constraints, n_open: int) -> tuple:
        return (self._closed_report.n_asked + n_open, cons.pairs.tobytes(), cons.n_must_link)

    def _refit_guide(self) -> None:
        key = self._ahead_key(self.constraints, 0)
        ahead = self._ahead.get(key)
        self._ahead = {}
        fitted = None if ahead is None else ahead.result()
        if fitted is not None:
            self.guide = fitted
        else:
            self.guide.fit(self.X, constraints=self.constraints)

    # ------------------------------------------------------------------ batches
    def _sync_report(self) -> None:
        """``report`` is the closed batches' report plus the open batch's answers."""
        self.report.asked = self._closed_report.asked + [tuple(p) for p in self._open_pairs()]
        self.report.answers = self._closed_report.answers + list(self._answers)
        self.report.dropped = list(self._closed_report.dropped)

    def _open_pairs(self) -> list:
        return self._batch[: len(self._answers)].tolist()

    def _close_batch(self, *, refit: bool) -> AnswerReport:
        pairs = self._batch[: len(self._answers)]
        closed = _Closed(
            pairs=self._batch,
            answers=list(self._answers),
            constraints=self.constraints,
            n_report=self._closed_report.n_asked,
            n_skipped=len(self._skipped),
            guide=None,
            fitted_on=self.fitted_on,
            last_fit_at=self._last_fit_at,
            n_clusters=self.selector.n_clusters_,
            rng_state=self._rng_after_draw,
        )
        self.constraints, batch = add_answers(self.constraints, pairs, self._answers, warn=False)
        self._closed_report.extend(batch)
        self._skipped += [
            tuple(p) for p, a in zip(pairs.tolist(), self._answers, strict=True) if a is None
        ]
        self._batch, self._answers = np.empty((0, 2), dtype=np.int64), []
        self._sync_report()
        if self.on_answers is not None:
            self.on_answers(self.constraints, batch, self.report)
        under_budget = self.n_queries is None or self.n_asked < self.n_queries
        if refit and self.uses_partition and self.n_asked - self._last_fit_at >= self._step:
            if under_budget:
                if self.undo_batches and keeps_state(self.guide):
                    # a search's next fit depends on its past ones: undo puts them back
                    closed.guide = copy.deepcopy(self.guide)
                self._refit_guide()
                follow_k(self.selector, self.guide)
                self.fitted_on, self._last_fit_at = len(self.constraints), self.n_asked
        if self.undo_batches:
            self._history = [*self._history[-(self.undo_batches - 1) :], closed]
        return batch

    def _reopen(self, closed: _Closed) -> None:
        """Put the session back as it was before ``closed``'s last answer closed it."""
        self.constraints = closed.constraints
        keep = closed.n_report
        r = self._closed_report
        r.asked, r.answers = r.asked[:keep], r.answers[:keep]
        r.dropped = [d for d in r.dropped if d["pair"] in set(r.asked)]
        self._skipped = self._skipped[: closed.n_skipped]
        if closed.guide is not None:
            self.guide = closed.guide
        self.fitted_on, self._last_fit_at = closed.fitted_on, closed.last_fit_at
        if self.selector.n_clusters_ != closed.n_clusters:
            self.selector.use_n_clusters(closed.n_clusters)
        self.selector.set_rng_state(closed.rng_state)
        self._rng_after_draw = closed.rng_state
        self._batch, self._answers = closed.pairs, list(closed.answers)
