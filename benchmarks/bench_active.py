"""Active pair selection: clustering error against the number of queries.

For every dataset, seed, method and strategy the query loop of :mod:`spectralink.active`
asks up to 800 pairs of a perfect oracle (the labels), in batches of 10, and the
estimator (at its defaults, with guard=None) is fitted on the answered pairs after 0, 50,
100, 200, 400 and 800 queries; the clustering error (Hungarian) of each fit is recorded.

Refits. The strategies that do not read the partition (``random``, ``ffqs``,
``minmax``) choose the same pairs whatever the method, so their pair sequence is drawn
once per dataset and seed and every method is fitted on its prefixes. The strategies that
read the partition (``npu``, ``spectral``) choose from the partition of the last fit:
the estimator is refitted after 50, 100, 150, 200, 300, 400 and 600 queries (the
evaluation counts are refits too), i.e. every 50 queries while the partition changes
most and every 100-200 after; the papers refit after every query, which COSC's fit time on
the larger sets puts out of reach (``docs/results/active/RUNS.md``).

Data: digits (scikit-learn), segmentation (standardised, as in ``benchmarks.bench_defaults``),
usps and pendigits (data directory). Seeds seed the selection and the estimator.
Records go to ``docs/results/records/active/<dataset>.jsonl.gz`` (``benchmarks/_store.py``),
logged beside it as they go (one JSON object per fit) and sealed into it when the dataset's
run ends; a run skips the (dataset, method, strategy, seed) cells already complete, so
the grid can be split over processes and resumed::

    python -m benchmarks.bench_active --datasets digits --methods ccsr,lscp
    python -m benchmarks.bench_active --datasets usps --methods cosc --seeds 0,1
    python -m benchmarks.bench_active --report-only
    python -m benchmarks.bench_active --timing        # batch-selection time on USPS

The report (``docs/results/active/README.md``, one table and one PNG per dataset and method)
says which seeds every cell has; ``docs/results/active/RUNS.md`` lists the runs behind it.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_info

from benchmarks._common import RESULTS, without_guard
from benchmarks._store import (
    SUFFIX,
    load_doc,
    log_path,
    records_dir,
    records_note,
    save_doc,
    table_path,
)
from spectralink import Constraints
from spectralink.active import (
    AUTO_STRATEGY,
    PARTITION_STRATEGIES,
    STRATEGIES,
    PairSelector,
    add_answers,
    select_pairs,
)
from spectralink.datasets import load
from spectralink.io import atomic_write
from spectralink.metrics import adjusted_rand_score, clustering_error
from spectralink.plots import plot_metric_curves
from spectralink.registry import get_method

OUT = RESULTS / "active"
DATASETS = ("digits", "segmentation", "usps", "pendigits")
METHODS = ("ccsr", "lscp", "cosc")
COUNTS = (0, 50, 100, 200, 400, 800)
REFIT_AT = (50, 100, 150, 200, 300, 400, 600)
BATCH = 10
STANDARDISE = {"segmentation"}
BASELINES = ("ffqs", "minmax", "npu")


def load_dataset(name: str):
    X, y = load(name)
    X = np.asarray(X, dtype=np.float64)
    if name in STANDARDISE:
        X = StandardScaler().fit_transform(X)
    return X, np.asarray(y)


# --------------------------------------------------------------------------- records
def records_path(dataset: str) -> Path:
    return table_path(OUT, dataset)


def read_records(datasets=DATASETS) -> list[dict]:
    """Records of ``datasets``, the table's and an unfinished run's log; a cell rerun after
    an interruption replaces its partial records."""
    out: dict[tuple, dict] = {}
    for d in datasets:
        table = records_path(d)
        records = load_doc(table)["records"]
        if log_path(table).exists():
            lines = log_path(table).read_text().splitlines()
            records += [json.loads(line) for line in lines if line.strip()]
        for r in records:
            out[(r["dataset"], r["method"], r["strategy"], r["seed"], r["n_queries"])] = r
    return list(out.values())


def seal_records(dataset: str) -> None:
    """Write the table of ``dataset`` from what is on disk and remove the run's log."""
    table = records_path(dataset)
    if log_path(table).exists():
        records = read_records([dataset])
        carried = load_doc(table)["provenance"]
        save_doc(table, {"config": {"dataset": dataset}, "records": records, "provenance": carried})
        log_path(table).unlink()


