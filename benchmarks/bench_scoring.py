"""Which held-out score should choose: balanced, kappa or accuracy?

The model-selection benchmark (``benchmarks.bench_model_selection``) scores every fold with the
balanced score (mean of the fractions of held-out must-links and cannot-links satisfied).
This script re-runs the same searches on the same draws, with the same ``random_state``
(hence the same folds, per-fold seeds and fits), scoring every fit with several scores at
once (``ConstraintSearchCV(scoring=[...])``), and compares what each score would choose:

* ``select`` draws (the select part's datasets, counts and draws): Auto's candidates plus
  the extra grid values of criterion (a) (CCSR and LSCP at 0.25 r and 4 r, COSC with 5
  and 20 neighbours where its k-way fits are affordable). Per score: the grid value the
  highest mean picks for CCSR, LSCP and COSC (criterion (a)), and Auto's rule
  (:func:`~spectralink.model_selection.prefer_reference`, ``n_se=1``) over Auto's own
  candidates (criterion (b)). The errors are those of the select records (the same fits),
  which must exist.
* ``peers`` draws (iris, wine, breast_cancer, digits; 50-400 pairs; 10 draws): Auto's rule
  over its candidates per score, the chosen candidate refitted on all the pairs (ARI,
  criterion (c)).

Records: ``docs/results/records/model_selection/<dataset>_scoring.jsonl.gz`` (resumable, a
draw already recorded is skipped); report: ``docs/results/model_selection/scoring.md``.
Run through the machine's CPU slots with one BLAS thread, e.g.::

    OMP_NUM_THREADS=1 python -m benchmarks.bench_scoring --datasets iris,wine,sonar
    python -m benchmarks.bench_scoring --report-only
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats
from sklearn.model_selection import ParameterGrid

from benchmarks import _model_selection as ms
from benchmarks._common import without_guard
from benchmarks._store import load_doc, records_note, save_doc
from spectralink import Auto, Constraints
from spectralink.experiments import cell_seed
from spectralink.io import atomic_write
from spectralink.methods.ncut import NCut
from spectralink.metrics import adjusted_rand_score, clustering_error
from spectralink.model_selection import ConstraintSearchCV, prefer_reference, relative_sigmas
from spectralink.registry import get_method

SCORES = ("balanced", "kappa", "accuracy")
A_METHODS = ("ccsr", "lscp", "cosc")
#: grid values of criterion (a) that Auto's candidates lack (COSC's default is 10 neighbours)
A_EXTRA_SIGMAS = (0.25, 4.0)
A_EXTRA_NEIGHBORS = (5, 20)


def grid_for(name: str, k: int, n: int, select: bool) -> list[dict]:
    grid = Auto(k, search="exhaustive").param_grid(n)
    if select:
        for m in ("ccsr", "lscp"):
            sigmas = relative_sigmas(A_EXTRA_SIGMAS)
            grid.append({"estimator": [without_guard(get_method(m)(k))], "sigma": sigmas})
        if name in ms.COSC_SELECT_DATASETS:
            neighbors = list(A_EXTRA_NEIGHBORS)
            est = without_guard(get_method("cosc")(k))
            grid.append({"estimator": [est], "n_neighbors": neighbors})
    return grid


def run_draw(name, X, y, k, kind, count, draw, base_seed) -> dict:
    seed = cell_seed(base_seed, count, draw)
    cons = Constraints.from_labels(y, count, random_state=seed)
    n = len(y)
    auto = Auto(k, search="exhaustive", random_state=seed)
    n_auto = len(ParameterGrid(auto.param_grid(n)))  # Auto's candidates come first
    search = ConstraintSearchCV(NCut(k), grid_for(name, k, n, kind == "select"), cv=auto.cv,
                                n_repeats=auto.n_repeats_for(n), scoring=list(SCORES),
                                refit=False, random_state=seed)  # fmt: skip
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, constraints=cons)
    res = search.cv_results_
    labels = [ms.label(p) for p in res["params"]]
    rec = {"kind": kind, "n_constraints": count, "draw": draw, "seed": seed,
           "n_repeats": search.n_repeats_, "n_auto": n_auto, "labels": labels,
           "folds": {s: [[None if np.isnan(v) else float(v) for v in row] for row in
                         np.column_stack([res[f"split{f}_test_{s}"]
                                          for f in range(search.n_splits_)])]
                     for s in SCORES},
           "search_s": time.perf_counter() - t0, "fits": {}}  # fmt: skip
    if kind == "peers":
        for s in SCORES:
            index = auto_choice(rec, s)
            if labels[index] in rec["fits"]:
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = search.candidate(index).fit(X, constraints=cons)
                rec["fits"][labels[index]] = {
                    "error": clustering_error(y, est.labels_),
                    "ari": float(adjusted_rand_score(y, est.labels_)),
                }
            except Exception as exc:  # COP-KMeans infeasible on all pairs: Auto refits NCut
                rec["fits"][labels[index]] = {"failed": f"{type(exc).__name__}: {exc}"}
    return rec


def _results(rec: dict, score: str, rows: list[int]) -> dict:
    folds = np.array([[np.nan if v is None else v for v in rec["folds"][score][i]] for i in rows])
    out = {f"split{f}_test_{score}": folds[:, f] for f in range(folds.shape[1])}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out[f"mean_test_{score}"] = folds.mean(axis=1)
    return out


def auto_choice(rec: dict, score: str) -> int:
    """Index (into ``rec["labels"]``) of Auto's rule on its own candidates under ``score``."""
    rows = list(range(rec["n_auto"]))
    return rows[prefer_reference(_results(rec, score, rows), score=score,
                                 n_repeats=rec["n_repeats"])]  # fmt: skip


