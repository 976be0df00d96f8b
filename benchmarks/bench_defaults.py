"""Every estimator at its default parameters against unconstrained NCut.

A user who adds correct pairs expects a clustering at least as good as ignoring them. For
each dataset, every method runs at its defaults on the same random-pair draws (counts
``0,50,100,200,400,800``, 5 draws; :func:`spectralink.experiments.run_protocol`), and the
methods built for labelled subsets (SCACS, FCSC, with NCut and LSC-R as references) also on
all pairs among ``5,10,20,40`` labelled points per class. The script prints and writes:

* the mean clustering error per method and count (``docs/results/defaults/<dataset>.md``,
  curves ``<dataset>_<protocol>.png``);
* **every cell whose mean error exceeds NCut's at the same count by more than 0.02**
  (counts >= 50 pairs, every labelled count);
* every fit whose partition is degenerate (fewer clusters than asked, or a cluster under
  ``max(2, 1 % of n)`` points) and did not warn (``DegeneratePartitionWarning``); a run
  whose small clusters the cannot-links ask for (each is cannot-linked to every other
  cluster) is re-fitted to check that, and counted apart.

Features whose columns have different units (wine, breast_cancer, segmentation) are
standardised. Records are kept per dataset and protocol in the records store
(``docs/results/records/defaults/<dataset>_<protocol>.jsonl.gz``, ``benchmarks/_store.py``),
replaced by (method, count, trial) when a run is repeated, so datasets can run in separate
processes and the report is rebuilt from what is there::

    python -m benchmarks.bench_defaults --datasets iris,wine,sonar
    python -m benchmarks.bench_defaults --datasets usps --methods ncut,ccsr
    python -m benchmarks.bench_defaults --report-only

**Families** (``--families``): the same comparison on synthetic families drawn from a seed
grid and on the raw and standardised real sets (``benchmarks/_families.py`` lists them and
their split into a ``tune`` part, where defaults may be chosen, and a ``check`` part,
reported only). Every method (``ncut sl ccsr ccskl e2cp lscp cosc scacs fcsc auto``) runs on
50, 200 and 1000 random pairs, 5 draws; records go to
``docs/results/records/defaults/families/<instance>.jsonl.gz``, logged one line per fit as soon as
it is scored, so an interrupted run resumes where it stopped
(fits already on disk are not run again); one Markdown page per family,
``families/<family>.md``, and the cells above NCut + 0.02 of every family in
``families/README.md``::

    python -m benchmarks.bench_defaults --families all --grid tune --max-n 2000
    python -m benchmarks.bench_defaults --families overlap,unequal --methods ncut,ccsr --draws 2
    python -m benchmarks.bench_defaults --families all --report-only
"""

from __future__ import annotations

import argparse
import math
import os
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import make_blobs
from sklearn.preprocessing import StandardScaler

from benchmarks._common import RESULTS
from benchmarks._families import FAMILY_NAMES, grid
from benchmarks._store import (
    SUFFIX,
    TableLog,
    load_doc,
    read_progress,
    read_table,
    records_dir,
    records_note,
    shown_folder,
    table_path,
    write_table,
)
from spectralink.datasets import DatasetNotFoundError, load
from spectralink.experiments import (
    atomic_write,
    data_fingerprint,
    draw_constraints,
    run_protocol,
    summarize,
)
from spectralink.metrics import unrequested_small_clusters
from spectralink.plots import plot_metric_curves
from spectralink.registry import get_method