def append_record(rec: dict) -> None:
    """Log ``rec`` at once (one line per record), so an interrupted run resumes."""
    p = log_path(records_path(rec["dataset"]))
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "a") as fh:
        fh.write(json.dumps(rec) + "\n")


def done_cells(records) -> set:
    got: dict[tuple, set] = {}
    for r in records:
        got.setdefault((r["dataset"], r["method"], r["strategy"], r["seed"]), set()).add(
            r["n_queries"]
        )
    need_zero = set(COUNTS[:1])
    need = set(COUNTS[1:])
    return {k for k, v in got.items() if (need if k[2] != "none" else need_zero) <= v}


# --------------------------------------------------------------------------- fitting
def fit_and_score(method, X, y, k, cons, seed):
    est = without_guard(get_method(method)(n_clusters=k, random_state=seed))
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est.fit(X, constraints=cons)
        except Exception as exc:  # a failing fit is a result, the grid goes on
            return None, {"status": "failed", "message": f"{type(exc).__name__}: {exc}"}
    info = {
        "status": "ok",
        "fit_s": round(time.perf_counter() - t0, 3),
        "error": clustering_error(y, est.labels_),
        "ari": adjusted_rand_score(y, est.labels_),
        "warnings": sorted({type(w.message).__name__ for w in caught}),
    }
    return est, info


def answer_sequence(selector, y, n_total, labels=None):
    """Pairs and answers of a partition-free strategy, ``n_total`` queries."""
    cons = Constraints(n_samples=len(y))
    pairs_all, t_sel = [], 0.0
    while len(pairs_all) < n_total:
        t0 = time.perf_counter()
        pairs = selector.select(min(BATCH, n_total - len(pairs_all)), cons, labels)
        t_sel += time.perf_counter() - t0
        if len(pairs) == 0:
            break
        cons, _ = add_answers(cons, pairs, y[pairs[:, 0]] == y[pairs[:, 1]], warn=False)
        pairs_all += pairs.tolist()
    return np.asarray(pairs_all, dtype=np.int64).reshape(-1, 2), t_sel


def prefix_constraints(pairs, y, c):
    p = pairs[:c]
    same = y[p[:, 0]] == y[p[:, 1]]
    return Constraints(p[same], p[~same], n_samples=len(y))


def base_record(dataset, method, strategy, seed, n_queries, cons, info, select_s, n_fits):
    return {
        "dataset": dataset,
        "method": method,
        "strategy": strategy,
        "seed": seed,
        "n_queries": n_queries,
        "n_ml": int(cons.n_must_link),
        "n_cl": int(cons.n_cannot_link),
        "select_s": round(select_s, 3),
        "n_fits": n_fits,
        **info,
    }


def run_cell_free(dataset, method, strategy, seed, X, y, k, pairs, t_sel):
    for c in COUNTS[1:]:
        cons = prefix_constraints(pairs, y, c)
        _, info = fit_and_score(method, X, y, k, cons, seed)
        append_record(base_record(dataset, method, strategy, seed, c, cons, info, t_sel, 1))
        print(f"  {method:5s} {strategy:8s} seed {seed} {c:4d}: {_fmt(info)}", flush=True)


