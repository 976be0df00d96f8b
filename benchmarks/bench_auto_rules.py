"""Auto's choice under other selection rules, from one search per draw: which rule keeps it safe.

`Auto` chooses among NCut and its constrained candidates from their scores on held-out pairs
(:func:`spectralink.model_selection.prefer_reference`). Which score and which margin make
that choice safe (never clearly worse than NCut) without giving up the gains is a question
about the search's evidence, not about new fits: this script runs Auto's search once per draw
with the three built-in scores at once (the race on the first, ``balanced``, as Auto ran
until it changed to ``accuracy``), records every candidate's fold scores, and fits every
candidate not raced out on all the pairs (as Auto's refit would: a candidate run on a cheaper
schedule inside the search gets its defaults back) to record its error. Any rule can then be
judged on the records alone::

    python -m benchmarks.bench_auto_rules --datasets iris,wine --counts 50,200 --trials 5 --out DIR
    python -m benchmarks.bench_auto_rules --families all --grid tune --max-n 500 --draws 2 --out DIR
    python -m benchmarks.bench_auto_rules --report DIR \\
        --named docs/results/records/defaults/unguarded

``--report`` prints, for every rule of :data:`RULES`, per group (the eight sets' protocols and
the families' data seeds): the cells whose mean error is more than 0.02 above NCut's and the
gain over NCut of the best named method kept, pooled (as ``bench_auto_gain``); the named
methods' errors come from the ``bench_defaults`` tables of the same names in the ``--named``
folders (the same draws); a run given ``--named`` reports when it ends. Only data of at most
50,000 points (Auto's search runs on all the
points there).
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np

from benchmarks._families import FAMILIES, grid
from benchmarks._store import SUFFIX, read_table, records_dir, table_path, write_table
from benchmarks.bench_defaults import load_dataset
from spectralink import Auto
from spectralink.auto import RACE_N_SE, SEARCH_SCHEDULES
from spectralink.experiments import cell_seed, draw_constraints
from spectralink.methods.ncut import NCut
from spectralink.metrics import partition_scores
from spectralink.model_selection import ConstraintSearchCV, prefer_reference
from spectralink.registry import method_name

SCORES = ("balanced", "kappa", "accuracy")
TOLERANCE = 0.02
NOT_NAMED = {"ncut", "auto", "lscr"}
#: the rules reported: the score that ranks, the margin in standard errors of the paired
#: fold differences, and optionally a second score the choice must also beat NCut on
RULES = (
    {"score": "balanced", "n_se": 1.0},
    {"score": "balanced", "n_se": 1.5},
    {"score": "balanced", "n_se": 2.0},
    {"score": "kappa", "n_se": 1.0},
    {"score": "accuracy", "n_se": 1.0},
    {"score": "accuracy", "n_se": 1.25},
    {"score": "accuracy", "n_se": 1.5},
    {"score": "accuracy", "n_se": 2.0},
    {"score": "balanced", "n_se": 1.0, "also": "accuracy"},
)


# --------------------------------------------------------------------------- running
def refit_estimator(search: ConstraintSearchCV, index: int):
    """Candidate ``index`` as Auto refits it: its defaults back for the parameters it ran
    otherwise inside the search (``spectralink.auto.SEARCH_SCHEDULES``)."""
    est = search.candidate(index)
    changed = SEARCH_SCHEDULES.get(method_name(est), {})
    if changed:
        defaults = type(est)().get_params(deep=False)
        est.set_params(**{key: defaults[key] for key in changed})
    return est


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def one_draw(X, y, cons, k: int, seed: int) -> dict:
    """Auto's search on one draw with every score, and the error of each candidate fitted."""
    auto = Auto(k, random_state=seed, verbose=0)
    t0 = time.perf_counter()
    search = ConstraintSearchCV(
        NCut(k), auto.param_grid(len(y), k), cv=auto.cv, n_repeats=auto.n_repeats_for(len(y)),
        split_by=auto.split_by, scoring=list(SCORES), refit=False, race=RACE_N_SE,
        random_state=seed, verbose=0,
    ).fit(X, constraints=cons)  # fmt: skip
    elapsed = time.perf_counter() - t0
    res = search.cv_results_
    candidates = []
    for i, params in enumerate(res["params"]):
        raced = bool(res["raced_out"][i])
        entry = {"method": method_name(params["estimator"]), "sigma": str(params.get("sigma")),
                 "raced": raced}  # fmt: skip
        for name in SCORES:
            # a split not fitted (raced out) is stored as null, read back as nan
            column = [res[f"split{j}_test_{name}"][i] for j in range(search.n_splits_)]
            entry[name] = [_finite(v) for v in column]
        if not raced:
            try:
                labels = refit_estimator(search, i).fit(X, constraints=cons).labels_
                entry["err"] = partition_scores(y, labels)["error"]
            except Exception:  # COP-KMeans infeasible on all the pairs: never Auto's labels
                entry["err"] = None
        candidates.append(entry)
    tests = [cons.take(test) for _, test in search.folds_]
    return {
        "time_s": elapsed, "n_repeats": search.n_repeats_, "n_splits": search.n_splits_,
        "split_by": search.split_by_, "n_ml": [len(t.must_link) for t in tests],
        "n_cl": [len(t.cannot_link) for t in tests], "cands": candidates,
    }  # fmt: skip


