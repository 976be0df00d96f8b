"""Which route takes a method to a large table: the landmark methods fit on every row on
the workers; every other method (and ``Auto``) fits on a sample and labels the rest."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, clone

from ..catalog import describe as describe_method
from ..registry import method_name, table
from ._pairs import RowPairs
from ._sample import DEFAULT_SAMPLE_SIZE, SampledFit

__all__ = ["WholeFit", "fit_at_scale", "route_of"]


def route_of(estimator) -> str:
    """``"whole"`` for a method that runs block by block on Dask (SCACS, LSC-R), else
    ``"sample"``."""
    name = method_name(estimator)
    if name in table() and describe_method(name).dask:
        return "whole"
    return "sample"


class WholeFit(BaseEstimator):
    """A landmark method fitted on every row of a dask array: the landmark code, degrees
    and ``Z Z^T`` computed block by block on the workers.

    Attributes
    ----------
    estimator_ : estimator
        The fitted method.
    model_ : estimator
        Its copy without per-row attributes, which :meth:`predict` uses and the workers
        receive.
    n_rows_ : int
    """

    def __init__(self, estimator):
        self.estimator = estimator

    def fit(self, X, pairs: RowPairs | None = None) -> WholeFit:
        n = int(X.shape[0])
        est = clone(self.estimator)
        cons = pairs.on_all(n) if pairs is not None and len(pairs.constraints) else None
        est.fit(X, constraints=cons)
        self.estimator_ = est
        self.model_ = est.for_prediction()
        self.n_rows_ = n
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        return np.asarray(self.model_.predict(X))

    def labels_by_partition(self, lengths) -> list | None:
        """The fitted labels (on the workers) in blocks of ``lengths`` rows, as delayed
        objects: every row's label without encoding it again (``predict`` on a training
        row gives the same)."""
        import dask

        labels = self.estimator_.labels_
        blocks = labels.to_delayed().ravel()
        bounds = np.concatenate([[0], np.cumsum(labels.chunks[0])])
        out, start = [], 0
        for m in lengths:
            first = int(np.searchsorted(bounds, start, side="right")) - 1
            last = int(np.searchsorted(bounds, start + m, side="left"))
            parts = list(blocks[first:last])
            out.append(dask.delayed(_rows_of)(parts, int(start - bounds[first]), int(m)))
            start += int(m)
        return out

    def describe(self) -> str:
        return (
            f"{type(self.estimator_).__name__} fitted on all {self.n_rows_:,} rows on the "
            "cluster (landmark code, k-means and labels block by block on the workers)"
        )

    def for_prediction(self):
        """The fitted model without its per-row attributes: what the workers receive."""
        return self.model_


def _rows_of(blocks: list, offset: int, m: int) -> np.ndarray:
    """Rows ``offset .. offset + m`` of the blocks laid end to end."""
    if not blocks:
        return np.zeros(0, np.int64)
    return np.concatenate(blocks)[offset : offset + m].astype(np.int64)


def fit_at_scale(
    estimator,
    X,
    pairs: RowPairs | None = None,
    *,
    sample_size: int = DEFAULT_SAMPLE_SIZE,
    random_state=None,
):
    """``estimator`` fitted to the dask array ``X`` by its route (:func:`route_of`); the
    result has ``predict`` (for blocks of rows) and ``describe()``."""
    if route_of(estimator) == "whole":
        return WholeFit(estimator).fit(X, pairs)
    return SampledFit(estimator, sample_size, random_state).fit(X, pairs)
