"""COSC paper protocol (Rangapuram & Hein 2012, Section 6): error, cut, violated fraction.

For each dataset and number of random constraint pairs (``Constraints.from_labels``:
a pair with equal labels is a must-link, otherwise a cannot-link), every method clusters
the same graph, COSC's adaptive symmetric 10-NN graph, passed as a precomputed
affinity, so the normalized cuts are comparable. Metrics, averaged over trials:
majority-vote error, normalized (multi-)cut on that graph, fraction of violated
constraints. Methods: COSC (hard mode), SL (Kamvar et al. 2003), CCSR (Li et al. 2009)
and, for two clusters, SCLC (Xu et al. 2009), the paper's baseline that also satisfies the
constraints. Each dataset also records the normalized cut of its label partition, which
satisfies every constraint (method ``labels``).

The original constraint counts and number of trials did not survive in the paper text.
The counts used here are listed in ``COUNTS``. Writes ``docs/results/cosc/protocol.md`` and
one PNG per dataset; every run goes to the table
``docs/results/records/cosc/protocol.jsonl.gz`` (``benchmarks/_store.py``; a run with
``--out <dir>`` outside ``docs/results`` keeps it in ``<dir>/records/protocol.jsonl.gz``).

Usage::

    python -m benchmarks.bench_cosc_protocol                # full run
    python -m benchmarks.bench_cosc_protocol --quick        # 2 trials, 3 counts, 4 starts
    python -m benchmarks.bench_cosc_protocol --datasets sonar diabetes
    python -m benchmarks.bench_cosc_protocol --append --methods SCLC      # add a baseline
    python -m benchmarks.bench_cosc_protocol --trials 20 --first-trial 5 --out <dir>
    python -m benchmarks.bench_cosc_protocol --merge <dir>/records/protocol.jsonl.gz
    python -m benchmarks.bench_cosc_protocol --cosc '{"inner_step": "per_edge"}' --out <dir>
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from benchmarks._common import RESULTS, without_guard
from benchmarks._store import (
    TableLog,
    load_doc,
    read_progress,
    records_note,
    table_path,
    write_table,
)
from spectralink import COSC, Constraints
from spectralink.datasets import load
from spectralink.graph import adaptive_knn_affinity
from spectralink.metrics import majority_vote_error, normalized_cut, violated_fraction
from spectralink.registry import get_method

OUT = RESULTS / "cosc"
#: the baselines' paper settings, where they differ from the library defaults
PAPER_SETTINGS = {"sl": {"normalization": "additive"}, "ccsr": {"shrinkage": 0}, "sclc": {}}

#: dataset -> (loader name, k, constraint counts)
COUNTS = {
    "sonar": ("sonar", 2, [10, 20, 40, 80, 160]),
    "breast_cancer_dedup": ("breast_cancer_dedup", 2, [10, 20, 40, 80, 160]),
    "diabetes": ("diabetes", 2, [25, 50, 100, 200, 400]),
    "spambase_dedup": ("spambase_dedup", 2, [50, 100, 200, 400, 800]),
    "usps_0_vs_rest": ("usps", 2, [100, 200, 400, 800, 1600]),
    "usps_10way": ("usps", 10, [200, 400, 800, 1600, 3200]),
}


def load_task(key):
    name, k, counts = COUNTS[key]
    X, y = load(name)
    if key == "usps_0_vs_rest":
        y = (y == 0).astype(np.int64)
    return X, y, k, counts


def methods(k, args, seed):
    out = {
        "COSC": COSC(
            k,
            affinity="precomputed",
            n_starts=args.n_starts,
            n_recursions=args.n_recursions,
            split_rule="min_cut",  # the paper's k-way rule (not the default)
            random_state=seed,
            guard=None,
            **args.cosc,
        )
    }
    baselines = [("SL", "sl"), ("CCSR", "ccsr")]
    if k == 2:  # SCLC's linear cannot-link encoding is two-cluster only
        baselines.append(("SCLC", "sclc"))
    for label, key in baselines:
        try:
            cls = get_method(key)
        except (ValueError, ImportError):
            continue
        est = cls(k, affinity="precomputed", random_state=seed, **PAPER_SETTINGS[key])
        out[label] = without_guard(est)
    if args.methods:
        out = {m: est for m, est in out.items() if m in args.methods}
    return out


def run_dataset(key, args, log, rows):
    X, y, k, counts = load_task(key)
    if args.quick:
        counts = [counts[0], counts[2], counts[4]]
    if args.counts:
        counts = [int(c) for c in args.counts.split(",")]
    W = adaptive_knn_affinity(X, 10, random_state=0)
    truth = label_row(key, normalized_cut(W, y))
    rows.append(truth)
    log.append(truth)
    for n_pairs in counts:
        for trial in range(args.first_trial, args.trials):
            cons = Constraints.from_labels(y, n_pairs, random_state=1000 * trial + n_pairs)
            for label, est in methods(k, args, trial).items():
                t0 = time.perf_counter()
                try:
                    lab = est.fit(W, constraints=cons).labels_
                except Exception as exc:  # noqa: BLE001 - a failing baseline is reported
                    print(f"  {key} {label} {n_pairs} failed: {exc}", flush=True)
                    continue
                row = {
                    "dataset": key,
                    "method": label,
                    "n_pairs": n_pairs,
                    "trial": trial,
                    "error": majority_vote_error(y, lab),
                    "ncut": normalized_cut(W, lab),
                    "violated": violated_fraction(lab, cons),
                    "seconds": time.perf_counter() - t0,
                    "n_starts": args.n_starts,
                    "n_recursions": args.n_recursions if k > 2 else 0,
                }
                rows.append(row)
                log.append(row)
                print(
                    f"  {key:20s} {label:5s} pairs={n_pairs:5d} trial={trial} "
                    f"err={row['error']:.4f} ncut={row['ncut']:.4f} "
                    f"viol={row['violated']:.3f} ({row['seconds']:.1f} s)",
                    flush=True,
                )


def settings(rows, ds):
    """COSC's starts / recursive runs on ``ds`` (split runs may use different ones)."""
    got = sorted(
        {
            (r.get("n_starts"), r.get("n_recursions"))
            for r in rows
            if r["dataset"] == ds and r["method"] == "COSC"
        },
        key=str,
    )
    return "; ".join(
        f"{s} starts" + (f", {rec} recursive runs" if rec else "") for s, rec in got if s
    )


