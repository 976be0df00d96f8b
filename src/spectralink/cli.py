"""The ``spectralink`` command: ``cluster``, ``compare``, ``query``, ``methods``, ``datasets``.

``spectralink cluster DATA -k K --method NAME``  cluster a .csv/.npy/.npz feature file
``spectralink compare``                          the papers' protocol on a dataset or labelled file
``spectralink query DATA -k K -o ASK.csv``       the next pairs to ask a person
``spectralink methods [NAME]``                   the methods' capabilities, or NAME's parameters
``spectralink datasets``                         the dataset names and where files are read

User mistakes (missing file, bad CSV, unknown method or dataset, invalid parameter,
inconsistent constraints) end with one ``spectralink: error: ...`` line on stderr and a
non-zero exit status; ``--debug`` shows the full traceback instead.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import csv
import inspect
import os
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np

from . import __version__

__all__ = ["encode_labels", "main", "read_labels", "read_matrix"]

_BASELINES = ("ncut", "sl", "copkmeans")
DEFAULT_DATASET = "iris"
#: Default counts per protocol: random pairs, or labelled points (all pairs among them).
DEFAULT_CONSTRAINTS = {"pairs": (0, 50, 100, 200, 400, 800), "labeled": (0, 5, 10, 20, 30, 40)}
DEFAULT_TRIALS = 10
#: (n, d, k) of the sets bundled with scikit-learn, for ``spectralink datasets``.
_BUNDLED_SHAPES = {
    "iris": (150, 4, 3),
    "wine": (178, 13, 3),
    "breast_cancer": (569, 30, 2),
    "digits": (1797, 64, 10),
}


# --------------------------------------------------------------------------- parsing
class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: a subcommand without --debug keeps the value given before it
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show full tracebacks instead of one-line errors",
    )

    parser = _Parser(
        prog="spectralink",
        description="Constrained spectral clustering with must-link and cannot-link pairs.",
    )
    parser.add_argument("--version", action="version", version=f"spectralink {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show full tracebacks instead of one-line errors"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "cluster",
        parents=[common],
        help="cluster a feature file under pairwise constraints",
        description="Cluster the rows of DATA and write one label per line to OUTPUT.",
    )
    p.add_argument(
        "data", metavar="DATA", help="features: .csv (optional header), .parquet, .npy or .npz"
    )
    p.add_argument(
        "-k",
        "--n-clusters",
        type=int,
        required=True,
        metavar="K",
        dest="k",
        help="number of clusters",
    )
    p.add_argument("-m", "--method", default="ncut", help="method name, or 'auto' (default: ncut)")
    _add_table_options(p, ids="written beside the labels (header 'id,label')")
    p.add_argument(
        "-c",
        "--constraints",
        metavar="PAIRS_CSV",
        help="CSV with columns i,j,kind[,weight]; kind ml/cl; i,j 0-based row indices, or "
        "row IDs with --id-column",
    )
    p.add_argument(
        "-y",
        "--labels",
        metavar="LABELS",
        help="true labels (one per line, .csv or .npy) to print the scores",
    )
    p.add_argument(
        "--labeled",
        metavar="Y_PARTIAL",
        help="labels known for some rows (one per line; negative or empty: unlabelled): "
        "all pairs among the labelled rows become constraints, and with --labels only the "
        "other rows are scored",
    )
    p.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="method parameter, repeatable (e.g. --param n_neighbors=10)",
    )
    p.add_argument(
        "--plot",
        metavar="FILE.png",
        help="draw the clustering in 2-d (the fitted spectral embedding's first two "
        "nontrivial coordinates, else PCA of DATA), must-links solid, cannot-links dashed",
    )
    p.add_argument("--random-state", type=int, default=0, metavar="S", help="seed (default: 0)")
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print every stage with its time on stderr (progress bars for long stages)",
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUTPUT",
        help="where to write the labels (CSV, one per line, header 'label'; "
        "'id,label' with --id-column)",
    )
    p.set_defaults(func=_cmd_cluster)

    p = sub.add_parser(
        "compare",
        parents=[common],
        help="run the papers' protocol: methods x constraint counts x trials",
        description="Draw constraint sets from the ground truth of a dataset (or of --data "
        "FILE), run every method on the same draws, print mean ± std, and save runs (CSV, "
        "JSON), a Markdown summary and a PNG curve into --out. Each run is recorded as it "
        "finishes; after an interruption, the same command with --resume does the rest.",
    )
    source = p.add_mutually_exclusive_group()
    source.add_argument(
        "-d",
        "--dataset",
        default=None,
        help=f"dataset name (default: {DEFAULT_DATASET}; see 'spectralink datasets')",
    )
    source.add_argument(
        "--data",
        metavar="FILE",
        default=None,
        help="your own data instead of a dataset: a .csv/.tsv/.txt table with a label "
        "column (--label-column), or an .npz file with arrays X and y",
    )
    p.add_argument(
        "--label-column",
        metavar="COL",
        default=None,
        help="column of the --data table (name or 1-based position) holding the classes; "
        "not a feature",
    )
    _add_table_options(p, table="the --data table")
    p.add_argument(
        "-m",
        "--methods",
        default=None,
        help="comma-separated method names (default: the available baselines "
        f"among {','.join(_BASELINES)})",
    )
    p.add_argument(
        "-c",
        "--constraints",
        default=None,
        metavar="C1,C2,...",
        help="constraint counts: pairs, or labelled points with --protocol labeled (default: "
        + " with pairs, ".join(",".join(map(str, c)) for c in DEFAULT_CONSTRAINTS.values())
        + " with labeled)",
    )
    p.add_argument(
        "-t",
        "--trials",
        type=int,
        default=DEFAULT_TRIALS,
        help="constraint draws per count (default: %(default)s)",
    )
    p.add_argument(
        "--protocol",
        choices=("pairs", "labeled"),
        default="pairs",
        help="'pairs': random labelled pairs; 'labeled': all pairs among that "
        "many labelled points (default: pairs)",
    )
    p.add_argument(
        "--metric",
        default="error",
        choices=("error", "majority_error", "ari", "nmi", "violated", "ncut", "time_s"),
        help="metric of the printed table and the plot (default: error)",
    )
    p.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="[METHOD.]KEY=VALUE",
        help="method parameter, repeatable; without METHOD. it applies to every method that has it",
    )
    p.add_argument(
        "-o",
        "--out",
        default="spectralink-results",
        metavar="DIR",
        help="output directory (default: %(default)s)",
    )
    p.add_argument(
        "--data-dir",
        default=None,
        metavar="DIR",
        help="directory of <name>.npz files (default: $SPECTRALINK_DATA)",
    )
    p.add_argument(
        "--random-state", type=int, default=0, metavar="S", help="base seed (default: 0)"
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep the runs already recorded in --out (<dataset>_runs.jsonl, written as "
        "each run finishes) and do only the missing ones; refused when they were run "
        "with other data, protocol, seed or parameters",
    )
    p.add_argument(
        "--log-x",
        action="store_true",
        help="logarithmic x axis in the plot (symmetric-log when a count is 0)",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser(
        "query",
        parents=[common],
        help="choose the next pairs to ask a person (active selection)",
        description="Choose the pairs of rows of DATA whose answers help the clustering "
        "most, and write them to OUTPUT with an empty 'kind' column to fill with ml/cl "
        "(or, with --interactive, ask them in the terminal and save the answers).",
    )
    p.add_argument(
        "data", metavar="DATA", help="features: .csv (optional header), .parquet, .npy or .npz"
    )
    p.add_argument(
        "-k",
        "--n-clusters",
        type=int,
        required=True,
        metavar="K",
        dest="k",
        help="number of clusters",
    )
    _add_table_options(p, ids="naming the rows in OUTPUT and in --constraints")
    p.add_argument(
        "-c",
        "--constraints",
        metavar="PAIRS_CSV",
        help="pairs answered so far (i,j,kind[,weight]); rows with an empty kind are skipped",
    )
    p.add_argument(
        "-m",
        "--method",
        default=None,
        help="method whose partition guides the strategies that read one (default: NCut "
        "of the selector's own graph)",
    )
    p.add_argument(
        "-s",
        "--strategy",
        default="auto",
        help="random, ffqs, minmax, npu, spectral or auto (default: auto)",
    )
    p.add_argument(
        "-n",
        "--n-pairs",
        type=int,
        default=20,
        metavar="N",
        help="pairs to write, or questions to ask with --interactive (default: 20)",
    )
    p.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="parameter of --method, repeatable",
    )
    p.add_argument("--random-state", type=int, default=0, metavar="S", help="seed (default: 0)")
    p.add_argument(
        "-i",
        "--interactive",
        action="store_true",
        help="ask in the terminal pair by pair; OUTPUT then receives the known pairs and "
        "every answer, rewritten after each one",
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUTPUT",
        help="CSV of pairs to answer (i,j,kind), or of answers with --interactive",
    )
    p.set_defaults(func=_cmd_query)

    p = sub.add_parser(
        "methods",
        parents=[common],
        help="list the methods and what each can do, or one method's parameters",
        description="Without NAME: every method with its capabilities (k = 2 only, "
        "constraints, largest n, predict, Dask). With NAME: that method's parameters, "
        "their defaults and meanings.",
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="a method name (see the list)")
    p.set_defaults(func=_cmd_methods)

    p = sub.add_parser(
        "datasets",
        parents=[common],
        help="list dataset names and the data directory",
        description="List the dataset names, whether each can be loaded, and the "
        "directory <name>.npz files are read from.",
    )
    p.add_argument(
        "--data-dir",
        default=None,
        metavar="DIR",
        help="directory of <name>.npz files (default: $SPECTRALINK_DATA)",
    )
    p.set_defaults(func=_cmd_datasets)
    return parser


def _add_table_options(
    p: argparse.ArgumentParser, *, table: str = "DATA", ids: str | None = None
) -> None:
    """The options that say how to read a text ``table``; ``--id-column`` when ``ids`` says
    what the IDs are for."""
    p.add_argument(
        "--header",
        choices=("auto", "yes", "no"),
        default="auto",
        help=f"whether the first line of {table} (text) names the columns; 'auto': when a "
        "cell is not a number or the line is exactly 0,1,...,d-1 (default: auto)",
    )
    p.add_argument(
        "--columns",
        metavar="COLS",
        help=f"comma-separated feature columns of {table}, by name or 1-based position",
    )
    p.add_argument(
        "--drop",
        metavar="COLS",
        help=f"comma-separated columns of {table} to leave out, by name or 1-based position",
    )
    if ids is not None:
        p.add_argument(
            "--id-column",
            metavar="COL",
            help=f"column of {table} (name or 1-based position) holding row IDs: not a "
            f"feature, {ids}",
        )


def _read_table_args(args) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """``(X, y of an .npz, ids)`` of ``args.data`` read with the table options; notes on
    stderr."""
    X, y, table = _read_features(
        args.data,
        header=args.header,
        columns=args.columns,
        drop=args.drop,
        id_column=args.id_column,
    )
    for note in table.notes if table is not None else ():
        print(f"spectralink: note: {note}", file=sys.stderr)
    return X, y, (table.ids if table is not None else None)


def _parse_value(text: str):
    low = text.strip().lower()
    if low in ("none", "null"):
        return None
    if low in ("true", "false"):
        return low == "true"
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _parse_params(items: list[str], *, allow_prefix: bool) -> dict[str | None, dict]:
    """``["sl.n_neighbors=10", "sigma=2"]`` -> ``{"sl": {...}, None: {"sigma": 2}}``."""
    out: dict[str | None, dict] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"--param {item!r} must look like KEY=VALUE.")
        method = None
        if allow_prefix and "." in key:
            method, key = key.split(".", 1)
            method = method.lower()
        if not key.isidentifier():
            raise ValueError(f"--param {item!r}: {key!r} is not a parameter name.")
        out.setdefault(method, {})[key] = _parse_value(value)
    return out


def _method_params(name: str) -> set[str]:
    from .registry import get_method

    cls = get_method(name)
    return set(cls._get_param_names())


def _check_method_params(name: str, params: dict) -> None:
    allowed = _method_params(name)
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ValueError(
            f"method {name!r} has no parameter {unknown[0]!r}; its parameters are "
            f"{', '.join(sorted(allowed))}."
        )


def _parse_counts(text: str) -> list[int]:
    counts = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            c = int(part)
        except ValueError:
            raise ValueError(f"--constraints {text!r}: {part!r} is not an integer count.") from None
        if c < 0:
            raise ValueError(f"--constraints {text!r}: counts must be >= 0, got {c}.")
        counts.append(c)
    if not counts:
        raise ValueError("--constraints is empty; give counts such as 0,50,100.")
    return sorted(dict.fromkeys(counts))


# --------------------------------------------------------------------------- file input
def _csv_delimiter(path: Path) -> str | None:
    """Field separator by extension; ``None`` (any whitespace) for ``.txt``."""
    return {".csv": ",", ".tsv": "\t"}.get(path.suffix.lower())


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_matrix(
    path: str | os.PathLike,
    *,
    header: str = "auto",
    columns: str | None = None,
    drop: str | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Features from ``.csv``/``.tsv``/``.txt`` (optional header), ``.parquet``, ``.npy``
    or ``.npz``.

    Returns ``(X, y)``; ``y`` is the ``y`` array of an ``.npz`` file, else ``None``.
    ``header``, ``columns`` and ``drop`` apply to text tables, see
    :func:`spectralink.io.read_text_table` (a pandas index column is dropped);
    ``columns`` and ``drop`` also to Parquet files
    (:func:`spectralink.io.read_parquet_table`, which needs ``spectralink[parquet]``).
    """
    X, y, _ = _read_features(path, header=header, columns=columns, drop=drop)
    return X, y