def grid_choice(rec: dict, score: str, method: str) -> str:
    """The criterion-(a) grid value of ``method`` with the highest mean ``score``."""
    keys = a_keys(rec["labels"], method)
    rows = [rec["labels"].index(k) for k in keys]
    means = _results(rec, score, rows)[f"mean_test_{score}"]
    return keys[int(np.nanargmax(means))]


def a_keys(labels: list[str], method: str) -> list[str]:
    """The (a) grid of a method in ascending order, named as in the select records."""
    if method == "cosc":
        keys = [k for k in labels if k == "cosc" or k.startswith("cosc n_neighbors=")]
        return sorted(keys, key=lambda k: 10 if k == "cosc" else int(k.split("=")[1]))
    return sorted((k for k in labels if k.startswith(method + " sigma=")),
                  key=lambda k: float(k.split("=")[1].rstrip("r")))  # fmt: skip


def select_key(key: str) -> str:
    return "cosc n_neighbors=10" if key == "cosc" else key


# --------------------------------------------------------------------------- running
def run(args) -> None:
    for name in args.datasets:
        X, y = ms.load_dataset(name)
        k = len(np.unique(y))
        path = ms.record_path(args.out, name, "scoring")
        doc = load_doc(path)
        doc["config"] = {"dataset": name, "n": len(y), "k": k, "scores": list(SCORES)}
        cells = []
        if "select" in args.kinds:
            sel = load_doc(ms.record_path(args.out, name, "select"))["records"]
            cells += [("select", r["n_constraints"], r["draw"]) for r in sel]
        if "peers" in args.kinds and name in ms.PEER_DATASETS:
            cells += [("peers", c, d) for c in args.peer_counts for d in range(args.peer_draws)]
        for kind, count, draw in cells:
            done = {(r["kind"], r["n_constraints"], r["draw"]) for r in doc["records"]}
            if (kind, count, draw) in done:
                continue
            rec = run_draw(name, X, y, k, kind, count, draw, args.random_state)
            doc["records"].append(rec)
            save_doc(path, doc)
            picks = {s: rec["labels"][auto_choice(rec, s)] for s in SCORES}
            print(f"{name} {kind} {count} draw {draw}: {rec['search_s']:.0f} s, Auto {picks}",
                  flush=True)  # fmt: skip