METHODS = ("COSC", "SL", "CCSR", "SCLC")


def label_cuts(rows):
    """Normalized cut of the ground-truth partition, which satisfies every constraint."""
    return {r["dataset"]: r["ncut"] for r in rows if r["method"] == "labels"}


def summarise(rows):
    table = {}
    for r in rows:
        if r["method"] == "labels":
            continue
        table.setdefault((r["dataset"], r["method"], r["n_pairs"]), []).append(r)
    return {
        key: {
            m: (np.mean([r[m] for r in rs]), np.std([r[m] for r in rs]), len(rs))
            for m in ("error", "ncut", "violated", "seconds")
        }
        for key, rs in table.items()
    }


def paired_error_difference(rows, ds, method, count):
    """``count: mean +- standard error`` of COSC's error minus ``method``'s over shared draws."""
    err = {}
    for r in rows:
        if r["dataset"] == ds and r["n_pairs"] == count and r["method"] in ("COSC", method):
            err.setdefault(r["trial"], {})[r["method"]] = r["error"]
    d = np.array([e["COSC"] - e[method] for e in err.values() if len(e) == 2])
    if len(d) < 2:
        return f"{count}: -"
    return f"{count}: {d.mean():+.4f} +- {d.std(ddof=1) / np.sqrt(len(d)):.4f}"


