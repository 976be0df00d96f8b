"""``spectralink cluster --dask``: the same command on a table read with Dask, fitted by
each method's route (:mod:`spectralink.distributed`), labels written as a Parquet folder."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ..distributed import (
    WorkerMemory,
    connect,
    fit_at_scale,
    read_dask_table,
    read_row_pairs,
    route_of,
    score_labels,
    write_labels,
)
from ._options import check_method_params, make_estimator, note, parse_params

#: Options of the in-core command that need the whole table in memory.
_IN_CORE_ONLY = {
    "plot": "--plot",
    "plot_k": "--plot-k",
    "labeled": "--labeled",
}


def run(args: argparse.Namespace) -> int:
    """Run ``spectralink cluster --dask`` with the parsed ``args``; the exit status."""
    _check_args(args)
    out = Path(args.output)
    params = parse_params(args.param, allow_prefix=False).get(None, {})
    check_method_params(args.method, params)
    est = make_estimator(args, params)
    if args.no_progress and "verbose" in est.get_params(deep=False):
        est.set_params(verbose=0)
    t0 = time.perf_counter()
    try:
        with connect(args.dask, memory_limit=args.worker_memory) as client:
            _run_on(client, args, est, out, t0)
    except Exception as exc:
        if type(exc).__module__.split(".")[0] != "distributed":
            raise
        # a worker lost, a task cancelled: the engine's own error, in one line
        raise ConnectionError(
            f"the Dask cluster failed ({type(exc).__name__}: {exc}); no labels were written."
        ) from None
    return 0


def _run_on(client, args: argparse.Namespace, est, out: Path, t0: float) -> None:
    """Read, fit, label and report on ``client``'s cluster."""
    note(f"Dask: {len(client.scheduler_info()['workers'])} worker(s) at {args.dask}")
    table = read_dask_table(
        args.data,
        id_column=args.id_column,
        columns=_names(args.columns),
        drop=_names(args.drop) or (),
    )
    for text in table.notes:
        note(text)
    used, ratio = table.standardise(args.scale)
    note(
        f"features {'standardised' if used == 'standard' else 'used as given'} "
        f"(--scale {args.scale}; the widest column's spread is {ratio:.1f} times the median's)"
    )
    pairs = read_row_pairs(table, args.constraints) if args.constraints else None
    for text in pairs.notes if pairs is not None else ():
        note(text)
    with WorkerMemory(client) as memory:
        fitted = fit_at_scale(
            est,
            table.features_array(),
            pairs,
            sample_size=args.sample_size,
            random_state=args.random_state,
        )
        t_fit = time.perf_counter() - t0
        write_labels(table, fitted, out)
        t_all = time.perf_counter() - t0
    _report(args, table, fitted, pairs, out, (t_fit, t_all, memory))


def _names(text: str | None) -> list[str] | None:
    return None if text is None else [c.strip() for c in text.split(",") if c.strip()]


def _check_args(args: argparse.Namespace) -> None:
    """What the command cannot do at scale, said before any work."""
    for dest, flag in _IN_CORE_ONLY.items():
        if getattr(args, dest, None) is not None:
            raise ValueError(f"{flag} needs the whole table in memory; it does not go with --dask.")
    if args.missing != "error":
        raise ValueError(
            "--missing applies to tables read in memory; with --dask fill empty "
            "cells first (a missing value stops the run with its column's name)."
        )
    if args.categorical != "drop":
        raise ValueError(
            "--categorical encode applies to tables read in memory; with --dask "
            "text columns are left out (encode them first)."
        )
    if args.k is None and args.method != "auto":
        raise ValueError(
            f"-k auto needs --method auto ({args.method!r} needs a number of clusters)."
        )
    if args.worker_memory is not None and not args.dask.strip().startswith("local"):
        raise ValueError("--worker-memory sets the workers of a local cluster (--dask local[:N]).")
    if args.sample_size < 1:
        raise ValueError(f"--sample-size must be at least 1, got {args.sample_size}.")
    out = Path(args.output)
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise FileNotFoundError(2, "output directory does not exist", str(parent))
    if out.exists() and not out.is_dir():
        raise FileExistsError(17, "the labels are a Parquet folder; a file has that name", str(out))


def _report(args, table, fitted, pairs, out: Path, cost: tuple) -> None:
    """The summary: the route, the fit, the scores against ``--labels``, the times."""
    est = fitted.estimator_
    k = getattr(est, "n_clusters_", args.k)
    n = fitted.n_rows_
    given = f", {len(pairs.constraints)} constraints on {len(pairs.rows)} rows" if pairs else ""
    print(f"{args.method}: {n:,} rows, k={k}{given} (route: {route_of(est)})")
    print(f"  fitted     {fitted.describe()}")
    if args.labels:
        key = "id" if table.id_column is not None else "row"
        scores = score_labels(read_dask_table(out).frame, args.labels, key=key)
        if scores["n_scored"] < scores["n_rows"]:
            scored, rows = scores["n_scored"], scores["n_rows"]
            print(f"  scored on the {scored:,} of {rows:,} rows with a known class")
        print(f"  error      {scores['error']:.4f}")
        print(f"  ARI        {scores['ari']:.4f}")
        print(f"  NMI        {scores['nmi']:.4f}")
    t_fit, t_all, memory = cost
    print(f"  time       fit {t_fit:.1f} s, fit and every label written {t_all:.1f} s")
    if memory.peak:
        limit = f" (limit {memory.limit / 2**30:.2f} GB)" if memory.limit else ""
        print(f"  memory     largest worker {memory.peak / 2**30:.2f} GB{limit}")
    print(f"labels written to {out} ({table.n_partitions} file(s), one per partition)")
