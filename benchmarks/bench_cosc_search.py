"""COSC's standard search against the thorough one, run by run (two clusters, hard mode).

For each dataset, constraint count and seed, both searches cluster the same adaptive
10-NN graph (:func:`spectralink.graph.adaptive_knn_affinity`, the paper's graph) with the
same random pairs drawn from the labels (``Constraints.from_labels(y, count, seed)``) and
``random_state=seed``. Every run prints the normalized cut, violated constraints, the
majority-vote error and the fit time of both; the summary prints how often the standard
search ends with a higher cut than the thorough one (relative tolerance ``--rtol``), the
mean and worst relative cut gap, and each dataset's mean time beside the time of the
authors' MATLAB code on one core (measured under Octave on the same graphs and pairs,
quoted from the comparison that motivated the search settings) divided by 30.

Usage::

    python -m benchmarks.bench_cosc_search                       # all datasets, 10 seeds
    python -m benchmarks.bench_cosc_search --datasets sonar --seeds 3
    python -m benchmarks.bench_cosc_search --standard '{"n_starts": 20}'   # a variant
    python -m benchmarks.bench_cosc_search --out docs/results/cosc/search  # write files
    # the thorough search with other seeds against the recorded thorough runs
    python -m benchmarks.bench_cosc_search --standard '{"search": "thorough"}' \
        --standard-seed-offset 1000 --skip-thorough \
        --runs docs/results/records/cosc/search.jsonl.gz

``--out <folder>/<name>`` writes the page ``<folder>/<name>.md`` and the runs to the table
``<name>`` of that folder (``benchmarks/_store.py``): ``--out docs/results/cosc/search``
gives ``docs/results/records/cosc/search.jsonl.gz``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from benchmarks._store import read_table, table_path, write_table
from spectralink import COSC, Constraints
from spectralink.datasets import load
from spectralink.graph import adaptive_knn_affinity
from spectralink.io import atomic_write
from spectralink.metrics import majority_vote_error

#: dataset -> constraint counts (random labelled pairs)
COUNTS = {
    "sonar": [80],
    "breast_cancer_dedup": [20, 100, 200],
    "diabetes": [20, 100, 200],
    "spambase_dedup": [50, 200],
}
#: the authors' code (COSC v1.1 under Octave, one core), seconds per fit on these tasks
AUTHORS_SECONDS = {"sonar": 36.0, "breast_cancer_dedup": 44.0, "diabetes": 275.0}
FIELDS = [
    "dataset",
    "n_pairs",
    "seed",
    "search",
    "ncut",
    "violated",
    "error",
    "seconds",
]


def fit(W, y, cons, seed, kwargs):
    est = COSC(2, affinity="precomputed", random_state=seed, guard=None, **kwargs)
    t0 = time.process_time()
    est.fit(W, constraints=cons)
    return {
        "ncut": est.cut_,
        "violated": est.n_violated_,
        "error": majority_vote_error(y, est.labels_),
        "seconds": time.process_time() - t0,
    }


def summarise(rows, rtol):
    by = {}
    for r in rows:
        by.setdefault((r["dataset"], r["n_pairs"], r["seed"]), {})[r["search"]] = r
    pairs = [v for v in by.values() if "standard" in v and "thorough" in v]
    lines = []
    worse = [p for p in pairs if p["standard"]["ncut"] > p["thorough"]["ncut"] * (1 + rtol) + 1e-15]
    better = [
        p for p in pairs if p["standard"]["ncut"] < p["thorough"]["ncut"] * (1 - rtol) - 1e-15
    ]
    gaps = np.array([p["standard"]["ncut"] / p["thorough"]["ncut"] - 1 for p in pairs])
    lines.append(
        f"standard worse than thorough in {len(worse)} of {len(pairs)} runs "
        f"({100 * len(worse) / max(len(pairs), 1):.1f} %), equal in "
        f"{len(pairs) - len(worse) - len(better)}, better in {len(better)}; relative cut gap "
        f"mean {100 * gaps.mean():+.2f} %, worst {100 * gaps.max():+.2f} %"
    )
    lines.append("")
    lines.append(
        "| dataset | runs | standard worse | mean gap | worst gap | standard s (mean / max) "
        "| thorough s (mean) | authors' s / 30 | violated (std / thr) | error (std / thr) |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for ds in dict.fromkeys(k[0] for k in by):
        ps = [v for k, v in by.items() if k[0] == ds and len(v) == 2]
        if not ps:
            continue
        g = np.array([p["standard"]["ncut"] / p["thorough"]["ncut"] - 1 for p in ps])
        w = sum(p["standard"]["ncut"] > p["thorough"]["ncut"] * (1 + rtol) + 1e-15 for p in ps)
        ts = np.array([p["standard"]["seconds"] for p in ps])
        tt = np.array([p["thorough"]["seconds"] for p in ps])
        auth = AUTHORS_SECONDS.get(ds)
        lines.append(
            f"| {ds} | {len(ps)} | {w} | {100 * g.mean():+.2f} % | {100 * g.max():+.2f} % "
            f"| {ts.mean():.2f} / {ts.max():.2f} | {tt.mean():.2f} "
            f"| {'-' if auth is None else f'{auth / 30:.2f}'} "
            f"| {sum(p['standard']['violated'] for p in ps)} / "
            f"{sum(p['thorough']['violated'] for p in ps)} "
            f"| {np.mean([p['standard']['error'] for p in ps]):.4f} / "
            f"{np.mean([p['thorough']['error'] for p in ps]):.4f} |"
        )
    return lines


# PLR0915 (statements): a benchmark's protocol, step by step as its page describes it.
def main(argv=None):  # noqa: PLR0915
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(COUNTS), choices=list(COUNTS))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--counts", default="", help="override the counts, e.g. 20,100")
    parser.add_argument("--standard", default="{}", help="JSON COSC parameters of 'standard'")
    parser.add_argument("--thorough", default="{}", help="JSON extra parameters of 'thorough'")
    parser.add_argument(
        "--standard-seed-offset",
        type=int,
        default=0,
        help="'standard' fits with random_state = seed + this (the pairs stay those of seed)",
    )
    parser.add_argument("--skip-thorough", action="store_true", help="reuse --runs' thorough")
    parser.add_argument(
        "--runs", type=Path, default=None, help="table of earlier runs to reuse (.jsonl.gz)"
    )
    parser.add_argument("--rtol", type=float, default=1e-6)
    parser.add_argument(
        "--out", type=Path, default=None, help="write <out>.md and the table of the runs"
    )
    args = parser.parse_args(argv)

    standard = json.loads(args.standard)
    thorough = {"search": "thorough", **json.loads(args.thorough)}
    old = read_table(args.runs)[1] if args.runs else []
    old_thorough = {
        (r["dataset"], r["n_pairs"], r["seed"]): r for r in old if r["search"] == "thorough"
    }
    COSC(2, n_starts=1, random_state=0, guard=None).fit(
        np.random.default_rng(0).normal(size=(40, 2))
    )
    rows = []
    for ds in args.datasets:
        X, y = load(ds)
        W = adaptive_knn_affinity(X, 10)
        counts = [int(c) for c in args.counts.split(",")] if args.counts else COUNTS[ds]
        for c in counts:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                cons = Constraints.from_labels(y, c, random_state=seed)
                got = {}
                for name, kw in (("standard", standard), ("thorough", thorough)):
                    if name == "thorough" and args.skip_thorough:
                        prev = old_thorough.get((ds, c, seed))
                        if prev is None:
                            continue
                        got[name] = prev
                        continue
                    offset = args.standard_seed_offset if name == "standard" else 0
                    r = fit(W, y, cons, seed + offset, kw)
                    got[name] = {"dataset": ds, "n_pairs": c, "seed": seed, "search": name, **r}
                rows.extend(got.values())
                s, t = got.get("standard"), got.get("thorough")
                print(
                    f"{ds:20s} pairs={c:4d} seed={seed:2d} | standard ncut={s['ncut']:.5f} "
                    f"viol={s['violated']} err={s['error']:.4f} {s['seconds']:6.2f}s"
                    + (
                        ""
                        if t is None
                        else f" | thorough ncut={t['ncut']:.5f} viol={t['violated']} "
                        f"err={t['error']:.4f} {t['seconds']:6.2f}s | gap "
                        f"{100 * (s['ncut'] / t['ncut'] - 1):+.2f} %"
                    ),
                    flush=True,
                )
    lines = summarise(rows, args.rtol)
    print("\n".join(lines))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        config = {
            "standard": standard,
            "thorough": thorough,
            "standard_seed_offset": args.standard_seed_offset,
        }
        table = table_path(args.out.parent, args.out.name)
        write_table([{k: r[k] for k in FIELDS} for r in rows], table, config=config)
        header = [
            "# COSC: standard search against the thorough one",
            "",
            "`python -m benchmarks.bench_cosc_search` (two clusters, hard mode, adaptive "
            "10-NN graph, random pairs drawn from the labels, the same seed for the pairs "
            "and `random_state`). Times are CPU seconds of one fit on one thread. "
            f"Standard: {json.dumps(standard) if standard else 'the defaults'}; thorough: "
            f"`{json.dumps(thorough)}`. A run counts as worse when its cut exceeds the "
            f"thorough one by more than a relative {args.rtol:g}.",
            "",
        ]
        atomic_write_text(args.out.with_suffix(".md"), "\n".join(header + lines) + "\n")


def atomic_write_text(path: Path, text: str) -> None:
    with atomic_write(path) as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
