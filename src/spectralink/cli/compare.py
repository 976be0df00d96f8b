"""``spectralink compare``: the papers' protocol on a dataset or a labelled file, with every
run recorded as it finishes and ``--resume`` to finish an interrupted one.

Wiring only: the protocol, the record log, resuming and the summaries live in
:mod:`spectralink.experiments`.
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import sys
from pathlib import Path

import numpy as np

from ..io import csv_delimiter, labels_from_cells, read_features, read_text_table
from ..tables import FLAGS, Spelling
from ._options import (
    add_scale_option,
    add_table_options,
    check_method_params,
    check_param_values,
    common_parent,
    method_params,
    note,
    parse_params,
    scale_args,
)

_BASELINES = ("ncut", "sl", "copkmeans")
DEFAULT_DATASET = "iris"
#: Default counts per protocol: random pairs, or labelled points (all pairs among them).
DEFAULT_CONSTRAINTS = {"pairs": (0, 50, 100, 200, 400, 800), "labeled": (0, 5, 10, 20, 30, 40)}
DEFAULT_TRIALS = 10


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``compare`` command to ``subparsers``."""
    p = subparsers.add_parser(
        "compare",
        parents=[common_parent()],
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
    add_table_options(p, table="the --data table")
    add_scale_option(p)
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
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``spectralink compare`` with the parsed ``args``; the exit status."""
    from ..experiments import Comparison

    methods, counts, out = _checked_options(args)
    name, X, y, k = _checked_data(args, methods, counts)
    comparison = Comparison(
        name, X, y, methods, counts, n_trials=args.trials, protocol=args.protocol,
        random_state=args.random_state, scale=args.scale,
        data=None if args.data is None else str(args.data),
    )  # fmt: skip
    log_path = out / f"{name}_runs.jsonl"
    plan = comparison.plan(log_path, args.resume)
    for text in plan.notes:
        note(text)
    print(
        f"{name}: n={X.shape[0]}, d={X.shape[1]}, k={k}; methods {', '.join(methods)}; "
        f"protocol '{args.protocol}', {args.trials} trials per count, seed {args.random_state}",
        flush=True,
    )
    if plan.done:
        print(f"resuming: {len(plan.done)} of {plan.total} runs already in {log_path}", flush=True)
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    records, interrupted = comparison.run(log_path, plan, progress=not args.no_progress)
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
        _nothing_written(records, log_path, out, plan.keep, created)
    paths = comparison.write(out, records, args.metric, plan.total)
    paths.append(_plot(args, comparison, records, out, plan.total, interrupted))
    _print_summary(args, records, plan.total, interrupted, [log_path, *paths])
    if interrupted:
        print(
            f"spectralink: interrupted after {len(records)} of {plan.total} runs; the partial "
            f"results are written; resume with: {resume_hint}",
            file=sys.stderr,
        )
        return 130
    return 0


def _checked_options(args: argparse.Namespace) -> tuple[dict, list[int], Path]:
    """The methods, the counts and the output folder, checked before any data is read."""
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
    return methods, counts, out


def _checked_data(args: argparse.Namespace, methods: dict, counts: list[int]) -> tuple:
    """``(name, X, y, k)``, with every method, parameter value and count checked against
    them before any run (and any file)."""
    from ..experiments import check_methods

    name, X, y = _compare_data(args)
    X = scale_args(args, X)
    n, k = X.shape[0], len(np.unique(y))
    if k < 2:
        raise ValueError(f"{name}: the labels hold {k} class; compare needs at least 2.")
    limit = n * (n - 1) // 2 if args.protocol == "pairs" else n
    if max(counts) > limit:
        what = "distinct pairs" if args.protocol == "pairs" else "points"
        raise ValueError(f"--constraints {max(counts)} exceeds the {limit} {what} of {name}.")
    check_methods(methods, k, n)
    for method, params in methods.items():
        for text in check_param_values(method, params, n, k):
            note(text)
    return name, X, y, k


def _nothing_written(records: list[dict], log_path: Path, out: Path, keep, created) -> None:
    """Every run failed: leave no trace of this run (unless earlier records are kept) and
    raise with the first failure."""
    if not keep:
        log_path.unlink(missing_ok=True)
        if created:
            with contextlib.suppress(OSError):
                out.rmdir()
    first = next((r["message"] for r in records if r["message"]), "")
    raise ValueError(f"every run failed, nothing written; first failure: {first}")


def _plot(args, comparison, records: list[dict], out: Path, total: int, partial: bool) -> Path:
    """The curve of the metric against the number of constraints; its path."""
    from ..plots import plot_metric_curves

    path = out / f"{comparison.name}_{args.metric}.png"
    n, k = comparison.X.shape[0], comparison.n_clusters
    cut = f", partial: {len(records)} of {total} runs" if partial else ""
    plot_metric_curves(
        records,
        path,
        metric=args.metric,
        title=f"{comparison.name} (n={n}, k={k}), {args.trials} trials{cut}",
        xlabel="number of labelled points"
        if args.protocol == "labeled"
        else "number of pairwise constraints",
        log_x=args.log_x,
    )
    return path


def _print_summary(args, records: list[dict], total: int, partial: bool, written) -> None:
    """The table of the metric, the failures and warnings, and the files written."""
    from ..experiments import count_label, format_table, problem_lines, summarize

    print(f"\n{args.metric}, mean ± std over {args.trials} trials")
    if partial:
        print(f"(partial: {len(records)} of {total} runs finished)")
    table = summarize(records, args.metric)
    print(format_table(table, markdown=False, count_label=count_label(args.protocol)))
    lines = problem_lines(records)
    if lines:
        print("\n" + "\n".join(lines))
    print("\nwritten: " + ", ".join(str(p) for p in written))


def _without_resume(argv: list[str]) -> list[str]:
    return [a for a in argv if a != "--resume"]


def _compare_methods(args: argparse.Namespace) -> dict[str, dict]:
    from ..registry import available_methods, get_method

    if args.methods is None:
        names = [m for m in _BASELINES if m in available_methods()]
    else:
        names = [m.strip().lower() for m in args.methods.split(",") if m.strip()]
        if not names:
            raise ValueError("--methods is empty; give names such as ncut,sl,copkmeans.")
    for name in names:
        get_method(name)
    params = parse_params(args.param, allow_prefix=True)
    unknown = sorted(set(params) - {None} - set(names))
    if unknown:
        raise ValueError(f"--param for method {unknown[0]!r}, which is not in --methods.")
    out = {}
    for name in dict.fromkeys(names):
        allowed = method_params(name)
        mine = {k: v for k, v in params.get(None, {}).items() if k in allowed}
        mine.update(params.get(name, {}))
        check_method_params(name, mine)
        out[name] = mine
    global_unused = set(params.get(None, {})) - set().union(*(method_params(m) for m in out))
    if global_unused:
        raise ValueError(f"no method in --methods has a parameter {sorted(global_unused)[0]!r}.")
    return out


def _compare_data(args: argparse.Namespace) -> tuple[str, np.ndarray, np.ndarray]:
    """``(name, X, y)`` from ``--dataset`` or ``--data FILE``."""
    from ..datasets import load

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
        X, y, _ = read_features(path, columns=args.columns, drop=args.drop, spelling=FLAGS)
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
        table = read_text_table(
            path,
            csv_delimiter(path),
            header=args.header,
            columns=args.columns,
            drop=args.drop,
            id_column=args.label_column,
            spelling=Spelling(flags=True, renamed=(("id_column", "--label-column"),)),
        )
        for text in table.notes:
            note(text)
        X, y = table.X, _classes(table.ids, path, args.label_column)
    return path.stem, X, y


def _classes(values: np.ndarray, path: Path, column: str) -> np.ndarray:
    """Class labels from the cells of a label column: integers when all are, else text."""
    y = labels_from_cells([str(v) for v in values])
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
