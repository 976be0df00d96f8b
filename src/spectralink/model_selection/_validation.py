"""One candidate on one fold: fit on the training pairs, score on the held-out ones.

The piece of the search that runs in the workers (scikit-learn's ``fit_and_score``).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from typing import Any

from sklearn.base import clone

from ..constraints import Constraints
from ..parallel import config_context
from ..spectral import shared_eigenvectors
from ._scores import Scorer


def _n_samples(X) -> int:
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    return len(X)


def _seed_if_unset(estimator, seed: int | None):
    if seed is not None:
        params = estimator.get_params(deep=False)
        if "random_state" in params and params["random_state"] is None:
            estimator.set_params(random_state=seed)
    return estimator


def _fit_quietly(
    template,
    data,
    train: Constraints,
    seed: int,
    error_score: str | float,
    eigen_seed: int,
    n_threads_: int | None,
) -> tuple[Any, float, str | None]:
    """A clone of ``template`` fitted on ``data`` and ``train`` on ``n_threads_`` threads:
    ``(estimator, fit_time, None)``, or ``(None, fit_time, error message)``."""
    estimator = _seed_if_unset(clone(template), seed)
    t0 = time.perf_counter()
    try:
        # clear=False: a worker process keeps the eigenvectors for its next tasks (bounded)
        with (
            warnings.catch_warnings(),
            config_context(n_jobs=n_threads_),
            shared_eigenvectors(eigen_seed, clear=False),
        ):
            # degenerate partitions / disconnected graphs are what the score measures
            warnings.simplefilter("ignore")
            estimator.fit(data, constraints=train)
    except Exception as exc:
        if isinstance(error_score, str):  # "raise"
            raise
        return None, time.perf_counter() - t0, f"{type(exc).__name__}: {exc}"
    return estimator, time.perf_counter() - t0, None


def fit_and_score(
    template,
    data,
    train: Constraints,
    test: Constraints,
    seed: int,
    scorers: Sequence[Scorer],
    error_score: str | float,
    eigen_seed: int,
    n_threads_: int | None = None,
) -> tuple[list[float], float, str | None]:
    """Fit a clone of ``template`` on ``data`` and the training pairs, score on the test
    pairs with every scorer of ``scorers`` (a list), on ``n_threads_`` threads. Returns
    ``(scores, fit_time, error message or None)``."""
    est, fit_time, error = _fit_quietly(
        template, data, train, seed, error_score, eigen_seed, n_threads_
    )
    if est is None:
        return [float(error_score)] * len(scorers), fit_time, error
    return [float(scorer(est.labels_, test)) for scorer in scorers], fit_time, None


def fit_once_and_score(
    template,
    data,
    tests: Sequence[Constraints],
    seed: int,
    scorers: Sequence[Scorer],
    error_score: str | float,
    eigen_seed: int,
    n_threads_: int | None = None,
) -> list[tuple[list[float], float, str | None]]:
    """A candidate that ignores the constraints (NCut) fitted once, without pairs, and
    scored on every held-out set of ``tests``: what :func:`fit_and_score` gives on each
    split, the fit's time shared out among them."""
    empty = Constraints(n_samples=tests[0].n_samples)
    est, fit_time, error = _fit_quietly(
        template, data, empty, seed, error_score, eigen_seed, n_threads_
    )
    share = fit_time / len(tests)
    if est is None:
        return [([float(error_score)] * len(scorers), share, error)] * len(tests)
    return [([float(s(est.labels_, test)) for s in scorers], share, None) for test in tests]
