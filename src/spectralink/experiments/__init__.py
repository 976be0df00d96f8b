"""The papers' evaluation protocol: constraint counts x trials x methods -> records.

For every number of constraints ``c`` and every trial ``t`` one constraint set is drawn
from the ground truth, either as ``c`` random labelled pairs (``protocol="pairs"``,
:meth:`Constraints.from_labels`: CCSR, CCSKL, COSC, LSCP) or as all pairs among ``c``
labelled points (``protocol="labeled"``, :meth:`Constraints.from_labeled_subset`: SCACS,
FCSC). Every method is then fitted on the same draw and scored. One run is one *record*,
a flat ``dict``:

==================  ===============================================================
``dataset``         name given to :func:`run_protocol`
``method``          method label (registry name unless renamed)
``n_constraints``   ``c``: number of pairs, or of labelled points with ``"labeled"``
``trial``           0-based trial index
``seed``            the seed of this (c, trial) cell: constraint draw and method
``n_must_link``     must-links actually drawn (duplicates merged)
``n_cannot_link``   cannot-links actually drawn
``error``           :func:`~spectralink.metrics.clustering_error` (Hungarian)
``majority_error``  :func:`~spectralink.metrics.majority_vote_error`
``ari``, ``nmi``    adjusted Rand index, normalized mutual information
``violated``        :func:`~spectralink.metrics.violated_fraction`
``ncut``            :func:`~spectralink.metrics.normalized_cut` of the labels on the
                    run's reference graph (the same graph for every method, so values
                    compare across methods); NaN when ``compute_ncut=False``
``n_found``         number of distinct clusters in the labels (fewer than asked for
                    means a degenerate partition)
``smallest``        size of the smallest cluster
``time_s``          wall time of ``fit`` in seconds (a shared graph is built before and
                    is not counted; use ``share_graph=False`` to time whole fits)
``status``          ``"ok"`` or ``"failed"`` (e.g. COP-KMeans finds no feasible assignment)
``message``         the error message of a failed run, else ``""``
``warnings``        distinct warning messages emitted by ``fit``, joined by ``" | "``
==================  ===============================================================

Every method, parameter value and the number of clusters are checked before the first fit
(:func:`check_methods`). A run can be kept on disk as soon as it is scored
(``on_record`` with a :class:`RecordLog`, one JSON line per run) and handed back as
``done`` after an interruption, so that only the missing runs are fitted
(:func:`resumable_records` checks that an earlier log was run on the same data and settings).

Graphs do not depend on the constraints, so the k-NN graph is built once per call and
handed to every method that clusters that same graph (``affinity="precomputed"``);
methods that need features (``_supports_precomputed = False``) or build their own kind
of graph get the features. Everything is deterministic given ``random_state``.

The package's rooms: ``_protocol`` (drawing, fitting, scoring), ``_records`` (record files,
the record log, resuming), ``_summary`` (tables and the Markdown page), ``_comparison``
(one comparison of methods planned, run run by run and written: what ``spectralink
compare`` runs) and ``_provenance`` (the revision, versions, machine and load every record
file and page carries).
"""

from __future__ import annotations

from ..io import atomic_write
from ._comparison import Comparison, ComparisonPlan, problem_lines, warning_summary
from ._protocol import cell_seed, check_methods, draw_constraints, run_protocol
from ._provenance import provenance, provenance_line
from ._records import (
    METRICS,
    PROTOCOLS,
    RECORD_FIELDS,
    RESUME_KEYS,
    RecordLog,
    data_fingerprint,
    grid_order,
    read_record_log,
    read_records_json,
    resumable_records,
    run_key,
    write_records_csv,
    write_records_json,
)
from ._summary import count_label, format_table, summarize, summary_markdown

__all__ = [
    "Comparison",
    "ComparisonPlan",
    "METRICS",
    "PROTOCOLS",
    "RECORD_FIELDS",
    "RESUME_KEYS",
    "RecordLog",
    "atomic_write",
    "cell_seed",
    "check_methods",
    "count_label",
    "data_fingerprint",
    "draw_constraints",
    "format_table",
    "grid_order",
    "problem_lines",
    "provenance",
    "provenance_line",
    "read_record_log",
    "read_records_json",
    "resumable_records",
    "run_key",
    "run_protocol",
    "summarize",
    "summary_markdown",
    "warning_summary",
    "write_records_csv",
    "write_records_json",
]
