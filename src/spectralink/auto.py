"""Auto: the method and its bandwidth chosen from the constraints alone.

A user has no labels to tell which constrained method, or which Gaussian bandwidth, suits
the data, and a wrong choice can cost more than the constraints gain. :class:`Auto` runs
:class:`~spectralink.model_selection.ConstraintSearchCV` over a default set of candidates
(every method at its own defaults, the graph-based ones at several bandwidths) together
with unconstrained NCut, and keeps NCut unless a constrained candidate satisfies the
held-out constraints better by more than the folds' noise
(:func:`~spectralink.model_selection.prefer_reference`): by its own cross-validation it
does not pick something worse than ignoring the constraints. That choice is the library's
safety: a named estimator is its paper's method, and Auto decides from the folds its search
fits anyway whether the pairs help, with no refit after the search but the choice's on all
the pairs.

References
----------
Pourrajabi, M., Moulavi, D., Campello, R. J. G. B., Zimek, A., Sander, J., & Goebel, R.
(2014). Model selection for semi-supervised clustering. EDBT.
Van Craenendonck, T., & Blockeel, H. (2017). Constraint-based clustering selection.
Machine Learning 106(9-10).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import FitFailedWarning, NotFittedError
from sklearn.utils import check_random_state

from .constraints import Constraints, as_constraints
from .exceptions import (
    ConstraintsViolatedWarning,
    DegeneratePartitionWarning,
    ModelSelectionWarning,
    one_line,
)
from .methods import ConstrainedFitMixin
from .methods.e2cp import DENSE_REFINEMENT_MAX
from .model_selection import (
    COSC_KWAY_MAX_SAMPLES,
    DEFAULT_METHODS,
    SCORER_NAMES,
    ConstraintSearchCV,
    RelativeSigma,
    SearchReport,
    UnfoldableConstraintsError,
    check_k_range,
    choose_n_clusters,
    default_methods,
    named_candidates,
    prefer_reference,
    relative_sigmas,
    sample_scale,
    search_sample,
    searches_relative_sigma,
)
from .progress import announce
from .registry import get_method, method_name
from .utils import NON_NEGATIVE, Int, StrOptions

__all__ = [
    "COSC_KWAY_MAX_SAMPLES",
    "DEFAULT_METHODS",
    "DEFAULT_SIGMAS",
    "Auto",
    "default_methods",
    "method_name",
]

#: Bandwidths searched, as multiples of the default r, for candidates on a Gaussian k-NN
#: graph (CCSR, CCSKL, LSCP).
DEFAULT_SIGMAS = (0.5, 1.0, 2.0)
#: ``n_repeats="auto"`` repeats the folds ``AUTO_REPEATS`` times up to this many points
#: (where a fit is cheap), once above; why three repeats: docs/results/model_selection/README.md.
REPEAT_MAX_SAMPLES = 2000
AUTO_REPEATS = 3
#: Parameters a candidate named in ``methods`` takes inside a ``search="fast"`` search
#: only; the refit of the chosen one runs its defaults. k-way COSC keeps one recursive run
#: of its four (a third of its time), and every COSC search three starts of its 10-30 (a
#: seventh of a two-way fit on breast cancer, the same partitions on the draws measured:
#: docs/results/model_selection/auto_cost.md).
SEARCH_SCHEDULES: dict[str, dict[str, Any]] = {"cosc": {"n_recursions": 1, "n_starts": 3}}
#: Parameters a candidate takes inside a search on a sample of data beyond
#: ``methods.e2cp.DENSE_REFINEMENT_MAX`` points: the way its defaults fit all the points.
#: LSCP's and E2CP's ``refinement="auto"`` is exact (dense) on a sample of 5,000 points
#: but sampled on the whole data, so the search fits the sampled one it chooses for.
SAMPLE_SCHEDULES: dict[str, dict[str, Any]] = {
    "lscp": {"refinement": "sampled"},
    "e2cp": {"refinement": "sampled"},
}
#: ``search="fast"``: standard errors behind the leader after the first repeat of the folds
#: at which a candidate stops being fitted (measured: docs/results/model_selection/auto_cost.md)
RACE_N_SE = 2.0
#: The method fitted, at its defaults, when the constraints are too few to cross-validate.
FALLBACK_METHOD = "ccsr"
#: ``subsample="auto"``: the points of the search's sample (every constrained point and a
#: uniform draw of the others) on data of more than :data:`SUBSAMPLE_MIN_SAMPLES` points;
#: below it a sample was measured no faster and worse at choosing (the constrained points
#: weigh more in it). Both sized in docs/results/model_selection/auto_cost.md.
SUBSAMPLE_SIZE = 5000
SUBSAMPLE_MIN_SAMPLES = 50_000


class Auto(ConstrainedFitMixin):
    """The method and its bandwidth chosen by cross-validation over the constraints.

    ``fit(X, constraints=...)`` runs :class:`~spectralink.model_selection.ConstraintSearchCV`
    (folds over the pairs, or over the constrained points for constraints closed under
    transitivity such as all pairs among labelled points; the fraction of the held-out
    pairs satisfied) over unconstrained NCut (the reference,
    first) and the constrained candidates, each at its own defaults ("constraints never
    hurt"), those on the Gaussian k-NN graph at the bandwidths ``sigmas``. The candidate
    chosen by :func:`~spectralink.model_selection.prefer_reference` (NCut unless a
    constrained candidate scores better by more than ``n_se`` standard errors of the
    paired fold differences; among those that do, the highest mean) is refitted on all
    the constraints.

    Parameters
    ----------
    n_clusters : int, (int, int) or None, default=2
        Number of clusters k. ``None`` or a range ``(k_min, k_max)``: k is chosen from the
        pairs before the method (:func:`~spectralink.model_selection.scan_n_clusters`:
        CCSKL's pooled held-out kappa over the search's folds at every k of the range,
        the smallest k within one standard error of the best; on the sample when the
        search runs on one), in :func:`~spectralink.model_selection.default_k_range`
        for ``None`` (2 to ``sqrt(n / 2)``, between 10 and 30); without pairs of both
        kinds, or too few to fold, by the eigengap of the graph's normalized Laplacian.
    methods : sequence of str or estimators, default=None
        The constrained candidates: registry names (built with ``n_clusters`` and their
        defaults, the papers' methods) or estimator instances (cloned, as given). ``None``:
        :func:`default_methods` (CCSR, CCSKL, LSCP, SCACS, COP-KMeans, and COSC while its
        k-way recursion is affordable). NCut is always added first as
        the reference. With ``search="fast"`` a named k-way COSC runs one recursive run
        inside the search (:data:`SEARCH_SCHEDULES`) and its defaults when it is refitted
        as the choice.
    sigmas : sequence of float or None, default=(0.5, 1.0, 2.0)
        Bandwidths, as multiples of the default r, tried for every candidate on the
        library's Gaussian k-NN graph whose ``sigma`` is None (CCSR, CCSKL, LSCP, SL,
        E2CP, SSKK, FCSC); ``None`` or empty: each at its default. COSC's adaptive graph
        and the landmark methods have no such bandwidth and run at their defaults.
    cv : int, default=5
        Folds over the constraints.
    n_repeats : int or "auto", default="auto"
        Repetitions of the ``cv`` folds with other shuffles (``ConstraintSearchCV``'s
        ``n_repeats``): the scores average over which pairs land in which fold, at
        ``n_repeats`` times the cost. ``"auto"``: :data:`AUTO_REPEATS` (3) up to
        :data:`REPEAT_MAX_SAMPLES` (2,000) points, 1 above.
    split_by : {"auto", "pairs", "points"}, default="auto"
        How the folds are built (:func:`~spectralink.model_selection.constraint_folds`):
        held-out pairs, or held-out constrained points with every pair touching them;
        ``"auto"`` folds by pairs unless that leaves too few held-out pairs to score.
    scoring : {"accuracy", "balanced", "kappa"} or callable, default="accuracy"
        How a fold's held-out pairs score a partition (``ConstraintSearchCV``'s
        ``scoring``): the fraction satisfied
        (:func:`~spectralink.model_selection.constraint_accuracy`: on random pairs, an
        estimate of the partition's Rand index against the classes), the mean of the
        fractions of must-links and of cannot-links satisfied
        (:func:`~spectralink.model_selection.balanced_constraint_score`), their Cohen's
        kappa, an estimate of the ARI on random pairs
        (:func:`~spectralink.model_selection.kappa_constraint_score`), or a callable
        ``(labels, test_constraints) -> float``. Why the fraction satisfied: with many
        clusters most pairs are cannot-links, a fold holds out one or two must-links,
        and the balanced score's must-link half turns on them; a candidate that merges
        clusters won the choice on it and partitioned worse than NCut
        (docs/results/model_selection/auto_safety.md).
    n_se : float, default=1.0
        Margin, in standard errors of the paired fold differences, by which a
        constrained candidate must beat NCut (:func:`prefer_reference`); 0 takes the
        highest mean score.
    search : {"fast", "exhaustive"}, default="fast"
        ``"fast"``: the candidates race over the repeats of the folds
        (``ConstraintSearchCV``'s ``race`` at :data:`RACE_N_SE`: after the first repeat, a
        candidate more than two standard errors of the paired fold differences behind the
        leader is not fitted again and not chosen; NCut always runs every repeat), and a
        named k-way COSC runs its cheaper search schedule (:data:`SEARCH_SCHEDULES`; its
        defaults when refitted as the choice). ``"exhaustive"``: every candidate at its
        defaults on every repeat, the search of ``docs/results/model_selection``.
    subsample : int, "auto" or None, default="auto"
        On data of more points than this, the search runs on a sample of this many
        (:func:`~spectralink.model_selection.search_sample`: every point a constraint names,
        the rest drawn uniformly) and the choice is fitted once on all the points; a
        bandwidth chosen as a multiple of r is resolved with r of all the points
        (:func:`~spectralink.model_selection.sample_scale`). ``"auto"``: 5,000
        (:data:`SUBSAMPLE_SIZE`) on data of more than 50,000 points
        (:data:`SUBSAMPLE_MIN_SAMPLES`) with ``search="fast"``, else none; ``None``: none.
        The candidates are those of the whole data's size (LSCP and E2CP with the
        sampled refinement their defaults use there, :data:`SAMPLE_SCHEDULES`), the
        repeats of the folds the sample's. Never with a precomputed affinity (a sample of a
        graph is not its graph).
    affinity : {"knn", "precomputed"}, default="knn"
        ``"knn"``: ``X`` holds features and every candidate builds its own graph from
        them. ``"precomputed"``: ``X`` is a square affinity matrix given to every
        candidate; only methods that accept one are candidates and no bandwidth is
        searched.
    n_jobs : int or None, default=None
        Parallel fits of the search (joblib). Results do not depend on it.
    random_state : int, RandomState or None, default=None
        Seeds the folds, every candidate and the refit (see
        :class:`~spectralink.model_selection.ConstraintSearchCV`).
    verbose : int, default=1
        1: a progress bar over the search's fits (with the number of candidates and
        folds) on stderr when stderr is a terminal and the search lasts more than
        :data:`spectralink.progress.PROGRESS_DELAY` seconds; 0: silent.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
        The k fitted: ``n_clusters``, or the one chosen.
    k_scan_ : KScan or None
        What chose k (:class:`~spectralink.model_selection.KScan`: the score and standard
        error of every k, the eigengaps, the rule); ``None`` when ``n_clusters`` is an int.
    k_scores_ : dict of int to float
        ``{k: score}`` of ``k_scan_`` (the pooled held-out kappa; nan by the eigengap);
        empty when ``n_clusters`` is an int.
    best_method_ : str
        Registry name of the chosen method.
    best_params_ : dict
        The chosen candidate's grid parameters other than the method (``{"sigma":
        0.5r}``; a relative sigma stays relative, see ``best_estimator_`` for the float);
        ``{}`` when the method ran at its defaults.
    best_estimator_ : estimator
        The chosen candidate, fitted on all the constraints.
    best_score_ : float
        Its mean cross-validated score (``nan`` without a search).
    reference_score_ : float
        NCut's mean cross-validated score (``nan`` without a search).
    search_ : ConstraintSearchCV or None
        The search (``cv_results_``, ``folds_``, ...); ``None`` when there was none.
    subsample_ : ndarray of int or None
        Indices of the points the search ran on (its folds and results are over these
        points); ``None`` when it ran on all of them, or there was no search.
    selection_ : {"cross-validation", "no constraints", "too few constraints", \
"refit failed", "not searched"}
        How the method was chosen: by the search; NCut because no constraints were
        given; :data:`FALLBACK_METHOD` (CCSR) at its defaults, with a
        :class:`~spectralink.exceptions.ModelSelectionWarning`, because the constraints
        cannot be split into ``cv`` folds each with a held-out pair; or NCut, with a
        warning, because the chosen candidate failed on all the constraints (COP-KMeans
        finding no feasible assignment) after succeeding on every fold; or
        :data:`FALLBACK_METHOD` by :meth:`refit_choice` before any search.
    n_violated_ : int
        Number of the given constraints the labels violate.
    n_features_in_ : int

    Notes
    -----
    The default candidates and bandwidths were chosen by measurement
    (``benchmarks/bench_model_selection.py``): how close the search's choice comes to the
    best of its candidates chosen with the labels, the method-by-method ablation that shows
    which candidates earn their place, and Auto's time are in
    ``docs/results/model_selection/README.md``. The cost is at most
    ``(cv * n_repeats + 1)`` fits of every candidate: less for the candidates raced out
    after the first repeat (``search="fast"``), and less where the search shares work: one
    neighbour search per ``n_neighbors``, one graph per bandwidth, one eigendecomposition
    per graph for NCut, CCSR and CCSKL. The candidates' many small
    dense operations run best with one BLAS thread per worker; use ``n_jobs`` for
    parallelism.

    References
    ----------
    Pourrajabi, M., Moulavi, D., Campello, R. J. G. B., Zimek, A., Sander, J., & Goebel,
    R. (2014). Model selection for semi-supervised clustering. EDBT.
    Van Craenendonck, T., & Blockeel, H. (2017). Constraint-based clustering selection.
    Machine Learning 106(9-10).

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from spectralink import Auto, Constraints
    >>> X, y = make_blobs(90, centers=3, random_state=0)
    >>> c = Constraints.from_labels(y, 60, random_state=0)
    >>> auto = Auto(3, methods=["ccsr"], random_state=0).fit(X, constraints=c)
    >>> auto.labels_.shape
    (90,)
    """

    _violation_hint = "more pairs, or other ones, may help"
    _scale = "a cross-validated search: some 30 candidates, each fitted per fold"
    _parameter_constraints = {
        "n_clusters": [Int(2), tuple, None],
        "methods": [list, tuple, None],
        "sigmas": ["array-like", None],
        "cv": [Int(2)],
        "n_repeats": [Int(1), StrOptions({"auto"})],
        "split_by": [StrOptions({"auto", "pairs", "points"})],
        "scoring": [StrOptions(set(SCORER_NAMES)), callable],
        "n_se": [NON_NEGATIVE],
        "search": [StrOptions({"fast", "exhaustive"})],
        "subsample": [Int(2), StrOptions({"auto"}), None],
        "affinity": [StrOptions({"knn", "precomputed"})],
        "n_jobs": [numbers.Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_clusters: int = 2,
        *,
        methods: Sequence | None = None,
        sigmas: Sequence[float] | None = DEFAULT_SIGMAS,
        cv: int = 5,
        n_repeats: int | str = "auto",
        split_by: str = "auto",
        scoring: str | Callable = "accuracy",
        n_se: float = 1.0,
        search: str = "fast",
        subsample: int | str | None = "auto",
        affinity: str = "knn",
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 1,
    ) -> None:
        self.n_clusters = n_clusters
        self.methods = methods
        self.sigmas = sigmas
        self.cv = cv
        self.n_repeats = n_repeats
        self.split_by = split_by
        self.scoring = scoring
        self.n_se = n_se
        self.search = search
        self.subsample = subsample
        self.affinity = affinity
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ candidates
    def _candidate_estimators(self, n_samples: int, k: int) -> list:
        precomputed = self.affinity == "precomputed"
        specs = self.methods
        if specs is None:
            specs = default_methods(n_samples, k, precomputed=precomputed)
        schedules = dict(SEARCH_SCHEDULES) if self.search == "fast" else {}
        if self.subsample_size(n_samples) is not None and n_samples > DENSE_REFINEMENT_MAX:
            for name, params in SAMPLE_SCHEDULES.items():
                schedules[name] = {**schedules.get(name, {}), **params}
        out, self._scheduled = named_candidates(specs, k, precomputed, schedules)
        self._schedules = schedules
        return out

    def _sigma_factors(self) -> list:
        # relative_sigmas validates: positive and finite
        return [] if self.sigmas is None else relative_sigmas(list(self.sigmas))

    def param_grid(self, n_samples: int, n_clusters: int | None = None) -> list[dict]:
        """The grid the search runs on data of ``n_samples`` points, for ``n_clusters``
        clusters (default: the ``n_clusters`` parameter, which must then be an int).

        NCut (the reference) first, then every constrained candidate (``methods``, or
        :func:`default_methods` for this size), those whose bandwidth is searched with a
        ``"sigma"`` entry of :func:`~spectralink.model_selection.relative_sigmas`
        (``sigmas``). Validates ``methods`` and ``sigmas``.

        Parameters
        ----------
        n_samples : int
            Number of points of the data to be fitted.
        n_clusters : int, default=None
            k of every candidate; ``None``: the ``n_clusters`` parameter.

        Returns
        -------
        list of dict
            A :class:`~spectralink.model_selection.ConstraintSearchCV` ``param_grid``;
            every entry has an ``"estimator"`` list of one unfitted estimator.
        """
        from .methods.ncut import NCut

        k = self.n_clusters if n_clusters is None else n_clusters
        if not isinstance(k, numbers.Integral):
            raise ValueError(
                f"param_grid needs k: pass n_clusters (Auto's n_clusters is {k!r}, chosen at fit)."
            )
        reference = NCut(k, affinity=self.affinity)
        grid: list[dict] = [{"estimator": [reference]}]
        sigmas = self._sigma_factors() if self.affinity != "precomputed" else []
        for est in self._candidate_estimators(n_samples, k):
            if sigmas and searches_relative_sigma(est):
                grid.append({"estimator": [est], "sigma": sigmas})
            else:
                grid.append({"estimator": [est]})
        return grid

    def n_repeats_for(self, n_samples: int) -> int:
        """The repetitions of the folds on data of ``n_samples`` points: ``n_repeats``, or
        for ``"auto"`` :data:`AUTO_REPEATS` up to :data:`REPEAT_MAX_SAMPLES` points and 1
        above.

        Parameters
        ----------
        n_samples : int
            Number of points of the data to be fitted.

        Returns
        -------
        int
        """
        if self.n_repeats == "auto":
            return AUTO_REPEATS if n_samples <= REPEAT_MAX_SAMPLES else 1
        return self.n_repeats

    # ------------------------------------------------------------------ fit
    def _fit(self, X, constraints) -> Auto:
        from .methods.ncut import NCut

        self._no_search()
        n, given = X.shape[0], self.n_clusters
        k = given if isinstance(given, numbers.Integral) else check_k_range(given, n)[0]
        grid = self.param_grid(n, k)  # validates methods and sigmas before any work
        sample = self._search_points(n, constraints)
        X_search, cons_search = (
            (X, constraints) if sample is None else (X[sample], constraints.subset(sample))
        )
        if not isinstance(given, numbers.Integral):
            announce("Auto: choosing k from the pairs", self.verbose)
        if self._choose_k(X_search, cons_search, n) != k:
            k = self.n_clusters_
            grid = self.param_grid(n, k)
        if constraints.is_empty:
            self.selection_ = "no constraints"
            chosen = NCut(k, affinity=self.affinity)
            self._refit(_seed(chosen, self.random_state), X, constraints)
            return self

        search = ConstraintSearchCV(
            NCut(k, affinity=self.affinity),
            grid,
            cv=self.cv,
            n_repeats=self.n_repeats_for(X_search.shape[0]),
            split_by=self.split_by,
            scoring=self.scoring,
            refit=False,
            race=RACE_N_SE if self.search == "fast" else None,
            n_jobs=self.n_jobs,
            random_state=self.random_state,
            verbose=self.verbose,
        )
        try:
            with warnings.catch_warnings():
                # a candidate failing on a fold (COP-KMeans: no feasible assignment) is
                # scored nan and never chosen; that is part of the selection, not news
                warnings.simplefilter("ignore", FitFailedWarning)
                n_candidates = sum(len(entry.get("sigma", [None])) for entry in grid)
                announce(
                    f"Auto: searching {n_candidates} candidates on {X_search.shape[0]:,} points",
                    self.verbose,
                )
                search.fit(X_search, constraints=cons_search)
        except UnfoldableConstraintsError as exc:
            warnings.warn(
                one_line(
                    f"Auto cannot cross-validate these constraints ({exc}); fitted "
                    f"{FALLBACK_METHOD.upper()} at its defaults without model selection."
                ),
                ModelSelectionWarning,
                stacklevel=3,
            )
            self.selection_ = "too few constraints"
            self._refit(_seed(self._fallback_estimator(k), self.random_state), X, constraints)
            return self

        self.search_ = search
        self.subsample_ = sample
        results = search.cv_results_
        index = prefer_reference(results, reference=0, n_se=self.n_se, n_repeats=search.n_repeats_)
        self.selection_ = "cross-validation"
        self.reference_score_ = float(results["mean_test_score"][0])
        try:
            choice = self._choice_for_all(search, index, X)
            self._choice = (index, clone(choice))
            announce(
                f"Auto: fitting its choice, {method_name(choice)}, on all the pairs", self.verbose
            )
            self._refit(choice, X, constraints)
        except Exception as exc:  # e.g. COP-KMeans: feasible on every fold, not on all
            if index == 0:
                raise
            name = method_name(results["params"][index]["estimator"])
            warnings.warn(
                one_line(
                    f"Auto's choice {name} failed on all the constraints ({type(exc).__name__}: "
                    f"{exc}); fitted NCut instead."
                ),
                ModelSelectionWarning,
                stacklevel=3,
            )
            self.selection_ = "refit failed"
            self._overruled = f"the choice {name} failed on all the pairs"
            self._choice = None  # refit_choice refits NCut, as this fit does
            index = 0
            self._refit(search.candidate(0), X, constraints)
        self._set_best(index)
        return self

    def _set_best(self, index: int) -> None:
        results = self.search_.cv_results_
        self.best_params_ = {k: v for k, v in results["params"][index].items() if k != "estimator"}
        self.best_index_, self.best_score_ = index, float(results["mean_test_score"][index])

    def refit_choice(self, X: Any, constraints: Any = None) -> Auto:
        """Fit the method and parameters chosen by the last search on other constraints,
        without searching again.

        The query loop (:func:`spectralink.active.learn`) calls it between its searches:
        the choice made on the answers known then guides the next questions. Before any
        search it fits :data:`FALLBACK_METHOD` (CCSR) at its defaults, as with too few
        constraints to cross-validate (with ``n_clusters=None``, at the eigengap's k), and
        ``selection_`` is ``"not searched"``; ``search_`` stays the last search.

        Parameters
        ----------
        X : array-like
            As for :meth:`fit`.
        constraints : Constraints or (must_link, cannot_link) pair, default=None

        Returns
        -------
        self
        """
        self._check_params()
        X = self._validate_X(X)
        return self._fit_contract(
            X.shape[0], constraints, lambda cons: self._refit_choice(X, cons), X
        )

    def _refit_choice(self, X, cons: Constraints) -> None:
        """The body of :meth:`refit_choice`: the last choice (or the fallback) refitted."""
        choice = getattr(self, "_choice", None)
        if choice is not None:
            index, estimator = choice
            self.selection_ = "cross-validation"
            self._refit(clone(estimator), X, cons)
            self._set_best(index)
        elif hasattr(self, "best_estimator_"):
            self._refit(clone(self.best_estimator_), X, cons)
        else:
            self._no_search()
            self.selection_ = "not searched"
            # k as without pairs (the eigengap, a cheap scan): the search chooses it later
            none = Constraints(n_samples=X.shape[0])
            k = self._choose_k(X, none, X.shape[0])
            self._refit(_seed(self._fallback_estimator(k), self.random_state), X, cons)

    def _no_search(self) -> None:
        """The search's attributes before (or without) a search."""
        self.search_ = self.best_index_ = self.subsample_ = self.k_scan_ = None
        self._choice = None  # (index, unfitted estimator) of the search's choice
        self.best_params_ = {}
        self.best_score_ = self.reference_score_ = float("nan")

    def _fallback_estimator(self, k: int) -> BaseEstimator:
        est = get_method(FALLBACK_METHOD)(n_clusters=k)
        if self.affinity == "precomputed":
            est.set_params(affinity="precomputed")
        return est

    def subsample_size(self, n_samples: int) -> int | None:
        """Points of the search's sample on data of ``n_samples`` points (``subsample`` with
        ``"auto"`` resolved), or ``None`` when the search runs on all the points."""
        if self.affinity == "precomputed":
            return None
        if self.subsample == "auto":
            big = self.search == "fast" and n_samples > SUBSAMPLE_MIN_SAMPLES
            return SUBSAMPLE_SIZE if big else None
        return self.subsample

    def _constraints_for(self, n_samples: int, constraints: Any) -> Constraints:
        if isinstance(self.n_clusters, numbers.Integral):
            return super()._constraints_for(n_samples, constraints)
        check_k_range(self.n_clusters, n_samples)
        return as_constraints(constraints, n_samples)

    def _choose_k(self, X, constraints: Constraints, n_samples: int) -> int:
        """k: ``n_clusters``, or chosen on ``X`` (the search's points) from the pairs."""
        self.k_scan_, self.k_scores_ = None, {}
        if isinstance(self.n_clusters, numbers.Integral):
            self.n_clusters_ = int(self.n_clusters)
            return self.n_clusters_
        lo, hi = check_k_range(self.n_clusters, n_samples)
        pre, seed = self.affinity == "precomputed", self.random_state
        scan = choose_n_clusters(
            X, constraints, (lo, min(hi, X.shape[0] - 1)), precomputed=pre, cv=self.cv,
            random_state=seed,
        )  # fmt: skip
        self.k_scan_, self.k_scores_, self.n_clusters_ = scan, scan.scores_by_k(), scan.n_clusters
        return self.n_clusters_

    def _search_points(self, n_samples: int, constraints: Constraints) -> np.ndarray | None:
        size = self.subsample_size(n_samples)
        if size is None:
            return None
        return search_sample(n_samples, constraints, size, self.random_state)

    def _choice_for_all(self, search: ConstraintSearchCV, index: int, X) -> BaseEstimator:
        """Candidate ``index`` as it is fitted on all the points: at its full schedule, and
        after a search on a sample with a relative bandwidth resolved with r of all the
        points (the candidate's own r, exactly, when the multiple is 1)."""
        est = self._full_schedule(search, index)
        sigma = search.cv_results_["params"][index].get("sigma")
        if self.subsample_ is None or not isinstance(sigma, RelativeSigma):
            return est
        if sigma.factor == 1.0:
            return est.set_params(sigma=None)
        r = sample_scale(X, est.n_neighbors, random_state=self.random_state)
        return est.set_params(sigma=sigma.resolve(r))

    def _full_schedule(self, search: ConstraintSearchCV, index: int) -> BaseEstimator:
        """Candidate ``index`` as the refit fits it: a candidate that ran another schedule
        inside the search (:data:`SEARCH_SCHEDULES`, :data:`SAMPLE_SCHEDULES`) gets its
        defaults back."""
        est = search.candidate(index)
        searched = search.cv_results_["params"][index]["estimator"]
        if any(searched is s for s in getattr(self, "_scheduled", ())):
            defaults = type(est)().get_params(deep=False)
            est.set_params(**{key: defaults[key] for key in self._schedules[method_name(est)]})
        return est

    def _refit(self, estimator: BaseEstimator, X: Any, constraints: Constraints) -> None:
        with warnings.catch_warnings():
            # Auto's own fit reports its diagnostics once, under its name
            warnings.simplefilter("ignore", DegeneratePartitionWarning)
            warnings.simplefilter("ignore", ConstraintsViolatedWarning)
            estimator.fit(X, constraints=constraints)
        self.best_estimator_, self.best_method_ = estimator, method_name(estimator)
        self.labels_ = estimator.labels_

    def _reference_labels(self) -> np.ndarray | None:
        # the choice of NCut is the choice to ignore the pairs: nothing to warn about
        return self.labels_ if self.best_method_ == "ncut" else None

    def predict(self, X: Any) -> np.ndarray:
        """Cluster labels of new points: ``best_estimator_.predict(X)`` (see
        :meth:`spectralink.methods.AffinityGraphMixin.predict`)."""
        if not hasattr(self, "best_estimator_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted; call fit first.")
        return self.best_estimator_.predict(X)

    @property
    def report_(self) -> SearchReport:
        """What the search chose and the evidence for it (a :class:`SearchReport`; its
        text is :meth:`describe`)."""
        if not hasattr(self, "labels_"):
            raise AttributeError("report_ needs a fitted Auto; call fit first.")
        search = self.search_
        scan = getattr(self, "k_scan_", None)
        return SearchReport(
            method=self.best_method_,
            params=dict(self.best_params_),
            selection=self.selection_,
            overruled=self._overruled if self.selection_ == "refit failed" else "",
            scoring=self.scoring if isinstance(self.scoring, str) else "custom",
            results=None if search is None else search.cv_results_,
            index=self.best_index_,
            split_by="" if search is None else search.split_by_,
            n_splits=0 if search is None else search.n_splits_,
            n_repeats=1 if search is None else search.n_repeats_,
            k_text="" if scan is None else scan.describe(),
            n_points=len(self.labels_),
            n_searched=0 if self.subsample_ is None else len(self.subsample_),
        )

    def describe(self) -> str:
        """One line: the chosen method, its parameters and its cross-validated score."""
        if not hasattr(self, "labels_"):
            raise AttributeError("describe() needs a fitted Auto; call fit first.")
        return str(self.report_)


def _seed(estimator, random_state):
    """Give ``estimator`` an integer seed drawn from ``random_state`` when it has none."""
    params = estimator.get_params(deep=False)
    if "random_state" in params and params["random_state"] is None and random_state is not None:
        seed = int(check_random_state(random_state).randint(2**31 - 1))
        estimator.set_params(random_state=seed)
    return estimator
