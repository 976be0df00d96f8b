"""Estimators, one module per method, on the fit contract of :mod:`._base`.

:class:`ConstrainedFitMixin` is the fit contract (validation, constraints, the held-out
guard whose verdict is a :class:`GuardReport`, diagnostics, ``n_violated_``);
:class:`AffinityGraphMixin` the graph a method clusters and ``predict`` through it;
:class:`ConstrainedClusteringMixin` both, the base of the graph methods. The name -> class
table that commands and ``get_method`` read is :mod:`spectralink.registry`. What the floors
above share with the methods is public here, and so is what a method of another package
needs (the base classes, ``COMMON_CONSTRAINTS``, ``GUARD_CONSTRAINT``, ``with_guard_doc``;
see "Writing a method" in the documentation).
"""

from __future__ import annotations

from ._base import COMMON_CONSTRAINTS, GUARD_CONSTRAINT, ConstrainedFitMixin, with_guard_doc
from ._graph import AffinityGraphMixin, ConstrainedClusteringMixin, shareable_knn_graph
from ._guard import (
    GUARD_FOLDS,
    GUARD_MARGIN,
    GuardPlan,
    GuardReport,
    degenerate_against,
    held_out_can_decide,
    held_out_guard,
    keeps_constrained,
    pairs_disagreeing,
    refit_sides,
    unguarded_clone,
)

__all__ = [
    "COMMON_CONSTRAINTS",
    "GUARD_CONSTRAINT",
    "GUARD_FOLDS",
    "GUARD_MARGIN",
    "AffinityGraphMixin",
    "ConstrainedClusteringMixin",
    "ConstrainedFitMixin",
    "GuardPlan",
    "GuardReport",
    "degenerate_against",
    "held_out_can_decide",
    "held_out_guard",
    "keeps_constrained",
    "pairs_disagreeing",
    "refit_sides",
    "shareable_knn_graph",
    "unguarded_clone",
    "with_guard_doc",
]