def run_cell_partition(dataset, method, strategy, seed, X, y, k, est0):
    selector = PairSelector(k, strategy=strategy, random_state=seed).fit(X)
    cons = Constraints(n_samples=len(y))
    labels = est0.labels_ if est0 is not None else None
    asked, t_sel, n_fits = 0, 0.0, 0
    fit_at = sorted(set(REFIT_AT) | set(COUNTS[1:]))
    while asked < COUNTS[-1]:
        nxt = min(c for c in fit_at if c > asked)
        t0 = time.perf_counter()
        pairs = selector.select(min(BATCH, nxt - asked), cons, labels)
        t_sel += time.perf_counter() - t0
        if len(pairs) == 0:
            break
        cons, _ = add_answers(cons, pairs, y[pairs[:, 0]] == y[pairs[:, 1]], warn=False)
        asked += len(pairs)
        if asked in fit_at:
            est, info = fit_and_score(method, X, y, k, cons, seed)
            n_fits += 1
            if est is not None:
                labels = est.labels_
            if asked in COUNTS:
                rec = base_record(dataset, method, strategy, seed, asked, cons, info, t_sel, n_fits)
                append_record(rec)
                print(
                    f"  {method:5s} {strategy:8s} seed {seed} {asked:4d}: {_fmt(info)}", flush=True
                )


def _fmt(info):
    if info["status"] != "ok":
        return "FAILED " + info["message"][:80]
    return f"error {info['error']:.3f} ({info['fit_s']:.1f} s)"


def run(datasets, methods, strategies, seeds):
    done = done_cells(read_records(datasets))
    for dataset in datasets:
        X, y = load_dataset(dataset)
        k = len(np.unique(y))
        print(f"{dataset}: n={len(y)}, d={X.shape[1]}, k={k}", flush=True)
        for seed in seeds:
            sequences = {}
            for method in methods:
                todo = [s for s in strategies if (dataset, method, s, seed) not in done]
                need_zero = (dataset, method, "none", seed) not in done
                partition_todo = [s for s in todo if s in PARTITION_STRATEGIES]
                est0 = None
                if need_zero or partition_todo:
                    cons0 = Constraints(n_samples=len(y))
                    est0, info = fit_and_score(method, X, y, k, cons0, seed)
                    if need_zero:
                        append_record(
                            base_record(dataset, method, "none", seed, 0, cons0, info, 0.0, 1)
                        )
                        print(f"  {method:5s} none     seed {seed}    0: {_fmt(info)}", flush=True)
                for strategy in todo:
                    if strategy in PARTITION_STRATEGIES:
                        run_cell_partition(dataset, method, strategy, seed, X, y, k, est0)
                    else:
                        if strategy not in sequences:
                            sel = PairSelector(k, strategy=strategy, random_state=seed).fit(X)
                            sequences[strategy] = answer_sequence(sel, y, COUNTS[-1])
                        pairs, t_sel = sequences[strategy]
                        run_cell_free(dataset, method, strategy, seed, X, y, k, pairs, t_sel)
        seal_records(dataset)


# --------------------------------------------------------------------------- timing
def _n_threads() -> int:
    return max((p.get("num_threads", 1) for p in threadpool_info()), default=1)


