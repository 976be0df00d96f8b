"""Active selection of pairwise constraints: which pairs to ask a person next.

Labelling pairs costs a person's time, and random pairs waste most of it (with 10 balanced
clusters about 90 % of them are cannot-links between points already far apart). This module
chooses the pairs to ask and runs the query loop, for any estimator of the library's
contract (``fit(X, constraints=...)`` then ``labels_``); it never looks inside a method.

* :class:`PairSelector` builds what a strategy needs once per data set (distances, the k-NN
  graph and its spectral embedding, from :mod:`spectralink.graph` and
  :mod:`spectralink.spectral`) and then chooses batches of pairs in O(n k) or O(n d) time
  (``_selector.py``).
* :func:`select_pairs` is the one-call form.
* :func:`query_loop` is the loop: choose a batch, ask the oracle, add the answers, refit
  (``_loop.py``). :func:`learn` runs it with an oracle and returns a :class:`LearnResult`;
  the command line's ``query --interactive`` runs it with a person at a terminal.
* :class:`QuerySession` is that loop advanced one answer at a time, with undo, for a
  person who answers when they like (``spectralink label``'s page) (``_session.py``).
* :func:`add_answers` adds answers to known constraints under the contradiction policy.
* :func:`implied_pairs` says which pairs the transitive closure of constraints decides
  (``_closure.py``).

Strategies (``strategy=``):

``"random"``
    Uniformly random pairs (the baseline of the papers' protocols).
``"ffqs"``
    Explore and consolidate, farthest-first query selection (Basu, Banerjee & Mooney 2004).
``"minmax"``
    FFQS with the min-max consolidation (Mallapragada, Jin & Jain 2008).
``"npu"``
    Normalized point-based uncertainty (Xiong, Azimi & Fern 2014).
``"spectral"``
    This library's: the partition's clusters are explored through their most central
    points in the spectral embedding; then points are sampled with probabilities
    proportional to how uncertain their group is (their partition cluster mixed in their
    graph neighbourhood, or the cluster's group not settled by the answers so far) and
    asked against the known group they most likely join first.
``"auto"``
    :data:`AUTO_STRATEGY`: ``"spectral"``, the lowest error at 200 queries in
    ``benchmarks/bench_active.py`` (below random, MinMax and NPU by several standard
    errors) and level with FFQS, whose difference to it changes sign from one number of
    queries to the next within the spread of the seeds; see ``docs/results/active``.

The neighbourhood strategies (all but ``"random"``) keep no hidden state: they read the
known groups off the constraints. The *neighbourhoods* are must-link components that are
pairwise cannot-linked (at most ``n_clusters`` of them, found greedily, largest first); a
point is asked against the neighbourhoods in turn, most likely first, until it joins one
(a must-link) or is cannot-linked to all of them (it starts a new one). A point that is
cannot-linked to all but one of ``n_clusters`` neighbourhoods is settled and not asked
again.

Every chosen pair is new: never a known pair nor a pair whose answer the transitive closure
of the known ones decides (same must-link component: must-link; a cannot-link between the
two components: cannot-link). Within one batch the pairs form a forest over the must-link
components that joins no two cannot-linked components, so no pair of a batch is decided by
the answers to the others either, whatever those answers are. As a consequence, answers to
the pairs this module chooses can never contradict each other; the contradiction policy of
:func:`add_answers` matters for answers gathered elsewhere (files, other tools).

References
----------
Basu, S., Banerjee, A., & Mooney, R. J. (2004). Active semi-supervision for pairwise
constrained clustering. Proceedings of the SIAM International Conference on Data Mining
(SDM), 333-344.
Mallapragada, P. K., Jin, R., & Jain, A. K. (2008). Active query selection for
semi-supervised clustering. 19th International Conference on Pattern Recognition (ICPR).
Xiong, S., Azimi, J., & Fern, X. Z. (2014). Active learning of constraints for
semi-supervised clustering. IEEE Transactions on Knowledge and Data Engineering, 26(1),
43-54.
"""

from __future__ import annotations

from ._answers import AnswerReport, add_answers
from ._closure import implied_pairs
from ._guide import SEARCH_GROWTH, SEARCH_MIN_PAIRS
from ._loop import LearnResult, Oracle, StopAsking, learn, query_loop
from ._selector import (
    AUTO_STRATEGY,
    PARTITION_STRATEGIES,
    STRATEGIES,
    PairSelector,
    resolve_strategy,
    select_pairs,
)
from ._session import UNDO_BATCHES, AheadFit, QuerySession

__all__ = [
    "AUTO_STRATEGY",
    "AheadFit",
    "PARTITION_STRATEGIES",
    "SEARCH_GROWTH",
    "SEARCH_MIN_PAIRS",
    "STRATEGIES",
    "AnswerReport",
    "LearnResult",
    "Oracle",
    "PairSelector",
    "QuerySession",
    "StopAsking",
    "UNDO_BATCHES",
    "add_answers",
    "implied_pairs",
    "learn",
    "query_loop",
    "resolve_strategy",
    "select_pairs",
]


def __getattr__(name: str) -> object:
    # the CSV writer moved to spectralink.constraints; the old import path still works
    if name == "write_pairs_csv":
        import warnings

        from ..constraints import write_pairs_csv

        warnings.warn(
            "spectralink.active.write_pairs_csv moved: use Constraints.to_csv, or "
            "spectralink.constraints.write_pairs_csv for a file of unanswered pairs.",
            FutureWarning,
            stacklevel=2,
        )
        return write_pairs_csv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
