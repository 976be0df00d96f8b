"""Warning classes of the library.

Filter them as usual, e.g. ``warnings.simplefilter("error", DegeneratePartitionWarning)``
to turn a degenerate result into an exception in a pipeline.
"""

from __future__ import annotations

__all__ = [
    "ConstraintsIgnoredWarning",
    "ContradictoryAnswerWarning",
    "DegeneratePartitionWarning",
    "DisconnectedGraphWarning",
    "MissingExtraError",
    "ModelSelectionWarning",
]


class DisconnectedGraphWarning(UserWarning):
    """The affinity graph has several connected components or isolated points."""


class DegeneratePartitionWarning(UserWarning):
    """A fitted partition is degenerate or ignores the constraints it was given.

    Raised by every estimator's ``fit`` (see :func:`spectralink.metrics.partition_diagnostics`)
    when the partition has fewer clusters than asked for, has a cluster of fewer than
    ``max(2, 1 % of n)`` points that no cannot-link asks for, or violates at least half as
    large a share of the given constraints as a partition unrelated to them would.
    """


class ConstraintsIgnoredWarning(UserWarning):
    """A constrained estimator returned the unconstrained partition of its graph.

    Raised by ``fit`` when the held-out guard (``guard="held_out"``, the default) finds that
    the method, refitted on part of the pairs, does not violate fewer of the held-out pairs
    than ignoring them does (:mod:`spectralink.methods._guard`); ``fallback_`` is then True
    and ``guard_`` holds the counts.
    """


class ModelSelectionWarning(UserWarning):
    """Model selection could not run as asked and fell back to a documented default.

    Raised by :class:`spectralink.Auto` when the constraints are too few to cross-validate
    or when its choice fails on all the constraints.
    """


class ContradictoryAnswerWarning(UserWarning):
    """An answer to a pair query contradicts the transitive closure of earlier answers.

    :func:`spectralink.active.add_answers` (and the query loop
    :func:`spectralink.active.learn`) keeps the earlier, consistent answers, drops the
    contradicting one, records it and warns with this class.
    """


class MissingExtraError(ImportError):
    """A feature needs an optional extra that is not installed; the message says which
    (``pip install "spectralink[label]"``)."""