def timing(dataset="usps", n_answers=200, repeats=5):
    """Seconds to choose a batch of 20 pairs once the estimator is fitted.

    Each strategy first asks ``n_answers`` pairs of the labels through its own selector
    (in batches of 10, reading the partition of CCSR fitted without constraints), then
    CCSR is refitted on those answers and the batch of 20 is timed on that state: what a
    query loop or ``spectralink query`` pays between two rounds of answers.
    """
    X, y = load_dataset(dataset)
    k = len(np.unique(y))
    load0 = os.getloadavg()[0]
    est = without_guard(get_method("ccsr")(n_clusters=k, random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        est.fit(X)
        t_fit = time.perf_counter() - t0
    labels0 = est.labels_
    lines = [
        f"# Choosing a batch of 20 pairs on {dataset} (n = {len(y)}, d = {X.shape[1]})",
        "",
        "Generated by `python -m benchmarks.bench_active --timing` (run under a lock that "
        "keeps every other heavy job off the machine). Every strategy asks "
        f"{n_answers} pairs of the labels through its own `PairSelector` (batches of 10, "
        f"reading the partition of CCSR without constraints, fitted in {t_fit:.2f} s: the "
        "baseline of the ratios), CCSR is refitted on those answers, and then: `build` is "
        "the first `select` call of a fresh selector, with no answers yet (`spectral` "
        "builds its k-NN graph and spectral embedding; NPU trains its random forest only "
        "once two groups are known: see `new partition`); "
        f"`batch of 20` is the median of {repeats} calls on the fitted state (what a query "
        "loop pays per round between refits); `new partition` is one call after the "
        "partition changed (NPU refits its forest); `select_pairs` is the one-call "
        "function, which builds everything each time (what `spectralink query` pays).",
        "",
        f"Load average {load0:.2f} at the start, {_n_threads()} BLAS thread(s).",
        "",
        "| strategy | build | batch of 20 (median) | / CCSR fit | new partition | "
        "select_pairs | ML of the answers |",
        "|---|---|---|---|---|---|---|",
    ]
    for strategy in STRATEGIES:
        sel = PairSelector(k, strategy=strategy, random_state=0).fit(X)
        t0 = time.perf_counter()
        sel.select(BATCH, None, labels0)
        build = time.perf_counter() - t0
        cons = Constraints(n_samples=len(y))
        while len(cons) < n_answers:
            pairs = sel.select(BATCH, cons, labels0)
            if len(pairs) == 0:
                break
            cons, _ = add_answers(cons, pairs, y[pairs[:, 0]] == y[pairs[:, 1]], warn=False)
        fitted = without_guard(get_method("ccsr")(n_clusters=k, random_state=0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted.fit(X, constraints=cons)
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            sel.select(20, cons, fitted.labels_)
            times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        sel.select(20, cons, labels0)
        changed = time.perf_counter() - t0
        t0 = time.perf_counter()
        select_pairs(
            X,
            20,
            n_clusters=k,
            constraints=cons,
            estimator=fitted,
            strategy=strategy,
            random_state=0,
        )
        one = time.perf_counter() - t0
        med = float(np.median(times))
        lines.append(
            f"| {strategy} | {build:.2f} s | {med:.3f} s | {med / t_fit:.3f} | "
            f"{changed:.2f} s | {one:.2f} s | {cons.n_must_link} |"
        )
        print(lines[-1], flush=True)
    lines += ["", f"Load average {os.getloadavg()[0]:.2f} at the end."]
    text = "\n".join(lines) + "\n"
    OUT.mkdir(parents=True, exist_ok=True)
    with atomic_write(OUT / "timing.md", "w") as fh:
        fh.write(text)
    print(text)


# --------------------------------------------------------------------------- report
def _mean(records, **match):
    vals = [
        r["error"]
        for r in records
        if r["status"] == "ok" and all(r[k] == v for k, v in match.items())
    ]
    return (
        (float(np.mean(vals)), float(np.std(vals, ddof=1)) if len(vals) > 1 else 0.0, len(vals))
        if vals
        else (np.nan, np.nan, 0)
    )


def report(datasets, methods, strategies):
    records = read_records(datasets)
    if not records:
        print("no records yet")
        return
    lines = [
        "# Active pair selection: error against the number of queries",
        "",
        "Generated by `python -m benchmarks.bench_active` (see its docstring for the protocol "
        "and how to split or resume the grid). Perfect oracle (the labels), batches of "
        f"{BATCH} pairs, every estimator at its defaults (guard=None); clustering error "
        "(Hungarian), mean ± std over the seeds. Count 0 is the same unconstrained fit for "
        "every strategy. "
        "Strategies that read the partition (npu, spectral) refit after "
        f"{', '.join(map(str, REFIT_AT))} queries and at every evaluation count. "
        f"`auto` = `{AUTO_STRATEGY}`. The commands that produced these records, and which "
        "part of the grid they cover, are in [RUNS.md](RUNS.md); the batch-selection "
        "times are in [timing.md](timing.md).",
        "",
    ]
    summary, cells = [], []
    for dataset in datasets:
        for method in methods:
            mine = [r for r in records if r["dataset"] == dataset and r["method"] == method]
            if not mine:
                continue
            seeds = sorted({r["seed"] for r in mine})
            lines += [f"## {dataset}, {method} (seeds {', '.join(map(str, seeds))})", ""]
            lines += [
                "| strategy | " + " | ".join(map(str, COUNTS)) + " | ML at 200 / 800 |",
                "|---" * (len(COUNTS) + 2) + "|",
            ]
            zero = _mean(mine, strategy="none")
            plot_recs = []
            for strategy in strategies:
                row = [strategy]
                for c in COUNTS:
                    m, s, n = zero if c == 0 else _mean(mine, strategy=strategy, n_queries=c)
                    row.append(
                        ""
                        if n == 0
                        else f"{m:.3f} ± {s:.3f}" + ("" if n == len(seeds) else f" ({n})")
                    )
                    if n:
                        plot_recs += [
                            {
                                "dataset": dataset,
                                "method": strategy,
                                "n_constraints": c,
                                "error": r["error"],
                                "status": "ok",
                            }
                            for r in mine
                            if r["status"] == "ok"
                            and (
                                r["strategy"] == "none"
                                if c == 0
                                else (r["strategy"] == strategy and r["n_queries"] == c)
                            )
                        ]
                mls = []
                for c in (200, 800):
                    v = [
                        r["n_ml"] for r in mine if r["strategy"] == strategy and r["n_queries"] == c
                    ]
                    mls.append(f"{np.mean(v):.0f}" if v else "")
                row.append(" / ".join(mls))
                lines.append("| " + " | ".join(row) + " |")
            failed = [r for r in mine if r["status"] != "ok"]
            if failed:
                lines += ["", f"{len(failed)} failed fit(s), first: {failed[0]['message']}"]
            fits = [r["fit_s"] for r in mine if r["status"] == "ok"]
            lines += ["", f"Mean fit time {np.mean(fits):.1f} s over {len(fits)} fits.", ""]
            if plot_recs:
                plot_metric_curves(
                    plot_recs,
                    OUT / f"{dataset}_{method}.png",
                    title=f"{dataset}, {method}: error vs queries",
                    xlabel="number of queries",
                )
            cell = {"dataset": dataset, "method": method, "by_seed": {}}
            for strategy in strategies:
                for c in COUNTS[1:]:
                    cell[(strategy, c)] = _mean(mine, strategy=strategy, n_queries=c)[0]
            for r in mine:
                if r["status"] == "ok":
                    cell["by_seed"][(r["strategy"], r["n_queries"], r["seed"])] = r["error"]
            cells.append(cell)
    if cells:
        summary += _criteria(cells, strategies)
    note = ["", "---", "", records_note(sorted(records_dir(OUT).glob(f"*{SUFFIX}")))]
    text = "\n".join(lines[:2] + summary + lines[2:] + note) + "\n"
    OUT.mkdir(parents=True, exist_ok=True)
    with atomic_write(OUT / "README.md", "w") as fh:
        fh.write(text)
    print(text)


def _criteria(cells, strategies):
    d = AUTO_STRATEGY
    full = [c for c in cells if all(np.isfinite(c[(s, n)]) for s in strategies for n in COUNTS[1:])]
    out = ["## Summary", ""]
    if not full:
        return out + ["No (dataset, method) cell has every strategy and count yet.", ""]
    out.append(
        f"Averaged over the {len(full)} (dataset, method) cells with every strategy and count "
        f"({', '.join(c['dataset'] + '/' + c['method'] for c in full)}):"
    )
    out.append("")
    out += [
        "| strategy | " + " | ".join(map(str, COUNTS[1:])) + " | mean 50-800 |",
        "|---" * (len(COUNTS) + 1) + "|",
    ]
    avg = {}
    for s in strategies:
        vals = [np.mean([c[(s, n)] for c in full]) for n in COUNTS[1:]]
        avg[s] = float(np.mean(vals))
        out.append(f"| {s} | " + " | ".join(f"{v:.3f}" for v in vals) + f" | {avg[s]:.3f} |")
    a200 = np.mean([c[(d, 200)] for c in full])
    r400 = np.mean([c[("random", 400)] for c in full])
    out += [
        "",
        f"* `{d}` (the default) with 200 queries: mean error {a200:.3f}; random with 400: "
        f"{r400:.3f} -> criterion {'met' if a200 <= r400 else 'NOT met'}.",
    ]
    for b in BASELINES:
        if b in avg:
            at200 = [c[(b, 200)] for c in full]
            wins = sum(c[(d, 200)] < c[(b, 200)] for c in full)
            out.append(
                f"* `{d}` against `{b}`: mean over counts 50-800 {avg[d]:.3f} vs {avg[b]:.3f} "
                f"-> {'lower' if avg[d] < avg[b] else 'NOT lower'}; at 200 queries "
                f"{a200:.3f} vs {np.mean(at200):.3f} -> "
                f"{'lower' if a200 < np.mean(at200) else 'NOT lower'} "
                f"(lower in {wins} of {len(full)} cells)."
            )
    out += _paired(full, d)
    methods = list(dict.fromkeys(c["method"] for c in full))
    out += [
        "",
        "Per method (mean over the datasets of the cells above: error at 200 queries / mean "
        "over 50-800; random at 400 in the last row):",
        "",
        "| strategy | " + " | ".join(methods) + " |",
        "|---" * (len(methods) + 1) + "|",
    ]
    for s in strategies:
        row = []
        for m in methods:
            mine = [c for c in full if c["method"] == m]
            at200 = np.mean([c[(s, 200)] for c in mine])
            over = np.mean([c[(s, n)] for c in mine for n in COUNTS[1:]])
            row.append(f"{at200:.3f} / {over:.3f}")
        out.append(f"| {s} | " + " | ".join(row) + " |")
    out.append(
        "| random at 400 | "
        + " | ".join(
            f"{np.mean([c[('random', 400)] for c in full if c['method'] == m]):.3f}"
            for m in methods
        )
        + " |"
    )
    out.append("")
    worse = [
        f"{c['dataset']}/{c['method']} ({c[(d, 200)]:.3f} vs {c[('random', 400)]:.3f})"
        for c in full
        if c[(d, 200)] > c[("random", 400)]
    ]
    if worse:
        out.append(f"* Cells where `{d}` at 200 is above random at 400: {', '.join(worse)}.")
    out.append("")
    return out


def _paired(full, d):
    """Default minus each baseline, paired by seed, with the standard error of the mean.

    The difference is averaged over the seeds of a cell, then over the cells (as the
    summary's means are); its standard error combines the seed-to-seed variance of the
    paired differences within each cell, so it says whether a gap between two
    strategies at one count is larger than the spread of the draws.
    """
    out = [
        "",
        f"`{d}` minus each baseline, paired by seed (mean over the cells ± standard error; "
        f"below 0: `{d}` lower), and in how many (cell, seed) draws `{d}` is lower / higher:",
        "",
        "| baseline | " + " | ".join(map(str, COUNTS[1:])) + " |",
        "|---" * len(COUNTS) + "|",
    ]
    for b in ("random", *BASELINES):
        row = []
        for n in COUNTS[1:]:
            means, var_terms, lower, higher = [], [], 0, 0
            for c in full:
                diffs = np.array(
                    [
                        e - c["by_seed"][(b, n, seed)]
                        for (s, m, seed), e in c["by_seed"].items()
                        if s == d and m == n and (b, n, seed) in c["by_seed"]
                    ]
                )
                if len(diffs) == 0:
                    continue
                means.append(diffs.mean())
                var_terms.append(diffs.var(ddof=1) / len(diffs) if len(diffs) > 1 else 0.0)
                lower += int((diffs < 0).sum())
                higher += int((diffs > 0).sum())
            if not means:
                row.append("")
                continue
            se = np.sqrt(np.sum(var_terms)) / len(means)
            row.append(f"{np.mean(means):+.3f} ± {se:.3f} ({lower} / {higher})")
        out.append(f"| {b} | " + " | ".join(row) + " |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--timing", action="store_true", help="time batch selection on USPS")
    a = ap.parse_args()
    datasets = [s for s in a.datasets.split(",") if s]
    methods = [s for s in a.methods.split(",") if s]
    strategies = [s for s in a.strategies.split(",") if s]
    if a.timing:
        return timing()
    if not a.report_only:
        run(datasets, methods, strategies, [int(s) for s in a.seeds.split(",") if s])
    report(list(DATASETS), list(METHODS), list(STRATEGIES))


if __name__ == "__main__":
    main()