OUT = RESULTS / "defaults"
DATASETS = ("iris", "wine", "breast_cancer", "digits", "segmentation", "sonar", "usps", "blobs")
STANDARDISE = {"wine", "breast_cancer", "segmentation"}
PAIR_COUNTS = (0, 50, 100, 200, 400, 800)
LABELED_PER_CLASS = (5, 10, 20, 40)
PAIR_METHODS = (
    "ncut", "sl", "copkmeans", "sskk", "ccsr", "ccskl", "e2cp", "lscp", "cosc", "sclc",
    "scacs", "lscr", "fcsc",
)  # fmt: skip
LABELED_METHODS = ("ncut", "lscr", "scacs", "fcsc")
#: the methods the issue's criterion is about (every seed method and SL)
JUDGED = ("sl", "ccsr", "ccskl", "e2cp", "lscp", "cosc", "scacs", "fcsc")
TOLERANCE = 0.02
FCSC_MAX = 5000  # FCSC's dense default limit
#: ``--families``: methods, pair counts, and what is judged (every seed method, SL, Auto)
FAMILY_METHODS = ("ncut", "sl", "ccsr", "ccskl", "e2cp", "lscp", "cosc", "scacs", "fcsc", "auto")
FAMILY_COUNTS = (50, 200, 1000)
FAMILY_JUDGED = (*JUDGED, "auto")


def load_dataset(name: str):
    if name == "blobs":
        X, y = make_blobs(n_samples=2000, centers=3, n_features=5, random_state=0)
    else:
        X, y = load(name)
    if name in STANDARDISE:
        X = StandardScaler().fit_transform(X)
    return np.asarray(X, dtype=np.float64), np.asarray(y)


def methods_for(names, X, y) -> list[str]:
    k = len(np.unique(y))
    out = []
    for m in names:
        if m == "sclc" and k != 2:
            continue  # two clusters only (Xu, Li & Schuurmans 2009)
        if m == "fcsc" and len(X) > FCSC_MAX:
            continue  # dense n x n by design
        out.append(m)
    return out


def has_guard(method: str) -> bool:
    """Whether the registry method takes a ``guard`` parameter."""
    return "guard" in get_method(method)().get_params()


def default_guard(method: str) -> str | None:
    """The guard the registry method fits with at its defaults (None without one)."""
    return get_method(method)().get_params().get("guard")


def merge_records(path: Path, new: list[dict]) -> list[dict]:
    old = read_table(path)[1] if path.exists() else []
    key = lambda r: (r["method"], int(r["n_constraints"]), int(r["trial"]))  # noqa: E731
    fresh = {key(r) for r in new}
    return [r for r in old if key(r) not in fresh] + new


def run(args) -> None:
    for name in args.datasets:
        try:
            X, y = load_dataset(name)
        except DatasetNotFoundError as exc:
            print(f"skip {name}: {exc}")
            continue
        k = len(np.unique(y))
        plans = [] if args.labeled_only else [("pairs", PAIR_METHODS, args.counts)]
        if not args.pairs_only:
            plans.append(("labeled", LABELED_METHODS, [c * k for c in args.per_class]))
        # methods named beyond both lists (auto) run in every protocol
        extra = sorted(args.methods - set(PAIR_METHODS) - set(LABELED_METHODS))
        for protocol, names, counts in plans:
            methods = methods_for([m for m in names if m in args.methods] + extra, X, y)
            if not methods:
                continue
            # the guard each fit runs with (None for the methods without one)
            guards = {m: None if args.unguarded else default_guard(m) for m in methods}
            if args.unguarded:
                methods = {m: {"guard": None} if has_guard(m) else {} for m in methods}
            t0 = time.perf_counter()
            records = run_protocol(
                X, y, methods, counts, n_trials=args.trials, protocol=protocol,
                random_state=args.random_state, dataset=name, progress=not args.no_progress,
            )  # fmt: skip
            for r in records:  # so a report can tell records made before the guard
                r["guard"] = guards[r["method"]]
                r["small_asked"] = asks_small_clusters(r, name, protocol, k, len(y))
            path = table_path(args.out, f"{name}_{protocol}")
            write_table(
                merge_records(path, records), path,
                config={"dataset": name, "protocol": protocol, "n": len(y), "k": k},
                carried=load_doc(path)["provenance"],
            )  # fmt: skip
            print(f"{name} {protocol}: {len(records)} fits in {time.perf_counter() - t0:.0f} s")


def degenerate(r: dict, n: int, k: int) -> bool:
    return r["status"] == "ok" and (
        int(r["n_found"]) < k or int(r["smallest"]) < max(2, math.ceil(0.01 * n))
    )


