"""The fit contract shared by every estimator of the library.

``__init__`` only stores parameters (scikit-learn convention). ``fit(X, constraints=...)``
validates the parameters (``_parameter_constraints``, scikit-learn's mechanism), ``X``
and the constraints, then calls the subclass's ``_fit``, which delegates to plain
functions and sets ``labels_``; ``fit`` then records ``n_violated_`` and warns on a
degenerate partition. ``affinity="precomputed"`` makes ``X`` a square affinity matrix
(dense or sparse) instead of features.

Between the two, a constrained estimator with ``guard="held_out"`` (the default) runs the
held-out guard of :mod:`spectralink.methods._guard`: the partition is compared, on pairs
held out from refits, with the unconstrained partition of the same graph, and replaced by it
when the pairs do not say that they help (``fallback_``). Three hooks say what
"unconstrained" and "refit" mean for a method: :meth:`_unconstrained_fit`,
:meth:`_refit_labels` and :meth:`_adopt_unconstrained`; their defaults refit a clone.

:class:`ConstrainedFitMixin` is that contract alone (methods that build no k-NN graph:
COP-KMeans, the landmark methods, :class:`~spectralink.auto.Auto`); the graph hooks and the
graph-based ``predict`` are :class:`~spectralink.methods._graph.AffinityGraphMixin`.
"""

from __future__ import annotations

import textwrap
import warnings
from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from sklearn import get_config
from sklearn.base import BaseEstimator, ClusterMixin, clone

from ..constraints import Constraints, as_constraints
from ..exceptions import ConstraintsIgnoredWarning, DegeneratePartitionWarning
from ..graph import check_affinity
from ..metrics import partition_diagnostics
from ..parallel import limit_threads
from ..progress import stage
from ..utils import (
    POSITIVE,
    Int,
    StrOptions,
    check_features,
    check_n_clusters,
)
from ._guard import held_out_guard, same_partition

if TYPE_CHECKING:  # Python >= 3.11
    from typing import Self

__all__ = [
    "COMMON_CONSTRAINTS",
    "GUARD_CONSTRAINT",
    "ConstrainedFitMixin",
    "ConstraintsLike",
    "with_guard_doc",
]

#: What ``fit`` accepts as constraints: a :class:`~spectralink.constraints.Constraints` or a
#: ``(must_link, cannot_link)`` pair of index pairs.
ConstraintsLike = Constraints | tuple

#: Constraints of the parameters most estimators share.
COMMON_CONSTRAINTS: dict[str, list] = {
    "n_clusters": [Int(2)],
    "n_neighbors": [Int(1)],
    "sigma": [POSITIVE, None],
    "n_init": [Int(1)],
    "random_state": ["random_state"],
}

#: Constraint of the ``guard`` parameter of the constrained estimators.
GUARD_CONSTRAINT: list = [StrOptions({"held_out"}), None]


def with_guard_doc(doc: str | None, reference: str) -> str | None:
    """``doc`` with its ``    <guard>`` line replaced by the ``guard`` parameter's entry,
    naming the estimator's unconstrained partition ``reference``."""
    if doc is None:  # python -OO
        return None
    body = (
        '``"held_out"``: the partition is kept only when it breaks no more of the given '
        f"pairs than the unconstrained partition ({reference}), is not degenerate where that "
        "one is not, and the method, refitted on five folds of the pairs, predicts the "
        "held-out pairs clearly better; otherwise that "
        "unconstrained partition is returned (``fallback_`` True, ``guard_`` the "
        ":class:`~spectralink.methods.GuardReport`, a "
        ":class:`~spectralink.exceptions.ConstraintsIgnoredWarning`)."
    )
    indent = " " * 8
    entry = (
        '    guard : {"held_out"} or None, default="held_out"\n'
        + textwrap.fill(body, 92, initial_indent=indent, subsequent_indent=indent)
        + "\n        ``None``: the method as published, whatever the pairs do.\n"
    )
    return doc.replace("    <guard>\n", entry)


