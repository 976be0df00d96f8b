"""``spectralink cluster``: fit one method on a feature file and write one label per row."""

from __future__ import annotations

import argparse
import contextlib
import csv
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..constraints import Constraints
from ..io import atomic_write, labeled_mask
from ._options import (
    add_data_argument,
    add_scale_option,
    add_table_options,
    check_method_params,
    check_output_path,
    check_param_values,
    common_parent,
    fit_estimator,
    make_estimator,
    note,
    parse_params,
    read_table_args,
    scale_args,
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``cluster`` command to ``subparsers``."""
    p = subparsers.add_parser(
        "cluster",
        parents=[common_parent()],
        help="cluster a feature file under pairwise constraints",
        description="Cluster the rows of DATA and write one label per line to OUTPUT.",
    )
    add_data_argument(p, k_auto=True)
    p.add_argument("-m", "--method", default="ncut", help="method name, or 'auto' (default: ncut)")
    add_table_options(p, ids="written beside the labels (header 'id,label')")
    add_scale_option(p)
    p.add_argument(
        "-c",
        "--constraints",
        action="append",
        metavar="PAIRS_CSV",
        help="CSV with columns i,j,kind[,weight]; kind ml/cl; i,j 0-based row indices, or "
        "row IDs with --id-column; repeatable: the files are merged (a pair in several is "
        "kept once, contradictions are errors naming each file:line)",
    )
    p.add_argument(
        "-y",
        "--labels",
        metavar="LABELS",
        help="true labels (one per line, .csv or .npy; or id,label lines with --id-column) "
        "to print the scores",
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
    p.add_argument(
        "--plot-k",
        metavar="FILE.png",
        help="with -k auto: draw the score of every k, the k chosen marked, and the eigengaps",
    )
    p.add_argument("--random-state", type=int, default=0, metavar="S", help="seed (default: 0)")
    add_dask_options(p)
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print every stage with its time on stderr (progress bars for long stages)",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="hide the progress bar of --method auto's search (shown on a terminal)",
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUTPUT",
        help="where to write the labels (CSV, one per line, header 'label'; "
        "'id,label' with --id-column)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``spectralink cluster`` with the parsed ``args``; the exit status."""
    if args.dask is not None:
        from . import cluster_dask

        return cluster_dask.run(args)
    out = Path(args.output)
    _check_outputs(args, out)
    params = parse_params(args.param, allow_prefix=False).get(None, {})
    check_method_params(args.method, params)
    data = read_table_args(args)
    X = scale_args(args, data.X)
    y, cons, given = _pairs_and_truth(args, data, X.shape[0])
    _check_k_options(args)
    for text in check_param_values(args.method, params, X.shape[0], args.k or 2):
        note(text)
    est = make_estimator(args, params)
    if args.no_progress and "verbose" in est.get_params(deep=False):
        est.set_params(verbose=0)
    with _verbose(args.verbose):
        fit_estimator(est, X, cons, params)
    labels = np.asarray(est.labels_)
    _write_labels(out, data, labels)
    _report(args, est, labels, cons, y, given)
    left = (
        ""
        if data.rows is None
        else f" (the {data.n_read - len(labels)} rows left out: empty label)"
    )
    print(f"labels written to {out}{left}")
    _plots(args, est, X, labels, cons)
    return 0


def add_dask_options(p: argparse.ArgumentParser) -> None:
    """``--dask`` and what goes with it (docs/distributed.md)."""
    from ..distributed import DEFAULT_SAMPLE_SIZE

    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run on a Dask cluster: a scheduler's address (tcp://host:8786), or local[:N] "
        "for N local workers; DATA is then a Parquet dataset (folder or glob) or a CSV read in "
        "row blocks, and OUTPUT a Parquet folder of id,label (row,label without --id-column)",
    )
    p.add_argument(
        "--worker-memory",
        metavar="SIZE",
        help="with --dask local[:N]: each worker's memory limit, such as 4GB (default: the "
        "machine's memory shared out)",
    )
    p.add_argument(
        "--sample-size",
        type=int,
        default=DEFAULT_SAMPLE_SIZE,
        metavar="N",
        help="with --dask, methods other than scacs and lscr (and auto) are fitted on the "
        "constrained rows plus N rows drawn uniformly, then label every row with predict "
        f"(default: {DEFAULT_SAMPLE_SIZE})",
    )


def _check_outputs(args: argparse.Namespace, out: Path) -> None:
    """The label file and the figures can be written (before any work)."""
    check_output_path(out)
    for option, path in (("--plot", args.plot), ("--plot-k", args.plot_k)):
        if path is not None:
            check_output_path(Path(path))
            if Path(path).suffix.lower() != ".png":
                raise ValueError(f"{option} {path}: the figure is written as PNG; name it .png.")


def _check_k_options(args: argparse.Namespace) -> None:
    if args.k is None and args.method != "auto":
        raise ValueError(
            f"-k auto needs --method auto ({args.method!r} needs a number of clusters)."
        )
    if args.plot_k is not None and args.k is not None:
        raise ValueError("--plot-k draws the choice of k: it needs -k auto.")


