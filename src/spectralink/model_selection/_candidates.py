"""Candidates: Auto's default methods, grid points made fit-ready, the graphs they share.

A grid point names a method (an ``"estimator"`` entry: an instance or a registry name) and
parameters; a ``"sigma"`` may be a :class:`RelativeSigma`, a multiple of the default
bandwidth r of that candidate's neighbour search. :class:`_SharedGraphs`, made for one
search's fit and dropped after it, runs each neighbour search and builds each Gaussian
graph once for all the candidates and folds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone

from .. import graph as _graph
from ..methods import shareable_knn_graph
from ..registry import get_method
from ..utils import POSITIVE, check_features, check_params
from ._validation import _n_samples

__all__ = [
    "COSC_KWAY_MAX_SAMPLES",
    "DEFAULT_METHODS",
    "RelativeSigma",
    "default_methods",
    "named_candidates",
    "relative_sigmas",
    "searches_relative_sigma",
]

#: :class:`~spectralink.Auto`'s constrained candidates of ``methods=None``, in grid order
#: (NCut, the reference, always comes first). See :func:`default_methods` for the ones
#: left out on large data.
DEFAULT_METHODS = ("ccsr", "ccskl", "lscp", "scacs", "copkmeans", "cosc")
#: COSC with k > 2 clusters joins the default candidates up to this many points: the search
#: fits every candidate ``cv * n_repeats + 1`` times, a k-way COSC fit grows fast with n,
#: and its selection from the constraints was measured up to about this size (timings and
#: selections: docs/results/model_selection/README.md).
COSC_KWAY_MAX_SAMPLES = 2500

#: What preparing a candidate's shared graph raises when the candidate's parameters are
#: invalid (an ``n_neighbors`` of 0 or None, a sigma that is no number, ...): the candidate
#: then runs on the features and its own fit reports the problem, scored ``error_score``.
_INVALID_CANDIDATE = (ValueError, TypeError, OverflowError)


@dataclass(frozen=True)
class RelativeSigma:
    """A Gaussian bandwidth given as ``factor`` times the library's default scale r.

    r is :func:`spectralink.graph.sigma_from_distances` of the candidate's own k-NN
    search: the mean distance to the ``n_neighbors``-th neighbour (``n_neighbors``
    clipped to ``n_samples - 1`` as the estimators do). ``RelativeSigma(1.0)`` is
    therefore the estimators' ``sigma=None``. :class:`ConstraintSearchCV` resolves it
    to a float before fitting; build lists of them with :func:`relative_sigmas`.

    Parameters
    ----------
    factor : float
        Positive, finite multiple of r.
    """

    factor: float

    def __post_init__(self) -> None:
        check_params({"factor": [POSITIVE]}, {"factor": self.factor}, "RelativeSigma")
        object.__setattr__(self, "factor", float(self.factor))

    def resolve(self, r: float) -> float:
        """The bandwidth ``factor * r``."""
        return self.factor * float(r)

    def __repr__(self) -> str:
        return f"{self.factor:g}r"


def relative_sigmas(factors: Iterable[float]) -> list[RelativeSigma]:
    """Bandwidths as multiples of the default r, for a ``"sigma"`` entry of a grid.

    Parameters
    ----------
    factors : iterable of float
        Positive multiples of r.

    Returns
    -------
    list of RelativeSigma

    Examples
    --------
    >>> relative_sigmas([0.5, 1, 2])
    [0.5r, 1r, 2r]
    """
    return [RelativeSigma(f) for f in factors]


def default_methods(n_samples: int, n_clusters: int, *, precomputed: bool = False) -> list[str]:
    """The constrained candidates of ``Auto(methods=None)`` for data of this size.

    :data:`DEFAULT_METHODS`, without k-way COSC above :data:`COSC_KWAY_MAX_SAMPLES`
    points (two-cluster COSC is always in), and with a precomputed affinity only the
    methods that accept one.

    Parameters
    ----------
    n_samples : int
    n_clusters : int
    precomputed : bool, default=False

    Returns
    -------
    list of str
        Registry names.
    """
    names = []
    for name in DEFAULT_METHODS:
        if name == "cosc" and n_clusters > 2 and n_samples > COSC_KWAY_MAX_SAMPLES:
            continue
        if precomputed and not getattr(get_method(name), "_supports_precomputed", True):
            continue
        names.append(name)
    return names


def searches_relative_sigma(estimator: BaseEstimator) -> bool:
    """Whether the estimator's ``sigma`` is the Gaussian k-NN bandwidth relative to r and
    left at its default (a user's fixed sigma is kept)."""
    params = estimator.get_params(deep=False)
    return (
        params.get("affinity") == "knn"
        and "n_neighbors" in params
        and "sigma" in params
        and params["sigma"] is None
    )


def named_candidates(
    specs: Sequence, k: int, precomputed: bool, schedules: Mapping[str, Mapping[str, Any]]
) -> tuple[list[BaseEstimator], list[BaseEstimator]]:
    """Unfitted candidates of ``k`` clusters from ``specs`` (registry names or estimators)
    and those of them given a search schedule.

    A name is built at its defaults (its paper's method, ``guard=None``: the search's folds
    judge it), with ``schedules[name]`` set (a cheaper run inside the search); an estimator
    is cloned as given. With ``precomputed`` every candidate must accept a precomputed
    affinity and is set to one.
    """
    if isinstance(specs, str) or not isinstance(specs, Sequence):
        raise TypeError(
            f"methods must be None or a sequence of method names or estimators, got {specs!r}."
        )
    out, scheduled = [], []
    for spec in specs:
        if isinstance(spec, str):
            est = get_method(spec)(n_clusters=k)
            if "guard" in est.get_params(deep=False):
                est.set_params(guard=None)
            if spec in schedules:
                est.set_params(**schedules[spec])
                scheduled.append(est)
        elif hasattr(spec, "get_params") and hasattr(spec, "fit"):
            est = clone(spec)
        else:
            raise TypeError(f"methods entries must be names or estimators, got {spec!r}.")
        if precomputed:
            if not getattr(type(est), "_supports_precomputed", False) or (
                "affinity" not in est.get_params(deep=False)
            ):
                raise ValueError(
                    f"{type(est).__name__} does not accept a precomputed affinity; "
                    "leave it out of methods or give features."
                )
            est.set_params(affinity="precomputed")
        out.append(est)
    return out, scheduled


def _candidate_estimator(base: BaseEstimator, params: Mapping[str, Any]) -> BaseEstimator:
    """The unfitted estimator of grid point ``params``: its ``"estimator"`` entry (a
    registry name is built with ``base``'s ``n_clusters``) or ``base``, params set."""
    rest = dict(params)
    spec = rest.pop("estimator", base)
    if isinstance(spec, str):
        cls = get_method(spec)
        base_k = base.get_params(deep=False).get("n_clusters")
        est = cls() if base_k is None else cls(n_clusters=base_k)
    elif hasattr(spec, "get_params"):
        est = clone(spec)
    else:
        raise TypeError(
            f"param_grid 'estimator' values must be estimators or method names, got {spec!r}."
        )
    return est.set_params(**rest)


class _SharedGraphs:
    """The neighbour searches and Gaussian graphs of one search's candidates.

    Made at the start of a search's fit and dropped at its end: the graphs do not depend
    on the constraints, so every candidate and fold on the same ``(n_neighbors, sigma)``
    gets the one graph.
    """

    def __init__(self, X: Any, seed: int) -> None:
        self._X = X
        self._n = _n_samples(X)
        self._seed = seed
        self._features: np.ndarray | None = None
        self._knn: dict[int, tuple] = {}
        self._graphs: dict[tuple, Any] = {}

    @property
    def sigma_scales(self) -> dict[int, float]:
        """``{n_neighbors: r}`` of every neighbour search run."""
        return {k: v[2] for k, v in self._knn.items()}

    def release_features(self) -> None:
        """Drop the validated copy of the features (the graphs stay)."""
        self._features = None

    def _neighbors(self, k: int) -> tuple:
        """k-NN search of the features for ``k`` neighbours, run once."""
        if k not in self._knn:
            if self._features is None:
                self._features = check_features(self._X)
            dist, ind = _graph.kneighbors(self._features, k, random_state=self._seed)
            self._knn[k] = (dist, ind, _graph.sigma_from_distances(dist))
        return self._knn[k]

    def prepare(self, estimator: BaseEstimator) -> tuple[BaseEstimator, Any, BaseEstimator]:
        """``(template, data, feature_estimator)`` of one candidate.

        The folds fit clones of ``template`` on ``data``: a shared graph with
        ``affinity="precomputed"`` when the candidate builds the library's k-NN Gaussian
        graph, else the candidate on ``X``. ``feature_estimator`` is the candidate as a
        user would fit it on the features, a relative sigma resolved to its float.
        """
        try:
            return self._prepare(estimator)
        except _INVALID_CANDIDATE:
            return estimator, self._X, estimator

    def _prepare(self, estimator: BaseEstimator) -> tuple[BaseEstimator, Any, BaseEstimator]:
        params = estimator.get_params(deep=False)
        key = shareable_knn_graph(estimator)
        if key is not None:
            n_neighbors, sigma = key
            k = min(int(n_neighbors), self._n - 1)
            dist, ind, r = self._neighbors(k)
            if sigma is None:
                value = r
            elif isinstance(sigma, RelativeSigma):
                value = sigma.resolve(r)
            else:
                value = float(sigma)
            feature_est = clone(estimator)
            if isinstance(sigma, RelativeSigma):
                feature_est.set_params(sigma=value)
            if (k, value) not in self._graphs:
                self._graphs[(k, value)] = _graph.gaussian_knn_graph(dist, ind, value)
            template = clone(feature_est).set_params(affinity="precomputed")
            return template, self._graphs[(k, value)], feature_est
        if isinstance(params.get("sigma"), RelativeSigma) and "n_neighbors" in params:
            k = min(int(params["n_neighbors"]), self._n - 1)
            r = self._neighbors(k)[2]
            estimator = clone(estimator).set_params(sigma=params["sigma"].resolve(r))
        return estimator, self._X, estimator
