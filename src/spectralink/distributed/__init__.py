"""Beyond one machine: a table read with ``dask.dataframe``, any method fitted by its route
(the landmark methods on every row, the others on a sample), every row labelled on the
workers, the labels written as a Parquet dataset. ``spectralink cluster --dask`` wires
these together; see ``docs/distributed.md``.

Needs the ``dask`` extra (``pip install 'spectralink[dask]'``).
"""

from ._cluster import WorkerMemory, connect, parse_address
from ._fit import WholeFit, fit_at_scale, route_of
from ._labels import label_frame, write_labels
from ._pairs import RowPairs, ids_named, read_row_pairs
from ._sample import DEFAULT_SAMPLE_SIZE, SampledFit, gather_rows, sample_rows
from ._scores import score_labels
from ._table import DEFAULT_BLOCK_ROWS, DaskTable, read_dask_table

__all__ = [
    "DEFAULT_BLOCK_ROWS",
    "DEFAULT_SAMPLE_SIZE",
    "DaskTable",
    "RowPairs",
    "SampledFit",
    "WholeFit",
    "WorkerMemory",
    "connect",
    "fit_at_scale",
    "gather_rows",
    "ids_named",
    "label_frame",
    "parse_address",
    "read_dask_table",
    "read_row_pairs",
    "route_of",
    "sample_rows",
    "score_labels",
    "write_labels",
]