class ConstrainedFitMixin(ClusterMixin, BaseEstimator):
    """Base class: validation and the ``fit`` / ``fit_predict`` contract.

    Subclasses declare their parameters in ``__init__`` (which only stores them) and
    their types and ranges in ``_parameter_constraints`` (checked at the start of
    ``fit``, scikit-learn's mechanism), and implement ``_fit(X, constraints)`` where ``X``
    is validated features or, with ``affinity="precomputed"``, a validated CSR affinity.
    ``_fit`` must set ``labels_``. ``fit`` then sets ``n_violated_`` and warns
    (:class:`~spectralink.exceptions.DegeneratePartitionWarning`) when the partition is
    degenerate (:func:`~spectralink.metrics.partition_diagnostics`). Methods that cluster
    a graph add :class:`~spectralink.methods.AffinityGraphMixin` (its ``predict``); the
    others implement ``predict`` themselves.
    """

    _parameter_constraints: dict = {}

    #: whether the method can consume a precomputed affinity instead of features
    _supports_precomputed = True
    #: whether the method uses the constraints (those that do not skip the violation check)
    _uses_constraints = True
    #: whether ``fit`` ends in the held-out guard when the method has a ``guard`` parameter
    _held_out_guard = True
    # capabilities shown by `spectralink methods` (spectralink.catalog reads them)
    #: whether the method partitions into k = 2 clusters only
    _two_clusters_only = False
    #: whether fit refuses to run without constraints
    _requires_constraints = False
    #: name of the parameter capping n_samples (its default is the limit), or None
    _max_samples_param: str | None = None
    #: what limits the size of the data, in a few words
    _scale = "sparse k-NN graph and eigenvectors: large n"
    #: whether fit accepts a Dask array
    _supports_dask = False

    def fit(self, X: ArrayLike, y: None = None, constraints: ConstraintsLike | None = None) -> Self:
        """Cluster ``X`` under pairwise constraints.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples)
            Features, or an affinity matrix when ``affinity="precomputed"``.
        y : None
            Ignored; present for scikit-learn API consistency. Pass constraints by
            keyword.
        constraints : Constraints or (must_link, cannot_link) pair, default=None
            Pairwise constraints over the rows of ``X``. ``None`` means unconstrained.

        Returns
        -------
        self

        Raises
        ------
        spectralink.utils.InvalidParameterError
            (a ``ValueError``) naming the parameter, the expected type or range and the
            value received, when a parameter is invalid.

        Warns
        -----
        DegeneratePartitionWarning
            When the partition has fewer clusters than ``n_clusters``, a cluster of fewer
            than ``max(2, 1 % of n)`` points that no cannot-link asks for, or violates at
            least half as large a share of the constraints as a partition unrelated to them
            would (:func:`spectralink.metrics.partition_diagnostics`).
        """
        if isinstance(y, Constraints) or (
            isinstance(y, tuple) and len(y) == 2 and constraints is None
        ):
            raise TypeError("pass constraints by keyword: fit(X, constraints=...).")
        self._check_params()
        X = self._validate_X(X)
        cons = self._constraints_for(X.shape[0], constraints)
        # the library's thread count for every BLAS/OpenMP pool; "method" is the time of
        # the steps that are not a shared stage (neighbours, graph, eigenvectors, ...)
        with stage("method") as st, limit_threads():
            st.detail = f"{type(self).__name__}, its own steps"
            self._fit(X, cons)
        self._guard(X, cons)
        self._record_diagnostics(cons)
        return self

    def fit_predict(
        self, X: ArrayLike, y: None = None, constraints: ConstraintsLike | None = None
    ) -> np.ndarray:
        """Fit and return ``labels_`` (an ndarray of shape (n_samples,))."""
        return self.fit(X, y, constraints=constraints).labels_

    def _check_params(self) -> None:
        # scikit-learn's parameter validation, called directly (not through its
        # _fit_context decorator) so that warnings keep pointing at the caller's line
        if not get_config()["skip_parameter_validation"]:
            self._validate_params()

    def _constraints_for(self, n_samples: int, constraints: ConstraintsLike | None) -> Constraints:
        """``n_clusters`` checked against ``n_samples``; the constraints over them."""
        check_n_clusters(self.n_clusters, n_samples)
        return as_constraints(constraints, n_samples)

    # ------------------------------------------------------------- the guard
    def _guard(self, X, cons: Constraints) -> None:
        """The held-out guard (:mod:`spectralink.methods._guard`): sets ``guard_`` and
        ``fallback_``, and on a fallback adopts the unconstrained partition and warns
        (pointing at the line that called the public fit method, two frames up)."""
        try:
            report = self._run_guard(X, cons)
        finally:
            self._release_guard_state()
        if report is not None and report.fallback:
            warnings.warn(
                f"{type(self).__name__} returned the unconstrained partition: the "
                f"constraints did not help ({report}). Pass guard=None "
                "for the constrained partition as the method gives it.",
                ConstraintsIgnoredWarning,
                stacklevel=3,
            )

    def _run_guard(self, X, cons: Constraints):
        if not (self._uses_constraints and self._held_out_guard):
            return None
        if "guard" not in self.get_params(deep=False):
            return None
        self.fallback_ = False
        self.guard_ = None
        self.__dict__.pop("_reference_", None)  # what an earlier fit's guard adopted
        if self.guard is None or cons.is_empty:
            return None
        with stage("guard") as st, limit_threads():
            st.detail = f"{type(self).__name__} refitted on held-out folds"
            reference = self._unconstrained_fit(X)
            self.guard_ = held_out_guard(
                lambda train: self._refit_labels(X, train),
                self.labels_,
                reference.labels_,
                cons,
                self.random_state,
            )
            if self.guard_ is not None and self.guard_.fallback:
                self._adopt_unconstrained(X, reference)
                self.fallback_ = True
            elif same_partition(self.labels_, reference.labels_):
                self._same_as_unconstrained(X, reference)
        return self.guard_

    def _same_as_unconstrained(self, X, reference) -> None:
        """Hook for when the constrained partition is the unconstrained one (no refit was
        needed to decide); the default keeps the constrained model."""

    def _release_guard_state(self) -> None:
        """Drop what a fit kept only for the guard (e.g. FCSC's dense basis)."""

    def _guard_clone(self) -> Self:
        """An unfitted copy without the guard (the refits must not guard themselves)."""
        return clone(self).set_params(guard=None)

    def _unconstrained_fit(self, X) -> SimpleNamespace | BaseEstimator:
        """The unconstrained partition the guard compares with: something with ``labels_``.
        Default: the method itself fitted without constraints."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self._guard_clone().fit(X)

    def _ncut_at_defaults(self, X) -> BaseEstimator:
        """NCut at its defaults fitted on ``X``: what the library gives without the pairs,
        the unconstrained partition of the methods whose own graph is not NCut's."""
        from .ncut import NCut

        reference = NCut(
            self.n_clusters, n_init=getattr(self, "n_init", 10), random_state=self.random_state
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return reference.fit(X)

    def _refit_labels(self, X, constraints: Constraints) -> np.ndarray:
        """Labels of the method fitted to ``constraints`` (part of the given pairs). Default:
        a clone fitted from ``X``; methods override it to reuse their graph."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self._guard_clone().fit(X, constraints=constraints).labels_

    def _adopt_unconstrained(self, X, reference) -> None:
        """Take over the unconstrained fit ``reference`` (labels, and what ``predict`` needs
        to follow them)."""
        self.labels_ = np.asarray(reference.labels_)

    def _record_diagnostics(self, cons: Constraints) -> None:
        """``n_violated_``, and the degenerate-partition warning pointing at the line that
        called the public fit method (two frames up)."""
        self.n_violated_ = int(cons.violated(self.labels_).sum())
        # a partition the guard chose for ignoring the pairs is not news about them
        check = self._uses_constraints and not getattr(self, "fallback_", False)
        # the k the fit used: n_clusters, or the k chosen when that is left to the fit
        k = getattr(self, "n_clusters_", self.n_clusters)
        problems = partition_diagnostics(self.labels_, cons, k, check_violations=check)
        if problems:
            warnings.warn(
                f"{type(self).__name__} returned a degenerate partition: "
                + "; ".join(problems)
                + ".",
                DegeneratePartitionWarning,
                stacklevel=3,
            )

    def _check_new_features(self, X) -> np.ndarray:
        X = check_features(X, ensure_min_samples=1)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )
        return X

    # ---------------------------------------------------------------- helpers
    def _validate_X(self, X):
        affinity = getattr(self, "affinity", None)
        if affinity == "precomputed":
            if not self._supports_precomputed:
                raise ValueError(f"{type(self).__name__} does not accept a precomputed affinity.")
            W = check_affinity(X)
            self.n_features_in_ = W.shape[1]
            return W
        if affinity is not None and affinity not in self._feature_affinities():
            raise ValueError(
                f"affinity must be one of {sorted(self._feature_affinities() | {'precomputed'})}"
                f", got {affinity!r}."
            )
        X = check_features(X, accept_sparse=False)
        self.n_features_in_ = X.shape[1]
        return X

    def _feature_affinities(self) -> set:
        return {"knn"}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = getattr(self, "affinity", None) == "precomputed"
        return tags
