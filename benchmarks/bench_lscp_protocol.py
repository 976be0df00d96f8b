"""LSCP paper protocol (MTAP 2015, section 4): ARI vs number of random constraint pairs.

Three experiments, all with random pairs labelled by the ground truth
(``Constraints.from_labels``), the adjusted Rand index, and every method on the same
draw; the k-NN graphs use k = 10 for every method, as the paper ("the same k-NN
similarity graph construction for all the algorithms"), lambda = mu = 0.1, eta = 0.25:

* ``curves``: NCut, SL (when ``spectralink.SpectralLearning`` is available), E2CP and LSCP
  on wine, ionosphere, wdbc, glass, USPS (9,298) and MNIST test digits 0-4 (5,139).
  E2CP/LSCP run at their defaults: on the UCI sets the exact dense refinement, with the
  sampled (scalable) refinement forced, the masked one and ``F / max|F|`` scaling
  instead of clipping as variants on the same draws; on USPS and MNIST 0-4
  (n > 5,000) the sampled refinement (the default there) with solver tolerance 1e-5,
  the masked one alongside (``--image-refinement dense``: the exact dense refinement,
  with sampled and masked alongside).
* ``k``: ARI vs k = 5..25 on one dataset at a fixed constraint count (the paper's
  Table 3 used Scene, which is not available here).
* ``masked``: dense vs sampled vs masked refinement on MNIST 0-4 (dense_max raised), a
  few draws, for E2CP and LSCP, and for LSCP with ``F / max|F|``.

Writes Markdown tables and PNG curves to docs/results/lscp/, and the records to tables in
``docs/results/records/lscp/`` (``benchmarks/_store.py``): ``<dataset>.jsonl.gz`` for the
curves (a run of some methods with ``--tag``: ``<tag>`` when it starts with the dataset's
name, else ``<dataset>_<tag>``), ``k_<dataset>`` and ``masked_<dataset>`` for the other
parts.

Usage::

    SPECTRALINK_DATA=/path/to/datasets python -m benchmarks.bench_lscp_protocol [--quick]
        [--part curves|k|masked|all] [--trials N] [--datasets wine,usps]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from benchmarks._common import RESULTS
from benchmarks._store import table_path, write_table
from spectralink import datasets
from spectralink.experiments import format_table, run_protocol, summarize
from spectralink.plots import plot_metric_curves
from spectralink.registry import available_methods

OUT = RESULTS / "lscp"
UCI = ["wine", "ionosphere", "wdbc", "glass"]
IMAGES = ["usps", "mnist04"]
UCI_COUNTS = [50, 100, 200, 300, 400]
IMAGE_COUNTS = [300, 600, 1200, 1800, 2400]
K_VALUES = [5, 10, 15, 20, 25]
IMAGE_DENSE_MAX = 10_000  # the exact refinement's dense n x n matrices still fit USPS (9,298)


def load(name):
    if name == "mnist04":
        return datasets.load_subset("mnist_test", classes=range(5))
    return datasets.load(name)


def methods_for(name, k=10, variants=True, image_refinement="auto"):
    """Label -> params; the sampled, masked and F/max variants only where they are cheap.

    On the image sets the masked path runs alongside the default (sampled) one;
    ``image_refinement="dense"`` runs the paper's exact refinement (``dense_max`` raised
    above n) as E2CP / LSCP, with the sampled and masked paths alongside.
    """
    large = name in IMAGES
    tol = 1e-5 if large else 1e-8
    m = {"NCut": {"method": "ncut", "n_neighbors": k}}
    if "sl" in available_methods():
        # the paper's additive normalisation, as in the LSCP paper's SL baseline
        m["SL"] = {"method": "sl", "n_neighbors": k, "normalization": "additive"}
    m["E2CP"] = {"method": "e2cp", "n_neighbors": k, "tol": tol}
    m["LSCP"] = {"method": "lscp", "n_neighbors": k, "tol": tol}
    if large and variants:
        for label in ("E2CP", "LSCP"):
            if image_refinement == "dense":
                m[f"{label}-sampled"] = dict(m[label], refinement="sampled")
            m[f"{label}-masked"] = dict(m[label], refinement="masked")
            if image_refinement == "dense":
                m[label].update(refinement="dense", dense_max=IMAGE_DENSE_MAX)
    if variants and not large:
        m["E2CP-sampled"] = {"method": "e2cp", "n_neighbors": k, "refinement": "sampled"}
        m["LSCP-sampled"] = {"method": "lscp", "n_neighbors": k, "refinement": "sampled"}
        m["E2CP-masked"] = {"method": "e2cp", "n_neighbors": k, "refinement": "masked"}
        m["LSCP-masked"] = {"method": "lscp", "n_neighbors": k, "refinement": "masked"}
        m["E2CP-Fmax"] = {"method": "e2cp", "n_neighbors": k, "f_scale": "max"}
        m["LSCP-Fmax"] = {"method": "lscp", "n_neighbors": k, "f_scale": "max"}
    for params in m.values():
        if params["method"] != "ncut":
            params["guard"] = None  # the paper's methods, without the held-out guard
    return m


def ordering_note(summary, count) -> str:
    mean = {r["method"]: r["mean"] for r in summary if r["n_constraints"] == count}
    if not {"NCut", "E2CP", "LSCP"} <= mean.keys():
        return ""
    ok = mean["LSCP"] >= mean["E2CP"] >= mean["NCut"]
    rel = "holds" if ok else "does NOT hold"
    return (
        f"At {count} constraints: LSCP {mean['LSCP']:.3f}, E2CP {mean['E2CP']:.3f}, "
        f"NCut {mean['NCut']:.3f}: LSCP >= E2CP >= NCut {rel}."
    )


def run_curves(
    names, trials, counts_uci, counts_img, sections, image_refinement="auto", only=None, tag=""
):
    for name in names:
        X, y = load(name)
        counts = counts_img if name in IMAGES else counts_uci
        methods = methods_for(name, image_refinement=image_refinement)
        stem = name
        if only:
            methods = {label: p for label, p in methods.items() if label in only}
            # a run of some methods keeps the full records and curves of the dataset
            if tag:
                stem = tag if tag.startswith(name) else f"{name}_{tag}"
        t0 = time.perf_counter()
        recs = []
        config = {
            "part": "curves",
            "dataset": name,
            "methods": methods,
            "counts": counts,
            "n_trials": trials,
            "random_state": 0,
        }
        for count in counts:  # the records are written as each count completes
            recs += run_protocol(
                X,
                y,
                methods,
                [count],
                n_trials=trials,
                dataset=name,
                compute_ncut=False,
                random_state=0,
                progress=False,
            )
            write_table(recs, table_path(OUT, stem), config=config)
            print(f"{name}: {count} pairs done ({time.perf_counter() - t0:.0f} s)", flush=True)
        elapsed = time.perf_counter() - t0
        plot_metric_curves(
            recs,
            OUT / f"ari_{stem}.png",
            metric="ari",
            title=f"{name} (n={len(y)}), ARI, {trials} draws",
        )
        text = curves_section(name, y, trials, recs, elapsed)
        sections.append(text)
        print(text, flush=True)


def curves_section(name: str, y: np.ndarray, trials: int, recs: list, elapsed: float) -> str:
    """The page's section of one dataset's curves, from its records."""
    summary = summarize(recs, "ari")
    times = summarize(recs, "time_s")
    largest = max(r["n_constraints"] for r in recs)
    mean_t = {r["method"]: r["mean"] for r in times if r["n_constraints"] == largest}
    failed = sum(r["status"] != "ok" for r in recs)
    text = [
        f"### {name} (n = {len(y)}, k = {len(np.unique(y))}): ARI, mean ± std over {trials} draws",
        "",
        format_table(summary),
        "",
        ordering_note(summary, largest),
        "",
        "Mean fit time (s) at the largest count: "
        + ", ".join(f"{m} {t:.2f}" for m, t in mean_t.items())
        + f". Wall time of the dataset: {elapsed:.0f} s. Failed runs: {failed}.",
        "",
    ]
    return "\n".join(text)


def run_k(name, count, trials, sections):
    X, y = load(name)
    recs = []
    for k in K_VALUES:
        part = run_protocol(
            X,
            y,
            methods_for(name, k=k, variants=False),
            [count],
            n_trials=trials,
            dataset=name,
            compute_ncut=False,
            random_state=1,
            progress=False,
        )
        for r in part:
            r["k"] = k
        recs += part
    config = {
        "part": "k",
        "dataset": name,
        "k_values": K_VALUES,
        "count": count,
        "n_trials": trials,
        "random_state": 1,
    }
    write_table(recs, table_path(OUT, f"k_{name}"), config=config)
    text = k_section(name, count, trials, recs)
    sections.append(text)
    print(text, flush=True)


def k_section(name: str, count: int, trials: int, recs: list) -> str:
    """The page's table of ARI against k, from the records (each with its ``k``)."""
    methods = list(dict.fromkeys(r["method"] for r in recs))
    lines = [
        f"### ARI vs k on {name} ({count} constraints, {trials} draws; cf. the paper's "
        "Table 3 on Scene)",
        "",
        "| method | " + " | ".join(f"k={k}" for k in K_VALUES) + " |",
        "|---|" + "---:|" * len(K_VALUES),
    ]
    for m in methods:
        cells = []
        for k in K_VALUES:
            v = [r["ari"] for r in recs if r["method"] == m and r["k"] == k and r["status"] == "ok"]
            cells.append(f"{np.mean(v):.3f} ± {np.std(v, ddof=1) if len(v) > 1 else 0:.3f}")
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join(lines)