def _read_features(path, *, header="auto", columns=None, drop=None, id_column=None):
    """``(X, y, table)``; ``table`` is the :class:`spectralink.io.Table` of a text file."""
    from .io import PARQUET_SUFFIXES, read_parquet_table, read_text_table

    path = Path(path)
    suffix = path.suffix.lower()
    if not path.is_file():
        raise FileNotFoundError(2, "no such file", str(path))
    y = table = None
    if suffix in (".npy", ".npz"):
        given = [
            opt
            for opt, v in (("--columns", columns), ("--drop", drop), ("--id-column", id_column))
            if v is not None
        ]
        if given:
            raise ValueError(
                f"{given[0]} applies to text tables (.csv, .tsv, .txt) and Parquet files, "
                f"not {path}."
            )
    if suffix == ".npy":
        X = _load_npy(path)
    elif suffix == ".npz":
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files if k in ("X", "y")}
                found = sorted(data.files)
        except (OSError, EOFError, ValueError, AttributeError, zipfile.BadZipFile) as exc:
            raise ValueError(f"{path}: not a readable .npz file ({exc})") from None
        if "X" not in arrays:
            raise ValueError(
                f"{path}: an .npz file must hold an array 'X' "
                f"(found {', '.join(found) or 'nothing'})."
            )
        X, y = arrays["X"], arrays.get("y")
    elif suffix in PARQUET_SUFFIXES:
        if header != "auto":
            raise ValueError(f"--header applies to text tables, not {path}.")
        table = read_parquet_table(path, columns=columns, drop=drop, id_column=id_column)
        X = table.X
    elif suffix in (".csv", ".tsv", ".txt"):
        table = read_text_table(
            path,
            _csv_delimiter(path),
            header=header,
            columns=columns,
            drop=drop,
            id_column=id_column,
        )
        X = table.X
    else:
        raise ValueError(
            f"{path}: unsupported data format {suffix or '(none)'!r}; "
            "use .csv, .tsv, .txt, .parquet, .npy or .npz."
        )
    if X.ndim == 1:
        X = X.reshape(-1, 1)
    if X.ndim != 2:
        raise ValueError(f"{path}: expected a 2-d table of features, got shape {X.shape}.")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{path}: holds no data rows.")
    if not np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.complexfloating):
        raise ValueError(f"{path}: features must be real numbers, got dtype {X.dtype}.")
    if not np.all(np.isfinite(X)):
        r, c = np.argwhere(~np.isfinite(X))[0]
        raise ValueError(
            f"{path}: non-finite value {X[r, c]} at row index {r}, column index {c} (0-based)."
        )
    return X.astype(np.float64, copy=False), y, table


