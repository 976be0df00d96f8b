"""What several commands share: the ``--debug`` parent, the table options and their reading,
``--param KEY=VALUE``, output paths, answered constraint files, notes and aligned rows."""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..io import read_features, read_labels
from ..tables import CATEGORICAL_CHOICES, FLAGS, MISSING_CHOICES, Table, describe_columns

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

    from ..constraints import Constraints


def common_parent() -> argparse.ArgumentParser:
    """The parent parser of every command: ``--debug`` after the command name too."""
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: a subcommand without --debug keeps the value given before it
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show full tracebacks instead of one-line errors",
    )
    return common


def _k_or_auto(text: str) -> int | None:
    """``-k``: an int (the estimator checks its range), or ``auto`` (None: chosen from the
    pairs)."""
    if text.strip().lower() == "auto":
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid int value: {text!r} (give a number of clusters, or 'auto')"
        ) from None


def add_data_argument(
    p: argparse.ArgumentParser, *, k_auto: bool = False, k_optional: bool = False
) -> None:
    """The positional feature file and ``-k`` of ``cluster`` and ``query``; with ``k_auto``
    ``-k auto`` leaves k to ``--method auto``; with ``k_optional`` no ``-k`` means auto."""
    p.add_argument(
        "data", metavar="DATA", help="features: .csv (optional header), .parquet, .npy or .npz"
    )
    p.add_argument(
        "-k",
        "--n-clusters",
        type=_k_or_auto if k_auto else int,
        required=not k_optional,
        default=None,
        metavar="K",
        dest="k",
        help="number of clusters"
        + (
            "; 'auto' (--method auto, or query without --method): chosen from the pairs, "
            "in 2 to sqrt(n/2) (10 to 30), by the eigengap without pairs"
            + ("; the default" if k_optional else "")
            if k_auto
            else ""
        ),
    )


