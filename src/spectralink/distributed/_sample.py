"""Every method at scale by a sample: fit on every constrained row plus a uniform draw of
the others, gathered to the client; then label every row with ``predict``, block by block
on the workers (:func:`spectralink.distributed.write_labels`)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, clone
from sklearn.utils import check_random_state

from ._pairs import RowPairs

__all__ = ["DEFAULT_SAMPLE_SIZE", "SampledFit", "gather_rows", "sample_rows"]

#: Rows a sample fit draws besides the constrained ones; see docs/distributed.md for the
#: agreement with the fit on all the rows that sets it.
DEFAULT_SAMPLE_SIZE = 20_000


def sample_rows(n_rows: int, constrained: np.ndarray, size: int, random_state=None) -> np.ndarray:
    """The constrained rows first (in their order), then ``size`` others drawn uniformly
    without replacement (all of them when fewer are left)."""
    # a Generator draws k of n without an n-sized permutation
    rng = np.random.default_rng(check_random_state(random_state).randint(2**31))
    constrained = np.asarray(constrained, dtype=np.int64)
    others = n_rows - len(constrained)
    size = min(int(size), others)
    # draw positions among the unconstrained rows without an n-sized array: draw among
    # 0..others-1 then step over the constrained rows below each draw
    drawn = np.sort(rng.choice(others, size=size, replace=False)) if size else np.zeros(0, int)
    shift = np.searchsorted(np.sort(constrained) - np.arange(len(constrained)), drawn, "right")
    return np.concatenate([constrained, drawn + shift]).astype(np.int64)


def gather_rows(X, rows: ArrayLike) -> np.ndarray:
    """Rows ``rows`` of a row-blocked dask array, in that order, as one NumPy array: one
    task per block that holds some of them."""
    import dask

    rows = np.asarray(rows, dtype=np.int64)
    bounds = np.concatenate([[0], np.cumsum(X.chunks[0])])
    block = np.searchsorted(bounds, rows, side="right") - 1
    order = np.argsort(block, kind="stable")
    blocks = X.to_delayed().ravel()
    parts = []
    for b in np.unique(block):
        local = rows[order][block[order] == b] - bounds[b]
        parts.append(dask.delayed(np.take)(blocks[b], local, axis=0))
    taken = np.concatenate(dask.compute(*parts)) if parts else np.zeros((0, X.shape[1]))
    out = np.empty_like(taken)
    out[order] = taken
    return out


class SampledFit(BaseEstimator):
    """A method fitted on a sample of a table too large to fit whole.

    The sample is every row a pair names plus ``sample_size`` rows drawn uniformly from
    the others; the method is fitted on it with the pairs, and :meth:`predict` labels any
    rows (every row of the table, block by block on the workers) with the fitted method's
    ``predict``.

    Parameters
    ----------
    estimator : estimator
        Any spectralink method with ``predict`` (or ``Auto``), unfitted.
    sample_size : int, default=20000
        Rows drawn besides the constrained ones.
    random_state : int, RandomState or None, default=None
        The draw.

    Attributes
    ----------
    estimator_ : estimator
        The method fitted on the sample.
    sample_rows_ : ndarray of int
        Global positions of the rows fitted (constrained first).
    n_rows_ : int
        Rows of the whole table.
    n_constrained_ : int
        Rows of the sample that pairs name.
    """

    def __init__(self, estimator, sample_size: int = DEFAULT_SAMPLE_SIZE, random_state=None):
        self.estimator = estimator
        self.sample_size = sample_size
        self.random_state = random_state

    def fit(self, X, pairs: RowPairs | None = None) -> SampledFit:
        """Fit ``estimator`` on the sample of the dask array ``X`` (rows in blocks)."""
        if not isinstance(self.sample_size, (int, np.integer)) or self.sample_size < 1:
            raise ValueError(f"sample_size must be a positive integer, got {self.sample_size!r}.")
        n = int(X.shape[0])
        constrained = pairs.rows if pairs is not None else np.zeros(0, np.int64)
        rows = sample_rows(n, constrained, self.sample_size, self.random_state)
        Xs = gather_rows(X, rows)
        est = clone(self.estimator)
        if pairs is not None and len(pairs.constraints):
            est.fit(Xs, constraints=_on_sample(pairs.constraints, len(rows)))
        else:
            est.fit(Xs)
        self.estimator_ = est
        self.sample_rows_ = rows
        self.n_rows_ = n
        self.n_constrained_ = len(constrained)
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Labels of the rows ``X`` (NumPy) by the method fitted on the sample."""
        return np.asarray(self.estimator_.predict(X))

    def labels_by_partition(self, lengths) -> None:
        """None: the rows are labelled by :meth:`predict` (only the sample was fitted)."""
        return None

    def for_prediction(self) -> SampledFit:
        """What the workers receive to label rows: this object (its method was fitted on
        the sample, so it holds nothing of the table's size)."""
        return self

    def describe(self) -> str:
        """What was fitted on what: the method, the sample, and how the rest is labelled."""
        inner = self.estimator_.describe() if hasattr(self.estimator_, "describe") else ""
        drawn = len(self.sample_rows_) - self.n_constrained_
        text = (
            f"{type(self.estimator_).__name__} fitted on a sample of {len(self.sample_rows_):,} "
            f"of {self.n_rows_:,} rows ({self.n_constrained_:,} named by pairs, {drawn:,} drawn "
            "uniformly from the rest); every row labelled by its predict"
        )
        return f"{text}; {inner}" if inner else text


def _on_sample(c, n: int):
    """The pairs over ``n`` sample rows (the constrained ones are its first rows)."""
    from ..constraints import Constraints

    return Constraints(
        c.must_link if len(c.must_link) else None,
        c.cannot_link if len(c.cannot_link) else None,
        n_samples=n,
        weights=np.concatenate([c.ml_weights, c.cl_weights]),
    )
