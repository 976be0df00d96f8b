"""Criterion (c) of model selection measured on the same draws: Auto against a peer library.

``python -m benchmarks.bench_model_selection --part peers`` compares Auto with fixed figures
given for "the best of the existing Python libraries for pairwise-constrained clustering". This
script
measures the most widely installed such library, ``active-semi-supervised-clustering``
(PCK-Means, MPCK-Means, MPCK-Means with multiple full metrics, COP-KMeans; Basu, Bilenko
and Mooney 2004, Bilenko, Basu and Mooney 2004, Wagstaff et al. 2001), on the very draws
Auto's records were made on (iris and digits raw, wine and breast_cancer standardised; 50,
100, 200, 400 random distinct pairs; 10 draws; the pairs of draw ``d`` of count ``c`` come
from the seed ``bench_model_selection.cell_seed(0, c, d)``), so that Auto and every peer
method are compared draw by draw. It also fits, as a reference that uses no pairs at all,
scikit-learn's Gaussian mixture with full covariances (best of 10 starts).

The peer library is not a dependency of spectralink: install it beside it to run this
script (``pip install active-semi-supervised-clustering``). It draws its initialisations
from NumPy's global generator, which is seeded with the draw's seed before every fit. Its
metric-learn wrappers (MKMeans, RCAKMeans) do not run with today's metric-learn and
scikit-learn and are left out.

Records go to ``docs/results/records/model_selection/<dataset>_peerlibs.jsonl.gz`` (resumable:
a method's draw already recorded is skipped); the report to ``peers_measured.md``::

    python -m benchmarks.bench_peers --datasets iris,wine
    python -m benchmarks.bench_peers --datasets breast_cancer --methods pckmeans,copkmeans
    python -m benchmarks.bench_peers --report-only
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.metrics import adjusted_rand_score
from sklearn.mixture import GaussianMixture

from benchmarks._model_selection import (
    OUT,
    PEER_ARI,
    PEER_COUNTS,
    PEER_DATASETS,
    PEER_DRAWS,
    load_dataset,
    record_path,
    tables_of,
)
from benchmarks._store import load_doc, records_note, save_doc
from spectralink import Constraints
from spectralink.experiments import cell_seed
from spectralink.io import atomic_write

PEER_METHODS = ("pckmeans", "mpckmeans", "mpckmeansmf", "copkmeans")
#: NumPy's error state before the peer library is imported (its MPCK-Means module sets
#: ``np.seterr("raise")`` for the whole process); the reference fits run under it
NUMPY_ERRORS = np.geterr()
#: the reference that uses no pairs
GMM = "gmm"


def peer_estimator(method: str, k: int):
    from active_semi_clustering.semi_supervised import pairwise_constraints as pc

    cls = {"pckmeans": pc.PCKMeans, "mpckmeans": pc.MPCKMeans,
           "mpckmeansmf": pc.MPCKMeansMF, "copkmeans": pc.COPKMeans}[method]  # fmt: skip
    return cls(n_clusters=k)


def fit_peer(method: str, X, y, cons: Constraints, seed: int) -> dict:
    k = len(np.unique(y))
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if method == GMM:
                gmm = GaussianMixture(k, covariance_type="full", n_init=10, random_state=seed)
                with np.errstate(**NUMPY_ERRORS):
                    labels = gmm.fit_predict(X)
            else:
                np.random.seed(seed)  # noqa: NPY002 (the library draws from the global generator)
                est = peer_estimator(method, k)
                est.fit(X, ml=[tuple(p) for p in cons.must_link.tolist()],
                        cl=[tuple(p) for p in cons.cannot_link.tolist()])  # fmt: skip
                labels = est.labels_
    except Exception as exc:  # e.g. COP-KMeans finding no feasible assignment
        return {"status": f"failed: {type(exc).__name__}: {exc}"[:300], "ari": None,
                "time_s": time.perf_counter() - t0}  # fmt: skip
    return {"status": "ok", "ari": float(adjusted_rand_score(y, labels)),
            "time_s": time.perf_counter() - t0}  # fmt: skip


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for package in ("active-semi-supervised-clustering", "numpy", "scipy", "scikit-learn"):
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = "not installed"
    return out


def run(args) -> None:
    for name in args.datasets:
        X, y = load_dataset(name)
        path = record_path(args.out, name, "peerlibs")
        doc = load_doc(path)
        doc["config"] = {"dataset": name, "n": len(y), "k": int(len(np.unique(y))),
                         "versions": _versions()}  # fmt: skip
        for count in args.counts:
            for method in args.methods:
                t0 = time.perf_counter()
                for draw in range(args.draws):
                    done = {(r["method"], r["n_constraints"], r["draw"]) for r in doc["records"]}
                    if (method, count, draw) in done:
                        continue
                    seed = cell_seed(args.random_state, count, draw)
                    cons = Constraints.from_labels(y, count, random_state=seed)
                    rec = {"method": method, "n_constraints": count, "draw": draw, "seed": seed,
                           **fit_peer(method, X, y, cons, seed)}  # fmt: skip
                    doc["records"].append(rec)
                    save_doc(path, doc)
                print(f"{name} {method} {count}: {time.perf_counter() - t0:.1f} s", flush=True)
        save_doc(path, doc)


def report(out: Path) -> None:
    lines = [
        "# Auto against a peer library, measured on the same draws",
        "",
        "Generated by `python -m benchmarks.bench_peers` from "
        "`docs/results/records/model_selection/<dataset>_peerlibs.jsonl.gz` and Auto's draws in "
        "`docs/results/records/model_selection/<dataset>_peers.jsonl.gz` "
        "(same pairs, same seeds). ARI, mean ± "
        "std over the draws. *best peer (cell)*: the peer method with the highest mean in that "
        "cell, chosen with the labels; *Auto - best peer*: paired over the draws, ± its "
        "standard error. *given*: the figure the task gives for the best peer library. *all*: "
        "the mean over every draw of the four counts. "
        f"*{GMM}*: scikit-learn's full-covariance Gaussian mixture (best of 10 starts by "
        "likelihood), which uses no pairs (a "
        "reference, not a peer).",
        "",
    ]
    for name in PEER_DATASETS:
        peers_path, auto_path = record_path(out, name, "peerlibs"), record_path(out, name, "peers")
        if not peers_path.exists() or not auto_path.exists():
            continue
        recs = load_doc(peers_path)["records"]
        autos = {(r["n_constraints"], r["draw"]): r["auto"]["ari"]
                 for r in load_doc(auto_path)["records"]}  # fmt: skip
        methods = [m for m in (*PEER_METHODS, GMM) if any(r["method"] == m for r in recs)]
        lines += [f"## {name}", "",
                  "| pairs | Auto | " + " | ".join(methods)
                  + " | best peer (cell) | Auto - best peer | given |",
                  "|---:|---:|" + "---:|" * len(methods) + "---|---:|---:|"]  # fmt: skip
        pooled: dict[str, list] = {m: [] for m in ("Auto", *methods)}
        for count in PEER_COUNTS:
            draws = sorted(d for c, d in autos if c == count)
            if not draws:
                continue
            auto = np.array([autos[(count, d)] for d in draws])
            pooled["Auto"].append(auto)
            table, cells = {}, []
            for m in methods:
                by_draw = {r["draw"]: r for r in recs
                           if r["method"] == m and r["n_constraints"] == count}  # fmt: skip
                if not all(d in by_draw for d in draws):
                    cells.append("–")
                    pooled[m].append(None)  # an incomplete cell: no pooled figure
                    continue
                ari = np.array([np.nan if by_draw[d]["ari"] is None else by_draw[d]["ari"]
                                for d in draws])  # fmt: skip
                pooled[m].append(ari)
                failed = int(np.isnan(ari).sum())
                cells.append(f"{np.nanmean(ari):.3f} ± {np.nanstd(ari):.3f}"
                             + (f" ({failed} failed)" if failed else ""))  # fmt: skip
                if m != GMM and not failed:
                    table[m] = ari
            if table:
                best = max(table, key=lambda m: table[m].mean())
                diff = auto - table[best]
                se = diff.std(ddof=1) / np.sqrt(len(diff))
                best_cell = f"{best} {table[best].mean():.3f}"
                gap = f"{diff.mean():+.3f} ± {se:.3f}"
            else:
                best_cell = gap = "–"
            given = PEER_ARI[name][PEER_COUNTS.index(count)]
            row = [f"{auto.mean():.3f} ± {auto.std():.3f}", *cells, best_cell, gap, f"{given:.3f}"]
            lines.append(f"| {count} | " + " | ".join(row) + " |")
        lines += ["| all | " + " | ".join(_pooled(pooled[m]) for m in pooled) + " | | | |", ""]
    lines += ["---", "", records_note(tables_of(out, "peerlibs") + tables_of(out, "peers"))]
    path = out / "peers_measured.md"
    with atomic_write(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"wrote {path}")


def _pooled(arrays: list) -> str:
    """Mean ARI over every draw of every count (failed fits left out and counted); "–"
    unless every count is complete."""
    if not arrays or any(a is None for a in arrays):
        return "–"
    ari = np.concatenate(arrays)
    failed = int(np.isnan(ari).sum())
    return f"{np.nanmean(ari):.3f}" + (f" ({failed} failed)" if failed else "")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", default=",".join(PEER_DATASETS))
    p.add_argument("--methods", default=",".join((*PEER_METHODS, GMM)))
    p.add_argument("--counts", default=",".join(map(str, PEER_COUNTS)))
    p.add_argument("--draws", type=int, default=PEER_DRAWS)
    p.add_argument("--random-state", type=int, default=0)
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    args.datasets = [d for d in args.datasets.split(",") if d]
    args.methods = [m for m in args.methods.split(",") if m]
    args.counts = [int(c) for c in args.counts.split(",")]
    unknown = set(args.methods) - {*PEER_METHODS, GMM}
    if unknown:
        p.error(f"unknown methods {sorted(unknown)}; choose from {[*PEER_METHODS, GMM]}")
    if not args.report_only:
        if any(m != GMM for m in args.methods):
            try:
                import active_semi_clustering  # noqa: F401
            except ImportError:
                p.error("the peer library is not installed: "
                        "pip install active-semi-supervised-clustering")  # fmt: skip
        run(args)
    report(args.out)


if __name__ == "__main__":
    main()