def asks_small_clusters(r: dict, name: str, protocol: str, k: int, n: int) -> bool | None:
    """For an unwarned degenerate fit with all ``k`` clusters: are its small clusters the
    ones the cannot-links ask for? ``None`` where the question does not arise. Kept in the
    record, so the report is a function of the records alone."""
    unwarned = degenerate(r, n, k) and "degenerate partition" not in (r["warnings"] or "")
    if not unwarned or int(r["n_found"]) != k:
        return None
    return small_clusters_asked_for(r, name, protocol, k)


def small_clusters_asked_for(r: dict, name: str, protocol: str, k: int) -> bool:
    """Re-fit one record's run: are all its small clusters asked for by cannot-links
    (:func:`spectralink.metrics.unrequested_small_clusters` finds none)?"""
    X, y = load_dataset(name)
    cons = draw_constraints(y, int(r["n_constraints"]), protocol, random_state=int(r["seed"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = get_method(r["method"])(k, random_state=int(r["seed"]))
        labels = est.fit(X, constraints=cons).labels_
    if int(np.bincount(labels).min()) != int(r["smallest"]):
        return False  # not the recorded run
    return not unrequested_small_clusters(labels, cons, max(2, math.ceil(0.01 * len(y))))


# PLR0915 (statements): a benchmark's protocol, step by step as its page describes it.
def report(out: Path) -> int:  # noqa: PLR0915
    rec_dir = records_dir(out)

    def link(page: str) -> str:
        """``page`` (relative to the default folder) as a link from ``out``."""
        return Path(os.path.relpath((OUT / page).resolve(), out.resolve())).as_posix()

    title = "# Every method at its defaults against NCut"
    if out.resolve() != OUT.resolve():
        title += f" ({out.name})"
    worse, unwarned, lines = [], [], [title, ""]
    lines += [
        "Mean clustering error over the draws (± std), default parameters. Pairs: random "
        "pairs from the labels; labeled: all pairs among that many labelled points (5, 10, "
        "20, 40 per class). Wine, breast_cancer and segmentation standardised; blobs: "
        "`make_blobs(2000, centers=3, n_features=5, random_state=0)`. Generated by "
        "`python -m benchmarks.bench_defaults` (datasets and methods can run in separate "
        "processes, `--datasets` / `--methods`, then `--report-only`); cells more than "
        f"{TOLERANCE} above NCut at the same count are listed at the end. Fit times were "
        "measured with OMP_NUM_THREADS=1 while other jobs shared the 2 cores: they are "
        "indicative only. SCACS and FCSC need constraints, so their 0-pair cells fail by "
        "design; FCSC refuses n > 5000 (USPS); SCLC is two-cluster only.",
        "",
        "A run of `bench_defaults` fits with the held-out guard on, as the estimators "
        "default to (`--unguarded`: with `guard=None`, each method as its paper gives it, "
        f"in [unguarded/]({link('unguarded/README.md')})); records made before the guard "
        "became the default (no `guard` entry) show each method as `guard=None` then gave "
        "it, SCACS and FCSC with their own checks on the given pairs. Each section says "
        f"which of its methods ran without the guard. [guard.md]({link('guard.md')}) "
        "compares the two (a finished study, its script in the history at `8be96b3`); "
        f"[guard/]({link('../guard/README.md')}) measures the guard itself.",
        "",
        "The same comparison on synthetic families from a seed grid and on the raw and "
        f"standardised real sets (`--families`): [families.md]({link('families.md')}), "
        f"tables in [families/README.md]({link('families/README.md')}).",
        "",
    ]
    for path in sorted(rec_dir.glob(f"*{SUFFIX}")):
        config, records = read_table(path)
        if not records:
            continue
        name, protocol, n, k = (config[f] for f in ("dataset", "protocol", "n", "k"))
        summ = summarize(records, "error")
        viol = {(s["method"], s["n_constraints"]): s for s in summarize(records, "violated")}
        times = {(s["method"], s["n_constraints"]): s for s in summarize(records, "time_s")}
        ncut = {s["n_constraints"]: s["mean"] for s in summ if s["method"] == "ncut"}
        counts = sorted({s["n_constraints"] for s in summ})
        methods = list(dict.fromkeys(s["method"] for s in summ))
        cell = {(s["method"], s["n_constraints"]): s for s in summ}
        lines += [f"## {name} ({protocol}; n = {n}, k = {k})", ""]
        guarded = {m for m in methods if has_guard(m)}
        before = [r["method"] for r in records if "guard" not in r]
        unguarded = [
            r["method"] for r in records if r.get("guard", 0) is None and r["method"] in guarded
        ]
        for label, listed in (
            ("Made before the held-out guard", list(dict.fromkeys(before))),
            ("Fitted with `guard=None` (`--unguarded`)", list(dict.fromkeys(unguarded))),
        ):
            if listed:
                named = "every method" if len(listed) == len(methods) else ", ".join(listed)
                lines += [f"{label}: {named}.", ""]
        lines.append("| method | " + " | ".join(str(c) for c in counts) + " |")
        lines.append("|---" * (len(counts) + 1) + "|")
        for m in methods:
            row = []
            for c in counts:
                s = cell.get((m, c))
                if s is None or s["n_ok"] == 0:
                    row.append("failed" if s else "")
                    continue
                text = f"{s['mean']:.3f} ± {s['std']:.3f}"
                if s["n_failed"]:
                    text += f" ({s['n_failed']} failed)"
                base = ncut.get(c)
                min_count = 50 if protocol == "pairs" else 1
                if base is not None and m != "ncut" and c >= min_count:
                    if s["mean"] > base + TOLERANCE or s["n_failed"]:
                        text = f"**{text}**"
                        if m in JUDGED or s["n_failed"]:
                            worse.append(
                                f"{name} {protocol} {m} @ {c}: {s['mean']:.3f} vs NCut "
                                f"{base:.3f} (violated {viol[(m, c)]['mean']:.2f}, "
                                f"{s['n_failed']} failed)"
                            )
                row.append(text)
            lines.append(f"| {m} | " + " | ".join(row) + " |")
        lines += ["", "Mean fit time (s) and violated fraction at the largest count:", ""]
        top = counts[-1]
        lines.append(
            ", ".join(
                f"{m} {times[(m, top)]['mean']:.2f} s / {viol[(m, top)]['mean']:.2f}"
                for m in methods
                if (m, top) in times and times[(m, top)]["n_ok"]
            )
        )
        lines.append("")
        asked = 0
        for r in records:
            if degenerate(r, n, k) and "degenerate partition" not in r["warnings"]:
                if r.get("small_asked"):
                    asked += 1
                    continue
                unwarned.append(
                    f"{name} {protocol} {r['method']} @ {r['n_constraints']} trial "
                    f"{r['trial']}: {r['n_found']} clusters, smallest {r['smallest']}"
                )
        n_deg = sum(degenerate(r, n, k) for r in records)
        lines += [
            f"Partitions with fewer than {k} clusters or a cluster under "
            f"{max(2, math.ceil(0.01 * n))} points: {n_deg} of {len(records)} fits"
            + (f", {asked} of them small clusters that the cannot-links ask for" if asked else "")
            + ".",
            "",
        ]
        try:
            plot_metric_curves(
                records, out / f"{name}_{protocol}.png", title=f"{name} ({protocol})",
                xlabel="pairs" if protocol == "pairs" else "labelled points",
            )  # fmt: skip
        except Exception as exc:  # a plot is a convenience; the tables are the result
            print(f"plot {name} {protocol}: {exc}")
    lines += [
        f"## Cells more than {TOLERANCE} above NCut (seed methods and SL), or with failures",
        "",
    ]
    lines += [f"- {w}" for w in worse] or ["- none"]
    lines += ["", "## Degenerate partitions without a warning", ""]
    lines += [f"- {u}" for u in unwarned] or ["- none"]
    lines += ["", "---", "", records_note(sorted(rec_dir.glob(f"*{SUFFIX}")))]
    with atomic_write(out / "README.md", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines[-(len(worse) + len(unwarned) + 10) :]))
    print(f"{len(worse)} cell(s) worse than NCut + {TOLERANCE}; {len(unwarned)} unwarned "
          "degenerate fit(s).")  # fmt: skip
    return len(worse)


# --------------------------------------------------------------------------- families
def family_instances(args) -> list:
    """The grid's instances of ``args.families`` in ``args.grid``, in running order: small n
    first, the families taking turns at each n (so a run stopped early covers every family)."""
    chosen = [i for i in grid(args.grid) if i.family in args.families]
    if args.max_n is not None:
        chosen = [i for i in chosen if i.n is None or i.n <= args.max_n]
    if args.instances:
        chosen = [i for i in chosen if i.name in args.instances]
    rank: dict = {}
    keyed = []
    for i in chosen:
        slot = (i.family, i.n or 0)
        rank[slot] = rank.get(slot, -1) + 1
        keyed.append(((i.n or 0, rank[slot], FAMILY_NAMES.index(i.family)), i))
    return [i for _, i in sorted(keyed, key=lambda t: t[0])]


def run_families(args) -> None:
    names = [m for m in FAMILY_METHODS if m in args.methods]
    names += sorted(args.methods - set(names))
    for inst in family_instances(args):
        try:
            X, y = inst.load()
        except DatasetNotFoundError as exc:
            print(f"skip {inst.name}: {exc}")
            continue
        if args.max_n is not None and len(y) > args.max_n:
            continue
        methods = methods_for(names, X, y)
        k = len(np.unique(y))
        header = {
            "instance": inst.name, "family": inst.family, "seed": inst.seed, "part": inst.part,
            "params": inst.params, "n": len(y), "k": k, "d": X.shape[1], "protocol": "pairs",
            "random_state": args.random_state, "data": data_fingerprint(X, y),
        }  # fmt: skip
        path = table_path(args.out / "families", inst.name)
        old: list[dict] = []
        progress = read_progress(path)  # an interrupted run's log, else the table
        if progress is not None:
            old_header, old = progress
            if any(old_header.get(f) != header[f] for f in ("data", "random_state", "protocol")):
                raise SystemExit(
                    f"{path} holds runs on other data or seeds; move it away to start over."
                )
        t0 = time.perf_counter()
        fresh: list[dict] = []
        with TableLog(path, header, keep=old) as log:

            def keep(record: dict, log=log, fresh=fresh) -> None:
                log.append(record)
                fresh.append(record)

            run_protocol(
                X, y, methods, args.counts, n_trials=args.trials, protocol="pairs",
                random_state=args.random_state, dataset=inst.name,
                progress=not args.no_progress, done=old, on_record=keep,
            )  # fmt: skip
        print(f"{inst.name}: {len(fresh)} new fits in {time.perf_counter() - t0:.0f} s", flush=True)


def _cell_text(s: dict, top: int) -> str:
    text = f"{s['mean']:.3f} ± {s['std']:.3f}"
    if s["n_ok"] < top:
        text += f" ({s['n_ok']} draw{'s' if s['n_ok'] != 1 else ''})"
    if s["n_failed"]:
        text += f" ({s['n_failed']} failed)"
    return text


def family_table(records: list[dict], judged=FAMILY_JUDGED) -> tuple[list[str], list[tuple]]:
    """Markdown rows (method x count, mean error ± std) and the hurt cells
    ``(method, count, mean, NCut's mean)``: a judged method more than TOLERANCE above NCut
    at the same count, or with failed fits. Each cell is compared on the draws NCut has."""
    ncut_draws = {(int(r["n_constraints"]), int(r["trial"])) for r in records
                  if r["method"] == "ncut"}  # fmt: skip
    paired = [r for r in records if (int(r["n_constraints"]), int(r["trial"])) in ncut_draws]
    summ = summarize(paired, "error")
    if not summ:
        return [], []
    top = max(s["n_ok"] + s["n_failed"] for s in summ)
    ncut = {s["n_constraints"]: s["mean"] for s in summ if s["method"] == "ncut"}
    counts = sorted({s["n_constraints"] for s in summ})
    order = {m: i for i, m in enumerate(FAMILY_METHODS)}
    methods = sorted({s["method"] for s in summ}, key=lambda m: (order.get(m, 99), m))
    cell = {(s["method"], s["n_constraints"]): s for s in summ}
    rows = ["| method | " + " | ".join(str(c) for c in counts) + " |"]
    rows.append("|---" * (len(counts) + 1) + "|")
    hurt = []
    for m in methods:
        row = []
        for c in counts:
            s = cell.get((m, c))
            if s is None or s["n_ok"] == 0:
                row.append("failed" if s else "")
                if s and m in judged:
                    hurt.append((m, c, math.nan, ncut.get(c, math.nan)))
                continue
            text = _cell_text(s, top)
            base = ncut.get(c)
            if m != "ncut" and base is not None and c >= 50:
                if s["mean"] > base + TOLERANCE or s["n_failed"]:
                    text = f"**{text}**"
                    if m in judged:
                        hurt.append((m, c, s["mean"], base))
            row.append(text)
        rows.append(f"| {m} | " + " | ".join(row) + " |")
    return rows, hurt


def report_families(out: Path, families) -> int:
    """Rebuild ``families/<family>.md`` and ``families/README.md`` from the records there."""
    fam_dir = out / "families"
    rec_dir = records_dir(fam_dir)
    index = ["# Defaults against NCut on the families: cells above NCut + 0.02", ""]
    index += [
        "Generated by `python -m benchmarks.bench_defaults --families ... --report-only` from "
        f"the records in {shown_folder(rec_dir)}. A cell is listed when one of "
        f"{', '.join(FAMILY_JUDGED)} has a mean clustering error more than {TOLERANCE} above "
        "NCut's on the same draws (or failed fits). Grid and split: "
        "`benchmarks/_families.py` (tune: defaults may be chosen there; check: reported only). "
        "What ran is whatever is on disk: see each family's page for the draws per cell.",
        "",
        "| part | family | instances | judged cells | cells above NCut + 0.02 |",
        "|---|---|---|---|---|",
    ]
    hurt_lines = {"tune": [], "check": []}
    total = 0
    for fam in FAMILY_NAMES:
        if fam not in families:
            continue
        insts = [
            i for i in grid("all") if i.family == fam and (rec_dir / f"{i.name}{SUFFIX}").exists()
        ]
        if not insts:
            continue
        lines = [f"# Family `{fam}`: every method at its defaults against NCut", ""]
        lines += [
            "Mean clustering error over the draws of random correct pairs (± std), default "
            "parameters; **bold**: more than "
            f"{TOLERANCE} above NCut at the same count (or failed fits). The generator and "
            "the tune / check split: `benchmarks/_families.py`. Generated by "
            "`python -m benchmarks.bench_defaults --families "
            f"{fam} --report-only` from {shown_folder(rec_dir)}.",
            "",
        ]
        stats = {p: [0, 0, 0] for p in ("tune", "check")}  # instances, judged cells, hurt
        body = []
        for inst in insts:
            header, records = read_table(rec_dir / f"{inst.name}{SUFFIX}")
            rows, hurt = family_table(records)
            if not rows:
                continue
            params = "".join(f"{k} = {v}, " for k, v in inst.params.items() if k != "n")
            body += [
                f"## {inst.name} ({inst.part}; n = {header['n']}, k = {header['k']}, "
                f"d = {header['d']}; {params}data seed {inst.seed})",
                "",
                *rows,
                "",
            ]
            times = summarize(records, "time_s")
            top = max(s["n_constraints"] for s in times)
            body += [
                f"Mean fit time (s) at {top} pairs: "
                + ", ".join(
                    f"{s['method']} {s['mean']:.2f}"
                    for s in times
                    if s["n_constraints"] == top and s["n_ok"]
                ),
                "",
            ]
            judged = {
                (r["method"], int(r["n_constraints"]))
                for r in records
                if r["method"] in FAMILY_JUDGED and int(r["n_constraints"]) >= 50
            }
            st = stats[inst.part]
            st[0] += 1
            st[1] += len(judged)
            st[2] += len(hurt)
            for m, c, mean, base in hurt:
                hurt_lines[inst.part].append(
                    f"- {inst.name} {m} @ {c}: {mean:.3f} vs NCut {base:.3f}"
                )
        summary = [
            f"- {p}: {st[0]} instances, {st[2]} of {st[1]} judged cells above NCut + {TOLERANCE}"
            for p, st in stats.items()
            if st[0]
        ]
        for p, st in stats.items():
            if st[0]:
                index.append(f"| {p} | [{fam}]({fam}.md) | {st[0]} | {st[1]} | {st[2]} |")
                total += st[2]
        note = records_note([rec_dir / f"{i.name}{SUFFIX}" for i in insts])
        with atomic_write(fam_dir / f"{fam}.md", "w") as fh:
            fh.write("\n".join(lines + summary + [""] + body + ["---", "", note, ""]))
    for part, found in hurt_lines.items():
        index += ["", f"## {part}", ""] + (found or ["- none"])
    index += ["", "---", "", records_note(sorted(rec_dir.glob(f"*{SUFFIX}")))]
    with atomic_write(fam_dir / "README.md", "w") as fh:
        fh.write("\n".join(index) + "\n")
    print("\n".join(index))
    return total


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default=",".join(DATASETS))
    p.add_argument("--methods", help=f"default: {','.join(PAIR_METHODS)}; with --families "
                   f"{','.join(FAMILY_METHODS)}")  # fmt: skip
    p.add_argument("--counts", help=f"default: {','.join(map(str, PAIR_COUNTS))}; with "
                   f"--families {','.join(map(str, FAMILY_COUNTS))}")  # fmt: skip
    p.add_argument("--per-class", default=",".join(map(str, LABELED_PER_CLASS)))
    p.add_argument("--trials", "--draws", dest="trials", type=int, default=5)
    p.add_argument("--families", help=f"run the families instead of --datasets: 'all' or "
                   f"some of {','.join(FAMILY_NAMES)} (benchmarks/_families.py)")  # fmt: skip
    p.add_argument("--grid", choices=("tune", "check", "all"), default="all",
                   help="with --families: the part of the seed grid")  # fmt: skip
    p.add_argument("--max-n", type=int, help="with --families: skip instances above n points")
    p.add_argument(
        "--instances",
        type=lambda v: set(v.split(",")),
        help="with --families: only these instances of the grid (e.g. overlap-user)",
    )
    p.add_argument("--random-state", type=int, default=0)
    what = p.add_mutually_exclusive_group()
    what.add_argument("--pairs-only", action="store_true")
    what.add_argument("--labeled-only", action="store_true")
    p.add_argument(
        "--unguarded", action="store_true",
        help="fit every method with guard=None (the method as its paper gives it); use "
        "with --out, e.g. docs/results/defaults/unguarded",
    )  # fmt: skip
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    args.datasets = [d for d in args.datasets.split(",") if d]
    fams = args.families is not None
    if args.methods is None:
        args.methods = ",".join(FAMILY_METHODS if fams else PAIR_METHODS)
    if args.counts is None:
        args.counts = ",".join(map(str, FAMILY_COUNTS if fams else PAIR_COUNTS))
    args.methods = {m for m in args.methods.split(",") if m}
    args.counts = [int(c) for c in args.counts.split(",")]
    args.per_class = [int(c) for c in args.per_class.split(",")]
    if fams:
        given = [f for f in args.families.split(",") if f]
        args.families = list(FAMILY_NAMES) if given == ["all"] else given
        unknown = set(args.families) - set(FAMILY_NAMES)
        if unknown:
            p.error(f"unknown families {sorted(unknown)}; choose from {','.join(FAMILY_NAMES)}")
        if not args.report_only:
            run_families(args)
        report_families(args.out, args.families)
        return
    if not args.report_only:
        run(args)
    report(args.out)


if __name__ == "__main__":
    main()
