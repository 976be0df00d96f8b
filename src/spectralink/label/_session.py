"""The labelling session: the active loop fed by a person, its state in the answers file.

:class:`LabelSession` holds what the page needs: the pending pair (from
:class:`~spectralink.active.QuerySession`, so a person is asked exactly the pairs
:func:`~spectralink.active.learn` would ask an oracle answering the same), the answers file
(every answer on disk before the page hears back), and a preview of the clustering that a
background thread refits whenever answers came in. When the next answer ends a batch whose
refit the strategy reads, that refit starts ahead, for "same" and for "different", while the
person looks at the pair: the click then finds it done. Everything that is not in the answers
file is rebuilt from it at start: restarting with the same file resumes.
"""

from __future__ import annotations

import copy
import threading

import numpy as np

from ..active import PairSelector, QuerySession, add_answers
from ..constraints import Constraints
from ..methods import unguarded_clone
from ._fitter import Fitter
from ._items import ItemView
from ._layout import map_layout
from ._log import AnswerLog

#: Points drawn in the preview at most (a uniform draw, the answered points added).
PREVIEW_POINTS = 4000


class LabelSession:
    """The state behind the labelling page.

    Parameters
    ----------
    X : ndarray
        What the estimators are fitted on (features as scaled for clustering).
    selector : PairSelector
        Fitted on ``X``; its strategy chooses the pairs.
    log : AnswerLog
        The answers file; the answers already in it are replayed first.
    view : ItemView
        How rows are shown.
    constraints : Constraints, default=None
        Pairs known before (``--constraints``): never asked.
    estimator : estimator, default=None
        Guides the strategies that read a partition, refitted as ``learn`` refits it
        (``None``: the selector's own NCut partition).
    preview : estimator, default=None
        Fitted in the background on the answers so far, for the page's picture.
    n_queries : int or None
        Questions at most (``None``: until the person stops or every pair is decided).
    batch_size, refit_every
        As in :func:`~spectralink.active.learn`.
    random_state : int, default=0
        Seeds the preview's layout sample.
    processes : bool, default=True
        Fit (the refits ahead and the preview) in a worker process, where the fits do not
        slow the page's requests; ``False``: in a thread.
    """

    def __init__(
        self,
        X: np.ndarray,
        selector: PairSelector,
        log: AnswerLog,
        view: ItemView,
        *,
        constraints: Constraints | None = None,
        estimator: object | None = None,
        preview: object | None = None,
        n_queries: int | None = None,
        batch_size: int = 10,
        refit_every: int | str = "auto",
        random_state: int = 0,
        processes: bool = True,
    ) -> None:
        self.X, self.selector, self.log, self.view = X, selector, log, view
        self.n = selector.n_samples_
        self.known = constraints if constraints is not None else Constraints(n_samples=self.n)
        self.estimator, self.preview = estimator, preview
        self.n_queries, self.batch_size, self.refit_every = n_queries, batch_size, refit_every
        self.random_state = random_state
        self.lock = threading.RLock()
        self.notes: list[str] = []
        self.restart_dropped: list[dict] = []
        self._changed = threading.Event()
        self._closing = threading.Event()
        self._preview = {"version": 0, "labels": None, "n_answers": 0, "error": None}
        self.fitting = False
        self._layout: dict | None = None
        self.fitter = Fitter(X, processes=processes)
        self.searcher: Fitter | None = None  # a second worker, for a search (Auto)
        self._searched: tuple | None = None  # (the searched estimator, its answers)
        self._ahead: dict = {}
        self.session = self._resume()
        self._fit_ahead()

    # ------------------------------------------------------------------ start
    def _new_session(self, known: Constraints) -> QuerySession:
        session = QuerySession(
            self.selector,
            self.X,
            self.n_queries,
            constraints=known,
            estimator=self.estimator,
            batch_size=self.batch_size,
            refit_every=self.refit_every,
        )
        if callable(getattr(session.guide, "adopt", None)):
            # a search at checkpoints (Auto): the clicks refit its choice, the search runs
            # beside them (refit_preview) and is adopted when it ends
            session.guide.defer = True
        return session

    def _resume(self) -> QuerySession:
        """Replay the answers file. When its pairs are those this loop asks (same data,
        options and seed), the loop resumes where it stopped; otherwise its answers join
        the known pairs (under the contradiction policy) and a new loop starts."""
        records = self.log.read()
        session = self._new_session(self.known)
        for t, (i, j, answer) in enumerate(records):
            pending = session.pending()
            if pending is None or set(pending) != {i, j}:
                return self._restart(records, t)
            session.answer(answer)
        self.n_before = 0
        if records:
            self.notes.append(f"resumed after {len(records)} answer(s) in {self.log.path}")
        return session

    def _restart(self, records: list, t: int) -> QuerySession:
        answered = [(i, j, a) for i, j, a in records if a is not None]
        pairs = np.asarray([(i, j) for i, j, _ in answered], dtype=np.int64).reshape(-1, 2)
        known, report = add_answers(self.known, pairs, [a for *_, a in answered], warn=False)
        self.restart_dropped = report.dropped
        self.notes.append(
            f"the {len(records)} answer(s) in {self.log.path} were not asked in this order by "
            f"this strategy and seed (from answer {t + 1} on); they are kept as known pairs "
            "and the questions start anew"
            + (f"; {len(report.dropped)} contradicted earlier pairs" if report.dropped else "")
        )
        self.n_before = len(records)
        self.selector.fit(self.X)  # the selector's draws start again from its seed
        return self._new_session(known)

    def _fit_ahead(self) -> None:
        """Submit the refits the answers to the pending pair would start (under the lock),
        the answer the current partition expects first: the worker fits in order."""
        pending = self.session.pending()
        if pending is None or not self.session.closes_with_refit():
            return
        labels = getattr(self.session.guide, "labels_", None)
        same_first = labels is not None and labels[pending[0]] == labels[pending[1]]
        for answer in (True, False) if same_first else (False, True):
            job = self.session.fit_ahead(answer)
            if job is None:
                continue
            try:
                future = self.fitter.submit(job.estimator, job.constraints)
            except Exception:
                job.fail()
                continue
            self._ahead[answer] = future
            future.add_done_callback(lambda f, job=job: _deliver(job, f))

    @property
    def fitting_ahead(self) -> bool:
        """Whether a refit the next click may need is queued or running."""
        return any(not f.done() for f in list(self._ahead.values()))

    # ------------------------------------------------------------------ answers
    def constraints(self) -> Constraints:
        """The known pairs and every answer so far (the open batch's included)."""
        with self.lock:
            open_ = self.session.open_answers()
            pairs = np.asarray([p for p, _ in open_], dtype=np.int64).reshape(-1, 2)
            cons, _ = add_answers(
                self.session.constraints, pairs, [a for _, a in open_], warn=False
            )
            return cons

    def answer(self, pair: tuple[int, int], answer: bool | None) -> None:
        """Record the person's ``answer`` to ``pair``, which must be the pending pair:
        on disk first, then in the loop."""
        with self.lock:
            pending = self.session.pending()
            if pending is None:
                raise LookupError("no question is pending: the session is over.")
            if set(pair) != set(pending):
                raise LookupError(
                    f"pair {tuple(pair)} is not the pending question {pending} (answered twice?)."
                )
            self.log.append(*pending, answer)
            for other, future in self._ahead.items():
                if other is not answer:
                    future.cancel()  # a refit for the answer not given, not started yet
            self._ahead = {}
            self.session.answer(answer)
            self._keep_search()
            self._fit_ahead()
        self._changed.set()

    def undo(self) -> tuple[int, int] | None:
        """Take back the last answer given in this run (file and loop); its pair."""
        with self.lock:
            if self.session.n_asked == 0:
                return None
            self.log.drop_last()
            for future in self._ahead.values():
                future.cancel()
            self._ahead = {}
            pair = self.session.undo()
            self._fit_ahead()
        self._changed.set()
        return pair

    def state(self) -> dict:
        """What the page shows now: counters, the pending pair and its rows."""
        with self.lock:
            pending = self.session.pending()
            report = self.session.report
            answers = report.answers
            out = {
                "n_answered": len(answers),
                "n_before": self.n_before,
                "n_same": sum(a is True for a in answers),
                "n_different": sum(a is False for a in answers),
                "n_skipped": sum(a is None for a in answers),
                "n_known": len(self.known),
                "budget": self.n_queries,
                "n_clusters": int(self.selector.n_clusters_),
                "finished": pending is None,
                "stopped": report.stopped if pending is None else "",
                "can_undo": self.session.n_asked > 0,
                "dropped": [
                    {"pair": [int(v) for v in d["pair"]], "reason": d["reason"]}
                    for d in [*self.restart_dropped, *report.dropped]
                ],
                "notes": list(self.notes),
                "preview_version": self._preview["version"],
                "pending": None if pending is None else self.view.pair(*pending),
            }
        return out

    # ------------------------------------------------------------------ preview
    def layout(self) -> dict:
        """2-d positions of the drawn points (:func:`~spectralink.label._layout.map_layout`:
        the selector's spectral embedding, a collapsed component spread by its features)."""
        if self._layout is None:
            rng = np.random.RandomState(self.random_state)
            shown = np.arange(self.n)
            if self.n > PREVIEW_POINTS:
                shown = np.sort(rng.choice(self.n, PREVIEW_POINTS, replace=False))
            xy = map_layout(self.selector.embedding_, self.X, self.random_state)
            self._layout = {"xy": xy, "shown": shown}
        xy, shown = self._layout["xy"], self._layout["shown"]
        return {"index": shown.tolist(), "xy": np.round(xy[shown], 4).tolist(), "n": self.n}

    def preview_state(self) -> dict:
        """The last preview: labels of the drawn points and the answered pairs."""
        layout = self.layout()
        xy = self._layout["xy"]
        cons = self.constraints()
        labels = self._preview["labels"]
        pairs = [
            {"xy": [xy[i].round(4).tolist(), xy[j].round(4).tolist()], "same": same}
            for pairs, same in ((cons.must_link, True), (cons.cannot_link, False))
            for i, j in pairs.tolist()
        ]
        return {
            "version": self._preview["version"],
            "labels": None if labels is None else labels[layout["index"]].tolist(),
            "n_answers": self._preview["n_answers"],
            "fitting": self.fitting,
            "error": self._preview["error"],
            "pairs": pairs,
        }

    def refit_preview(self) -> None:
        """Fit the preview estimator on the answers so far (the background thread's work;
        callable directly)."""
        if self.preview is None:
            return
        cons = self.constraints()
        if callable(getattr(self.preview, "refit_choice", None)):
            # a searching estimator (Auto): the preview is the partition its search at
            # checkpoints gives the loop; a search per answer would hold the worker that
            # the next click's refit needs (a minute on USPS)
            self._search_if_due(cons)
            labels = getattr(self.session.guide, "labels_", None)
            if labels is not None:
                self._show(np.asarray(labels), None, len(cons))
            return
        self.fitting = True
        try:
            # as the loop's guide: the method's partition, without the guard's refits,
            # which would multiply the cost of every preview beside the clicks
            est = unguarded_clone(self.preview)
            est = self.fitter.submit(est, cons).result()
            labels, error = np.asarray(est.labels_), None
        except Exception as exc:  # shown on the page; the labelling goes on
            labels, error = self._preview["labels"], f"{type(exc).__name__}: {exc}"
        finally:
            self.fitting = False
        self._show(labels, error, len(cons))

    def _search_if_due(self, cons: Constraints) -> None:
        """Run the search the loop's guide has due (``search_due``) in the second worker,
        then adopt it: the clicks meanwhile refit the last choice, never waiting for it."""
        with self.lock:
            guide = self.session.guide
            due = getattr(guide, "search_due", None)
            if due is None or (self._searched is not None and self._searched[1] >= due):
                return
            estimator = copy.deepcopy(guide.estimator)
        if self.searcher is None:
            self.searcher = Fitter(self.X, processes=self.fitter.processes)
        self.fitting = True
        try:
            searched = self.searcher.submit(estimator, cons).result()
        except Exception:  # the loop goes on with the last choice; the next answers retry
            return
        finally:
            self.fitting = False
        with self.lock:
            self._searched = (searched, len(cons))
            self._keep_search()

    def _keep_search(self) -> None:
        """The last search adopted by the loop's guide (a refit prepared before it ended
        may have replaced the guide with an older one)."""
        guide = self.session.guide
        if self._searched is not None and getattr(guide, "searched_on", 0) < self._searched[1]:
            guide.adopt(copy.deepcopy(self._searched[0]), self._searched[1])

    def _show(self, labels, error: str | None, n_answers: int) -> None:
        """The preview the page draws next: its labels, and the error of a failed fit."""
        self._preview = {
            "version": self._preview["version"] + 1,
            "labels": labels,
            "n_answers": n_answers,
            "error": error,
        }

    def start_preview(self) -> threading.Thread:
        """Start the background thread that refits the preview when answers come in."""

        def work() -> None:
            self.layout()
            self._changed.set()
            while not self._closing.is_set():
                if self.fitting_ahead:  # the refits the next click needs come first
                    self._closing.wait(0.2)
                elif self._changed.wait(0.5):
                    self._changed.clear()
                    self.refit_preview()

        thread = threading.Thread(target=work, name="spectralink-preview", daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        """Stop the background threads after their current fits."""
        self._closing.set()
        self.fitter.shutdown()
        if self.searcher is not None:
            self.searcher.shutdown()


def _deliver(job, future) -> None:
    """A refit ahead, done in the worker, handed to the loop (or failed: the loop refits)."""
    if future.cancelled() or future.exception() is not None:
        job.fail()
    else:
        job.deliver(future.result())
