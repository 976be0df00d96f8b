"""Pairwise constraints: validation, transitive closure, generation and matrix views.

A :class:`Constraints` object holds must-link (ML) and cannot-link (CL) pairs over
``n_samples`` points, with optional positive weights (degree of belief). It is
validated once on construction and exposes, lazily and cached, every encoding the
methods of the library need:

* ``ml_components``: connected components of the must-link graph (its transitive
  closure), used by COSC merging, COP-KMeans and SSKK initialisation;
* ``signed_matrix``: the sparse symmetric matrix Q with +w on ML and -w on CL pairs
  (FCSC/SCACS use it with the diagonal added, E2CP/LSCP call it Y);
* ``targets``: the (i, j, t, w) list of CCSR/CCSKL with all n diagonal terms.

Pairs are indexed over :attr:`Constraints.pairs`, the must-links followed by the
cannot-links; :meth:`Constraints.take` and :meth:`Constraints.violated` use that indexing.
:meth:`Constraints.union` (``a | b``) joins two sets, and :meth:`Constraints.to_csv` /
:meth:`Constraints.from_csv` write and read the ``i,j,kind[,weight]`` file format;
:func:`read_constraints_files` merges several files, naming rows by ID and pairs by
``file:line`` in its messages. :func:`constraint_folds` splits the pairs into
cross-validation folds that leak nothing through the transitive closure.
"""

from __future__ import annotations

from ._core import (
    Constraints,
    InconsistentConstraintsError,
    as_constraints,
    labeled_mask,
    read_constraints_csv,
)
from ._csv import write_pairs_csv
from ._files import read_constraints_files
from ._folds import (
    FOLD_BY,
    MAX_MOVED_FRACTION,
    UnfoldableConstraintsError,
    constraint_folds,
    split_constraints,
)

__all__ = [
    "FOLD_BY",
    "MAX_MOVED_FRACTION",
    "Constraints",
    "UnfoldableConstraintsError",
    "constraint_folds",
    "split_constraints",
    "InconsistentConstraintsError",
    "as_constraints",
    "labeled_mask",
    "read_constraints_csv",
    "read_constraints_files",
    "write_pairs_csv",
]