def _load_npy(path: Path) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, EOFError) as exc:
        raise ValueError(f"{path}: not a readable .npy file ({exc}).") from None
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


#: first lines taken as a column name above labels that are themselves names
_LABEL_HEADERS = {"label", "labels", "y", "class", "classes", "target", "cluster", "truth"}


def read_labels(
    path: str | os.PathLike, n_samples: int | None = None, *, return_names: bool = False
):
    """One label per line from ``.csv``/``.txt`` (optional header), a 1-d ``.npy``, or a
    Parquet file's label column (its only column, or the one named like a label; needs the
    ``parquet`` extra).

    Integer labels stay integers; other labels are kept as strings. An empty cell (a
    blank line between labels, or ``nan``) means unlabelled: it becomes ``-1`` among
    integer labels and ``""`` among string labels, which
    :meth:`Constraints.from_labels` and :meth:`Constraints.from_labeled_subset` skip.

    The first line is a header when it is not a number and the next is; when the file
    has exactly ``n_samples + 1`` lines; or when it is a usual column name (``label``,
    ``class``, ``y``, ...) found nowhere else in the file.

    With ``return_names=True`` returns ``(codes, names)``: integer codes ``0..c-1``
    indexing ``names`` (the distinct labels, sorted), and ``-1`` for unlabelled rows
    (see :func:`encode_labels`).
    """
    from .io import PARQUET_SUFFIXES

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(2, "no such file", str(path))
    if path.suffix.lower() == ".npy":
        y = np.asarray(_load_npy(path))
        if y.ndim == 2 and 1 in y.shape:
            y = y.ravel()
        if y.ndim != 1:
            raise ValueError(f"{path}: labels must be a 1-d array, got shape {y.shape}.")
    elif path.suffix.lower() in PARQUET_SUFFIXES:
        y = _read_parquet_labels(path)
    else:
        values = []
        with open(path, newline="") as fh:
            for lineno, row in enumerate(csv.reader(fh), start=1):
                row = [v.strip() for v in row]
                if row and row[0].startswith("#"):
                    continue
                if len(row) > 1:
                    raise ValueError(
                        f"{path}:{lineno}: expected one label per line, got {len(row)} fields."
                    )
                values.append(row[0] if row else "")
        n_lines = len(values)
        while values and values[-1] == "":  # trailing blank lines are not rows...
            values.pop()
        first, second = (values + ["", ""])[:2]
        if (
            first
            and not _is_number(first)
            and (
                _is_number(second)  # a name above numeric labels
                or (n_samples is not None and len(values) == n_samples + 1)
                or (first.lower() in _LABEL_HEADERS and first not in values[1:])
            )
        ):
            values = values[1:]
            n_lines -= 1
        if n_samples is not None and len(values) < n_samples <= n_lines:
            # ...unless the rows need them: the last rows' labels are empty (unlabelled)
            values += [""] * (n_samples - len(values))
        if not values:
            raise ValueError(f"{path}: holds no labels.")
        y = _labels_from_cells(values)
    if n_samples is not None and len(y) != n_samples:
        raise ValueError(f"{path}: has {len(y)} labels but the data has {n_samples} rows.")
    return encode_labels(y) if return_names else y