def _pairs_and_truth(args: argparse.Namespace, data, n: int) -> tuple:
    """``(y, constraints, given)``: the labels to score against (or None), the pairs (or
    None), and the rows whose label ``--labeled`` gives (constrained, so not scored)."""
    y = data.labels(args.labels)[0] if args.labels else data.y
    if y is not None and len(y) != n:
        raise ValueError(f"{args.data}: y has {len(y)} labels but X has {n} rows.")
    cons = data.constraints(args.constraints) if args.constraints else None
    given = None
    if args.labeled:
        cons, given = _labeled_constraints(*data.labels(args.labeled), args.labeled, cons)
    return y, cons, given


def _write_labels(out: Path, data, labels: np.ndarray) -> None:
    """One line per row of the file (a row left out by ``--missing drop`` has an empty
    label), with the IDs when there are any; whole or not at all."""
    cells = [str(int(v)) for v in labels]
    if data.rows is not None:
        every = [""] * data.n_read
        for r, c in zip(data.rows, cells, strict=True):
            every[r] = c
        cells = every
    with atomic_write(out, "w", newline="") as fh:
        if data.ids is None:
            fh.write("label\n")
            fh.write("".join(f"{c}\n" for c in cells))
        else:
            writer = csv.writer(fh, lineterminator="\n")  # quotes IDs holding commas
            writer.writerow(["id", "label"])
            writer.writerows(zip(data.ids_read, cells, strict=True))


def _report(args, est, labels: np.ndarray, cons, y, given) -> None:
    """The summary: the fit, Auto's choice, the scores against ``y``, the violations."""
    from ..metrics import violated_fraction

    n, n_found = len(labels), len(np.unique(labels))
    k = getattr(est, "n_clusters_", args.k)
    pairs = (
        f", {len(cons)} constraints ({cons.n_must_link} must-link, "
        f"{cons.n_cannot_link} cannot-link)"
        if cons is not None
        else ""
    )
    chosen = " (chosen)" if args.k is None else ""
    print(f"{args.method}: {n} points, k={k}{chosen} ({n_found} clusters found){pairs}")
    if hasattr(est, "describe"):  # Auto: what the cross-validation chose, and its score
        print(f"  chose      {est.describe()}")
    if y is not None:
        _report_scores(labels, np.asarray(y), given)
    if cons is not None:
        print(f"  violated   {violated_fraction(labels, cons):.4f}")


def _report_scores(labels: np.ndarray, y: np.ndarray, given) -> None:
    """Accuracy, error, ARI and NMI on the rows with a label not given by ``--labeled``."""
    from ..metrics import adjusted_rand_score, clustering_error, normalized_mutual_info_score

    n = len(labels)
    known = labeled_mask(y)  # unlabelled rows (-1, empty) are not scored
    if given is not None:
        known &= ~given
        print(f"  scored on the {int(known.sum())} of {n} points not labelled by --labeled")
    elif not known.all():
        print(f"  scored on the {int(known.sum())} labelled of {n} points")
    if not known.any():
        raise ValueError("no row is left to score: every row is unlabelled or given.")
    y, scored = y[known], labels[known]
    error = clustering_error(y, scored)
    print(f"  accuracy   {1 - error:.4f}")
    print(f"  error      {error:.4f}")
    print(f"  ARI        {adjusted_rand_score(y, scored):.4f}")
    print(f"  NMI        {normalized_mutual_info_score(y, scored):.4f}")


def _plots(args, est, X, labels: np.ndarray, cons) -> None:
    """The figures asked for: the clustering (``--plot``), the choice of k (``--plot-k``)."""
    k = getattr(est, "n_clusters_", args.k)
    if args.plot is not None:
        from ..plots import embedding_2d, plot_clustering

        coords, axes = embedding_2d(est, X)
        title = f"{Path(args.data).name}: {args.method}, k={k}"
        plot_clustering(coords, labels, cons, args.plot, axis_labels=axes, title=title)
        print(f"plot written to {args.plot} ({axes[0].rsplit(' ', 1)[0]} coordinates)")
    if args.plot_k is not None:
        from ..plots import plot_k_scan

        scan = est.k_scan_
        plot_k_scan(scan, args.plot_k, title=f"{Path(args.data).name}: k = {scan.n_clusters}")
        print(f"plot of the choice of k written to {args.plot_k}")


@contextlib.contextmanager
def _verbose(enabled: bool) -> Iterator[None]:
    """Stage lines of the ``spectralink`` logger on stderr, and the total, when enabled."""
    if not enabled:
        yield
        return
    import logging
    import time

    from ..progress import logger

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


def _labeled_constraints(
    codes: np.ndarray, names: np.ndarray, path: str, cons: Constraints | None
) -> tuple[Constraints, np.ndarray]:
    """All pairs among the rows ``codes`` (read from ``path``) labels (joined with ``cons``),
    and those rows."""
    given = codes >= 0
    m = int(given.sum())
    if m < 2:
        raise ValueError(f"{path}: {m} labelled row(s); pairs need at least 2.")
    pairs = Constraints.from_labeled_subset(codes, m)
    note(
        f"{path}: {m} labelled rows in {len(names)} classes "
        f"({', '.join(map(str, names[:10]))}{', ...' if len(names) > 10 else ''}): "
        f"{pairs.n_must_link} must-links, {pairs.n_cannot_link} cannot-links"
    )
    return (pairs if cons is None else cons | pairs), given