def write_markdown(summary, args, path, rows=()):
    datasets = sorted({k[0] for k in summary}, key=list(COUNTS).index)
    lines = [
        "# COSC paper protocol (Rangapuram & Hein 2012, Section 6)",
        "",
        "Graph: COSC's adaptive symmetric 10-NN graph for every method (precomputed). "
        "Constraints: random labelled pairs. Mean (std) over trials; error = majority-vote "
        "error, ncut = normalized (multi-)cut on that graph, viol = fraction of violated "
        "constraints. COSC: hard mode; its starts (and recursive runs, k-way) are given per "
        f"dataset{' (--quick run)' if args.quick else ''}.",
        "",
    ]
    claims, truth = [], []
    cuts = label_cuts(rows)
    for ds in datasets:
        meths = [m for m in METHODS if any(k[:2] == (ds, m) for k in summary)]
        counts = sorted({k[2] for k in summary if k[0] == ds})
        per = {
            m: sorted({s["error"][2] for k, s in summary.items() if k[:2] == (ds, m)})
            for m in meths
        }
        if len({t for ts in per.values() for t in ts}) == 1:
            trials = str(next(iter(per.values()))[0])
        else:
            trials = ", ".join(
                f"{m} {'-'.join(map(str, sorted({ts[0], ts[-1]})))}" for m, ts in per.items()
            )
        lines += [
            f"## {ds}",
            "",
            f"Trials per count: {trials}. COSC: {settings(rows, ds) or 'not recorded'}."
            + (
                f" Normalized cut of the label partition (it satisfies every constraint): "
                f"{cuts[ds]:.4f}."
                if ds in cuts
                else ""
            ),
            "",
            "| pairs | " + " | ".join(f"{m} error | {m} ncut | {m} viol" for m in meths) + " |",
            "|---" * (1 + 3 * len(meths)) + "|",
        ]
        for c in counts:
            cells = []
            for m in meths:
                s = summary.get((ds, m, c))
                if s is None:
                    cells += ["-", "-", "-"]
                    continue
                cells += [f"{s[q][0]:.4f} ({s[q][1]:.4f})" for q in ("error", "ncut", "violated")]
            lines.append(f"| {c} | " + " | ".join(cells) + " |")
        lines.append("")
        both = [c for c in counts if (ds, "COSC", c) in summary]
        for m in meths:
            if m == "COSC" or not both:
                continue
            shared = [c for c in both if (ds, m, c) in summary]
            lower = all(
                summary[(ds, "COSC", c)]["ncut"][0] < summary[(ds, m, c)]["ncut"][0] for c in shared
            )
            err_ok = all(
                summary[(ds, "COSC", c)]["error"][0] <= summary[(ds, m, c)]["error"][0] + 1e-12
                for c in shared[-2:]
            )
            top = summary.get((ds, m, shared[-1])) if shared else None
            viol = f"{top['violated'][0]:.3f}" if top else "-"
            diffs = "; ".join(paired_error_difference(rows, ds, m, c) for c in shared[-2:])
            claims.append(
                f"| {ds} | {m} | {'yes' if lower else 'no'} | {'yes' if err_ok else 'no'} "
                f"| {diffs} | {viol} |"
            )
        if ds in cuts and both:
            fits = [r for r in rows if r["dataset"] == ds and r["method"] == "COSC"]
            below = sum(r["ncut"] < cuts[ds] for r in fits)
            truth.append(
                f"| {ds} | {cuts[ds]:.4f} | {below} of {len(fits)} | "
                f"{max(summary[(ds, 'COSC', c)]['ncut'][0] for c in both):.4f} |"
            )
    lines += [
        "## Claims",
        "",
        "| dataset | vs | COSC cut lower at every count | COSC error no worse at the "
        "two largest counts | COSC error minus theirs there (mean +- s.e., paired by draw) "
        "| their violated fraction at the largest count |",
        "|---|---|---|---|---|---|",
        *claims,
        "",
        "## COSC against the label partition",
        "",
        "The label partition satisfies every constraint, so the constrained normalized cut "
        "is at most its cut; a COSC cut above it would show a poor local minimum.",
        "",
        "| dataset | label-partition ncut | COSC fits with a lower cut | COSC's largest mean "
        "ncut over the counts |",
        "|---|---|---|---|",
        *truth,
        "",
        "---",
        "",
        records_note([table_path(args.out, "protocol")]),
        "",
    ]
    path.write_text("\n".join(lines))