def _read_parquet_labels(path: Path) -> np.ndarray:
    """The label column of a Parquet file: its only column, or the one with a usual label
    name (``label``, ``class``, ``y``, ...). Missing values and negative numbers become
    unlabelled (``-1`` among integers, ``""`` among names), as in text files."""
    from .io import _read_parquet_frame

    pd, df = _read_parquet_frame(path)
    names = [str(c) for c in df.columns]
    if len(names) == 1:
        col = df.iloc[:, 0]
    else:
        hits = [j for j, c in enumerate(names) if c.lower() in _LABEL_HEADERS]
        if len(hits) != 1:
            raise ValueError(
                f"{path}: expected one label column, got {len(names)} columns "
                f"({', '.join(names[:6])}{', ...' if len(names) > 6 else ''}) and "
                f"{'no' if not hits else 'more than one'} column named like a label "
                f"({', '.join(sorted(_LABEL_HEADERS))})."
            )
        col = df.iloc[:, hits[0]]
    if len(col) == 0:
        raise ValueError(f"{path}: holds no labels.")
    if pd.api.types.is_bool_dtype(col):
        col = col.astype(int)
    missing = col.isna().to_numpy()
    cells = ["" if m else str(x).strip() for x, m in zip(col, missing, strict=True)]
    return _labels_from_cells(cells)


def _labels_from_cells(values: list[str]) -> np.ndarray:
    """Labels from the text of their cells. Empty, ``nan`` and negative numbers (even among
    names) are unlabelled; integers (``3`` or ``3.0``) when every other cell is one, with
    ``-1`` for unlabelled, else strings with ``""`` for unlabelled."""
    values = [
        "" if v.lower() == "nan" or (_is_number(v) and float(v) < 0) else v for v in values
    ]
    known = [v for v in values if v != ""]
    if known and all(_is_integral(v) for v in known):
        return np.array([int(float(v)) if v else -1 for v in values], dtype=np.int64)
    return np.array(values)


