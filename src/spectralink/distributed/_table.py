"""A table too large for one machine, read lazily with ``dask.dataframe``: its feature
columns, its row IDs, and the few rows that pairs name, found without collecting the table.

A Parquet dataset (a folder of ``.parquet`` files, or a glob) keeps its partitions; a CSV
file is read in row blocks. Row positions are global (the partitions in order), as the
in-core reader numbers them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

import numpy as np
import pandas as pd

from ..exceptions import MissingExtraError, import_extra
from ..preprocessing import SPREAD_FACTOR, spread_ratio

__all__ = ["DaskTable", "read_dask_table"]

#: Rows per block of the feature array: a block and its distances to 1,000 landmarks
#: (float64) stay near 0.5 GB.
DEFAULT_BLOCK_ROWS = 65_536


def _import_dataframe():
    return import_extra("dask", "dask", "--dask"), import_extra("dask.dataframe", "dask", "--dask")


@dataclass
class DaskTable:
    """The features of a partitioned table, lazily.

    Attributes
    ----------
    frame : dask.dataframe.DataFrame
        The table as read (every column).
    features : list of str
        The columns clustered, in order.
    id_column : str or None
        The column naming the rows, if any.
    notes : list of str
        What was left out and why, for the user.
    """

    frame: object
    features: list[str]
    id_column: str | None = None
    notes: list[str] = field(default_factory=list)
    center: np.ndarray | None = None
    scale: np.ndarray | None = None
    _lengths: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_partitions(self) -> int:
        return int(self.frame.npartitions)

    def partition_lengths(self) -> np.ndarray:
        """Rows of every partition (one pass over one column, computed once)."""
        if self._lengths is None:
            column = self.frame[self.id_column or self.features[0]]
            self._lengths = np.asarray(column.map_partitions(len).compute(), dtype=np.int64)
        return self._lengths

    @property
    def n_rows(self) -> int:
        return int(self.partition_lengths().sum())

    def offsets(self) -> np.ndarray:
        """Global position of the first row of every partition."""
        lengths = self.partition_lengths()
        return np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)

    def features_array(self, block_rows: int = DEFAULT_BLOCK_ROWS):
        """The feature columns as a dask array of float rows, in blocks of at most
        ``block_rows`` rows (whole rows per block)."""
        X = self.frame[self.features].to_dask_array(lengths=list(self.partition_lengths()))
        if max(X.chunks[0], default=0) > block_rows:
            X = X.rechunk({0: block_rows, 1: -1})
        if not np.issubdtype(X.dtype, np.floating):
            X = X.astype(np.float64)
        if self.center is not None:
            X = X.map_blocks(standardise, self.center, self.scale, dtype=X.dtype)
        return X

    def standardise(self, scale: str) -> tuple[str, float]:
        """Scale the features as ``--scale`` says (``"auto"``, ``"standard"`` or ``"none"``)
        from the columns' means and standard deviations, one pass on the workers; returns
        the scaler used and the columns' spread ratio
        (:func:`~spectralink.preprocessing.spread_ratio`)."""
        if scale not in ("auto", "standard", "none"):
            raise ValueError(
                f"scale {scale!r} needs the columns' quantiles; at scale use auto, standard "
                "or none."
            )
        dask, _ = _import_dataframe()
        X = self.features_array()
        mean, sq = dask.compute(
            X.mean(axis=0, dtype=np.float64), (X.astype(np.float64) ** 2).mean(axis=0)
        )
        std = np.sqrt(np.maximum(sq - mean**2, 0.0))
        ratio = spread_ratio(std)
        used = scale if scale != "auto" else ("standard" if ratio > SPREAD_FACTOR else "none")
        if used == "standard":
            self.center = mean.astype(X.dtype)
            self.scale = np.where(std > 0, std, 1.0).astype(X.dtype)
        return used, ratio

    def find_ids(self, ids: Collection[str]) -> dict[str, int]:
        """Global row position of each ID in ``ids`` that names a row, from one pass over
        the ID column on the workers; only the rows found travel back.

        Raises
        ------
        ValueError
            When an ID in ``ids`` names more than one row.
        """
        if self.id_column is None:
            raise ValueError("rows are named by ID only when the table has an ID column.")
        dask, _ = _import_dataframe()
        wanted = frozenset(str(v) for v in ids)
        parts = self.frame[self.id_column].to_delayed()
        found = dask.compute(
            *[
                dask.delayed(_rows_named)(part, wanted, int(start))
                for part, start in zip(parts, self.offsets(), strict=True)
            ]
        )
        out: dict[str, int] = {}
        for names, rows in found:
            for name, row in zip(names, rows, strict=True):
                if name in out:
                    raise ValueError(
                        f"the ID {name!r} names more than one row (rows {out[name]} and {row}); "
                        "pairs name rows by ID, so those IDs must be distinct."
                    )
                out[name] = int(row)
        return out


def standardise(X: np.ndarray, center: np.ndarray | None, scale: np.ndarray | None):
    """``(X - center) / scale`` of one block (as given when ``center`` is None)."""
    return X if center is None else (X - center) / scale


def _rows_named(ids: pd.Series, wanted: frozenset, start: int) -> tuple[list, np.ndarray]:
    """The IDs of one partition that are in ``wanted``, and their global positions (a hash
    lookup; integer IDs are compared as integers, without turning the column to text)."""
    if pd.api.types.is_integer_dtype(ids.dtype):
        numbers = {int(v) for v in wanted if v.lstrip("-").isdigit() and str(int(v)) == v}
        hit = np.flatnonzero(ids.isin(numbers).to_numpy())
    else:
        hit = np.flatnonzero(ids.astype(str).isin(wanted).to_numpy())
    return [str(v) for v in ids.iloc[hit]], hit + start


def _open_frame(path: str, dd, blocksize: str):
    """A Parquet dataset (folder, file or glob) or a CSV file as a dask dataframe."""
    suffix = Path(path.rstrip("/*")).suffix.lower()
    is_csv = suffix in (".csv", ".txt", ".tsv")
    if not is_csv and not any(c in path for c in "*?[") and not Path(path).exists():
        raise FileNotFoundError(f"{path}: no such file or folder.")
    try:
        if is_csv:
            sep = "\t" if suffix == ".tsv" else ","
            return dd.read_csv(path, blocksize=blocksize, sep=sep)
        return dd.read_parquet(path)
    except ImportError:
        raise MissingExtraError(
            f"{path}: reading Parquet needs pyarrow: pip install 'spectralink[dask]'."
        ) from None
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{path}: cannot be read as a table ({first}).") from None


def _pick(frame, names: Sequence[str], what: str, path: str) -> list[str]:
    missing = [c for c in names if c not in frame.columns]
    if missing:
        shown = ", ".join(map(str, frame.columns[:12]))
        more = ", ..." if len(frame.columns) > 12 else ""
        raise ValueError(
            f"{path}: no column {missing[0]!r} ({what}); the columns are {shown}{more}."
        )
    return list(names)


def read_dask_table(
    path: str | PathLike,
    *,
    id_column: str | None = None,
    columns: Sequence[str] | None = None,
    drop: Sequence[str] = (),
    blocksize: str = "64MB",
) -> DaskTable:
    """A Parquet dataset or a CSV file as a :class:`DaskTable`, nothing read but metadata.

    The features are ``columns`` when given (each must be numeric), else every numeric
    column other than ``id_column`` and ``drop``; other columns are left out with a note.
    """
    _, dd = _import_dataframe()
    path = str(path)
    frame = _open_frame(path, dd, blocksize)
    frame.columns = [str(c) for c in frame.columns]
    if id_column is not None:
        _pick(frame, [id_column], "the ID column", path)
    left = set(_pick(frame, list(drop), "a column to drop", path)) | {id_column}
    numeric = {c for c, t in frame.dtypes.items() if pd.api.types.is_numeric_dtype(t)}
    numeric -= {c for c, t in frame.dtypes.items() if pd.api.types.is_bool_dtype(t)}
    notes = []
    if columns is not None:
        features = _pick(frame, list(columns), "a feature column", path)
        text = [c for c in features if c not in numeric]
        if text:
            raise ValueError(
                f"{path}: column {text[0]!r} is not numeric; at scale only numeric columns are "
                "clustered (encode it first, or leave it out)."
            )
    else:
        features = [c for c in frame.columns if c in numeric and c not in left]
        other = [c for c in frame.columns if c not in numeric and c not in left]
        if other:
            notes.append(
                f"{len(other)} non-numeric column(s) left out: {', '.join(other[:6])}"
                f"{', ...' if len(other) > 6 else ''}"
            )
    if not features:
        raise ValueError(f"{path}: no numeric column is left to cluster.")
    notes.append(
        f"{len(features)} feature column(s): {', '.join(features[:8])}"
        f"{', ...' if len(features) > 8 else ''}"
        + (f"; IDs from {id_column!r}" if id_column else "")
    )
    return DaskTable(frame, features, id_column, notes)
