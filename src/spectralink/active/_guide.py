"""The estimator whose partition guides the strategies while the query loop runs."""

from __future__ import annotations

import copy

import numpy as np
from sklearn.base import clone

from ..constraints import Constraints
from ..methods import unguarded_clone
from ._selector import PairSelector

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
    otherwise its ``refit_choice``. ``searches`` counts the searches. With ``defer`` set
    (the labelling page, whose clicks must not wait for a search), ``fit`` only refits the
    choice and leaves ``search_due`` (the number of answers a search is due at) for the
    caller to run the search elsewhere and :meth:`adopt` it.
    """

    def __init__(self, estimator) -> None:
        self.estimator = unguarded_clone(estimator)
        params = self.estimator.get_params(deep=False)
        if params.get("n_repeats") is not None:
            # its choice only guides the next questions: one repeat of the folds (a third
            # of the fits), the fit at the end searches as the estimator says
            self.estimator.set_params(n_repeats=1)
        if params.get("verbose"):
            self.estimator.set_params(verbose=0)  # one of many fits: no stage lines
        self.searched_on = 0
        self.searches = 0
        self.defer = False
        self.search_due: int | None = None

    def fit(self, X, constraints: Constraints):
        n = len(constraints)
        due = n >= max(SEARCH_MIN_PAIRS, SEARCH_GROWTH * self.searched_on)
        if due and not self.defer:
            self.estimator.fit(X, constraints=constraints)
            self.adopt(self.estimator, n)
        else:
            self.search_due = n if due else None
            self.estimator.refit_choice(X, constraints=constraints)
        return self

    def adopt(self, searched, n_answers: int) -> None:
        """Take ``searched`` (the estimator after a search on ``n_answers`` answers, run
        here or elsewhere) as the choice refitted from now on."""
        self.estimator = searched
        self.searched_on = n_answers
        self.searches += 1
        self.search_due = None

    @property
    def labels_(self) -> np.ndarray:
        return self.estimator.labels_

    @property
    def n_clusters_(self) -> int | None:
        return getattr(self.estimator, "n_clusters_", None)


def follow_k(selector: PairSelector, guide) -> None:
    """A selector left to choose k (``n_clusters=None``) looks for the k the guiding
    estimator chose from the answers (``Auto(n_clusters=None)``'s ``n_clusters_``)."""
    k = getattr(guide, "n_clusters_", None)
    if selector.n_clusters is None and k is not None:
        selector.use_n_clusters(k)


def guide_for(estimator):
    """The estimator whose partition guides the strategies during the loop: ``estimator``
    itself, a copy without its held-out guard (whose refits would multiply the loop's
    cost; the partition only chooses the next pairs, and the final fit keeps the guard),
    or, for an estimator that searches among methods and offers ``refit_choice``
    (:class:`~spectralink.Auto`), its search at checkpoints (:class:`_SearchCheckpoints`)."""
    if callable(getattr(estimator, "refit_choice", None)):
        return _SearchCheckpoints(estimator)
    if estimator.get_params(deep=False).get("guard") is None:
        return estimator
    return unguarded_clone(estimator)


def copy_for_refit(guide):
    """A copy of ``guide`` to refit elsewhere: unfitted (:func:`~sklearn.base.clone`, cheap
    to copy and to send to another process) for an estimator whose fit depends only on the
    data and the constraints; whole (deep) for a search at checkpoints, whose next fit
    depends on its past ones."""
    if isinstance(guide, _SearchCheckpoints):
        return copy.deepcopy(guide)
    return clone(guide)


def keeps_state(guide) -> bool:
    """Whether ``guide``'s next fit depends on its past fits (a search at checkpoints)."""
    return isinstance(guide, _SearchCheckpoints)
