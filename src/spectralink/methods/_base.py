"""The fit contract shared by every estimator of the library.

``__init__`` only stores parameters (scikit-learn convention). ``fit(X, constraints=...)``
validates the parameters (``_parameter_constraints``, scikit-learn's mechanism), ``X``
and the constraints, then calls the subclass's ``_fit``, which delegates to plain
functions and sets ``labels_``; ``fit`` then records ``n_violated_`` (and, where the fit
holds NCut's eigenvectors, ``n_violated_reference_``) and warns, in one line each, on a
degenerate partition and on one further from the pairs than ignoring them.
``affinity="precomputed"`` makes ``X`` a square affinity matrix (dense or sparse) instead
of features.

By default a method is its paper's method. Between the two, a constrained estimator with
the opt-in ``guard="held_out"`` runs the held-out guard of :mod:`spectralink.methods._guard`:
the partition is compared, on pairs held out from refits, with the unconstrained partition
of the same graph, and replaced by it when the pairs do not say that they help
(``fallback_``). One hook says what "unconstrained", "refit" and "adopt" mean for a method
family: :meth:`_guard_plan`, which returns a :class:`~spectralink.methods.GuardPlan`; its
default refits clones.

:class:`ConstrainedFitMixin` is that contract alone (methods that build no k-NN graph:
COP-KMeans, the landmark methods, :class:`~spectralink.auto.Auto`); the graph hooks and the
graph-based ``predict`` are :class:`~spectralink.methods._graph.AffinityGraphMixin`.
"""

from __future__ import annotations

import textwrap
import warnings
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from sklearn import get_config
from sklearn.base import BaseEstimator, ClusterMixin, clone

from .._dask import is_dask_array
from ..constraints import Constraints, as_constraints
from ..exceptions import (
    ConstraintsIgnoredWarning,
    ConstraintsViolatedWarning,
    DegeneratePartitionWarning,
    one_line,
    user_stacklevel,
)
from ..graph import check_affinity
from ..metrics import PartitionCounts, constraints_not_followed, partition_diagnostics
from ..parallel import limit_threads
from ..progress import stage
from ..utils import (
    POSITIVE,
    Int,
    StrOptions,
    check_features,
    check_n_clusters,
)
from ._guard import GuardPlan, run_guard

if TYPE_CHECKING:  # Python >= 3.11
    from typing import Self

