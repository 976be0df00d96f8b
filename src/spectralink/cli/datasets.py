"""``spectralink datasets``: the dataset names, whether each loads, and the data directory."""

from __future__ import annotations

import argparse
import os

from ._options import common_parent, print_rows

#: (n, d, k) of the sets bundled with scikit-learn.
_BUNDLED_SHAPES = {
    "iris": (150, 4, 3),
    "wine": (178, 13, 3),
    "breast_cancer": (569, 30, 2),
    "digits": (1797, 64, 10),
}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``datasets`` command to ``subparsers``."""
    p = subparsers.add_parser(
        "datasets",
        parents=[common_parent()],
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
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``spectralink datasets`` with the parsed ``args``; the exit status."""
    from ..datasets import BENCHMARK_DATASETS, BUNDLED_DATASETS, data_home, list_datasets

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
    print_rows(rows)
    return 0