def plot(summary, path_dir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for ds in sorted({k[0] for k in summary}):
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
        for m in METHODS:
            counts = sorted(k[2] for k in summary if k[:2] == (ds, m))
            if not counts:
                continue
            for ax, q in zip(axes, ("error", "ncut", "violated"), strict=True):
                mean = [summary[(ds, m, c)][q][0] for c in counts]
                std = [summary[(ds, m, c)][q][1] for c in counts]
                ax.errorbar(counts, mean, yerr=std, marker="o", capsize=3, label=m)
                ax.set_xscale("log")
                ax.set_xlabel("number of constraint pairs")
                ax.set_title(
                    {
                        "error": "majority-vote error",
                        "ncut": "normalized cut",
                        "violated": "fraction violated",
                    }[q]
                )
        axes[0].legend()
        fig.suptitle(ds)
        fig.tight_layout()
        fig.savefig(path_dir / f"{ds}.png", dpi=110)
        plt.close(fig)


FIELDS = [
    "dataset",
    "method",
    "n_pairs",
    "trial",
    "error",
    "ncut",
    "violated",
    "seconds",
    "n_starts",
    "n_recursions",
]


def key_of(row):
    return (row["dataset"], row["method"], int(row["n_pairs"]), int(row["trial"]))


def read_rows(path: Path) -> list[dict]:
    """Rows of a protocol table, or of its run's log when that run did not finish; the
    ``labels`` rows keep their empty ``n_starts`` / ``n_recursions``."""
    got = read_progress(path)
    return [] if got is None else [{k: r.get(k) for k in FIELDS} for r in got[1]]


def replace_rows(rows, new):
    """``rows`` with every row whose key appears in ``new`` replaced by ``new``'s."""
    keys = {key_of(r) for r in new}
    return [r for r in rows if key_of(r) not in keys] + list(new)


def missing_label_rows(rows):
    """``labels`` rows (the cut of the ground truth) for datasets of older runs without one."""
    have = set(label_cuts(rows))
    out = []
    for ds in sorted({r["dataset"] for r in rows} - have, key=list(COUNTS).index):
        X, y, _, _ = load_task(ds)
        W = adaptive_knn_affinity(X, 10, random_state=0)
        out.append(label_row(ds, normalized_cut(W, y)))
    return out


def label_row(ds, ncut):
    return {
        "dataset": ds,
        "method": "labels",
        "n_pairs": 0,
        "trial": 0,
        "error": 0.0,
        "ncut": ncut,
        "violated": 0.0,
        "seconds": 0.0,
        "n_starts": "",
        "n_recursions": "",
    }


def planned_keys(args):
    """Keys (dataset, method, count, trial) a run with these arguments will produce."""
    keys = set()
    for ds in args.datasets:
        _, k, counts = COUNTS[ds]
        if args.quick:
            counts = [counts[0], counts[2], counts[4]]
        if args.counts:
            counts = [int(c) for c in args.counts.split(",")]
        keys.add((ds, "labels", 0, 0))
        meths = [m for m in METHODS if k == 2 or m != "SCLC"]
        for m in meths if not args.methods else [m for m in meths if m in args.methods]:
            keys.update((ds, m, c, t) for c in counts for t in range(args.first_trial, args.trials))
    return keys


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(COUNTS), choices=list(COUNTS))
    parser.add_argument("--trials", type=int, default=None)
    parser.add_argument("--counts", default="", help="constraint counts, e.g. 200,400 (split runs)")
    parser.add_argument(
        "--first-trial",
        type=int,
        default=0,
        help="run trials first-trial .. trials-1 only (adding trials to an earlier run)",
    )
    parser.add_argument("--n-starts", type=int, default=None)
    parser.add_argument("--n-recursions", type=int, default=None)
    parser.add_argument(
        "--cosc",
        type=json.loads,
        default={},
        help='further COSC parameters as JSON, e.g. \'{"inner_step": "per_edge"}\'',
    )
    parser.add_argument(
        "--quick", action="store_true", help="2 trials, 3 counts, 4 starts, 2 recursive runs"
    )
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="rewrite protocol.md and the PNGs from the existing protocol table",
    )
    parser.add_argument(
        "--append",
        action="store_true",
        help="keep the rows of the existing protocol table (or of an interrupted run's "
        "log); rows this run produces replace those with the same dataset, method, count "
        "and trial",
    )
    parser.add_argument(
        "--methods",
        nargs="+",
        choices=list(METHODS),
        default=None,
        help="run only these methods (e.g. a baseline added later, with --append)",
    )
    parser.add_argument(
        "--merge",
        nargs="+",
        type=Path,
        default=[],
        help="protocol tables of split runs (<dir>/records/protocol.jsonl.gz): their rows "
        "replace those of the same key in the table of <out>, then the report is rewritten",
    )
    args = parser.parse_args(argv)
    args.trials = args.trials or (2 if args.quick else 5)
    args.n_starts = args.n_starts or (4 if args.quick else 10)
    args.n_recursions = args.n_recursions or (2 if args.quick else 5)
    args.out.mkdir(parents=True, exist_ok=True)
    path = table_path(args.out, "protocol")
    if args.report_only or args.merge:
        args.append, args.datasets = True, []
    rows = read_rows(path) if args.append else []
    if args.report_only or args.merge:
        report_only(rows, args, path)
        return
    planned = planned_keys(args)
    rows = [r for r in rows if key_of(r) not in planned]
    with TableLog(path, {"cosc": args.cosc}, keep=rows) as log:
        for key in args.datasets:
            print(f"{key}", flush=True)
            run_dataset(key, args, log, rows)
            report(rows, args)
    print((args.out / "protocol.md").read_text())


def report(rows: list[dict], args: argparse.Namespace) -> None:
    """Rewrite ``protocol.md`` and the PNGs from ``rows``."""
    summary = summarise(rows)
    write_markdown(summary, args, args.out / "protocol.md", rows)
    plot(summary, args.out)


def report_only(rows: list[dict], args: argparse.Namespace, path: Path) -> None:
    """Fold in ``--merge``'s tables and the missing ``labels`` rows, then rewrite the report.
    The table is rewritten only when its rows changed: rewriting it unchanged would only
    replace its provenance with today's."""
    for extra in args.merge:
        rows = replace_rows(rows, read_rows(extra))
    added = missing_label_rows(rows)
    rows += added
    if args.merge or added:
        old = load_doc(path)
        write_table(rows, path, config=old["config"], carried=old["provenance"])
    report(rows, args)
    print((args.out / "protocol.md").read_text())


if __name__ == "__main__":
    main()
