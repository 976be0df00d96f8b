"""``spectralink query``: the next pairs to ask a person, written to a file or asked in the
terminal."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ._options import (
    add_data_argument,
    add_scale_option,
    add_table_options,
    check_output_path,
    common_parent,
    fit_estimator,
    guiding_estimator,
    read_table_args,
    scale_args,
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``query`` command to ``subparsers``."""
    p = subparsers.add_parser(
        "query",
        parents=[common_parent()],
        help="choose the next pairs to ask a person (active selection)",
        description="Choose the pairs of rows of DATA whose answers help the clustering "
        "most, and write them to OUTPUT with an empty 'kind' column to fill with ml/cl "
        "(or, with --interactive, ask them in the terminal and save the answers).",
    )
    add_data_argument(p, k_auto=True, k_optional=True)
    add_table_options(p, ids="naming the rows in OUTPUT and in --constraints")
    add_scale_option(p)
    p.add_argument(
        "-c",
        "--constraints",
        action="append",
        metavar="PAIRS_CSV",
        help="pairs answered so far (i,j,kind[,weight]); rows with an empty kind are skipped; "
        "repeatable: the files are merged, and OUTPUT repeats these known pairs above the "
        "new questions, so that the one file answered is the whole set",
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
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``spectralink query`` with the parsed ``args``; the exit status."""
    from ..active import PARTITION_STRATEGIES, resolve_strategy, select_pairs
    from ..constraints import write_pairs_csv
    from ._prompt import ask_in_terminal

    out = Path(args.output)
    check_output_path(out)
    if args.n_pairs < 1:
        raise ValueError(f"--n-pairs must be >= 1, got {args.n_pairs}.")
    strategy = resolve_strategy(args.strategy)
    data = read_table_args(args)
    X = scale_args(args, data.X)
    n = X.shape[0]
    every = data.ids_read
    if every is not None and len(set(every)) != len(every):
        dup = next(str(v) for t, v in enumerate(every) if v in every[:t])
        raise ValueError(f"--id-column: the ID {dup!r} names more than one row.")
    read, cons = data.constraints_read(args.constraints) if args.constraints else (None, None)
    est, params = guiding_estimator(args, n, 2)
    if args.interactive:
        report = ask_in_terminal(
            X,
            args.n_pairs,
            n_clusters=args.k,
            output=out,
            constraints=cons,
            estimator=est,
            strategy=strategy,
            random_state=args.random_state,
            ids=data.row_names(),
        )
        kept = report.n_asked - report.n_skipped - len(report.dropped)
        where = f"saved in {out}" if kept else "nothing written"
        print(f"{kept} answer(s), {report.n_skipped} skipped; {where}")
        return 0
    if est is not None and strategy in PARTITION_STRATEGIES:
        fit_estimator(est, X, cons, params)
    pairs = select_pairs(
        X,
        args.n_pairs,
        n_clusters=args.k,
        constraints=cons,
        estimator=est,
        strategy=strategy,
        random_state=args.random_state,
    )
    # rows named as in the file (positions or IDs), also when --missing drop left rows out
    new = data.to_file(pairs)
    known = read is not None and len(read) > 0
    if known:  # every known pair first (rows left out too): the answered file is the whole set
        kinds = ["ml"] * read.n_must_link + ["cl"] * read.n_cannot_link + [""] * len(new)
        weights = np.r_[read.weights, np.ones(len(new))] if read.is_weighted else None
        write_pairs_csv(out, np.vstack([read.pairs, new]), kinds, weights, ids=every)
    else:
        write_pairs_csv(out, new, ids=every)
    print(
        f"{len(pairs)} pair(s) chosen by '{strategy}' written to {out}"
        + (f" below the {len(read)} known pair(s)" if known else "")
        + ": fill the empty kind cells with ml (same group) or cl (different groups)"
        + (f", then pass {out} alone to --constraints" if known else "")
    )
    return 0