def run_masked(name, counts, trials, sections):
    X, y = load(name)
    methods = {}
    for base in ("e2cp", "lscp"):
        for path in ("dense", "sampled", "masked"):
            methods[f"{base.upper()}-{path}"] = {
                "method": base,
                "refinement": path,
                "dense_max": 10_000,
                "tol": 1e-6,
                "guard": None,
            }
    for path in ("dense", "sampled", "masked"):
        methods[f"LSCP-{path}-Fmax"] = {
            "method": "lscp",
            "refinement": path,
            "dense_max": 10_000,
            "tol": 1e-6,
            "f_scale": "max",
            "guard": None,
        }
    t0 = time.perf_counter()
    recs = run_protocol(
        X,
        y,
        methods,
        counts,
        n_trials=trials,
        dataset=name,
        compute_ncut=False,
        random_state=2,
        progress=False,
    )
    config = {
        "part": "masked",
        "dataset": name,
        "methods": methods,
        "counts": counts,
        "n_trials": trials,
        "random_state": 2,
    }
    write_table(recs, table_path(OUT, f"masked_{name}"), config=config)
    summary = summarize(recs, "ari")
    times = summarize(recs, "time_s")
    lines = [
        f"### Exact dense vs sampled vs masked refinement on {name} (n = {len(y)}), ARI "
        f"over {trials} draws",
        "",
        format_table(summary),
        "",
        "Mean fit time (s): "
        + ", ".join(f"{r['method']}@{r['n_constraints']} {r['mean']:.1f}" for r in times),
        f". Wall time {time.perf_counter() - t0:.0f} s.",
        "",
    ]
    sections.append("\n".join(lines))
    print("\n".join(lines), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer draws and counts")
    ap.add_argument("--part", default="all", choices=["curves", "k", "masked", "all"])
    ap.add_argument("--trials", type=int, default=None)
    ap.add_argument("--datasets", default=",".join(UCI + IMAGES))
    ap.add_argument("--tag", default="", help="suffix of the results file name")
    ap.add_argument("--image-counts", default=None, help="e.g. 300,2400")
    ap.add_argument(
        "--methods",
        default=None,
        help="curves part: run only these method labels, e.g. NCut,E2CP,LSCP (the draws "
        "do not depend on the methods, so runs on the same counts can be compared)",
    )
    ap.add_argument(
        "--image-refinement",
        default="auto",
        choices=["auto", "dense"],
        help="E2CP/LSCP refinement on USPS / MNIST 0-4: auto (the default, sampled there) "
        "with masked alongside, or dense (exact) with sampled and masked alongside",
    )
    ap.add_argument("--masked-dataset", default="mnist04")
    ap.add_argument("--masked-counts", default=None, help="e.g. 100,400")
    ap.add_argument("--k-dataset", default="ionosphere")
    ap.add_argument("--k-count", type=int, default=300)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    OUT.mkdir(parents=True, exist_ok=True)
    names = [s for s in args.datasets.split(",") if s]
    if args.quick:
        trials_uci = args.trials or 5
        trials_img = args.trials or 2
        counts_uci = [100, 200, 400]
        counts_img = [300, 1200, 2400]
        trials_k, trials_masked, masked_counts = args.trials or 5, 2, [600, 2400]
    else:
        trials_uci = trials_img = args.trials or 20
        counts_uci = UCI_COUNTS
        counts_img = IMAGE_COUNTS
        trials_k, trials_masked, masked_counts = args.trials or 20, 5, [600, 1200, 2400]
    if args.image_counts:
        counts_img = [int(c) for c in args.image_counts.split(",")]
    reductions = (
        f"Draws: {trials_uci} per count on the UCI sets, {trials_img} on USPS / MNIST 0-4 "
        f"(the paper: 20). Constraint counts: UCI {counts_uci}, images {counts_img}."
    )
    sections = [
        "## LSCP protocol results",
        "",
        "Generated by `python -m benchmarks.bench_lscp_protocol"
        + (" --quick" if args.quick else "")
        + "`. "
        + reductions,
        "Graphs: k = 10 neighbours for every method, Gaussian weights with sigma = mean "
        "distance to the 10th neighbour; raw features (no scaling). E2CP/LSCP: eta = 0.25, "
        "lambda = mu = 0.1, F clipped to [-1, 1] unless marked Fmax (F / max|F|); dense "
        + (
            "refinement (exact, as the paper) everywhere, the sampled (scalable) one in "
            "the -sampled columns and the masked one (no fill-in) in the -masked columns."
            if args.image_refinement == "dense"
            else "refinement (exact) for n <= 5000 when it fits in memory, sampled above "
            "(the defaults), and forced in the -sampled columns; masked (no fill-in) in "
            "the -masked columns."
        ),
        "",
    ]
    t0 = time.perf_counter()
    if args.part in ("curves", "all"):
        uci = [n for n in names if n in UCI]
        img = [n for n in names if n in IMAGES]
        only = set(args.methods.split(",")) if args.methods else None
        run_curves(uci, trials_uci, counts_uci, counts_img, sections, only=only, tag=args.tag)
        run_curves(
            img,
            trials_img,
            counts_uci,
            counts_img,
            sections,
            args.image_refinement,
            only=only,
            tag=args.tag,
        )
    if args.part in ("k", "all"):
        run_k(args.k_dataset, args.k_count, trials_k, sections)
    if args.part in ("masked", "all"):
        if args.masked_counts:
            masked_counts = [int(c) for c in args.masked_counts.split(",")]
        run_masked(args.masked_dataset, masked_counts, args.trials or trials_masked, sections)
    sections.append(f"Total wall time: {time.perf_counter() - t0:.0f} s (2 shared cores).")
    suffix = ("_quick" if args.quick else "") + (f"_{args.tag}" if args.tag else "")
    (OUT / f"RESULTS{suffix}_{args.part}.md").write_text("\n".join(sections) + "\n")


if __name__ == "__main__":
    main()