def encode_labels(y) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, names)``: labels as integer codes into ``names``, ``-1`` when unlabelled.

    ``names`` holds the distinct labels (sorted); a negative number, NaN or an empty
    string is unlabelled (the rule of :meth:`Constraints.from_labels`).
    """
    from .constraints import _labeled_mask

    y = np.asarray(y)
    known = _labeled_mask(y)
    names, inverse = np.unique(y[known], return_inverse=True)
    codes = np.full(len(y), -1, dtype=np.int64)
    codes[known] = inverse.ravel()
    return codes, names


def _is_integral(text: str) -> bool:
    """``"3"`` or ``"3.0"`` (pandas writes integer columns holding NaN as floats)."""
    try:
        v = float(text)
    except ValueError:
        return False
    return np.isfinite(v) and v == int(v)


def _check_output_path(path: Path) -> None:
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise FileNotFoundError(2, "output directory does not exist", str(parent))
    if path.is_dir():
        raise IsADirectoryError(21, "output is a directory", str(path))


# --------------------------------------------------------------------------- commands
def _cmd_cluster(args) -> int:
    from .constraints import _labeled_mask
    from .experiments import atomic_write
    from .metrics import (
        adjusted_rand_score,
        clustering_error,
        normalized_mutual_info_score,
        violated_fraction,
    )
    from .registry import get_method

    out = Path(args.output)
    _check_output_path(out)
    if args.plot is not None:
        _check_output_path(Path(args.plot))
        if Path(args.plot).suffix.lower() != ".png":
            raise ValueError(f"--plot {args.plot}: the figure is written as PNG; name it .png.")
    params = _parse_params(args.param, allow_prefix=False).get(None, {})
    cls = get_method(args.method)
    _check_method_params(args.method, params)
    X, y_npz, ids = _read_table_args(args)
    n = X.shape[0]
    y = read_labels(args.labels, n, return_names=True)[0] if args.labels else y_npz
    if y is not None and len(y) != n:
        raise ValueError(f"{args.data}: y has {len(y)} labels but X has {n} rows.")
    cons = _read_answered(args.constraints, n, ids) if args.constraints else None
    given = None  # rows whose label --labeled gives: constrained, so not scored
    if args.labeled:
        cons, given = _labeled_constraints(args.labeled, n, cons)

    est = cls(n_clusters=args.k, **params)
    if "random_state" not in params and "random_state" in est.get_params():
        est.set_params(random_state=args.random_state)
    with _verbose(args.verbose):
        labels = np.asarray(est.fit(X, constraints=cons).labels_)

    with atomic_write(out, "w", newline="") as fh:
        if ids is None:
            fh.write("label\n")
            fh.write("".join(f"{int(v)}\n" for v in labels))
        else:
            writer = csv.writer(fh, lineterminator="\n")  # quotes IDs holding commas
            writer.writerow(["id", "label"])
            writer.writerows(zip(ids, (int(v) for v in labels), strict=True))

    n_found = len(np.unique(labels))
    print(
        f"{args.method}: {n} points, k={args.k} ({n_found} clusters found)"
        + (
            f", {len(cons)} constraints ({cons.n_must_link} must-link, "
            f"{cons.n_cannot_link} cannot-link)"
            if cons is not None
            else ""
        )
    )
    if hasattr(est, "describe"):  # Auto: what the cross-validation chose, and its score
        print(f"  chose      {est.describe()}")
    if y is not None:
        known = _labeled_mask(np.asarray(y))  # unlabelled rows (-1, empty) are not scored
        if given is not None:
            known &= ~given
            print(f"  scored on the {int(known.sum())} of {n} points not labelled by --labeled")
        elif not known.all():
            print(f"  scored on the {int(known.sum())} labelled of {n} points")
        if not known.any():
            raise ValueError("no row is left to score: every row is unlabelled or given.")
        y, scored = np.asarray(y)[known], labels[known]
        error = clustering_error(y, scored)
        print(f"  accuracy   {1 - error:.4f}")
        print(f"  error      {error:.4f}")
        print(f"  ARI        {adjusted_rand_score(y, scored):.4f}")
        print(f"  NMI        {normalized_mutual_info_score(y, scored):.4f}")
    if cons is not None:
        print(f"  violated   {violated_fraction(labels, cons):.4f}")
    print(f"labels written to {out}")
    if args.plot is not None:
        from .plots import embedding_2d, plot_clustering

        coords, axes = embedding_2d(est, X)
        plot_clustering(
            coords,
            labels,
            cons,
            args.plot,
            axis_labels=axes,
            title=f"{Path(args.data).name}: {args.method}, k={args.k}",
        )
        print(f"plot written to {args.plot} ({axes[0].rsplit(' ', 1)[0]} coordinates)")
    return 0


@contextlib.contextmanager
def _verbose(enabled: bool):
    """Stage lines of the ``spectralink`` logger on stderr, and the total, when enabled."""
    if not enabled:
        yield
        return
    import logging
    import time

    from .progress import logger

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("spectralink: %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    t0 = time.perf_counter()
    try:
        yield
        logger.info("%-12s %8.2f s", "total", time.perf_counter() - t0)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _labeled_constraints(path, n: int, cons):
    """All pairs among the rows ``path`` labels (joined with ``cons``), and those rows."""
    from .constraints import Constraints

    codes, names = read_labels(path, n, return_names=True)
    given = codes >= 0
    m = int(given.sum())
    if m < 2:
        raise ValueError(f"{path}: {m} labelled row(s); pairs need at least 2.")
    pairs = Constraints.from_labeled_subset(codes, m)
    print(
        f"spectralink: note: {path}: {m} labelled rows in {len(names)} classes "
        f"({', '.join(map(str, names[:10]))}{', ...' if len(names) > 10 else ''}): "
        f"{pairs.n_must_link} must-links, {pairs.n_cannot_link} cannot-links",
        file=sys.stderr,
    )
    if cons is not None:
        pairs = Constraints(
            np.vstack([cons.must_link, pairs.must_link]),
            np.vstack([cons.cannot_link, pairs.cannot_link]),
            n_samples=n,
            weights=np.concatenate(
                [cons.ml_weights, pairs.ml_weights, cons.cl_weights, pairs.cl_weights]
            ),
        )
    return pairs, given


def _read_answered(path, n: int, ids=None):
    """Constraints from a file in which some rows may still lack an answer; with
    ``ids``, the file names rows by ID."""
    from .constraints import Constraints

    try:
        cons = Constraints.from_csv(path, n, skip_unanswered=True, ids=ids)
    except ValueError as exc:
        if ids is not None and "IDs must be distinct" in str(exc):
            raise ValueError(f"--id-column: {exc}") from None
        raise
    if cons.n_unanswered:
        print(
            f"spectralink: note: {path}: {cons.n_unanswered} row(s) without a kind "
            "(not answered) skipped",
            file=sys.stderr,
        )
    return cons


def _cmd_query(args) -> int:
    from . import active

    out = Path(args.output)
    _check_output_path(out)
    if args.n_pairs < 1:
        raise ValueError(f"--n-pairs must be >= 1, got {args.n_pairs}.")
    strategy = active._check_strategy(args.strategy)
    X, _, ids = _read_table_args(args)
    n = X.shape[0]
    if ids is not None and len(set(ids)) != n:
        dup = next(str(v) for t, v in enumerate(ids) if v in ids[:t])
        raise ValueError(f"--id-column: the ID {dup!r} names more than one row.")
    cons = _read_answered(args.constraints, n, ids) if args.constraints else None
    est = None
    if args.method is not None:
        from .registry import get_method

        params = _parse_params(args.param, allow_prefix=False).get(None, {})
        _check_method_params(args.method, params)
        est = get_method(args.method)(n_clusters=args.k, **params)
        if "random_state" not in params and "random_state" in est.get_params():
            est.set_params(random_state=args.random_state)
    elif args.param:
        raise ValueError("--param needs --method.")
    if args.interactive:
        report = active.ask_in_terminal(
            X,
            args.n_pairs,
            n_clusters=args.k,
            output=out,
            constraints=cons,
            estimator=est,
            strategy=strategy,
            random_state=args.random_state,
            ids=ids,
        )
        kept = report.n_asked - report.n_skipped - len(report.dropped)
        where = f"saved in {out}" if kept else "nothing written"
        print(f"{kept} answer(s), {report.n_skipped} skipped; {where}")
        return 0
    if est is not None and strategy in active.PARTITION_STRATEGIES:
        est.fit(X, constraints=cons)
    pairs = active.select_pairs(
        X,
        args.n_pairs,
        n_clusters=args.k,
        constraints=cons,
        estimator=est,
        strategy=strategy,
        random_state=args.random_state,
    )
    active.write_pairs_csv(out, pairs, ids=ids)
    print(
        f"{len(pairs)} pair(s) chosen by '{strategy}' written to {out}: fill the kind "
        "column with ml (same group) or cl (different groups)"
    )
    return 0


def _compare_methods(args) -> dict[str, dict]:
    from .registry import available_methods, get_method

    if args.methods is None:
        names = [m for m in _BASELINES if m in available_methods()]
    else:
        names = [m.strip().lower() for m in args.methods.split(",") if m.strip()]
        if not names:
            raise ValueError("--methods is empty; give names such as ncut,sl,copkmeans.")
    for name in names:
        get_method(name)
    params = _parse_params(args.param, allow_prefix=True)
    unknown = sorted(set(params) - {None} - set(names))
    if unknown:
        raise ValueError(f"--param for method {unknown[0]!r}, which is not in --methods.")
    out = {}
    for name in dict.fromkeys(names):
        allowed = _method_params(name)
        mine = {k: v for k, v in params.get(None, {}).items() if k in allowed}
        mine.update(params.get(name, {}))
        _check_method_params(name, mine)
        out[name] = mine
    global_unused = set(params.get(None, {})) - set().union(*(_method_params(m) for m in out))
    if global_unused:
        raise ValueError(f"no method in --methods has a parameter {sorted(global_unused)[0]!r}.")
    return out


def _compare_data(args) -> tuple[str, np.ndarray, np.ndarray]:
    """``(name, X, y)`` from ``--dataset`` or ``--data FILE``."""
    from .datasets import load

    table_options = [
        opt
        for opt, v in (
            ("--label-column", args.label_column),
            ("--columns", args.columns),
            ("--drop", args.drop),
        )
        if v is not None
    ]
    if args.data is None:
        if table_options or args.header != "auto":
            raise ValueError(f"{table_options[0] if table_options else '--header'} needs --data.")
        name = (args.dataset or DEFAULT_DATASET).lower()
        X, y = load(name, args.data_dir)
        return name, X, y
    path = Path(args.data)
    if path.suffix.lower() in (".npy", ".npz"):
        if path.suffix.lower() == ".npy":
            raise ValueError(
                f"{path}: an .npy file holds no classes; give a table with --label-column, "
                "or an .npz file with arrays X and y."
            )
        X, y, _ = _read_features(path, columns=args.columns, drop=args.drop)
        if args.label_column is not None:
            raise ValueError(f"--label-column applies to text tables; {path} holds y itself.")
        if y is None:
            raise ValueError(f"{path}: holds no array 'y' of classes; compare needs them.")
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != X.shape[0]:
            raise ValueError(f"{path}: y must hold one class per row of X ({X.shape[0]}).")
        if np.issubdtype(y.dtype, np.number):
            _check_all_labelled(y, ~np.isfinite(y) | (y < 0), f"{path}: y")
    else:
        if args.label_column is None:
            raise ValueError(
                f"--data {path} needs --label-column COL: the column holding the classes."
            )
        if not path.is_file():
            raise FileNotFoundError(2, "no such file", str(path))
        from .io import read_text_table

        table = read_text_table(
            path,
            _csv_delimiter(path),
            header=args.header,
            columns=args.columns,
            drop=args.drop,
            id_column=args.label_column,
            id_option="--label-column",
        )
        for note in table.notes:
            print(f"spectralink: note: {note}", file=sys.stderr)
        X, y = table.X, _classes(table.ids, path, args.label_column)
    return path.stem, X, y


def _classes(values: np.ndarray, path: Path, column: str) -> np.ndarray:
    """Class labels from the cells of a label column: integers when all are, else text."""
    y = _labels_from_cells([str(v) for v in values])
    unlabelled = y < 0 if y.dtype.kind == "i" else y == ""
    _check_all_labelled(y, unlabelled, f"{path}: --label-column {column}")
    return y


def _check_all_labelled(y: np.ndarray, unlabelled: np.ndarray, where: str) -> None:
    """Refuse unlabelled rows (empty, NaN or negative labels): the protocol needs them all."""
    rows = np.flatnonzero(unlabelled)
    if len(rows):
        raise ValueError(
            f"{where}: {len(rows)} row(s) without a class (empty or negative; first: data row "
            f"{rows[0] + 1}); compare draws the constraints from the class of every row."
        )


def _fingerprint(X: np.ndarray, y: np.ndarray) -> str:
    """A digest of the data, so that --resume notices a changed file."""
    import hashlib

    h = hashlib.sha256(np.ascontiguousarray(X, dtype=np.float64).tobytes())
    h.update("\n".join(map(str, y.tolist())).encode())
    return h.hexdigest()[:16]


#: Header fields of the record log that must match for --resume.
_RESUME_KEYS = (
    "dataset",
    "n_samples",
    "n_features",
    "n_clusters",
    "data_sha256",
    "protocol",
    "random_state",
)


def _resumable(log_path: Path, header: dict, methods: dict) -> tuple[list[dict], list[dict]]:
    """(records to carry over, those of the current methods) from an earlier record log."""
    from .experiments import read_record_log

    old_header, old = read_record_log(log_path)
    for key in _RESUME_KEYS:
        if old_header.get(key) != header[key]:
            raise ValueError(
                f"--resume: {log_path} holds runs of another configuration ({key} "
                f"{old_header.get(key)!r} there, {header[key]!r} now); use another --out, "
                "or leave out --resume to start over."
            )
    for r in old:
        name = r.get("method")
        if name in methods and r.get("params", {}) != _jsonable(methods[name]):
            raise ValueError(
                f"--resume: {log_path} holds runs of {name} with parameters "
                f"{r.get('params', {})}, now {methods[name]}; use the same --param, another "
                "--out, or leave out --resume to start over."
            )
    return old, [r for r in old if r.get("method") in methods]


def _jsonable(params: dict) -> dict:
    """``params`` as they read back from JSON (tuples become lists...)."""
    import json

    return json.loads(json.dumps(params, default=str))


def _grid_order(records, methods, counts) -> list[dict]:
    """Records in the order of an uninterrupted run: count, trial, method."""
    m_pos = {m: i for i, m in enumerate(methods)}
    c_pos = {c: i for i, c in enumerate(counts)}
    return sorted(
        records,
        key=lambda r: (c_pos[int(r["n_constraints"])], int(r["trial"]), m_pos[r["method"]]),
    )


def _cmd_compare(args) -> int:
    import shlex

    from .experiments import (
        RECORD_FIELDS,
        RecordLog,
        _cell_seed,
        _run_key,
        atomic_write,
        check_methods,
        format_table,
        run_protocol,
        summarize,
        write_records_csv,
        write_records_json,
    )
    from .plots import plot_metric_curves

    methods = _compare_methods(args)
    if args.constraints is None:
        counts = list(DEFAULT_CONSTRAINTS[args.protocol])
    else:
        counts = _parse_counts(args.constraints)
    if args.trials < 1:
        raise ValueError(f"--trials must be >= 1, got {args.trials}.")
    if args.random_state < 0:
        raise ValueError(f"--random-state must be >= 0, got {args.random_state}.")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise FileExistsError(17, "--out exists and is not a directory", str(out))
    name, X, y = _compare_data(args)
    n = X.shape[0]
    k = len(np.unique(y))
    if k < 2:
        raise ValueError(f"{name}: the labels hold {k} class; compare needs at least 2.")
    limit = n * (n - 1) // 2 if args.protocol == "pairs" else n
    if max(counts) > limit:
        what = "distinct pairs" if args.protocol == "pairs" else "points"
        raise ValueError(f"--constraints {max(counts)} exceeds the {limit} {what} of {name}.")
    # every method, parameter value and k is checked before any run (and any file)
    check_methods(methods, k, n)

    header = {
        "dataset": name,
        "n_samples": int(n),
        "n_features": int(X.shape[1]),
        "n_clusters": int(k),
        "data_sha256": _fingerprint(X, y),
        "protocol": args.protocol,
        "random_state": args.random_state,
        "spectralink_version": __version__,
    }
    log_path = out / f"{name}_runs.jsonl"
    keep: list[dict] = []
    done: list[dict] = []
    if args.resume and log_path.is_file():
        keep, done = _resumable(log_path, header, methods)
    elif args.resume:
        print(f"spectralink: note: no earlier runs in {log_path}; starting afresh", file=sys.stderr)
    elif log_path.is_file():
        print(
            f"spectralink: note: replacing the earlier runs in {log_path} (--resume keeps them)",
            file=sys.stderr,
        )
    wanted = {
        (m, c, t, _cell_seed(args.random_state, c, t))
        for c in counts
        for t in range(args.trials)
        for m in methods
    }
    done = [r for r in done if _run_key(r) in wanted]
    total = len(wanted)

    print(
        f"{name}: n={n}, d={X.shape[1]}, k={k}; methods {', '.join(methods)}; "
        f"protocol '{args.protocol}', {args.trials} trials per count, seed {args.random_state}",
        flush=True,
    )
    if done:
        print(f"resuming: {len(done)} of {total} runs already in {log_path}", flush=True)

    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    finished: list[dict] = []

    def record(rec: dict) -> None:
        log.append(rec, params=methods[rec["method"]])
        finished.append(rec)

    interrupted = False
    with RecordLog(log_path, header, keep=keep) as log:
        try:
            records = run_protocol(
                X,
                y,
                methods,
                counts,
                n_trials=args.trials,
                protocol=args.protocol,
                random_state=args.random_state,
                dataset=name,
                progress=not args.no_progress,
                done=done,
                on_record=record,
            )
        except KeyboardInterrupt:
            interrupted = True
            records = _grid_order(
                [{f: r[f] for f in RECORD_FIELDS} for r in done] + finished, list(methods), counts
            )
    resume_hint = shlex.join(
        ["spectralink", *_without_resume(getattr(args, "argv", [])), "--resume"]
    )

    if not any(r["status"] == "ok" for r in records):
        if interrupted:
            print(
                f"spectralink: interrupted before any run succeeded; resume with: {resume_hint}",
                file=sys.stderr,
            )
            return 130
        if not keep:  # nothing of value on disk: leave no trace of this run
            log_path.unlink(missing_ok=True)
            if created:
                with contextlib.suppress(OSError):
                    out.rmdir()
        first = next((r["message"] for r in records if r["message"]), "")
        raise ValueError(f"every run failed, nothing written; first failure: {first}")

    config = {
        **{key: header[key] for key in ("dataset", "n_samples", "n_features", "n_clusters")},
        "methods": methods,
        "n_constraints": counts,
        "n_trials": args.trials,
        "protocol": args.protocol,
        "random_state": args.random_state,
        "spectralink_version": __version__,
        "n_runs": len(records),
        "n_runs_planned": total,
    }
    if args.data is not None:
        config["data"] = str(args.data)
    paths = {
        "runs_csv": out / f"{name}_runs.csv",
        "runs_json": out / f"{name}_runs.json",
        "summary": out / f"{name}_summary.md",
        "plot": out / f"{name}_{args.metric}.png",
    }
    write_records_csv(records, paths["runs_csv"])
    write_records_json(records, paths["runs_json"], config=config)
    with atomic_write(paths["summary"], "w") as fh:
        fh.write(_summary_markdown(records, config, args.metric))
    plot_metric_curves(
        records,
        paths["plot"],
        metric=args.metric,
        title=f"{name} (n={n}, k={k}), {args.trials} trials"
        + (f", partial: {len(records)} of {total} runs" if interrupted else ""),
        xlabel="number of labelled points"
        if args.protocol == "labeled"
        else "number of pairwise constraints",
        log_x=args.log_x,
    )

    print(f"\n{args.metric}, mean ± std over {args.trials} trials")
    if interrupted:
        print(f"(partial: {len(records)} of {total} runs finished)")
    print(
        format_table(
            summarize(records, args.metric), markdown=False, count_label=_count_label(args.protocol)
        )
    )
    _report_problems(records)
    print("\nwritten: " + ", ".join(str(p) for p in [log_path, *paths.values()]))
    if interrupted:
        print(
            f"spectralink: interrupted after {len(records)} of {total} runs; the partial "
            f"results are written; resume with: {resume_hint}",
            file=sys.stderr,
        )
        return 130
    return 0


def _without_resume(argv: list[str]) -> list[str]:
    return [a for a in argv if a != "--resume"]


def _count_label(protocol: str) -> str:
    return "labelled points" if protocol == "labeled" else "constraints"


def _summary_markdown(records, config, metric) -> str:
    from .experiments import format_table, summarize

    lines = [
        f"# {config['dataset']}: {', '.join(config['methods'])}",
        "",
        f"n = {config['n_samples']}, d = {config['n_features']}, k = {config['n_clusters']}; "
        f"protocol `{config['protocol']}`; {config['n_trials']} trials per count; "
        f"base seed {config['random_state']}; spectralink {config['spectralink_version']}.",
        "Cells are mean ± std (sample std) over the trials; failed runs are left out and counted.",
        "",
    ]
    if config.get("n_runs", 0) < config.get("n_runs_planned", 0):
        lines += [
            f"**Partial**: interrupted after {config['n_runs']} of {config['n_runs_planned']} "
            "runs; the same command with `--resume` does the rest.",
            "",
        ]
    params = {m: p for m, p in config["methods"].items() if p}
    if params:
        lines += ["Parameters: " + "; ".join(f"{m}: {p}" for m, p in params.items()), ""]
    shown = [metric] + [
        m for m in ("error", "ari", "nmi", "violated", "ncut", "time_s") if m != metric
    ]
    for m in shown:
        lines += [
            f"## {m}",
            "",
            format_table(summarize(records, m), count_label=_count_label(config["protocol"])),
            "",
        ]
    return "\n".join(lines)


def _report_problems(records) -> None:
    """Failures per method (first message) and warnings grouped by message."""
    lines = []
    for method in dict.fromkeys(r["method"] for r in records):
        mine = [r for r in records if r["method"] == method]
        failed = [r for r in mine if r["status"] != "ok"]
        if failed and len(failed) == len(mine):
            lines.append(
                f"{method}: every one of its {len(mine)} runs failed, so it is left out of "
                f"the plot; first: {failed[0]['message']}"
            )
        elif failed:
            lines.append(
                f"{method}: {len(failed)} of {len(mine)} runs failed, first: {failed[0]['message']}"
            )
    by_message: dict[str, list[str]] = {}
    for r in records:
        for msg in filter(None, r["warnings"].split(" | ")):
            by_message.setdefault(msg, []).append(r["method"])
    for msg, methods in by_message.items():
        lines.append(f"warning in {len(methods)} runs ({', '.join(dict.fromkeys(methods))}): {msg}")
    if lines:
        print("\n" + "\n".join(lines))


def _capabilities(info) -> dict[str, str]:
    """Printable capability cells of a :class:`spectralink.catalog.MethodInfo`."""
    return {
        "k": "2 only" if info.two_clusters_only else "any",
        "constraints": info.constraint_use,
        "largest n": "-" if info.max_samples is None else str(info.max_samples),
        "predict": "yes" if info.predicts else "no",
        "dask": "yes" if info.dask else "no",
        "scale": info.scale,
    }


def _print_rows(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())


def _cmd_methods(args) -> int:
    from .catalog import describe, describe_all

    if args.name is None:
        infos = describe_all()
        rows = [("name", "class", *_capabilities(infos[0]))]
        rows += [(m.name, m.class_name, *_capabilities(m).values()) for m in infos]
        _print_rows(rows)
        print(
            "\nlargest n: the cap at the defaults ('-': none). "
            "'spectralink methods NAME' lists a method's parameters."
        )
        return 0
    info = describe(args.name)
    print(f"{info.name} ({info.class_name}): {info.summary}")
    for key, value in _capabilities(info).items():
        if key == "largest n" and info.max_samples is not None:
            value += f" (parameter {info.max_samples_param})"
        print(f"  {key + ':':<13}{value}")
    print("parameters (--param NAME=VALUE):")
    rows = [
        (
            f"  {p.name}",
            "(required)" if p.default is inspect.Parameter.empty else f"= {p.default!r}",
            p.summary,
        )
        for p in info.params
    ]
    _print_rows(rows)
    return 0


def _cmd_datasets(args) -> int:
    from .datasets import BENCHMARK_DATASETS, BUNDLED_DATASETS, data_home, list_datasets

    home = data_home(args.data_dir)
    if args.data_dir is not None:
        source = "--data-dir"
    elif os.environ.get("SPECTRALINK_DATA"):
        source = "SPECTRALINK_DATA"
    else:
        source = "default; set SPECTRALINK_DATA to change it"
    state = "exists" if home.is_dir() else "does not exist"
    print(f"data directory: {home} ({source}; {state})")
    rows = [("name", "status", "n", "d", "k")]
    for name, ok in list_datasets(args.data_dir).items():
        if name in BUNDLED_DATASETS:
            status = "bundled (scikit-learn)"
        else:
            status = "available" if ok else "missing"
        shape = {**BENCHMARK_DATASETS, **_BUNDLED_SHAPES}.get(name, ("", "", ""))
        rows.append((name, status, *map(str, shape)))
    _print_rows(rows)
    return 0


# --------------------------------------------------------------------------- entry point
def _one_line(exc: BaseException) -> str:
    from .datasets import DatasetNotFoundError

    if isinstance(exc, OSError) and not isinstance(exc, DatasetNotFoundError) and exc.filename:
        text = f"{exc.filename}: {exc.strerror or exc}"
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(text.split())


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"spectralink: warning: {' '.join(str(message).split())}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run the ``spectralink`` command line with ``argv`` (default ``sys.argv[1:]``).

    Returns the exit status: 0 on success, 1 for an error in the inputs, 2 for a usage
    error, 130 when interrupted.
    """
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    if args.command is None:
        print(
            "spectralink: error: choose a command: cluster, compare, query, methods or datasets "
            "(see 'spectralink --help')",
            file=sys.stderr,
        )
        return 2
    args.argv = list(sys.argv[1:] if argv is None else argv)  # for the --resume hint
    debug = getattr(args, "debug", False)
    previous = warnings.showwarning
    if not debug:
        warnings.showwarning = _show_warning
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("spectralink: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`spectralink datasets | head`): stop quietly, and point
        # stdout at /dev/null so the interpreter's final flush does not complain either
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a writer cut off by a pipe
    except (ValueError, TypeError, OSError) as exc:
        if debug:
            raise
        print(f"spectralink: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    finally:
        warnings.showwarning = previous


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
