"""What several commands share: the ``--debug`` parent, the table options and their reading,
``--param KEY=VALUE``, output paths, answered constraint files, notes and aligned rows."""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..io import read_features

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


def add_data_argument(p: argparse.ArgumentParser) -> None:
    """The positional feature file and ``-k`` of ``cluster`` and ``query``."""
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


def note(text: str) -> None:
    """One ``spectralink: note:`` line on stderr."""
    print(f"spectralink: note: {text}", file=sys.stderr)


def read_table_args(
    args: argparse.Namespace,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """``(X, y of an .npz, ids)`` of ``args.data`` read with the table options; notes on
    stderr."""
    X, y, table = read_features(
        args.data,
        header=args.header,
        columns=args.columns,
        drop=args.drop,
        id_column=args.id_column,
    )
    for text in table.notes if table is not None else ():
        note(text)
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

    return set(get_method(name)._get_param_names())


def check_method_params(name: str, params: dict) -> None:
    """Refuse a ``--param`` the method ``name`` does not have, listing those it has."""
    allowed = method_params(name)
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ValueError(
            f"method {name!r} has no parameter {unknown[0]!r}; its parameters are "
            f"{', '.join(sorted(allowed))}."
        )


def make_estimator(args: argparse.Namespace, params: dict) -> BaseEstimator:
    """``args.method`` with ``n_clusters=args.k`` and ``params``; ``--random-state`` unless
    ``params`` fix one."""
    from ..registry import get_method

    est = get_method(args.method)(n_clusters=args.k, **params)
    if "random_state" not in params and "random_state" in est.get_params():
        est.set_params(random_state=args.random_state)
    return est


def check_output_path(path: Path) -> None:
    """Fail before any work when ``path`` cannot be written: no directory, or one itself."""
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise FileNotFoundError(2, "output directory does not exist", str(parent))
    if path.is_dir():
        raise IsADirectoryError(21, "output is a directory", str(path))


def read_answered(path: str, n: int, ids: np.ndarray | None = None) -> Constraints:
    """Constraints from a file in which some rows may still lack an answer; with
    ``ids``, the file names rows by ID."""
    from ..constraints import Constraints

    try:
        cons = Constraints.from_csv(path, n, skip_unanswered=True, ids=ids)
    except ValueError as exc:
        if ids is not None and "IDs must be distinct" in str(exc):
            raise ValueError(f"--id-column: {exc}") from None
        raise
    if cons.n_unanswered:
        note(f"{path}: {cons.n_unanswered} row(s) without a kind (not answered) skipped")
    return cons


def print_rows(rows: list[tuple[str, ...]]) -> None:
    """Rows of cells as aligned columns on stdout."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())