# --------------------------------------------------------------------------- report
def _paired_worse_p(d: np.ndarray) -> float:
    if len(d) < 2 or np.allclose(d, d[0]):
        return 0.0 if d.mean() > 0 else 1.0
    return float(stats.ttest_1samp(d, 0.0, alternative="greater").pvalue)


# PLR0915 (statements): a benchmark's protocol, step by step as its page describes it.
def report(out: Path) -> str:  # noqa: PLR0915
    head = " | ".join(SCORES)
    a_lines = ["| dataset | pairs | method | labels | " + head + " |",
               "|---|---:|---|---:|" + "---:|" * len(SCORES)]  # fmt: skip
    b_lines = ["| dataset | pairs | draws | best with labels | NCut | " + head + " |",
               "|---|---:|---:|---:|---:|" + "---:|" * len(SCORES)]  # fmt: skip
    c_lines = ["| dataset | pairs | peer | " + head + " |",
               "|---|---:|---:|" + "---:|" * len(SCORES)]  # fmt: skip
    a_miss = dict.fromkeys(SCORES, 0)
    a_gap = {s: [] for s in SCORES}
    b_miss = dict.fromkeys(SCORES, 0)
    b_err = {s: [] for s in SCORES}
    c_verdicts = {s: {"beats": 0, "ties": 0, "loses": 0} for s in SCORES}
    same, compared = 0, 0  # balanced fold scores against the select records' (same fits)
    for name in ms.DATASETS:
        path = ms.record_path(out, name, "scoring")
        if not path.exists():
            continue
        recs = load_doc(path)["records"]
        sel = {(r["n_constraints"], r["draw"]): r
               for r in load_doc(ms.record_path(out, name, "select"))["records"]}  # fmt: skip
        for count in sorted({r["n_constraints"] for r in recs if r["kind"] == "select"}):
            rr = [r for r in recs if r["kind"] == "select" and r["n_constraints"] == count]
            cands = [sel[(count, r["draw"])]["candidates"] for r in rr]
            for r, c in zip(rr, cands, strict=True):
                compared += 1
                same += all(
                    np.allclose(np.array(r["folds"]["balanced"][i], dtype=float),
                                np.array(c[select_key(key)]["folds"], dtype=float),
                                equal_nan=True)
                    for i, key in enumerate(r["labels"]) if select_key(key) in c
                )  # fmt: skip
            for m in A_METHODS:
                keys = a_keys(rr[0]["labels"], m)
                if not keys:
                    continue
                by_key = {k: np.mean([ms.err(c[select_key(k)]) for c in cands]) for k in keys}
                best = min(by_key.values())
                cells = []
                for s in SCORES:
                    e = np.mean([ms.err(c[select_key(grid_choice(r, s, m))])
                                 for r, c in zip(rr, cands, strict=True)])  # fmt: skip
                    gap = e - best
                    a_gap[s].append(gap)
                    a_miss[s] += gap > ms.TOLERANCE
                    flag = " **miss**" if gap > ms.TOLERANCE else ""
                    cells.append(f"{e:.3f} ({gap:+.3f}){flag}")
                a_lines.append(f"| {name} | {count} | {m} | {best:.3f} | "
                               + " | ".join(cells) + " |")  # fmt: skip
            keys = [k for k in cands[0] if all(ms.err(c.get(k, {})) == ms.err(c.get(k, {}))
                                                for c in cands)]  # fmt: skip
            best = min(np.mean([ms.err(c[k]) for c in cands]) for k in keys)
            ncut = np.array([ms.err(c["ncut"]) for c in cands])
            cells = []
            for s in SCORES:
                e = np.array([ms.err(c[rec["labels"][auto_choice(rec, s)]])
                              for rec, c in zip(rr, cands, strict=True)])  # fmt: skip
                met = e.mean() - best <= ms.TOLERANCE and _paired_worse_p(e - ncut) >= 0.05
                b_miss[s] += not met
                b_err[s].append(e.mean())
                cells.append(f"{e.mean():.3f}{'' if met else ' **miss**'}")
            b_lines.append(f"| {name} | {count} | {len(rr)} | {best:.3f} | {ncut.mean():.3f} | "
                           + " | ".join(cells) + " |")  # fmt: skip
        for ci, count in enumerate(ms.PEER_COUNTS):
            rr = [r for r in recs if r["kind"] == "peers" and r["n_constraints"] == count]
            if not rr:
                continue
            peer = ms.PEER_ARI[name][ci]
            cells = []
            for s in SCORES:
                a = np.array([r["fits"][r["labels"][auto_choice(r, s)]].get("ari", np.nan)
                              for r in rr], dtype=float)  # fmt: skip
                se = a.std(ddof=1) / np.sqrt(len(a)) if len(a) > 1 else 0.0
                verdict = ("beats" if a.mean() >= peer
                           else "ties" if peer - a.mean() < se else "loses")  # fmt: skip
                c_verdicts[s][verdict] += 1
                cells.append(f"{a.mean():.3f} {verdict if verdict != 'loses' else '**loses**'}")
            c_lines.append(f"| {name} | {count} | {peer:.3f} | " + " | ".join(cells) + " |")
    summary = [
        "| score | (a) cells missed | (a) mean gap | (b) cells missed | (b) mean error "
        "| (c) beats / ties / loses |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for s in SCORES:
        v = c_verdicts[s]
        summary.append(f"| {s} | {a_miss[s]} of {len(a_gap[s])} "
                       f"| {np.mean(a_gap[s] or [np.nan]):+.4f} "
                       f"| {b_miss[s]} of {len(b_err[s])} | {np.mean(b_err[s] or [np.nan]):.4f} "
                       f"| {v['beats']} / {v['ties']} / {v['loses']} |")  # fmt: skip
    text = "\n".join([
        "# Held-out scores compared: balanced, kappa, accuracy",
        "",
        "Generated by `python -m benchmarks.bench_scoring` (see its docstring) from "
        "`docs/results/records/model_selection/*_scoring.jsonl.gz` and the select records. "
        "Every fit of the searches was "
        "scored with the three scores at once; the draws, folds, seeds and fits are those "
        "of `results.md`, so the *balanced* columns reproduce its figures. Criteria as "
        "there: (a) the grid value with the highest mean score against the one best with "
        "the labels (mean clustering error, met within 0.03); (b) Auto's rule over its "
        "own candidates against the best single method with the labels (within 0.03) and "
        "NCut (not worse, one-sided paired t-test at 0.05); (c) Auto's ARI against the "
        "best peer library (beats, ties within one standard error, or loses).",
        "",
        "## Summary", "", *summary, "",
        f"The balanced fold scores equal the select records' in {same} of {compared} "
        "select draws (every candidate the select part also cross-validated).", "",
        "## (a) Bandwidth (COSC: neighbourhood size), mean error of the choice", "", *a_lines, "",
        "## (b) Auto, mean error of its choice", "", *b_lines, "",
        "## (c) Auto against the best peer library, mean ARI", "", *c_lines, "",
        "---", "", records_note(ms.tables_of(out, "scoring") + ms.tables_of(out, "select")),
    ])  # fmt: skip
    with atomic_write(out / "scoring.md", "w") as fh:
        fh.write(text + "\n")
    return text


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default=",".join(ms.DATASETS))
    p.add_argument("--kinds", default="select,peers", help="select, peers or both")
    p.add_argument("--peer-counts", default=",".join(map(str, ms.PEER_COUNTS)),
                   help="peers: the pair counts, in the order run")  # fmt: skip
    p.add_argument("--peer-draws", type=int, default=ms.PEER_DRAWS,
                   help="peers: draws per pair count (a smaller run for a check)")  # fmt: skip
    p.add_argument("--random-state", type=int, default=0)
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--out", type=Path, default=ms.OUT)
    args = p.parse_args(argv)
    args.datasets = [d for d in args.datasets.split(",") if d]
    args.kinds = [k for k in args.kinds.split(",") if k]
    args.peer_counts = [int(c) for c in args.peer_counts.split(",") if c]
    if not args.report_only:
        run(args)
    print(report(args.out))


if __name__ == "__main__":
    main()
