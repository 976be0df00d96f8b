"""Choosing bandwidths and methods from the constraints alone: how close to the labels?

Two parts, each resumable (records are written after every draw and a draw already
recorded is skipped) and splittable by dataset:

``select`` (iris, wine, breast_cancer, digits, segmentation, sonar, usps; 400 and 1000
random pairs; 5 draws). For every draw the script runs

1. ``spectralink.Auto`` at its defaults (time, choice, error, its search's fold scores);
2. a second :class:`~spectralink.model_selection.ConstraintSearchCV` on the same draw with
   the same ``random_state`` (hence the same folds and per-fold seeds, so its fold scores
   extend Auto's table exactly: the NCut row is recomputed and checked equal) over the
   bandwidths Auto does not try (CCSR, CCSKL and LSCP at 0.25 r and 4 r) and COSC's
   neighbourhood size (COSC's default graph is the adaptive k-NN graph, which has no
   bandwidth: ``n_neighbors`` in 5, 10, 20 is selected instead) where COSC's k-way fits
   are affordable (``--cosc-datasets``);
3. every candidate of both searches, and every other library method at its defaults
   (SL, E2CP, SSKK, LSC-R, FCSC up to 5000 points, SCLC for two clusters, COSC), fitted on
   all the pairs: their clustering error with the labels is the "chosen with the labels"
   side.

The report then shows (a) for CCSR, LSCP and COSC, the mean error of the bandwidth (COSC:
neighbourhood size) chosen by the search against the best grid value chosen with the labels
(one value per dataset and count, the lowest mean error over the draws); (b) Auto against
the best single method chosen with the labels (every method at its defaults and every grid
value, one per dataset and count) and against NCut, draw by draw; and, from the recorded
fold scores, the alternatives to Auto's selection rule (highest mean; one-standard-error
margins 0.5, 1, 2; best-mean-then-check), replayed on the same folds.

``peers`` (iris raw, wine and breast_cancer standardised, digits raw; 50, 100, 200, 400
random distinct pairs; 10 draws; ARI): Auto alone, through
:func:`spectralink.experiments.run_protocol`, against the best peer library figures.

``timing`` (digits, usps; one draw of 400 pairs): Auto at its defaults with ``--n-jobs``
workers, and NCut on the same data as the baseline; run it alone on the machine.

Results: ``docs/results/model_selection/results.md`` (generated) and ``README.md`` beside it.
Run through the machine's CPU slots with one BLAS thread, e.g.::

    OMP_NUM_THREADS=1 python -m benchmarks.bench_model_selection --part select --datasets iris,wine
    python -m benchmarks.bench_model_selection --part peers --datasets digits
    python -m benchmarks.bench_model_selection --part timing --n-jobs 2 --alone
    python -m benchmarks.bench_model_selection --report-only
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone

from benchmarks._common import without_guard
from benchmarks._model_selection import (
    COSC_NEIGHBORS,
    COSC_SELECT_DATASETS,
    DATASETS,
    EXTRA_SIGMA_METHODS,
    EXTRA_SIGMAS,
    FCSC_MAX,
    FOLD_COUNTS,
    FOLD_DATASETS,
    ORACLE_ONLY,
    OUT,
    PEER_COUNTS,
    PEER_DATASETS,
    PEER_DRAWS,
    SELECT_COUNTS,
    SELECT_DRAWS,
    STANDARDISE,
    TIMING_COUNT,
    TIMING_DATASETS,
    label,
    load_dataset,
    record_path,
    report,
)
from benchmarks._store import load_doc, save_doc, table_path
from spectralink import Auto, Constraints
from spectralink.auto import method_name
from spectralink.datasets import DatasetNotFoundError
from spectralink.experiments import cell_seed
from spectralink.methods.ncut import NCut
from spectralink.metrics import adjusted_rand_score, clustering_error, violated_fraction
from spectralink.model_selection import (
    ConstraintSearchCV,
    relative_sigmas,
)
from spectralink.registry import get_method


# --------------------------------------------------------------------------- candidates
def extra_grid(name: str, k: int) -> list[dict]:
    grid = [{"estimator": [NCut(k)]}]  # the same reference row as Auto's: checked equal
    for m in EXTRA_SIGMA_METHODS:
        est = without_guard(get_method(m)(k))
        grid.append({"estimator": [est], "sigma": relative_sigmas(EXTRA_SIGMAS)})
    if name in COSC_SELECT_DATASETS:
        est = without_guard(get_method("cosc")(k))
        grid.append({"estimator": [est], "n_neighbors": list(COSC_NEIGHBORS)})
    return grid


def oracle_only(name: str, n: int, k: int, cv_labels: set[str]) -> list:
    out = []
    for m in ORACLE_ONLY:
        if m == "fcsc" and n > FCSC_MAX or m == "sclc" and k != 2:
            continue
        if m in cv_labels or f"{m} n_neighbors=10" in cv_labels:
            continue  # already fitted as a candidate
        out.append(without_guard(get_method(m)(k)))
    return out


def score(y, labels, cons) -> dict:
    return {
        "error": clustering_error(y, labels),
        "ari": float(adjusted_rand_score(y, labels)),
        "violated": violated_fraction(labels, cons),
    }


def fit_all(est, X, y, cons, seed) -> dict:
    est = clone(est)
    if "random_state" in est.get_params() and est.get_params()["random_state"] is None:
        est.set_params(random_state=seed)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, constraints=cons)
    except Exception as exc:  # COP-KMeans: no feasible assignment
        return {"status": f"failed: {type(exc).__name__}: {exc}"[:300], "error": None,
                "ari": None, "violated": None, "time_s": time.perf_counter() - t0}  # fmt: skip
    return {"status": "ok", **score(y, est.labels_, cons), "time_s": time.perf_counter() - t0}


def search_rows(search, source: str) -> dict[str, dict]:
    res = search.cv_results_
    rows = {}
    n_splits = search.n_splits_
    for i, params in enumerate(res["params"]):
        rows[label(params)] = {
            "source": source,
            "index": i,
            "folds": [_num(res[f"split{f}_test_score"][i]) for f in range(n_splits)],
            "n_repeats": int(getattr(search, "n_repeats_", 1)),
            "mean": _num(res["mean_test_score"][i]),
            "cv_fit_time": float(res["mean_fit_time"][i]),
        }
    return rows


def _num(v):
    v = float(v)
    return v if math.isfinite(v) else None


def resolved(search, index: int):
    """Candidate ``index`` of a search with its bandwidth resolved (for the full fit)."""
    return search.candidate(index)


# --------------------------------------------------------------------------- select
def run_select_draw(name, X, y, k, count, draw, base_seed, n_jobs) -> dict:
    seed = cell_seed(base_seed, count, draw)
    cons = Constraints.from_labels(y, count, random_state=seed)
    rec = {"dataset": name, "n_constraints": count, "draw": draw, "seed": seed,
           "n_must_link": cons.n_must_link, "n_cannot_link": cons.n_cannot_link}  # fmt: skip

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = Auto(k, search="exhaustive", random_state=seed, n_jobs=n_jobs)
        auto.fit(X, constraints=cons)
    rec["auto"] = {
        "time_s": time.perf_counter() - t0,
        "choice": label({"estimator": auto.best_estimator_, **auto.best_params_}),
        "selection": auto.selection_,
        "split_by": auto.search_.split_by_ if auto.search_ is not None else None,
        **score(y, auto.labels_, cons),
    }
    rows = search_rows(auto.search_, "auto")

    extra = ConstraintSearchCV(NCut(k), extra_grid(name, k), cv=5,
                               n_repeats=auto.search_.n_repeats_, refit=False,
                               n_jobs=n_jobs, random_state=seed)  # fmt: skip
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        extra.fit(X, constraints=cons)
    rec["extra_time_s"] = time.perf_counter() - t0
    extra_rows = search_rows(extra, "extra")
    rec["reference_check"] = extra_rows["ncut"]["folds"] == rows["ncut"]["folds"]
    for key, row in extra_rows.items():
        rows.setdefault(key, row)

    # every candidate fitted on all the pairs: the labels' view
    for row in rows.values():
        search = auto.search_ if row["source"] == "auto" else extra
        row.update(fit_all(resolved(search, row["index"]), X, y, cons, seed))
    for est in oracle_only(name, len(y), k, set(rows)):
        rows[method_name(est)] = {"source": "oracle", **fit_all(est, X, y, cons, seed)}
    rec["candidates"] = rows
    return rec


def run_select(args) -> None:
    for name in args.datasets:
        try:
            X, y = load_dataset(name)
        except DatasetNotFoundError as exc:
            print(f"skip {name}: {exc}")
            continue
        k = len(np.unique(y))
        path = record_path(args.out, name, "select")
        doc = load_doc(path)
        doc["config"] = {"dataset": name, "n": len(y), "k": k, "standardised": name in STANDARDISE}
        for count in args.counts:
            for draw in range(args.draws):
                done = {(r["n_constraints"], r["draw"]) for r in doc["records"]}
                if (count, draw) in done and not args.force:
                    continue
                t0 = time.perf_counter()
                rec = run_select_draw(name, X, y, k, count, draw, args.random_state, args.n_jobs)
                doc["records"] = [
                    r for r in doc["records"] if (r["n_constraints"], r["draw"]) != (count, draw)
                ] + [rec]
                save_doc(path, doc)
                a = rec["auto"]
                print(f"{name} {count} draw {draw}: auto {a['choice']} err {a['error']:.3f} "
                      f"({a['time_s']:.0f} s), draw {time.perf_counter() - t0:.0f} s",
                      flush=True)  # fmt: skip


def run_peers(args) -> None:
    for name in args.datasets:
        if name not in PEER_DATASETS:
            continue
        X, y = load_dataset(name)
        k = len(np.unique(y))
        path = record_path(args.out, name, "peers")
        doc = load_doc(path)
        doc["config"] = {"dataset": name, "n": len(y), "k": k, "standardised": name in STANDARDISE}
        for count in args.peer_counts:
            t0 = time.perf_counter()
            for draw in range(args.peer_draws):
                done = {(r["n_constraints"], r["draw"]) for r in doc["records"]}
                if (count, draw) in done and not args.force:
                    continue
                seed = cell_seed(args.random_state, count, draw)
                cons = Constraints.from_labels(y, count, random_state=seed)
                rec = {"dataset": name, "n_constraints": count, "draw": draw, "seed": seed}
                t1 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    auto = Auto(
                        k, search=args.search, random_state=seed, n_jobs=args.n_jobs,
                        **args.auto_params,
                    )  # fmt: skip
                    auto.fit(X, constraints=cons)
                rec["auto"] = {
                    "time_s": time.perf_counter() - t1,
                    "choice": label({"estimator": auto.best_estimator_, **auto.best_params_}),
                    "selection": auto.selection_,
                    **score(y, auto.labels_, cons),
                }
                rec["ncut"] = fit_all(NCut(k), X, y, cons, seed)
                if auto.search_ is not None and args.candidate_fits:  # for the rules
                    rows = search_rows(auto.search_, "auto")
                    for row in rows.values():
                        row.update(fit_all(resolved(auto.search_, row["index"]), X, y, cons, seed))
                    rec["candidates"] = rows
                doc["records"] = [
                    r for r in doc["records"] if (r["n_constraints"], r["draw"]) != (count, draw)
                ] + [rec]
                save_doc(path, doc)
            print(f"{name} peers {count}: {time.perf_counter() - t0:.0f} s", flush=True)


def compare_peers(out: Path) -> list[str]:
    """Auto's peers draws in ``out`` against the records (the exhaustive search), paired by
    draw: mean ARI, error and time per set and count, then the pooled differences."""
    lines = [f"{'set':14s} {'pairs':>5s} {'n':>3s} {'ARI old':>8s} {'ARI new':>8s} "
             f"{'err old':>8s} {'err new':>8s} {'time old':>9s} {'time new':>9s}"]  # fmt: skip
    d_ari, d_err, t_old, t_new = [], [], 0.0, 0.0
    for name in PEER_DATASETS:
        new, old = (
            {(r["n_constraints"], r["draw"]): r["auto"] for r in load_doc(path)["records"]}
            for path in (record_path(out, name, "peers"), record_path(OUT, name, "peers"))
        )
        for count in sorted({c for c, _ in new}):
            keys = [key for key in new if key[0] == count and key in old]
            if not keys:
                continue
            fields = ("ari", "error", "time_s")
            pair = {f: [(old[key][f], new[key][f]) for key in keys] for f in fields}
            mean = {f: np.mean(v, axis=0) for f, v in pair.items()}
            lines.append(
                f"{name:14s} {count:5d} {len(keys):3d} {mean['ari'][0]:8.3f} {mean['ari'][1]:8.3f} "
                f"{mean['error'][0]:8.3f} {mean['error'][1]:8.3f} "
                f"{mean['time_s'][0]:9.1f} {mean['time_s'][1]:9.1f}"
            )
            d_ari += [b - a for a, b in pair["ari"]]
            d_err += [b - a for a, b in pair["error"]]
            t_old += sum(a for a, _ in pair["time_s"])
            t_new += sum(b for _, b in pair["time_s"])
    if d_ari:
        se = lambda d: np.std(d, ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")  # noqa: E731
        lines.append(
            f"\npooled over {len(d_ari)} draws: ARI new - old {np.mean(d_ari):+.4f} "
            f"(se {se(d_ari):.4f}); error new - old {np.mean(d_err):+.4f} (se {se(d_err):.4f}); "
            f"time new/old {t_new / t_old:.2f}"
        )
    return lines


def run_folds(args) -> None:
    """Auto with folds by pairs, by points and "auto" on the same draws (small sets)."""
    from spectralink.model_selection import UnfoldableConstraintsError, constraint_folds

    for name in args.datasets:
        if name not in FOLD_DATASETS:
            continue
        X, y = load_dataset(name)
        k = len(np.unique(y))
        path = record_path(args.out, name, "folds")
        doc = load_doc(path)
        doc["config"] = {"dataset": name, "n": len(y), "k": k}
        for count in FOLD_COUNTS:
            for draw in range(args.draws):
                done = {(r["n_constraints"], r["draw"]) for r in doc["records"]}
                if (count, draw) in done and not args.force:
                    continue
                seed = cell_seed(args.random_state, count, draw)
                cons = Constraints.from_labels(y, count, random_state=seed)
                rec = {"dataset": name, "n_constraints": count, "draw": draw, "seed": seed}
                try:
                    pair_folds = constraint_folds(cons, 5, by="pairs", random_state=seed)
                    rec["scored_pairs"] = int(sum(len(te) for _, te in pair_folds))
                except UnfoldableConstraintsError:
                    rec["scored_pairs"] = 0
                for split_by in ("pairs", "points", "auto"):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        auto = Auto(k, split_by=split_by, search="exhaustive", random_state=seed)
                        auto.fit(X, constraints=cons)
                    rec[split_by] = {
                        "choice": label({"estimator": auto.best_estimator_, **auto.best_params_}),
                        "selection": auto.selection_,
                        "split_by": auto.search_.split_by_ if auto.search_ else None,
                        **score(y, auto.labels_, cons),
                    }
                doc["records"] = [
                    r for r in doc["records"] if (r["n_constraints"], r["draw"]) != (count, draw)
                ] + [rec]
                save_doc(path, doc)
            print(f"{name} folds {count} done", flush=True)


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def run_timing(args) -> None:
    """Auto at its defaults, one draw of 400 pairs, with ``--n-jobs`` workers; NCut on the
    same data first, as the baseline the time is reported against."""
    path = table_path(args.out, "timing")
    doc = load_doc(path)
    for name in args.datasets:
        if name not in TIMING_DATASETS:
            continue
        X, y = load_dataset(name)
        k = len(np.unique(y))
        seed = cell_seed(args.random_state, TIMING_COUNT, 0)
        cons = Constraints.from_labels(y, TIMING_COUNT, random_state=seed)
        rec = {"dataset": name, "n": len(y), "k": k, "n_constraints": TIMING_COUNT,
               "seed": seed, "n_jobs": args.n_jobs, "alone": args.alone,
               "load_before": _loadavg()}  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            NCut(k, random_state=seed).fit(X)
            rec["ncut_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            auto = Auto(k, search="exhaustive", random_state=seed, n_jobs=args.n_jobs).fit(
                X, constraints=cons
            )
            rec["auto_s"] = time.perf_counter() - t0
        rec["load_after"] = _loadavg()
        rec["choice"] = label({"estimator": auto.best_estimator_, **auto.best_params_})
        rec["n_candidates"] = len(auto.search_.cv_results_["params"]) if auto.search_ else 0
        rec["error"] = clustering_error(y, auto.labels_)
        doc["records"] = [
            r for r in doc["records"] if (r["dataset"], r["alone"]) != (name, args.alone)
        ] + [rec]
        save_doc(path, doc)
        print(f"{name}: Auto {rec['auto_s']:.1f} s (NCut {rec['ncut_s']:.2f} s), "
              f"{rec['choice']}, error {rec['error']:.3f}", flush=True)  # fmt: skip


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--part", choices=("select", "folds", "peers", "timing", "all"), default="all")
    p.add_argument("--datasets", default=",".join(DATASETS))
    p.add_argument("--counts", default=",".join(map(str, SELECT_COUNTS)))
    p.add_argument("--draws", type=int, default=SELECT_DRAWS)
    p.add_argument("--peer-counts", default=",".join(map(str, PEER_COUNTS)))
    p.add_argument("--peer-draws", type=int, default=PEER_DRAWS)
    p.add_argument("--n-jobs", type=int, default=None)
    p.add_argument("--random-state", type=int, default=0)
    p.add_argument("--force", action="store_true", help="recompute draws already recorded")
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--alone", action="store_true",
                   help="timing: record that the run had the machine to itself")  # fmt: skip
    p.add_argument("--no-candidate-fits", dest="candidate_fits", action="store_false",
                   help="peers: skip refitting Auto's candidates on all the pairs "
                   "(the replayed selection rules need them)")  # fmt: skip
    p.add_argument(
        "--search", choices=("exhaustive", "fast"), default="exhaustive",
        help="peers: Auto's search (records: exhaustive; Auto's default: fast)",
    )  # fmt: skip
    p.add_argument("--auto-params", type=json.loads, default={},
                   help='peers: further Auto parameters as JSON, e.g. \'{"cv": 2}\'')  # fmt: skip
    p.add_argument("--compare", action="store_true",
                   help="peers: Auto in --out against the records, draw by draw")  # fmt: skip
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    if args.compare:
        print("\n".join(compare_peers(args.out)))
        return
    args.datasets = [d for d in args.datasets.split(",") if d]
    args.counts = [int(c) for c in args.counts.split(",") if c]
    args.peer_counts = [int(c) for c in args.peer_counts.split(",") if c]
    if not args.report_only:
        if args.part in ("select", "all"):
            run_select(args)
        if args.part in ("folds", "all"):
            run_folds(args)
        if args.part in ("peers", "all"):
            run_peers(args)
        if args.part == "timing":  # alone on the machine: not part of "all"
            run_timing(args)
    report(args.out)


if __name__ == "__main__":
    main()