def add_table_options(
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
    p.add_argument(
        "--missing",
        choices=MISSING_CHOICES,
        default="error",
        help="empty cells (also nan, NA) in the feature columns: 'error', 'drop' (leave their "
        "rows out, and the pairs naming them; said in one line each), 'impute' (the column's "
        "mean) (default: error)",
    )
    p.add_argument(
        "--categorical",
        choices=CATEGORICAL_CHOICES,
        default="drop",
        help="text columns: 'drop' (left out, named in a note) or 'encode' (one-hot: a 0/1 "
        "column per value) (default: drop)",
    )


def add_scale_option(p: argparse.ArgumentParser) -> None:
    """``--scale``: the scikit-learn scaler applied to the features before clustering."""
    from ..preprocessing import DEFAULT_SCALE, SCALES, SPREAD_FACTOR

    p.add_argument(
        "--scale",
        choices=SCALES,
        default=DEFAULT_SCALE,
        help="scale the feature columns first: 'standard' (zero mean, unit variance), "
        "'robust' (median, interquartile range), 'none' (as given), 'auto': standard when "
        f"the widest column's standard deviation is more than {SPREAD_FACTOR:g} times the "
        f"median column's, else none (default: {DEFAULT_SCALE}; one line says which)",
    )


def scale_args(args: argparse.Namespace, X: np.ndarray) -> np.ndarray:
    """``X`` scaled as ``args.scale`` says; one note says what was done (and, unscaled, when
    the columns differ in spread)."""
    from ..preprocessing import column_spread_ratio, scale_features, scale_line
    from ..tables import FLAGS

    scaled, used = scale_features(X, args.scale)
    note(scale_line(args.scale, used, column_spread_ratio(X), FLAGS))
    return scaled


def note(text: str) -> None:
    """One ``spectralink: note:`` line on stderr."""
    print(f"spectralink: note: {text}", file=sys.stderr)


@dataclass
class TableData:
    """The features of ``DATA`` as a command reads them, and what it needs to line up the
    other files (pairs, labels) with the rows kept."""

    X: np.ndarray
    y: np.ndarray | None
    table: Table | None

    @property
    def ids(self) -> np.ndarray | None:
        """The IDs of the rows kept (``--id-column``), else None."""
        return None if self.table is None else self.table.ids

    @property
    def rows(self) -> np.ndarray | None:
        """Positions of the rows kept among those of the file; None: every row."""
        return None if self.table is None else self.table.rows

    @property
    def n_read(self) -> int:
        """Data rows in the file (the numbering pairs and labels files use)."""
        return self.X.shape[0] if self.rows is None else self.table.n_read

    @property
    def ids_read(self) -> np.ndarray | None:
        """The IDs of every row of the file, the rows left out included."""
        return None if self.table is None else self.table.ids_read

    def row_names(self) -> np.ndarray | None:
        """What names the rows kept in files written: their IDs, else (rows left out) their
        0-based positions in the file; None when positions are the rows' own."""
        if self.ids is not None or self.rows is None:
            return self.ids
        return self.rows.astype(str)

    def constraints(self, paths: str | list[str]) -> Constraints:
        """The pairs of ``paths`` on the rows kept; pairs naming a row left out are left out
        with one note."""
        return self.constraints_read(paths)[1]

    def constraints_read(self, paths: str | list[str]) -> tuple[Constraints, Constraints]:
        """``(every pair read, numbered as in the file; the pairs on the rows kept)``."""
        cons = read_answered(paths, self.n_read, self.ids_read)
        if self.rows is None:
            return cons, cons
        kept = np.zeros(self.n_read, dtype=bool)
        kept[self.rows] = True
        lost = ~kept[cons.pairs].all(axis=1) if len(cons) else np.zeros(0, bool)
        if lost.any():
            names = self.ids_read if self.ids_read is not None else np.arange(self.n_read)
            rows = np.unique(cons.pairs[lost][~kept[cons.pairs[lost]]])
            shown = ", ".join(str(names[r]) for r in rows[:6]) + (", ..." if len(rows) > 6 else "")
            note(
                f"--missing drop: {int(lost.sum())} of {len(cons)} pairs name rows left out "
                f"({shown}): those pairs are left out"
            )
        return cons, cons.subset(self.rows)

    def to_file(self, pairs: np.ndarray) -> np.ndarray:
        """Pairs of rows kept, numbered as the rows of the file."""
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        return pairs if self.rows is None else self.rows[pairs]

    def labels(self, path: str) -> tuple[np.ndarray, np.ndarray]:
        """``(codes, names)`` of the labels in ``path`` (one per row of the file, or
        ``id,label`` with ``--id-column``) for the rows kept (:func:`read_labels`)."""
        codes, names = read_labels(path, self.n_read, return_names=True, ids=self.ids_read)
        return (codes if self.rows is None else codes[self.rows]), names


def read_table_args(args: argparse.Namespace, *, drop: str | None = None) -> TableData:
    """``args.data`` read with the table options (``drop`` adds columns to ``--drop``); its
    notes and the line naming the feature columns on stderr, before any fitting."""
    dropped = ",".join(c for c in (args.drop, drop) if c) or None
    X, y, table = read_features(
        args.data,
        header=args.header,
        columns=args.columns,
        drop=dropped,
        id_column=args.id_column,
        missing=args.missing,
        categorical=args.categorical,
        spelling=FLAGS,
    )
    for text in table.notes if table is not None else ():
        note(text)
    note(describe_columns(table, X.shape[1]))
    return TableData(X, y, table)


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


def parse_params(items: list[str], *, allow_prefix: bool) -> dict[str | None, dict]:
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


def method_params(name: str) -> set[str]:
    """The constructor parameters of the method ``name``."""
    from ..registry import get_method

    return set(get_method(name)().get_params(deep=False))


def check_method_params(name: str, params: dict) -> None:
    """Refuse a ``--param`` the method ``name`` does not have, listing those it has."""
    allowed = method_params(name)
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ValueError(
            f"method {name!r} has no parameter {unknown[0]!r}; its parameters are "
            f"{', '.join(sorted(allowed))}."
        )


#: ``--param`` values beyond this magnitude overflow once squared (a bandwidth's square).
_LARGEST = 1e150


def check_param_values(name: str, params: dict, n_samples: int, n_clusters: int) -> list[str]:
    """Refuse a ``--param`` value that overflows floating point; one line per value the
    method ``name`` clips to the data or ignores (returned, for :func:`note`)."""
    for key, value in params.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not np.isfinite(float(value)) or abs(value) > _LARGEST:
                raise ValueError(
                    f"--param {key}={value!r} overflows floating point in {name!r} (its square "
                    f"exceeds the largest float); give a value below {_LARGEST:g}."
                )
    lines = []
    k = params.get("n_neighbors")
    if isinstance(k, int) and not isinstance(k, bool) and k > n_samples - 1:
        lines.append(
            f"--param n_neighbors={k} is more than the {n_samples - 1} other rows of the data: "
            f"{name!r} clips it to {n_samples - 1}"
        )
    p = params.get("n_landmarks")
    if isinstance(p, int) and not isinstance(p, bool) and p > n_samples:
        lines.append(
            f"--param n_landmarks={p} is more than the {n_samples} rows of the data: "
            f"{name!r} clips it to {n_samples}"
        )
    if name == "cosc" and n_clusters > 2 and params.get("n_starts") is not None:
        lines.append(
            f"--param n_starts={params['n_starts']} is ignored by COSC with k={n_clusters}: it "
            "sets the starts of the two-cluster search; the k-way search reads n_split_starts"
        )
    return lines


def fit_estimator(
    est: BaseEstimator, X: np.ndarray, constraints: Constraints | None, params: dict
) -> None:
    """``est.fit(X, constraints=...)``, an overflow becoming an error naming ``params``."""
    try:
        est.fit(X, constraints=constraints)
    except OverflowError as exc:
        given = ", ".join(f"{k}={v!r}" for k, v in params.items()) or "the defaults"
        raise ValueError(
            f"{type(est).__name__} overflowed floating point ({exc}) with --param {given}; "
            "give smaller values (or scale the features with --scale standard)."
        ) from None


def make_estimator(args: argparse.Namespace, params: dict) -> BaseEstimator:
    """``args.method`` with ``n_clusters=args.k`` and ``params``; ``--random-state`` unless
    ``params`` fix one."""
    from ..registry import get_method

    est = get_method(args.method)(n_clusters=args.k, **params)
    if "random_state" not in params and "random_state" in est.get_params():
        est.set_params(random_state=args.random_state)
    return est


def guiding_estimator(
    args: argparse.Namespace, n_samples: int, k: int
) -> tuple[BaseEstimator | None, dict]:
    """``(estimator, params)`` of ``--method``/``--param`` for the commands whose method
    only guides the active strategy (``query``, ``label``): ``(None, {})`` without
    ``--method``; ``k`` stands in for ``-k auto`` in the parameter checks."""
    if args.k is None and args.method not in (None, "auto"):
        raise ValueError(
            f"choosing k (-k auto, or no -k) needs --method auto or no method ({args.method!r} "
            "needs a number of clusters: give -k)."
        )
    if args.method is None:
        if args.param:
            raise ValueError("--param needs --method.")
        return None, {}
    params = parse_params(args.param, allow_prefix=False).get(None, {})
    check_method_params(args.method, params)
    for text in check_param_values(args.method, params, n_samples, args.k or k):
        note(text)
    return make_estimator(args, params), params


def check_output_path(path: Path) -> None:
    """Fail before any work when ``path`` cannot be written: no directory, or one itself."""
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise FileNotFoundError(2, "output directory does not exist", str(parent))
    if path.is_dir():
        raise IsADirectoryError(21, "output is a directory", str(path))


def read_answered(paths: str | list[str], n: int, ids: np.ndarray | None = None) -> Constraints:
    """Constraints from one or several files (merged) in which some rows may still lack an
    answer; with ``ids``, the files name rows by ID. Notes say what was skipped or merged."""
    from ..constraints import read_constraints_files

    paths = [paths] if isinstance(paths, str) else list(paths)
    try:
        cons, notes = read_constraints_files(paths, n, skip_unanswered=True, ids=ids)
    except ValueError as exc:
        if ids is not None and "IDs must be distinct" in str(exc):
            raise ValueError(f"--id-column: {exc}") from None
        raise
    if cons.n_unanswered:
        where = paths[0] if len(paths) == 1 else f"{len(paths)} files"
        note(f"{where}: {cons.n_unanswered} row(s) without a kind (not answered) skipped")
    for text in notes:
        note(text)
    if len(paths) > 1:
        note(f"--constraints: {len(paths)} files merged into {len(cons)} pairs")
    return cons


def print_rows(rows: list[tuple[str, ...]]) -> None:
    """Rows of cells as aligned columns on stdout."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())
