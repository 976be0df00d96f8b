"""The search: every candidate of a grid fitted and scored on every fold of the constraints.

:meth:`ConstraintSearchCV.fit` is an outline, as scikit-learn's ``BaseSearchCV.fit``: check
the parameters, split the constraints, hand ``evaluate_candidates`` to :meth:`_run_search`
(the hook a subclass overrides to choose what to evaluate), then choose and refit.
:func:`prefer_reference` is a refit rule that keeps a reference candidate unless another
beats it beyond the folds' noise.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping
from numbers import Integral, Real
from typing import Any

import numpy as np
from joblib import effective_n_jobs
from scipy.stats import rankdata
from sklearn import get_config
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import ParameterGrid
from sklearn.utils import check_random_state

from ..constraints import (
    FOLD_BY,
    Constraints,
    UnfoldableConstraintsError,
    as_constraints,
    split_constraints,
)
from ..exceptions import one_line
from ..parallel import n_threads
from ..progress import PROGRESS_DELAY
from ..spectral import shared_eigenvectors
from ..utils import NON_NEGATIVE, HasMethods, Int, StrOptions, validate_params
from ._candidates import _candidate_estimator, _SharedGraphs
from ._racing import fit_splits, race_splits, race_survivors
from ._scores import SCORER_NAMES, Scorer, _check_scorers, _check_scoring
from ._validation import _n_samples, _seed_if_unset

__all__ = ["ConstraintSearchCV", "prefer_reference", "race_survivors"]

_SEED_MAX = 2**31 - 1


@validate_params(
    {
        "cv_results": [Mapping],
        "reference": [Int(0)],
        "n_se": [NON_NEGATIVE],
        "n_repeats": [Int(1)],
        "score": [str],
    },
    prefer_skip_nested_validation=True,
)
def prefer_reference(
    cv_results: Mapping,
    *,
    reference: int = 0,
    n_se: float = 1.0,
    n_repeats: int = 1,
    score: str = "score",
) -> int:
    """Choose a candidate only when it beats a reference beyond the folds' noise.

    A one-standard-error rule on paired differences. All candidates of a search are
    scored on the same folds, so for candidate c and fold f let
    ``d_f = score(c, f) - score(reference, f)``. Candidate c *beats the reference* when
    ``mean(d) > n_se * std(d) / sqrt(n_folds)`` (sample std; with ``std(d) = 0``, when
    ``mean(d) > 0``), where ``n_folds`` is the number of splits divided by
    ``n_repeats``. The result is the candidate with the highest mean score among those
    that beat the reference (ties: the earlier), else the reference. With repeated folds
    (:class:`ConstraintSearchCV`'s ``n_repeats_``), the splits of different repeats hold
    out the same pairs, so they count as one repeat's ``cv`` folds: averaging the repeats
    steadies the mean difference, while the standard error stays that of ``cv`` folds
    (counting every split would shrink it by ``sqrt(n_repeats)`` and let noise through).
    Use it as :class:`ConstraintSearchCV`'s ``refit`` (with :func:`functools.partial` for
    other arguments) to keep an unconstrained reference such as NCut unless the held-out
    constraints say clearly that a constrained candidate does better.

    Parameters
    ----------
    cv_results : dict
        :attr:`ConstraintSearchCV.cv_results_`.
    reference : int, default=0
        Index of the reference candidate.
    n_se : float, default=1.0
        Required margin in standard errors of the paired differences; 0 keeps any
        candidate with a higher mean than the reference.
    n_repeats : int, default=1
        Repeats of the folds behind ``cv_results`` (``ConstraintSearchCV.n_repeats_``).
    score : str, default="score"
        Which score of a search with several (``scoring`` a list or dict): its name; the
        columns read are ``mean_test_<score>`` and ``split<i>_test_<score>``.

    Returns
    -------
    int
        Index into ``cv_results["params"]``. Candidates with a ``nan`` mean are never
        chosen; with a ``nan`` reference the highest mean wins.
    """
    key = f"mean_test_{score}"
    if key not in cv_results:
        raise ValueError(f"cv_results has no {key!r}: score={score!r} is not one of its scores.")
    means = np.asarray(cv_results[key], dtype=float)
    n_cand = len(means)
    if not 0 <= reference < n_cand:
        raise ValueError(f"reference={reference} is not a candidate index (0..{n_cand - 1}).")
    if np.all(np.isnan(means)):
        raise ValueError("no candidate has a finite mean score.")
    if np.isnan(means[reference]):
        return int(np.nanargmax(means))
    n_splits = 0
    while f"split{n_splits}_test_{score}" in cv_results:
        n_splits += 1
    scores = np.column_stack([cv_results[f"split{f}_test_{score}"] for f in range(n_splits)])
    diff = scores - scores[reference]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nan rows
        gain = diff.mean(axis=1)
        n_folds = n_splits / n_repeats
        se = diff.std(axis=1, ddof=1) / np.sqrt(n_folds) if n_splits > 1 else 0.0 * gain
    beats = np.isfinite(gain) & (gain > n_se * se) & (gain > 0)
    beats[reference] = False
    if not beats.any():
        return int(reference)
    return int(np.argmax(np.where(beats, means, -np.inf)))


class ConstraintSearchCV(BaseEstimator):
    """Exhaustive parameter search scored by cross-validation over the constraints.

    The constraints are split into ``cv`` folds (:func:`constraint_folds`); every
    candidate is fitted once per fold on **all the points** with the training pairs, and
    its partition is scored on the held-out pairs. The candidate with the best mean score
    is refitted on all the constraints.

    Parameters
    ----------
    estimator : estimator instance
        A spectralink estimator (``fit(X, constraints=...)``, ``labels_``); the base of
        every candidate without an ``"estimator"`` entry, and the source of
        ``n_clusters`` for methods given by name.
    param_grid : dict or list of dicts
        As :class:`sklearn.model_selection.ParameterGrid`. The key ``"estimator"`` takes
        estimator instances or registry names (:func:`spectralink.registry.get_method`;
        built with the base estimator's ``n_clusters``) to search across methods; the
        other keys are set with ``clone(est).set_params(**params)``. A ``"sigma"`` value
        may be a :class:`RelativeSigma` (see :func:`relative_sigmas`), a multiple of the
        default bandwidth r of that candidate's ``n_neighbors``.
    cv : int, default=5
        Number of folds over the constraints, >= 2.
    n_repeats : int, default=1
        Repetitions of the ``cv``-fold split with independent shuffles (as
        :class:`sklearn.model_selection.RepeatedKFold`): every candidate is fitted
        ``cv * n_repeats`` times and scored on the mean over all the splits. With few
        held-out pairs per fold, which pairs land in which fold moves the scores as much
        as the candidates differ; repeating averages that draw out. The repeats fold the
        same way as the first (``split_by_``); a repeat whose pair folds would leave a
        fold without a held-out pair is skipped.
    split_by : {"auto", "pairs", "points"}, default="auto"
        How the folds are built (:func:`constraint_folds`): held-out pairs, or held-out
        constrained points with every pair touching them (for constraints closed under
        transitivity, such as all the pairs among labelled points); ``"auto"`` uses pairs
        unless the leakage rule would leave a fold empty or move more than half of them.
    scoring : {"balanced", "kappa", "accuracy"} or callable, default="balanced"
        ``"balanced"``: :func:`balanced_constraint_score`; ``"kappa"``:
        :func:`kappa_constraint_score` (on random pairs, an estimate of the ARI);
        ``"accuracy"``: :func:`constraint_accuracy`; a callable
        ``(labels, test_constraints) -> float``. Higher is better. Several scores, as in
        scikit-learn: a list of names or a dict ``{name: name or callable}``; every fit
        is then scored with each (one fit, several scores) and ``cv_results_`` has the
        columns ``*_test_<name>`` instead of ``*_test_score``.
    refit : bool, str or callable, default=True
        Refit the best candidate on all the constraints (``best_estimator_``,
        ``labels_``). A callable ``cv_results_ -> index`` chooses the candidate instead
        of the highest mean score (as in scikit-learn), e.g. :func:`prefer_reference`
        for a one-standard-error rule against a reference candidate. With several
        scores: the name of the one that ranks the candidates, a callable, or False (no
        ``best_*`` attributes then).
    race : float or None, default=None
        Race the candidates over the repeats (with ``n_repeats > 1``): after the first
        repeat's ``cv`` splits, a candidate whose paired score differences to the leader
        (the highest mean so far) have a mean more than ``race`` standard errors below 0
        (:func:`race_survivors`) is not fitted on the later repeats. Its later splits are
        ``nan``, so its mean is ``nan`` and it is never chosen (``cv_results_["raced_out"]``).
        The first candidate (the reference of :func:`prefer_reference`) always runs every
        split. ``None``: every candidate runs every split.
    n_jobs : int or None, default=None
        Fits run in parallel through joblib. Results do not depend on it. The workers
        share the library's thread count (:func:`spectralink.set_config`): each fit runs
        on ``max(1, threads // workers)`` threads.
    random_state : int, RandomState or None, default=None
        Seeds the folds and, up front, one seed per fold (shared by all candidates, so
        they are compared on the same random draws) and one for the refit, given to every
        estimator whose ``random_state`` is None.
    verbose : int, default=0
        When > 0, a tqdm progress bar over the fits on stderr, when stderr is a terminal
        and the search lasts more than :data:`spectralink.progress.PROGRESS_DELAY`
        seconds; its description gives the number of candidates and folds.
    error_score : "raise" or float, default=np.nan
        Score of a fit that raises. ``"raise"`` re-raises. Some fits failing gives a
        :class:`sklearn.exceptions.FitFailedWarning`; all failing, a ``ValueError``.

    Attributes
    ----------
    cv_results_ : dict of arrays
        As scikit-learn's: ``params``, ``param_<name>`` (masked object arrays),
        ``split<i>_test_score``, ``mean_test_score``, ``std_test_score``,
        ``rank_test_score``, ``mean_fit_time``, ``std_fit_time``; with several scores,
        ``split<i>_test_<name>``, ``mean_test_<name>``, ... for each.
    best_index_ : int
        Candidate with the highest mean score; ties go to the **earlier** candidate in
        grid order (list an unconstrained reference such as NCut first to prefer it).
        Candidates with a ``nan`` mean are never chosen. With a callable ``refit``, the
        index it returns.
    best_params_ : dict
        ``cv_results_["params"][best_index_]`` (a relative sigma stays relative here).
    best_score_ : float
        ``cv_results_["mean_test_score"][best_index_]`` (with several scores, that of
        the one named by ``refit``; not set with a callable ``refit``).
    best_estimator_ : estimator
        With ``refit=True``: ``clone(estimator).set_params(**best_params_)`` (sigma
        resolved to a float), fitted on ``X`` with all the constraints.
    labels_ : ndarray of shape (n_samples,)
        ``best_estimator_.labels_``.
    n_splits_ : int
        Number of splits scored: ``cv`` times the repeats kept.
    n_repeats_ : int
        Number of ``cv``-fold splits kept (``n_repeats`` unless one was skipped).
    folds_ : list of (train, test)
        The folds (:func:`constraint_folds`), indices into ``[must_link; cannot_link]``,
        repeat after repeat.
    split_by_ : {"pairs", "points"}
        How they were built.
    multimetric_ : bool
        Whether several scores were computed.
    sigma_scales_ : dict
        ``{n_neighbors: r}`` for every k-NN search the search ran.

    Notes
    -----
    **Shared graphs.** A candidate that builds the library's k-NN Gaussian graph
    (``affinity="knn"``, standard ``_affinity``, precomputed graphs accepted) is fitted
    with ``affinity="precomputed"`` on a graph built once: the neighbour search
    (:func:`spectralink.graph.kneighbors`) runs once per distinct ``n_neighbors`` and
    :func:`spectralink.graph.gaussian_knn_graph` once per distinct ``(n_neighbors,
    sigma)``, shared by all candidates and folds (the graph does not depend on the
    constraints). The refit runs on the features like a user's own fit (one more
    neighbour search). Above :data:`spectralink.graph.ANN_THRESHOLD` points the shared
    approximate search is seeded from ``random_state``, not the estimator's.

    **Shared eigenvectors.** The fits run inside
    :func:`spectralink.spectral.shared_eigenvectors`: a method that takes the
    normalized-Laplacian eigenvectors of the graph it was given (NCut, CCSR, CCSKL) gets
    them decomposed once per graph and number of eigenvectors instead of once per fold
    (per worker process with ``n_jobs``), the iterative eigensolvers seeded from
    ``random_state``. Methods that change the graph with the constraints (SL, E2CP, LSCP)
    decompose their own graph every fit.

    Warnings raised by the fits inside the cross-validation (degenerate partitions,
    disconnected graphs) are silenced: the score is what judges them. The refit warns.

    References
    ----------
    Pourrajabi, M., Moulavi, D., Campello, R. J. G. B., Zimek, A., & Sander, J. (2014).
    Model selection for semi-supervised clustering. EDBT.
    Van Craenendonck, T., & Blockeel, H. (2017). Constraint-based clustering selection.
    Machine Learning 106(9-10).

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from spectralink import Constraints, NCut
    >>> from spectralink.model_selection import ConstraintSearchCV, relative_sigmas
    >>> X, y = make_blobs(60, centers=3, random_state=0)
    >>> c = Constraints.from_labels(y, 40, random_state=0)
    >>> search = ConstraintSearchCV(
    ...     NCut(3, n_neighbors=10), {"sigma": relative_sigmas([0.5, 1, 2])}, cv=3,
    ...     random_state=0).fit(X, constraints=c)
    >>> search.labels_.shape
    (60,)
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "get_params"])],
        "param_grid": [dict, list, tuple],
        "cv": [Int(2)],
        "n_repeats": [Int(1)],
        "split_by": [StrOptions(set(FOLD_BY))],
        "scoring": [StrOptions(set(SCORER_NAMES)), callable, list, tuple, dict],
        "refit": ["boolean", str, callable],
        "race": [NON_NEGATIVE, None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "error_score": [StrOptions({"raise"}), Real],
    }

    def __init__(
        self,
        estimator: BaseEstimator,
        param_grid: Mapping | list[Mapping],
        *,
        cv: int = 5,
        n_repeats: int = 1,
        split_by: str = "auto",
        scoring: str | Scorer | list[str] | Mapping[str, str | Scorer] = "balanced",
        refit: bool | str | Callable[[dict], int] = True,
        race: float | None = None,
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
        error_score: str | float = np.nan,
    ) -> None:
        self.estimator = estimator
        self.param_grid = param_grid
        self.cv = cv
        self.n_repeats = n_repeats
        self.split_by = split_by
        self.scoring = scoring
        self.refit = refit
        self.race = race
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.error_score = error_score

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: None = None, constraints: Any = None) -> ConstraintSearchCV:
        """Run the search, then refit the best candidate when ``refit=True``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            What the candidates' ``fit`` takes (features, or an affinity when they are
            ``affinity="precomputed"``).
        y : None
            Ignored. Pass the constraints by keyword.
        constraints : Constraints or (must_link, cannot_link) pair
            Required and non-empty.

        Returns
        -------
        self
        """
        if isinstance(y, Constraints) or (isinstance(y, tuple) and len(y) == 2):
            raise TypeError("pass constraints by keyword: fit(X, constraints=...).")
        if not get_config()["skip_parameter_validation"]:
            self._validate_params()
        scorers = self._check_scorers()
        if constraints is None:
            raise ValueError(
                "ConstraintSearchCV needs constraints: fit(X, constraints=...) with at least "
                "cv must-link / cannot-link pairs."
            )
        cons = as_constraints(constraints, _n_samples(X))

        # one stream of seeds, drawn in this order whatever the grid, so that the folds and
        # every fit's seed depend on random_state alone
        rng = check_random_state(self.random_state)
        fold_seed = int(rng.randint(_SEED_MAX))
        knn_seed = int(rng.randint(_SEED_MAX))
        fit_seeds = [int(s) for s in rng.randint(_SEED_MAX, size=int(self.cv))]
        self._refit_seed = int(rng.randint(_SEED_MAX))
        eigen_seed = int(rng.randint(_SEED_MAX))
        self.folds_, fit_seeds = self._split(cons, fold_seed, fit_seeds, rng)
        self.n_splits_ = len(self.folds_)
        splits = [(cons.take(train), cons.take(test)) for train, test in self.folds_]

        graphs = _SharedGraphs(X, knn_seed)
        self._raced_out: list[bool] = []
        all_params: list[dict] = []
        all_out: list[tuple] = []
        feature_estimators: list = []

        def evaluate_candidates(candidate_params: Iterable[Mapping]) -> dict:
            """Fit and score the candidates on every split; the results of all the
            candidates evaluated so far, in ``cv_results_``'s layout."""
            candidate_params = [dict(p) for p in candidate_params]
            estimators = [_candidate_estimator(self.estimator, p) for p in candidate_params]
            prepared = [graphs.prepare(est) for est in estimators]
            graphs.release_features()
            all_out.extend(self._race(prepared, splits, fit_seeds, scorers, eigen_seed))
            all_params.extend(candidate_params)
            feature_estimators.extend(est for _, _, est in prepared)
            return self._results(all_params, all_out, list(scorers))

        with shared_eigenvectors(eigen_seed):  # emptied when the search ends
            self._run_search(evaluate_candidates)
        if not all_params:
            raise ValueError("param_grid has no candidate.")
        self.sigma_scales_ = graphs.sigma_scales
        self._feature_estimators = feature_estimators
        errors = [out[2] for out in all_out if out[2] is not None]
        if len(errors) == len(all_out):
            raise ValueError(f"all {len(all_out)} fits failed; the first error was: {errors[0]}")
        if errors:
            warnings.warn(
                one_line(
                    f"{len(errors)} of {len(all_out)} fits failed and were scored "
                    f"error_score={self.error_score!r}; the first error was: {errors[0]}"
                ),
                FitFailedWarning,
                stacklevel=2,
            )
        self.cv_results_ = self._results(all_params, all_out, list(scorers))
        self.multimetric_ = self._is_multimetric()
        if self.multimetric_ and self.refit is False:
            return self  # no single best without a score to rank by (as scikit-learn)
        self._select(list(scorers), errors[0] if errors else "none")
        if self.refit:
            self.best_estimator_ = self.candidate(self.best_index_).fit(X, constraints=cons)
            self.labels_ = self.best_estimator_.labels_
        return self

    def _run_search(self, evaluate_candidates: Callable[[Iterable[Mapping]], dict]) -> None:
        """Evaluate the candidates: every point of ``param_grid``.

        The hook of :meth:`fit`, as scikit-learn's ``BaseSearchCV._run_search``: a subclass
        may call ``evaluate_candidates`` several times (each call returns the results of
        all the candidates evaluated so far); ``cv_results_`` lists them in call order.
        """
        evaluate_candidates(ParameterGrid(self.param_grid))

    # ------------------------------------------------------------------ fit steps
    def _is_multimetric(self) -> bool:
        return isinstance(self.scoring, (Mapping, list, tuple))

    def _check_scorers(self) -> dict[str, Scorer]:
        """``{name: scorer}`` (``{"score": scorer}`` for one), checked against ``refit``."""
        multi = _check_scorers(self.scoring)
        if multi is None:
            if isinstance(self.refit, str):
                raise ValueError(f"refit must be True, False or a callable, got {self.refit!r}.")
            return {"score": _check_scoring(self.scoring)}
        if not (self.refit is False or callable(self.refit) or self.refit in multi):
            raise ValueError(
                f"with several scores, refit must be the name of one of them {list(multi)}, "
                f"a callable or False; got {self.refit!r}."
            )
        return multi

    def _split(
        self, cons: Constraints, fold_seed: int, fit_seeds: list[int], rng: np.random.RandomState
    ) -> tuple[list, list[int]]:
        """The folds of every repeat and the fit seed of every split; sets ``split_by_``
        and ``n_repeats_``."""
        n_splits = int(self.cv)
        folds, self.split_by_ = split_constraints(cons, n_splits, self.split_by, fold_seed)
        # later repeats draw their seeds after all of the first's, so that n_repeats=1
        # is exactly the single split
        self.n_repeats_ = 1
        for _ in range(1, self.n_repeats):
            seed = int(rng.randint(_SEED_MAX))
            more_fit_seeds = [int(s) for s in rng.randint(_SEED_MAX, size=n_splits)]
            try:
                more, _ = split_constraints(cons, n_splits, self.split_by_, seed)
            except UnfoldableConstraintsError:
                continue
            folds += more
            fit_seeds += more_fit_seeds
            self.n_repeats_ += 1
        return folds, fit_seeds

    def _progress_bar(self, n_candidates: int, n_splits: int) -> Any:
        """One tqdm bar over a call's fits when ``verbose`` (None otherwise)."""
        if not self.verbose:
            return None
        from tqdm.auto import tqdm

        # disable=None: no bar when stderr is not a terminal (a log file, a pipe)
        return tqdm(
            total=n_candidates * n_splits,
            desc=f"model search: {n_candidates} candidates x {n_splits} folds",
            unit="fit",
            delay=PROGRESS_DELAY,
            disable=None,
        )

    def _race(
        self,
        prepared: list[tuple],
        splits: list[tuple[Constraints, Constraints]],
        fit_seeds: list[int],
        scorers: dict[str, Scorer],
        eigen_seed: int,
    ) -> list[tuple]:
        """Every prepared candidate on every split, raced when ``race`` is set
        (:func:`~spectralink.model_selection._racing.race_splits`: the first folds for
        all, the rest for those that can still win), in (candidate, split) order."""
        bar = self._progress_bar(len(prepared), len(splits))
        # the workers share the library's threads (each fit gets its part of them)
        per_fit = max(1, n_threads() // effective_n_jobs(self.n_jobs))
        fit = fit_splits(
            prepared, splits, fit_seeds, list(scorers.values()), error_score=self.error_score,
            eigen_seed=eigen_seed, n_jobs=self.n_jobs, per_fit=per_fit, bar=bar,
        )  # fmt: skip
        try:
            out, raced_out, used = race_splits(
                len(prepared), len(splits), fit, n_repeats=self.n_repeats_, n_se=self.race
            )
        finally:
            if bar is not None:
                bar.close()
        if used < len(splits):  # the first repeat decided: the search is that repeat's
            del splits[used:], self.folds_[used:]
            self.n_splits_, self.n_repeats_ = used, 1
        self._raced_out.extend(raced_out)
        return out

    def _results(self, params_list: list[dict], out: list[tuple], score_names: list[str]) -> dict:
        n_cand = len(params_list)
        scores = np.array([r[0] for r in out], dtype=float).reshape(n_cand, self.n_splits_, -1)
        times = np.array([r[1] for r in out], dtype=float).reshape(n_cand, self.n_splits_)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # raced-out rows: mean of nan
            results = self._format_results(params_list, scores, times, score_names)
        if self.race is not None:
            raced = np.zeros(n_cand, dtype=bool)
            raced[: len(self._raced_out)] = self._raced_out
            results["raced_out"] = raced
        return results

    def _select(self, score_names: list[str], first_error: str) -> None:
        """``best_index_``, ``best_params_`` and (one ranking score) ``best_score_``."""
        results = self.cv_results_
        n_cand = len(results["params"])
        # the score that ranks; several with a callable refit: eligible when all are finite
        names = [self.refit] if isinstance(self.refit, str) else score_names
        means = sum(results[f"mean_test_{name}"] for name in names)
        if np.all(np.isnan(means)):
            raise ValueError(
                "no candidate has a finite mean score (a fit failed or scored nan in every "
                f"candidate); the first error was: {first_error}"
            )
        if callable(self.refit):
            index = self.refit(results)
            if (
                isinstance(index, bool)
                or not isinstance(index, Integral)
                or not 0 <= index < n_cand
                or np.isnan(means[index])
            ):
                raise ValueError(
                    f"the refit callable must return the index of a candidate with a finite "
                    f"mean score (0..{n_cand - 1}), got {index!r}."
                )
            self.best_index_ = int(index)
        else:
            self.best_index_ = int(np.nanargmax(means))  # first maximum: earlier one wins
        self.best_params_ = results["params"][self.best_index_]
        if not self.multimetric_ or isinstance(self.refit, str):
            self.best_score_ = float(means[self.best_index_])

    def candidate(self, index: int) -> BaseEstimator:
        """The unfitted estimator of candidate ``index``, as the refit fits it.

        ``clone(estimator).set_params(**params)`` with a relative sigma resolved to the
        bandwidth the search used, and ``random_state`` (when None) set to the refit's
        seed. Lets a caller refit another candidate than ``best_index_`` on the features.

        Parameters
        ----------
        index : int
            Row of ``cv_results_``.

        Returns
        -------
        estimator
        """
        if not hasattr(self, "_feature_estimators"):
            raise AttributeError("candidate() needs a fitted search; call fit first.")
        return _seed_if_unset(clone(self._feature_estimators[index]), self._refit_seed)

    def fit_predict(self, X: Any, y: None = None, constraints: Any = None) -> np.ndarray:
        """Run the search and return the refitted best candidate's ``labels_``."""
        if not self.refit:
            raise ValueError("fit_predict needs refit=True.")
        return self.fit(X, y, constraints=constraints).labels_

    @staticmethod
    def _format_results(
        params_list: list[dict], scores: np.ndarray, times: np.ndarray, score_names: list[str]
    ) -> dict:
        """scikit-learn's layout; ``scores`` is (candidates, splits, scores) with
        ``score_names`` the score names (``["score"]`` for one)."""
        n_cand, n_splits, _ = scores.shape
        results: dict[str, Any] = {"params": params_list}
        names = sorted({name for p in params_list for name in p})
        for name in names:
            col = np.ma.MaskedArray(np.empty(n_cand, dtype=object), mask=True)
            for i, p in enumerate(params_list):
                if name in p:
                    col[i] = p[name]
            results[f"param_{name}"] = col
        for j, name in enumerate(score_names):
            for f in range(n_splits):
                results[f"split{f}_test_{name}"] = scores[:, f, j]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # nan rows (failed fits)
                mean = scores[:, :, j].mean(axis=1)
                std = scores[:, :, j].std(axis=1)
            results[f"mean_test_{name}"] = mean
            results[f"std_test_{name}"] = std
            # scikit-learn's convention: equal scores share the best rank, nan ranks last
            filled = np.where(np.isnan(mean), -np.inf, mean)
            results[f"rank_test_{name}"] = rankdata(-filled, method="min").astype(np.int32)
        results["mean_fit_time"] = np.nanmean(times, axis=1)
        results["std_fit_time"] = np.nanstd(times, axis=1)
        return results
