"""``spectralink label``: answer pairs in the browser, every answer saved at once."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ._options import (
    add_data_argument,
    add_scale_option,
    add_table_options,
    check_output_path,
    common_parent,
    guiding_estimator,
    make_estimator,
    note,
    read_table_args,
    scale_args,
)

#: The method drawn in the page's picture when ``--method`` is not given.
PREVIEW_METHOD = "ccskl"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``label`` command to ``subparsers``."""
    p = subparsers.add_parser(
        "label",
        parents=[common_parent()],
        help="answer pairs in the browser (a local page; needs spectralink[label])",
        description="Serve a page on 127.0.0.1 that asks the pairs of rows of DATA chosen by "
        "the active strategy, shows the two rows (images, text or values) and the clustering "
        "so far, and appends every answer to OUTPUT at once. Restarting with the same OUTPUT "
        "resumes. The answers file is a constraints file: pass it to 'spectralink cluster "
        "--constraints'.",
    )
    add_data_argument(p, k_auto=True, k_optional=True)
    add_table_options(p, ids="naming the rows on the page and in OUTPUT")
    add_scale_option(p)
    show = p.add_mutually_exclusive_group()
    show.add_argument(
        "--image-shape",
        metavar="HxW",
        help="draw each row as a grey image of H x W pixels (8x8 for digits, 16x16 for USPS)",
    )
    show.add_argument(
        "--image-column",
        metavar="COL",
        help="column of DATA holding an image file per row (paths relative to DATA's folder); "
        "not a feature",
    )
    show.add_argument(
        "--text-column", metavar="COL", help="column of DATA holding a text per row; not a feature"
    )
    p.add_argument(
        "-c",
        "--constraints",
        action="append",
        metavar="PAIRS_CSV",
        help="pairs known already (never asked); repeatable, the files are merged",
    )
    p.add_argument(
        "-m",
        "--method",
        default=None,
        help="method whose partition guides the strategy (refitted as 'learn' does) and is "
        f"drawn on the page (default: the strategy reads NCut of its own graph, the page "
        f"draws {PREVIEW_METHOD})",
    )
    p.add_argument(
        "-p", "--param", action="append", default=[], metavar="KEY=VALUE", help="of --method"
    )
    p.add_argument("-s", "--strategy", default="auto", help="as in 'query' (default: auto)")
    p.add_argument(
        "-n",
        "--n-pairs",
        type=int,
        default=None,
        metavar="N",
        help="questions at most (default: until you stop, or every pair is decided)",
    )
    p.add_argument(
        "--batch-size",
        type=int,
        default=10,
        metavar="B",
        help="pairs chosen per round, as in learn (default: 10)",
    )
    p.add_argument("--random-state", type=int, default=0, metavar="S", help="seed (default: 0)")
    p.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    p.add_argument("--no-browser", action="store_true", help="print the address, open nothing")
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUTPUT",
        help="the answers file (i,j,kind), appended after every answer",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``spectralink label`` with the parsed ``args``; the exit status."""
    from ..label import LabelServer, require_web_stack

    require_web_stack()
    out = Path(args.output)
    _check_options(args, out)
    session = _session(args, out)
    for text in session.notes:
        note(text)
    server = LabelServer(session, port=args.port).start()
    print(f"spectralink label: answering on {server.url}", flush=True)
    print(f"answers are appended to {out}; press Ctrl-C to stop", flush=True)
    if not args.no_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        # a timed sleep, not an untimed wait: the kernel may hand Ctrl-C to one of the
        # server's threads, and Python raises it here only when this thread next wakes
        while True:
            time.sleep(0.2)
    except KeyboardInterrupt:  # Ctrl-C is how the session ends: every answer is on disk
        pass
    finally:
        server.shutdown()
    print(f"stopped; {session.state()['n_answered']} answer(s) in {out}", flush=True)
    return 0


def _check_options(args: argparse.Namespace, out: Path) -> None:
    """The answers file can be written and the counts and the port are in range."""
    check_output_path(out)
    for value, option in ((args.n_pairs, "--n-pairs"), (args.batch_size, "--batch-size")):
        if value is not None and value < 1:
            raise ValueError(f"{option} must be >= 1, got {value}.")
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be in 0-65535, got {args.port}.")


def _session(args: argparse.Namespace, out: Path):
    """The labelling session: the table read, the rows' view, the pair selector, the
    estimator that guides it and the preview's."""
    from ..active import PairSelector, resolve_strategy
    from ..label import AnswerLog, LabelSession

    strategy = resolve_strategy(args.strategy)
    data, view = _table_and_view(args)
    X = scale_args(args, data.X)
    n = X.shape[0]
    known = data.constraints(args.constraints) if args.constraints else None
    est, _ = guiding_estimator(args, n, args.k or 2)
    selector = PairSelector(args.k, strategy=strategy, random_state=args.random_state).fit(X)
    k = int(selector.n_clusters_)
    if args.k is None:
        note(f"k = {k} from the eigengap (give -k to set it)")
    shown = argparse.Namespace(**{**vars(args), "method": PREVIEW_METHOD, "k": args.k or k})
    preview = est if est is not None else make_estimator(shown, {})
    ids = None if data.table is None else data.row_names()
    return LabelSession(
        X, selector, AnswerLog(out, n, ids), view, constraints=known, estimator=est,
        preview=preview, n_queries=args.n_pairs, batch_size=args.batch_size,
        random_state=args.random_state,
    )  # fmt: skip


def _table_and_view(args: argparse.Namespace) -> tuple:
    """The table read and how the page shows its rows (values, text, images)."""
    from ..label import ItemView, parse_image_shape, read_column

    shape = parse_image_shape(args.image_shape) if args.image_shape else None
    texts = read_column(args.data, args.text_column, "--text-column") if args.text_column else None
    paths = None
    if args.image_column:
        folder = Path(args.data).resolve().parent
        paths = [folder / c for c in read_column(args.data, args.image_column, "--image-column")]
    data = read_table_args(args, drop=args.image_column or args.text_column)
    names, ids = (None, None) if data.table is None else (data.table.names, data.row_names())
    if data.rows is not None:  # rows left out by --missing drop
        texts = None if texts is None else [texts[r] for r in data.rows]
        paths = None if paths is None else [paths[r] for r in data.rows]
    if data.ids_read is not None and len(set(data.ids_read)) != len(data.ids_read):
        raise ValueError("--id-column: an ID names more than one row.")
    view = ItemView(data.X, names=names, ids=ids, image_shape=shape, image_paths=paths, texts=texts)
    return data, view
