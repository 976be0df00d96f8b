"""Labels of every row of a large table, computed on the workers partition by partition
and written as a Parquet dataset beside the input's partitions: whole or not at all."""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from os import PathLike
from pathlib import Path

import numpy as np
import pandas as pd

from ._table import DEFAULT_BLOCK_ROWS, DaskTable, standardise

__all__ = ["label_frame", "write_labels"]


def _predicted(part: pd.DataFrame, model, table_view: tuple, block_rows: int) -> np.ndarray:
    """Labels of one partition by ``model.predict``, in blocks so that a large partition
    never holds more than one block's distances."""
    features, _, center, scale = table_view
    X = part[features].to_numpy()
    if not np.issubdtype(X.dtype, np.floating):
        X = X.astype(np.float64)
    X = standardise(X, center, scale)
    labels = np.empty(len(X), dtype=np.int64)
    for lo in range(0, len(X), block_rows):
        labels[lo : lo + block_rows] = model.predict(X[lo : lo + block_rows])
    return labels


def _label_partition(part: pd.DataFrame, labels, table_view: tuple, start, block_rows):
    """``id,label`` (``row,label`` without IDs) of one partition; ``labels`` are its
    labels, or the model that predicts them."""
    id_column = table_view[1]
    if not isinstance(labels, np.ndarray):
        labels = _predicted(part, labels, table_view, block_rows)
    if id_column is not None:
        names = part[id_column].to_numpy()
        return pd.DataFrame({"id": names, "label": labels})
    rows = np.arange(start, start + len(labels), dtype=np.int64)
    return pd.DataFrame({"row": rows, "label": labels})


def _shared(model):
    """``model`` sent once: scattered to every worker of the active client (no large graph
    to ship), else one delayed object the tasks share."""
    import dask

    try:
        from dask.distributed import get_client

        return get_client().scatter(model, broadcast=True, hash=False)
    except (ImportError, ValueError):  # no client: the threaded scheduler
        return dask.delayed(model, pure=True)


def label_frame(table: DaskTable, model, *, block_rows: int = DEFAULT_BLOCK_ROWS):
    """A lazy dask dataframe of the labels of every row, one partition per partition of
    the table: the labels a :class:`WholeFit` holds on the workers, or those a
    :class:`SampledFit` predicts (its ``for_prediction()`` sent to each worker once)."""
    import dask
    import dask.dataframe as dd

    parts = table.frame.to_delayed()
    known = model.labels_by_partition(table.partition_lengths())
    shared = [_shared(model.for_prediction())] * len(parts) if known is None else known
    key = "id" if table.id_column is not None else "row"
    id_dtype = table.frame.dtypes[table.id_column] if table.id_column is not None else np.int64
    meta = pd.DataFrame({key: pd.Series(dtype=id_dtype), "label": pd.Series(dtype=np.int64)})
    view = (table.features, table.id_column, table.center, table.scale)
    labelled = [
        dask.delayed(_label_partition)(part, labels, view, int(start), block_rows)
        for part, labels, start in zip(parts, shared, table.offsets(), strict=True)
    ]
    return dd.from_delayed(labelled, meta=meta, verify_meta=False)


def write_labels(
    table: DaskTable, model, path: str | PathLike, *, block_rows: int = DEFAULT_BLOCK_ROWS
) -> Path:
    """Write the labels of every row of ``table`` to the Parquet dataset ``path`` (a
    folder, one file per partition of the input; columns ``id,label``, or ``row,label``
    without an ID column).

    The files are written into a hidden folder beside ``path`` and moved into place only
    when every partition is written; on any failure nothing is left behind and an earlier
    ``path`` is kept.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.partial-{uuid.uuid4().hex[:8]}")
    try:
        label_frame(table, model, block_rows=block_rows).to_parquet(str(tmp), write_index=False)
        _move_into_place(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            shutil.rmtree(tmp)
        raise
    return path


def _move_into_place(tmp: Path, path: Path) -> None:
    """``tmp`` becomes ``path``; an earlier ``path`` is removed only once ``tmp`` is there."""
    if not path.exists():
        os.replace(tmp, path)
        return
    old = path.with_name(f".{path.name}.old-{uuid.uuid4().hex[:8]}")
    os.replace(path, old)
    try:
        os.replace(tmp, path)
    except OSError:
        os.replace(old, path)
        raise
    shutil.rmtree(old, ignore_errors=True) if old.is_dir() else old.unlink()