__all__ = [
    "COMMON_CONSTRAINTS",
    "GUARD_CONSTRAINT",
    "ConstrainedFitMixin",
    "ConstraintsLike",
    "fit_quietly",
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
        "``None``: the method as its paper defines it. "
        '``"held_out"`` (opt-in, about five more fits per fit: '
        "``docs/results/guard/cost.md``): the partition is kept only when it breaks no more "
        f"of the given pairs than the unconstrained partition ({reference}), is not "
        "degenerate where that one is not, and the method, refitted on five folds of the "
        "pairs, predicts the held-out pairs clearly better; otherwise that unconstrained "
        "partition is returned (``fallback_`` True, ``guard_`` the "
        ":class:`~spectralink.methods.GuardReport`, a one-line "
        ":class:`~spectralink.exceptions.ConstraintsIgnoredWarning`). For safety without a "
        "named method, use :class:`~spectralink.Auto`."
    )
    indent = " " * 8
    entry = (
        '    guard : {"held_out"} or None, default=None\n'
        + textwrap.fill(body, 92, initial_indent=indent, subsequent_indent=indent)
        + "\n"
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
    #: what a user can do about a partition further from the pairs than ignoring them
    _violation_hint = "Auto chooses whether to use them"
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
        return self._fit_contract(X.shape[0], constraints, lambda cons: self._fit(X, cons), X)

    def _fit_contract(
        self, n_samples: int, constraints: ConstraintsLike | None, body, guard_input
    ) -> Self:
        """The fit contract, written once for every entry point (``fit``, ``fit_embedding``,
        ``fit_landmark_graph``): the constraints over ``n_samples`` points, the method's
        ``body(constraints)`` under the library's thread setting, the opt-in guard (on
        ``guard_input``, what its refits start from) and the diagnostics. The parameters
        and the data are validated by the caller, which knows what its data is."""
        cons = self._constraints_for(n_samples, constraints)
        # the library's thread count for every BLAS/OpenMP pool; "method" is the time of
        # the steps that are not a shared stage (neighbours, graph, eigenvectors, ...)
        with stage("method") as st, limit_threads():
            st.detail = f"{type(self).__name__}, its own steps"
            body(cons)
        self._guard(guard_input, cons)
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
        """The opt-in held-out guard (:mod:`spectralink.methods._guard`), carried out from
        the method's :meth:`_guard_plan`: sets ``guard_`` and ``fallback_``; on a fallback
        the unconstrained partition is adopted and one warning line says so (pointing at
        the user's line that called the public fit method, :func:`user_stacklevel`)."""
        if not self._uses_constraints or "guard" not in self.get_params(deep=False):
            return
        self.fallback_, self.guard_ = False, None
        self.__dict__.pop("_reference_", None)  # the model an earlier fit's guard adopted
        if self.guard is None or cons.is_empty:
            return
        with stage("guard") as st, limit_threads():
            st.detail = f"{type(self).__name__} refitted on held-out folds"
            self.guard_, self.fallback_ = run_guard(
                self._guard_plan(X), self.labels_, cons, self.random_state
            )
        if self.fallback_:
            warnings.warn(
                f"{type(self).__name__} returned the unconstrained partition: the constraints "
                f"did not help ({self.guard_.summary()}); see guard_.",
                ConstraintsIgnoredWarning,
                stacklevel=user_stacklevel(),
            )

    def _guard_plan(self, X) -> GuardPlan:
        """What the guard compares and refits (:class:`~spectralink.methods.GuardPlan`).
        This default refits clones from ``X`` and compares with the method fitted without
        constraints; method families override it to reuse what their fit built."""
        return GuardPlan(
            reference=lambda: fit_quietly(self._unguarded_clone(), X),
            refit=lambda train: fit_quietly(self._unguarded_clone(), X, train).labels_,
            adopt=self._adopt_labels,
        )

    def _unguarded_clone(self) -> Self:
        """An unfitted copy without the guard (the refits must not guard themselves)."""
        return clone(self).set_params(guard=None)

    def _ncut_at_defaults(self, X) -> BaseEstimator:
        """NCut at its defaults fitted on ``X``: what the library gives without the pairs,
        the unconstrained partition of the methods whose own graph is not NCut's."""
        from .ncut import NCut

        reference = NCut(
            self.n_clusters, n_init=getattr(self, "n_init", 10), random_state=self.random_state
        )
        return fit_quietly(reference, X)

    def _adopt_labels(self, reference) -> None:
        """Take over the unconstrained fit ``reference``'s labels (methods whose ``predict``
        needs more of it extend their plan's ``adopt``)."""
        self.labels_ = np.asarray(reference.labels_)

    # ------------------------------------------------------------ diagnostics
    def _reference_labels(self) -> np.ndarray | None:
        """NCut's partition where the fit already holds what it needs (its graph or
        eigenvectors), for ``n_violated_reference_``; ``None`` where it would cost a fit."""
        return None

    def _record_diagnostics(self, cons: Constraints) -> None:
        """``n_violated_`` (and ``n_violated_reference_`` where cheap), the one-line
        warnings on a degenerate partition and on one further from the given pairs than
        ignoring them, pointing at the user's line that called the public fit method; the
        whole text of each is kept in ``diagnostics_``."""
        counts = self._partition_counts(cons)
        violated = counts.violated(cons)
        self.n_violated_ = int(violated.sum())
        self.n_violated_reference_ = None
        self.diagnostics_ = []
        # the k the fit used: n_clusters, or the k chosen when that is left to the fit
        k = getattr(self, "n_clusters_", self.n_clusters)
        problems = partition_diagnostics(counts, cons, k, check_violations=False)
        name = type(self).__name__
        if problems:
            self._diagnose(
                f"{name} returned a degenerate partition: " + "; ".join(problems) + ".",
                DegeneratePartitionWarning,
            )
        # a partition the guard chose for ignoring the pairs is not news about them
        if not self._uses_constraints or getattr(self, "fallback_", False) or cons.is_empty:
            return
        reference = self._reference_labels()
        if reference is not None:
            self.n_violated_reference_ = int(cons.violated(reference).sum())
        text = constraints_not_followed(
            name, self.n_violated_, self.n_violated_reference_, counts, cons,
            hint=self._violation_hint,
        )  # fmt: skip
        if text is not None:
            self._diagnose(text, ConstraintsViolatedWarning)

    def _partition_counts(self, cons: Constraints) -> PartitionCounts:
        """What the diagnostics read of ``labels_``; of a dask labelling, its cluster sizes
        and the constrained points' labels only."""
        if is_dask_array(self.labels_):
            from .._dask import dask_partition_counts

            return dask_partition_counts(self.labels_, cons)
        return PartitionCounts.of(self.labels_, cons)

    def _diagnose(self, text: str, category: type[Warning]) -> None:
        """Keep ``text`` in ``diagnostics_`` and warn with its first line (pointing at
        the caller of the public fit method)."""
        self.diagnostics_.append(text)
        warnings.warn(one_line(text), category, stacklevel=user_stacklevel())

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


def fit_quietly(
    estimator: BaseEstimator, X, constraints: Constraints | None = None, *, method: str = "fit"
):
    """``estimator`` fitted (by its ``method``: ``fit``, ``fit_embedding``,
    ``fit_landmark_graph``) without its warnings: a guard's reference or refit is not news."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(estimator, method)(X, constraints=constraints)
