"""Scores of the labels of a large table against known classes, from a contingency table
summed on the workers: only k x k counts reach the client."""

from __future__ import annotations

from os import PathLike

import numpy as np
import pandas as pd

from ..metrics import contingency_scores
from ._table import DaskTable, read_dask_table

__all__ = ["score_labels"]


def score_labels(labels, truth: str | PathLike, key: str = "id") -> dict[str, float]:
    """Error, majority error, ARI and NMI of the dask dataframe ``labels`` (columns
    ``key``, ``label``) against the classes in ``truth`` (a CSV file or Parquet dataset
    with columns ``key`` and ``label``), joined on ``key``; also ``"n_scored"``.

    Rows without a class in ``truth`` (absent or empty) are not scored (``"n_scored"``
    of ``"n_rows"``).
    """
    known: DaskTable = read_dask_table(truth)
    frame = known.frame
    for column in (key, "label"):
        if column not in frame.columns:
            raise ValueError(f"{truth}: the known classes need columns {key},label.")
    right = frame[[key, "label"]].rename(columns={"label": "truth"})
    left = labels
    integer = pd.api.types.is_integer_dtype
    if not (integer(left.dtypes[key]) and integer(right.dtypes[key])):  # join IDs as text
        left = left.assign(**{key: left[key].astype(str)})
        right = right.assign(**{key: right[key].astype(str)})
    joined = left.merge(right, on=key, how="left")
    counts, n_rows = _counts(joined)
    if counts.empty:
        raise ValueError(f"{truth}: no row labelled has a known class in this file.")
    codes_t = {v: t for t, v in enumerate(sorted({a for a, _ in counts.index}, key=str))}
    codes_c = {v: t for t, v in enumerate(sorted({b for _, b in counts.index}))}
    C = np.zeros((len(codes_t), len(codes_c)), dtype=np.int64)
    for (a, b), m in counts.items():
        C[codes_t[a], codes_c[b]] += int(m)
    out = contingency_scores(C)
    out["n_scored"] = int(C.sum())
    out["n_rows"] = n_rows
    return out


def _counts(joined):
    """Counts per (class, cluster) of the rows with a class, and the number of rows."""
    import dask

    scored = joined[~joined["truth"].isna()]
    counts, n_rows = dask.compute(scored.groupby(["truth", "label"]).size(), joined["label"].size)
    return counts, int(n_rows)