def run_one(name: str, X, y, protocol: str, counts: list[int], trials: int, out: Path) -> None:
    k = len(np.unique(y))
    records = []
    for count in counts:
        for trial in range(trials):
            seed = cell_seed(0, count, trial)
            cons = draw_constraints(y, count, protocol, random_state=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rec = one_draw(X, y, cons, k, seed)
            records.append({"set": name, "protocol": protocol, "count": count, "trial": trial,
                            **rec})  # fmt: skip
            print(f"{name} {protocol} {count} {trial}: {rec['time_s']:.1f} s", flush=True)
    path = table_path(out, f"{name}_{protocol}")
    write_table(records, path, config={"set": name, "protocol": protocol, "n": len(y), "k": k})


def run(args) -> None:
    if args.families:
        chosen = [i for i in grid(args.grid) if i.family in args.families]
        for inst in chosen:
            if inst.n is not None and inst.n > args.max_n:
                continue
            X, y = inst.load()
            run_one(inst.name, X, y, "pairs", args.counts, args.trials, args.out)
        return
    for name in args.datasets:
        X, y = load_dataset(name)
        k = len(np.unique(y))
        if not args.labeled_only:
            run_one(name, X, y, "pairs", args.counts, args.trials, args.out)
        if not args.pairs_only:
            run_one(name, X, y, "labeled", [c * k for c in args.per_class], args.trials, args.out)


# --------------------------------------------------------------------------- judging
def as_cv_results(scores: np.ndarray) -> dict:
    """``scores`` (candidates x splits) in the layout :func:`prefer_reference` reads."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a row of nan: a candidate set aside
        means = scores.mean(axis=1)
    results = {f"split{j}_test_score": scores[:, j] for j in range(scores.shape[1])}
    return {**results, "mean_test_score": means}


def choose(rec: dict, rule: dict) -> int:
    """The candidate ``rule`` chooses from one draw's record (0: NCut), by Auto's own rule
    (:func:`prefer_reference`): a candidate raced out, failed on all the pairs or (with
    ``also``) not beating NCut on that score too is scored nan, so never chosen."""
    cands = rec["cands"]
    scores = np.array([c[rule["score"]] for c in cands], dtype=float)
    rule_args = {"n_se": rule["n_se"], "n_repeats": rec["n_repeats"]}
    for i, c in enumerate(cands[1:], start=1):
        out = c["raced"] or c.get("err") is None
        if not out and "also" in rule:
            pair = np.array([cands[0][rule["also"]], c[rule["also"]]], dtype=float)
            out = prefer_reference(as_cv_results(pair), **rule_args) == 0
        if out:
            scores[i] = np.nan
    return prefer_reference(as_cv_results(scores), **rule_args)


def named_errors(name: str, protocol: str, folders: list[Path]) -> dict:
    """``{(count, trial): {method: error}}`` from the first ``--named`` folder holding the
    ``bench_defaults`` table of this set (``<set>_<protocol>``, or the family instance's)."""
    for folder in folders:
        for stem in (f"{name}_{protocol}", name):
            path = folder / f"{stem}{SUFFIX}"
            if path.exists():
                out: dict = defaultdict(dict)
                for r in read_table(path)[1]:
                    if r["status"] == "ok":
                        out[(int(r["n_constraints"]), int(r["trial"]))][r["method"]] = r["error"]
                return out
    raise SystemExit(f"no named records for {name} ({protocol}) in {folders}")


def judge(records: list[dict], rule: dict, folders: list[Path]) -> dict:
    """Per group: ``[gain kept, best gain, cells above, cells]`` of ``rule``."""
    by_cell: dict = defaultdict(list)
    for r in records:
        by_cell[(r["set"], r["protocol"], r["count"])].append(r)
    named: dict = {}
    out: dict = defaultdict(lambda: [0.0, 0.0, 0, 0])
    for (name, protocol, count), draws in sorted(by_cell.items()):
        if (name, protocol) not in named:
            named[(name, protocol)] = named_errors(name, protocol, folders)
        errs = [named[(name, protocol)][(count, r["trial"])] for r in draws]
        ncut = float(np.mean([e["ncut"] for e in errs]))
        methods = set.intersection(*(set(e) for e in errs)) - NOT_NAMED
        best = min(float(np.mean([e[m] for e in errs])) for m in methods)
        auto = float(np.mean([r["cands"][choose(r, rule)]["err"] for r in draws]))
        group = out[f"families {name[-2:]}" if "-n" in name else protocol]
        if ncut - best > 0:
            group[0] += ncut - auto
            group[1] += ncut - best
        group[2] += auto > ncut + TOLERANCE
        group[3] += 1
    return out


def report(folder: Path, folders: list[Path]) -> None:
    paths = sorted(records_dir(folder).glob(f"*{SUFFIX}"))
    records = [r for path in paths for r in read_table(path)[1]]
    if not records:
        raise SystemExit(f"no records in {folder}")
    groups = sorted({f"families {r['set'][-2:]}" if "-n" in r["set"] else r["protocol"]
                     for r in records})  # fmt: skip
    print("| rule | " + " | ".join(f"{g}: above, gain kept" for g in groups) + " |")
    print("|---|" + "---|" * len(groups))
    for rule in RULES:
        res = judge(records, rule, folders)
        text = f"{rule['score']}, {rule['n_se']} se" + (
            f", and {rule['also']}" if "also" in rule else ""
        )
        cells = []
        for g in groups:
            kept, gain, above, n = res[g]
            cells.append(f"{above} of {n}, {kept / gain:.2f}" if gain > 0 else f"{above} of {n}, -")
        print(f"| {text} | " + " | ".join(cells) + " |")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", default="iris,wine,sonar,breast_cancer,digits,segmentation")
    p.add_argument("--families", help="'all' or a comma-separated list (instead of --datasets)")
    p.add_argument("--grid", choices=("tune", "check"), default="tune")
    p.add_argument("--max-n", type=int, default=500)
    p.add_argument("--counts", default=None, help="pairs; default 50,100,200,400,800 "
                   "(families: 50,200,1000)")  # fmt: skip
    p.add_argument("--per-class", default="5,10,20,40")
    p.add_argument("--trials", "--draws", dest="trials", type=int, default=5)
    p.add_argument("--pairs-only", action="store_true")
    p.add_argument("--labeled-only", action="store_true")
    p.add_argument("--out", type=Path)
    p.add_argument("--report", type=Path, help="judge the rules on the records in this folder")
    p.add_argument("--named", type=Path, action="append", default=[],
                   help="records folder of bench_defaults tables (repeatable)")  # fmt: skip
    args = p.parse_args(argv)
    if args.report is not None:
        report(args.report, [Path(f) for f in args.named])
        return
    if args.out is None:
        p.error("--out is required to run")
    default_counts = "50,200,1000" if args.families else "50,100,200,400,800"
    args.counts = [int(c) for c in (args.counts or default_counts).split(",")]
    args.per_class = [int(c) for c in args.per_class.split(",")]
    args.datasets = [d for d in args.datasets.split(",") if d]
    if args.families:
        given = args.families.split(",")
        args.families = list(FAMILIES) if given == ["all"] else given
    run(args)
    if args.named:
        report(args.out, [Path(f) for f in args.named])


if __name__ == "__main__":
    main()
