"""SCACS paper protocol (Li et al., TKDE 2015, §5): ACC vs number of labelled instances.

Two experiments, both with ``c`` labelled instances -> all pairs among them
(``Constraints.from_labeled_subset``), ACC = 1 - clustering_error (best matching),
p = 500 landmarks, r = 3:

* ``scale``: SCACS (beta0 = 0.1, the paper's large-scale setting) vs LSC-R on
  segmentation, usps, pendigits, letter, mnist (70k) and shuttle. In every draw both use
  the same landmarks (one landmark graph per draw, shared by LSC-R and all c).
* ``fcsc``: SCACS (beta0 = 0.5 + 0.4 c/n, ``beta0="paper"``) vs LSC-R, FCSC (dense RBF
  of the FCSC code and its beta rule, ``beta="paper"``, as the paper) and SL (30-NN RBF
  graph, when ``spectralink.SpectralLearning`` is available) on the paper's 3,000-point
  subsets: USPS and PenDigits first 300 per class, Letter first 5 classes, ImageSeg
  full. Same labelled sets for every method. FCSC is reported as in its code (k-means on
  the raw K-way embedding) and with row-normalised embedding ("FCSC-rn"); its Laplacian
  eigendecomposition is computed once per dataset and shared by all draws (it does not
  depend on the constraints). The estimators' defaults (``beta0="auto"``,
  ``beta="auto"``) differ from these paper settings, which are passed explicitly.

Writes Markdown tables and PNG curves to docs/results/scacs/, and every run to the table
``docs/results/records/scacs/protocol_runs_<part>.jsonl.gz`` (``benchmarks/_store.py``).

Usage::

    SPECTRALINK_DATA=/path/to/datasets python -m benchmarks.bench_scacs_protocol [--quick]
        [--part scale|fcsc|all] [--draws N] [--datasets usps,mnist] [--counts 100,500]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from benchmarks._common import RESULTS
from benchmarks._store import (
    SUFFIX,
    read_table,
    records_dir,
    records_note,
    table_path,
    write_table,
)
from spectralink import LSCR, SCACS, Constraints, datasets
from spectralink.landmarks import build_landmark_graph
from spectralink.methods.fcsc import fcsc_basis, fcsc_rbf_affinity, fcsc_solve
from spectralink.metrics import clustering_error

OUT = RESULTS / "scacs"
SCALE_SETS = ["segmentation", "usps", "pendigits", "letter", "mnist", "shuttle"]
SUBSETS = {
    "ImageSeg": ("segmentation", {}),
    "USPS-3000": ("usps", {"per_class": 300}),
    "PenDigits-3000": ("pendigits", {"per_class": 300}),
    "Letter-5": ("letter", {"classes": range(5)}),
}
COUNTS = list(range(100, 1001, 100))


def acc(y, labels) -> float:
    return 1.0 - clustering_error(y, labels)


def labelled_sets(y, counts, draw):
    return {
        c: Constraints.from_labeled_subset(y, c, random_state=10_000 * draw + c) for c in counts
    }


def run_scale(names, counts, draws, n_init, records, on_progress):
    for name in names:
        try:
            X, y = datasets.load(name)
        except FileNotFoundError as exc:
            print(f"skip {name}: {exc}")
            continue
        k = len(np.unique(y))
        t0 = time.perf_counter()
        for t in range(draws):
            graph = build_landmark_graph(X, 500, 3, random_state=t)
            lscr = LSCR(k, n_init=n_init, random_state=t).fit_landmark_graph(graph)
            a_lscr = acc(y, lscr.labels_)
            for c, cons in labelled_sets(y, counts, t).items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    m = SCACS(
                        k, beta0=0.1, n_init=n_init, random_state=t, guard=None
                    ).fit_landmark_graph(graph, cons)
                records.append(
                    dict(part="scale", dataset=name, method="LSC-R", c=c, draw=t, acc=a_lscr)
                )
                records.append(
                    dict(
                        part="scale",
                        dataset=name,
                        method="SCACS",
                        c=c,
                        draw=t,
                        acc=acc(y, m.labels_),
                    )
                )
        print(
            f"[scale] {name}: n={len(y)} k={k} {draws} draws x {len(counts)} c in "
            f"{time.perf_counter() - t0:.1f} s",
            flush=True,
        )
        on_progress()


def run_fcsc(names, counts, draws, n_init, sl_counts, records, on_progress, affinity="rbf"):
    sl_cls = None
    if sl_counts:
        try:
            from spectralink import SpectralLearning as sl_cls
        except (ImportError, AttributeError, ValueError):
            print("SL not available: skipped")
    for label, (name, kw) in SUBSETS.items():
        if label not in names:
            continue
        try:
            X, y = datasets.load_subset(name, **kw) if kw else datasets.load(name)
        except FileNotFoundError as exc:
            print(f"skip {label}: {exc}")
            continue
        X = np.asarray(X, dtype=np.float64)
        k, n = len(np.unique(y)), len(y)
        t0 = time.perf_counter()
        if affinity == "rbf":
            basis = fcsc_basis(fcsc_rbf_affinity(X))
        else:
            from spectralink.graph import knn_affinity

            basis = fcsc_basis(knn_affinity(X, n_neighbors=20))
        part = "fcsc" if affinity == "rbf" else f"fcsc-{affinity}"
        t_basis = time.perf_counter() - t0
        W_sl = None
        if sl_cls is not None:
            from spectralink.graph import knn_affinity

            W_sl = knn_affinity(X, n_neighbors=30)
        for t in range(draws):
            graph = build_landmark_graph(X, 500, 3, random_state=t)
            lscr = LSCR(k, n_init=n_init, random_state=t).fit_landmark_graph(graph)
            a_lscr = acc(y, lscr.labels_)
            for c, cons in labelled_sets(y, [c for c in counts if c < n], t).items():
                row = dict(part=part, dataset=label, c=c, draw=t)
                records.append({**row, "method": "LSC-R", "acc": a_lscr})
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    m = SCACS(
                        k, beta0="paper", n_init=n_init, random_state=t, guard=None
                    ).fit_landmark_graph(graph, cons)
                records.append({**row, "method": "SCACS", "acc": acc(y, m.labels_)})
                for meth, norm in (("FCSC", False), ("FCSC-rn", True)):
                    try:
                        out = fcsc_solve(
                            basis,
                            cons,
                            k,
                            beta="paper",
                            normalize=norm,
                            n_init=n_init,
                            random_state=t,
                        )
                        records.append({**row, "method": meth, "acc": acc(y, out["labels"])})
                    except ValueError as exc:
                        print(f"  {meth} {label} c={c}: {exc}")
                if W_sl is not None and c in sl_counts:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        lab = sl_cls(
                            k,
                            affinity="precomputed",
                            normalization="additive",
                            n_init=n_init,
                            random_state=t,
                            guard=None,
                        ).fit_predict(W_sl, constraints=cons)
                    records.append({**row, "method": "SL", "acc": acc(y, lab)})
        print(
            f"[fcsc] {label}: n={n} k={k}, FCSC basis {t_basis:.1f} s, total "
            f"{time.perf_counter() - t0:.1f} s",
            flush=True,
        )
        on_progress()


def summarize(records, part):
    rows = {}
    for r in records:
        if r["part"] == part:
            rows.setdefault((r["dataset"], r["c"], r["method"]), []).append(r["acc"])
    return {key: (float(np.mean(v)), float(np.std(v)), len(v)) for key, v in rows.items()}


def write_tables(records, part, note) -> str:
    summ = summarize(records, part)
    if not summ:
        return ""
    methods = sorted(
        {m for _, _, m in summ}, key=lambda m: ["LSC-R", "SL", "FCSC", "FCSC-rn", "SCACS"].index(m)
    )
    lines = [f"## {part}: ACC (mean ± std over draws)", "", note, ""]
    for ds in dict.fromkeys(d for d, _, _ in summ):
        lines += [
            f"### {ds}",
            "",
            "| c | " + " | ".join(methods) + " |",
            "|---:|" + "---:|" * len(methods),
        ]
        full = max(v[2] for (d, _, _), v in summ.items() if d == ds)
        for c in sorted({c for d, c, _ in summ if d == ds}):
            cells = []
            for m in methods:
                v = summ.get((ds, c, m))
                # a method that failed on some draws (FCSC: no feasible vector) is averaged
                # over the draws it solved; say how many
                solved = f" ({v[2]}/{full} draws)" if v and v[2] < full else ""
                cells.append(f"{v[0]:.3f} ± {v[1]:.3f}{solved}" if v else "–")
            lines.append(f"| {c} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["---", "", records_note([table_path(OUT, f"protocol_runs_{part}")]), ""]
    text = "\n".join(lines)
    (OUT / f"protocol_{part}.md").write_text(text)
    return text


def plot(records, part):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summ = summarize(records, part)
    for ds in dict.fromkeys(d for d, _, _ in summ):
        fig, ax = plt.subplots(figsize=(5, 3.6))
        for m in sorted({m for d, _, m in summ if d == ds}):
            cs = sorted(c for d, c, mm in summ if d == ds and mm == m)
            mu = np.array([summ[(ds, c, m)][0] for c in cs])
            sd = np.array([summ[(ds, c, m)][1] for c in cs])
            ax.plot(cs, mu, marker="o", ms=3, label=m)
            ax.fill_between(cs, mu - sd, mu + sd, alpha=0.15)
        ax.set_xlabel("labelled instances c")
        ax.set_ylabel("ACC")
        ax.set_title(f"{ds} ({part})")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(OUT / f"{part}_{ds}.png", dpi=110)
        plt.close(fig)


def claims(records):
    out = []
    s = summarize(records, "scale")
    for ds in dict.fromkeys(d for d, _, _ in s):
        cs = sorted({c for d, c, _ in s if d == ds})
        wins = [s[(ds, c, "SCACS")][0] > s[(ds, c, "LSC-R")][0] for c in cs]
        out.append(f"scale {ds}: SCACS > LSC-R at {sum(wins)}/{len(cs)} c")
    for part in ("fcsc", "fcsc-knn"):
        out += _fcsc_claims(summarize(records, part), part)
    return out


def _fcsc_claims(f, part):
    out = []
    for ds in dict.fromkeys(d for d, _, _ in f):
        cs = sorted({c for d, c, _ in f if d == ds})
        for ref in ("FCSC", "FCSC-rn", "SL"):
            gaps = [f[(ds, c, "SCACS")][0] - f[(ds, c, ref)][0] for c in cs if (ds, c, ref) in f]
            if gaps:
                out.append(
                    f"{part} {ds}: SCACS - {ref} ACC gap mean {np.mean(gaps):+.3f} "
                    f"(min {np.min(gaps):+.3f}, max {np.max(gaps):+.3f})"
                )
        wins = [f[(ds, c, "SCACS")][0] > f[(ds, c, "LSC-R")][0] for c in cs]
        out.append(f"{part} {ds}: SCACS > LSC-R at {sum(wins)}/{len(cs)} c")
    return out


def rebuild_from_records() -> None:
    """Tables, curves and claims from every ``protocol_runs_*`` table of the output folder."""
    tables = sorted(records_dir(OUT).glob(f"protocol_runs_*{SUFFIX}"))
    records = [r for path in tables for r in read_table(path)[1]]
    for part in dict.fromkeys(r["part"] for r in records):
        draws = len({(r["dataset"], r["draw"]) for r in records if r["part"] == part})
        n_sets = len({r["dataset"] for r in records if r["part"] == part})
        note = (
            f"Protocol: c labelled instances, all pairs among them; p=500, r=3; "
            f"{draws // max(n_sets, 1)} draws per c, k-means n_init=10 (the script's default); "
            "tables rebuilt with --from-csv from the runs' records."
        )
        write_tables(records, part, note + " " + PART_NOTES.get(part, ""))
        plot(records, part)
    print("\n".join(claims(records)))


PART_NOTES = {
    "scale": "SCACS beta0 = 0.1 (paper §5.3), same landmarks as LSC-R.",
    "fcsc": "SCACS beta0 = 0.5 + 0.4 c/n; FCSC dense RBF (paper §5.2).",
    "fcsc-knn": "SCACS beta0 = 0.5 + 0.4 c/n; FCSC on the 20-NN Gaussian graph.",
}


# PLR0915 (statements): a benchmark's protocol, step by step as its page describes it.
def main(argv=None):  # noqa: PLR0915
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="3 draws, c in {100, 500, 1000}, k-means n_init=3"
    )
    ap.add_argument("--part", choices=["scale", "fcsc", "all"], default="all")
    ap.add_argument("--draws", type=int, default=None, help="draws per c (paper: 20)")
    ap.add_argument("--counts", default=None, help="comma-separated c values")
    ap.add_argument("--datasets", default=None, help="comma-separated names / subset labels")
    ap.add_argument("--n-init", type=int, default=None, help="k-means restarts (default 10)")
    ap.add_argument("--no-sl", action="store_true", help="skip SL")
    ap.add_argument(
        "--fcsc-affinity",
        choices=["rbf", "knn"],
        default="rbf",
        help="FCSC graph: the dense RBF of its code (paper) or the 20-NN graph",
    )
    ap.add_argument("--sl-counts", default=None, help="c values at which SL runs (default all)")
    ap.add_argument(
        "--from-csv",
        action="store_true",
        help="only rebuild tables, curves and claims from the tables of runs of the output "
        "folder (e.g. after running the parts in separate processes)",
    )
    args = ap.parse_args(argv)
    if args.from_csv:
        rebuild_from_records()
        return
    draws = args.draws or (3 if args.quick else 20)
    counts = (
        [int(c) for c in args.counts.split(",")]
        if args.counts
        else ([100, 500, 1000] if args.quick else COUNTS)
    )
    n_init = args.n_init or (3 if args.quick else 10)
    names = args.datasets.split(",") if args.datasets else None
    OUT.mkdir(parents=True, exist_ok=True)
    reduced = []
    if draws < 20:
        reduced.append(f"{draws} draws instead of 20")
    if counts != COUNTS:
        reduced.append(f"c in {counts} instead of 100..1000 step 100")
    if n_init != 10:
        reduced.append(f"k-means n_init={n_init}")
    note = (
        "Protocol: c labelled instances, all pairs among them; p=500, r=3; "
        f"k-means n_init={n_init}. "
        + ("Reduced run: " + "; ".join(reduced) + "." if reduced else "Full protocol.")
    )
    print(note, flush=True)
    config = {
        "part": args.part,
        "draws": draws,
        "counts": counts,
        "n_init": n_init,
        "datasets": names,
        "fcsc_affinity": args.fcsc_affinity,
        "sl": not args.no_sl,
        "sl_counts": args.sl_counts,
    }
    records: list[dict] = []
    notes = PART_NOTES

    def write_all(final=False):
        for part, extra in notes.items():
            text = write_tables(records, part, note + " " + extra)
            if text:
                plot(records, part)
                if final:
                    print(text)
        suffix = "-knn" if args.fcsc_affinity == "knn" else ""
        table = table_path(OUT, f"protocol_runs_{args.part}{suffix}")
        write_table(records, table, config=config)

    t0 = time.perf_counter()
    if args.part in ("scale", "all"):
        scale_sets = [d for d in names if d in SCALE_SETS] if names else SCALE_SETS
        run_scale(scale_sets, counts, draws, n_init, records, write_all)
    if args.part in ("fcsc", "all"):
        sl_counts = (
            []
            if args.no_sl
            else ([int(c) for c in args.sl_counts.split(",")] if args.sl_counts else counts)
        )
        if sl_counts != counts and not args.no_sl:
            print(f"SL only at c in {sl_counts}")
        run_fcsc(
            names or list(SUBSETS),
            counts,
            draws,
            n_init,
            sl_counts,
            records,
            write_all,
            affinity=args.fcsc_affinity,
        )
    write_all(final=True)
    print("\n".join(claims(records)))
    print(f"total {time.perf_counter() - t0:.0f} s (2 shared cores: timings inflated)")


if __name__ == "__main__":
    main()
