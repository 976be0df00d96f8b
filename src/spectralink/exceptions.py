"""Warning classes of the library.

Filter them as usual, e.g. ``warnings.simplefilter("error", DegeneratePartitionWarning)``
to turn a degenerate result into an exception in a pipeline.
"""

from __future__ import annotations

import inspect
import os

__all__ = [
    "WARNING_MAX_CHARS",
    "ConstraintsIgnoredWarning",
    "ConstraintsViolatedWarning",
    "ContradictoryAnswerWarning",
    "DegeneratePartitionWarning",
    "DisconnectedGraphWarning",
    "MissingExtraError",
    "ModelSelectionWarning",
    "import_extra",
    "one_line",
    "user_stacklevel",
]

#: The longest warning the library prints: one line; the whole text goes into an attribute
#: (``diagnostics_``, ``guard_``) and ``describe()``.
WARNING_MAX_CHARS = 200


def one_line(text: str, limit: int = WARNING_MAX_CHARS) -> str:
    """``text`` on one line of at most ``limit`` characters (cut at a word, ending in
    "...")."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 3].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "..."


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning point at the first line outside the package:
    the user's call, whichever public entry point (``fit``, ``fit_embedding``, ...) led to
    the function calling :func:`warnings.warn` with it."""
    frame = inspect.currentframe().f_back  # the function that warns: stacklevel 1
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


class DisconnectedGraphWarning(UserWarning):
    """The affinity graph has several connected components or isolated points."""


class DegeneratePartitionWarning(UserWarning):
    """A fitted partition is degenerate.

    Raised by every estimator's ``fit`` (see :func:`spectralink.metrics.partition_diagnostics`)
    when the partition has fewer clusters than asked for, or a cluster of fewer than
    ``max(2, 1 % of n)`` points that no cannot-link asks for.
    """


class ConstraintsViolatedWarning(UserWarning):
    """A constrained fit is further from the given pairs than ignoring them.

    Raised by ``fit`` (see :func:`spectralink.metrics.constraints_not_followed`) when the
    partition violates more of the given pairs than NCut's partition of the same graph
    (``n_violated_`` against ``n_violated_reference_``, where the fit holds NCut's
    eigenvectors), or, where it does not, about as large a share as a partition unrelated to
    them would. :class:`spectralink.Auto` chooses between the method and NCut from held-out
    pairs.
    """


class ConstraintsIgnoredWarning(UserWarning):
    """A constrained estimator returned the unconstrained partition of its graph.

    Raised by ``fit`` when the opt-in held-out guard (``guard="held_out"``) finds that
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
    (``pip install "spectralink[label]"``). The one error for every missing extra (the
    labelling page, Parquet, Dask, PyNNDescent); an ``ImportError``, so code catching that
    keeps working."""


def import_extra(module: str, extra: str, needed_for: str):
    """``module`` imported, or a :class:`MissingExtraError` saying that ``needed_for`` needs
    it and which extra installs it (``pip install 'spectralink[extra]'``)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(
            f"{needed_for} needs {module}: pip install 'spectralink[{extra}]'."
        ) from None
