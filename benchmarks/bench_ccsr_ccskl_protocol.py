"""The CCSR / CCSKL papers' protocol: clustering error vs number of pairwise constraints.

Li, Liu & Tang (CVPR 2009) and Li & Liu (ICCV 2009), section 4 / 5 of each:

* symmetric "or" 20-NN Gaussian graphs, sigma over the 9-value grid around r (the mean
  distance to the 20th neighbour); the papers report the best graph, we report both the
  default sigma = r and the best of the 9 (an oracle: per method and constraint count, the
  sigma with the lowest mean error);
* constraints generated from the labels as in the authors' generator: ``s`` must-links
  inside every class and ``s`` cannot-links between every pair of classes, i.e.
  ``s k (k + 1) / 2`` pairs (11 000 = 55 * 200 is the largest USPS count in the papers);
  pairs are drawn with replacement, so merged duplicates and self-pairs make the actual
  count slightly smaller than the nominal one;
* 10 constraint counts, several independent constraint draws per count; every draw runs
  k-means with ``--n-init`` restarts (default 10, the estimators' default; the one with the
  lowest inertia is kept, for SSKK the lowest kernel k-means objective) with its own seed.
  The papers instead average 50 single k-means runs for each of 50 draws; ``--n-init 1``
  reproduces that averaging (the mean over draws then also averages over k-means starts);
* methods NCut, SL, SSKK, CCSR (m = 15), CCSKL (m = 20) on the same graphs, CCSR and
  CCSKL as in the papers (``shrinkage=0``, not the estimators' default) and SL with the
  paper's additive normalisation (not the default); the neighbour
  search is done once per dataset and the eigenvectors once per graph (NCut, CCSR and
  CCSKL share them; SL and SSKK change the graph and cannot).

Outputs Markdown tables and PNG curves into ``docs/results/ccsr_ccskl`` and every run into
the table ``docs/results/records/ccsr_ccskl/<dataset><tag>.jsonl.gz``
(``benchmarks/_store.py``); ``docs/results/ccsr_ccskl/README.md`` reads them.

Run ``python -m benchmarks.bench_ccsr_ccskl_protocol`` (full) or with ``--quick``; see
``--help``. Set ``SPECTRALINK_DATA`` to the directory with ``usps.npz``, ``mnist_test.npz``,
``wdbc.npz`` and ``sonar.npz``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from benchmarks._common import RESULTS, genpwc
from benchmarks._store import SUFFIX, read_table, records_dir, table_path, write_table
from spectralink.datasets import load, load_subset
from spectralink.graph import gaussian_knn_graph, kneighbors, sigma_from_distances, sigma_grid
from spectralink.methods.ccskl import CCSKL
from spectralink.methods.ccsr import CCSR, diagonal_gram
from spectralink.methods.sskk import SSKK
from spectralink.metrics import clustering_error
from spectralink.spectral import kmeans_rows, laplacian_eigenvectors

METHODS = ["NCut", "SL", "SSKK", "CCSR", "CCSKL", "CCSR-n", "CCSKL-n"]
#: "-n" variants: the same learnt embedding, k-means on unit-norm rows (not in the papers)
#: methods whose graph (hence eigenvectors) depends on the constraints: expensive per draw
GRAPH_METHODS = {"SL", "SSKK"}

#: dataset -> (loader, s values); counts are s * k (k + 1) / 2
DATASETS = {
    "usps": (lambda: load("usps"), np.arange(20, 201, 20)),
    "mnist04": (lambda: load_subset("mnist_test", classes=range(5)), np.arange(20, 201, 20)),
    "wdbc": (lambda: load("wdbc"), np.arange(10, 101, 10)),
    "sonar": (lambda: load("sonar"), np.arange(5, 51, 5)),
    "iris": (lambda: load("iris"), np.arange(5, 51, 5)),
}
LARGE = 3000  # datasets above this size get the reduced SL/SSKK schedule


# PLR0915 (statements): a benchmark's protocol, step by step as its page describes it.
def run_dataset(name, args, rows, log, checkpoint=None):  # noqa: PLR0915
    loader, s_values = DATASETS[name]
    X, y = loader()
    n, k = len(y), len(np.unique(y))
    if args.quick:
        s_values = s_values[[0, len(s_values) // 2, -1]]
    elif min(args.n_counts, args.large_n_counts if n > LARGE else 10) < len(s_values):
        # an evenly spaced subset ending at the largest count
        n_counts = min(args.n_counts, args.large_n_counts if n > LARGE else 10)
        step = len(s_values) / n_counts
        s_values = s_values[
            [int(round(len(s_values) - 1 - i * step)) for i in range(n_counts)][::-1]
        ]
    draws = args.draws
    large = n > LARGE
    t0 = time.perf_counter()
    dist, ind = kneighbors(X, 20, random_state=0)
    r = sigma_from_distances(dist)
    grid = sigma_grid(r) if not args.default_sigma_only else np.array([r])
    if args.quick:
        grid = grid[[0, 2, 4, 6, 8]] if len(grid) == 9 else grid
    if args.sigmas:
        wanted = [float(v) for v in args.sigmas.split(",")]
        grid = np.array(
            [sg for sg in grid if any(np.isclose(sg / r, v, rtol=1e-3) for v in wanted)]
        )
    graph_s = s_values
    full_graph = not large or args.graph_full
    if not full_graph and args.large_counts < len(s_values):
        pick = np.linspace(len(s_values) - 1, 0, args.large_counts).round().astype(int)
        graph_s = s_values[np.unique(pick)]
    graph_draws = draws if full_graph else min(draws, args.large_draws)
    log(
        f"## {name}: n={n}, k={k}, r={r:.4g}, "
        f"counts={[int(c) for c in s_values * k * (k + 1) // 2]}, "
        f"{draws} draws, {len(grid)} sigma values; SL/SSKK: counts "
        f"{[int(c) for c in graph_s * k * (k + 1) // 2]}, {graph_draws} draws, "
        f"{'all sigma values' if full_graph else 'sigma = r only'}"
    )
    info = {"n": n, "k": k, "r": r, "large": not full_graph, "graph_s": graph_s}
    info.update(graph_draws=graph_draws, sigmas_done=[], n_sigmas=len(grid))
    # sigma = r first, so that an interrupted run still has the default-sigma table
    grid = sorted(grid, key=lambda sg: (not np.isclose(sg, r), sg))
    for sigma in grid:
        is_default = bool(np.isclose(sigma, r))
        W = gaussian_knn_graph(dist, ind, sigma)
        # a run of SL / SSKK only (split runs) needs no shared eigenvectors
        embed = any(m not in GRAPH_METHODS for m in args.methods)
        if embed:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _, F = laplacian_eigenvectors(W, 20, random_state=0)
            dgram = diagonal_gram(F[:, :15])
        ts = time.perf_counter()
        for s in s_values:
            count = int(s * k * (k + 1) // 2)
            for draw in range(draws):
                seed = 1000 * draw + int(s)
                cons = genpwc(y, int(s), np.random.RandomState(seed))
                ni = args.n_init
                res = embedding_labels(F, dgram, cons, k, ni, seed) if embed else {}
                do_graph = (is_default or full_graph) and s in graph_s and draw < graph_draws
                if do_graph and "SSKK" in args.methods:
                    est = SSKK(
                        k,
                        affinity="precomputed",
                        n_init=ni,
                        max_iter=50,
                        random_state=seed,
                        guard=None,
                    )
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        res["SSKK"] = est.fit(W, constraints=cons).labels_
                if do_graph and "SL" in args.methods:
                    res["SL"] = sl_labels(W, cons, k, seed, ni)
                for meth, lab in res.items():
                    if meth in args.methods:
                        rows.append(
                            {
                                "dataset": name,
                                "sigma": float(sigma),
                                "sigma_over_r": float(sigma / r),
                                "default_sigma": is_default,
                                "s": int(s),
                                "n_constraints": count,
                                "actual_constraints": len(cons),
                                "draw": draw,
                                "method": meth,
                                "error": clustering_error(y, lab),
                            }
                        )
        log(
            f"  sigma = {sigma / r:.3g} r: {time.perf_counter() - ts:.1f} s "
            f"(elapsed {time.perf_counter() - t0:.0f} s)"
        )
        info["sigmas_done"].append(float(sigma / r))
        if checkpoint is not None:
            checkpoint(info)
    return info


def embedding_labels(F, dgram, cons, k, ni, seed):
    """NCut, CCSR and CCSKL labels (and their unit-row variants) from the shared eigenvectors."""
    res = {"NCut": kmeans_rows(F[:, :k], k, normalize=True, n_init=ni, random_state=seed)}
    # shrinkage=0: the papers' algorithms (the estimators' defaults shrink toward NCut)
    est = CCSR(k, n_init=ni, shrinkage=0, random_state=seed, guard=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res["CCSR"] = est.fit_embedding(F[:, :15], cons, diag_gram=dgram).labels_
    res["CCSR-n"] = kmeans_rows(est.embedding_, k, normalize=True, n_init=ni, random_state=seed)
    est = CCSKL(k, n_init=ni, shrinkage=0, random_state=seed, guard=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res["CCSKL"] = est.fit_embedding(F, cons).labels_
    res["CCSKL-n"] = kmeans_rows(est.embedding_, k, normalize=True, n_init=ni, random_state=seed)
    return res


def sl_labels(W, cons, k, seed, n_init=1):
    from spectralink.methods.sl import SpectralLearning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = SpectralLearning(
            k, affinity="precomputed", normalization="additive", n_init=n_init,
            random_state=seed, guard=None,
        )  # fmt: skip
        return est.fit(W, constraints=cons).labels_


def summarise(rows, name, methods):
    """{view: {method: {count: (mean, std, n_draws, sigma/r)}}} for the two sigma views."""
    data = [r for r in rows if r["dataset"] == name]
    out = {"default": {}, "best": {}}
    for meth in methods:
        mrows = [r for r in data if r["method"] == meth]
        counts = sorted({r["n_constraints"] for r in mrows})
        out["default"][meth], out["best"][meth] = {}, {}
        for c in counts:
            by_sigma = {}
            for r in mrows:
                if r["n_constraints"] == c:
                    by_sigma.setdefault(r["sigma_over_r"], []).append(r["error"])
            stats = {sg: (np.mean(v), np.std(v), len(v)) for sg, v in by_sigma.items()}
            default = [sg for sg in stats if np.isclose(sg, 1.0)]
            if default:
                out["default"][meth][c] = (*stats[default[0]], 1.0)
            best = min(stats, key=lambda sg: stats[sg][0])
            out["best"][meth][c] = (*stats[best], best)
    return out


def markdown(name, info, summ, methods, args):
    lines = [f"### {name} (n = {info['n']}, k = {info['k']}, r = {info['r']:.4g})", ""]
    for view, title in [("default", "sigma = r"), ("best", "best of the sigma grid (oracle)")]:
        lines += [f"Clustering error (%), {title}; mean ± std over draws.", ""]
        counts = sorted({c for m in methods for c in summ[view].get(m, {})})
        lines.append("| constraints | " + " | ".join(methods) + " |")
        lines.append("|---" * (len(methods) + 1) + "|")
        for c in counts:
            cells = []
            for m in methods:
                v = summ[view].get(m, {}).get(c)
                if v is None:
                    cells.append("–")
                else:
                    extra = f" (σ={v[3]:.3g}r)" if view == "best" else ""
                    cells.append(f"{100 * v[0]:.1f} ± {100 * v[1]:.1f}{extra}")
            lines.append(f"| {c} | " + " | ".join(cells) + " |")
        lines.append("")
    if len(info["sigmas_done"]) < info["n_sigmas"]:
        done = ", ".join(f"{v:.3g}r" for v in sorted(info["sigmas_done"]))
        lines.append(
            f"**Partial run:** only {len(info['sigmas_done'])} of the {info['n_sigmas']} sigma "
            f"values were completed ({done}); 'best of grid' is over those only."
        )
        lines.append("")
    if info["large"] and info.get("graph_sigmas"):
        done = ", ".join(f"{v:.3g}r" for v in info["graph_sigmas"])
        lines.append(
            f"SL and SSKK (one eigensolve / kernel k-means per draw) were run at sigma = {done} "
            "only; their 'best of grid' entries are over those values."
        )
        lines.append("")
    elif info["large"]:
        lines.append(
            f"SL and SSKK (one eigensolve / kernel k-means per draw) were run at sigma = r "
            f"only, on the counts shown, with {info['graph_draws']} draws; their "
            "'best of grid' entries are therefore the sigma = r values."
        )
        lines.append("")
    return "\n".join(lines)


def plot(name, summ, methods, outdir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, (view, title) in zip(
        axes, [("default", "σ = r"), ("best", "best σ of 9 (oracle)")], strict=True
    ):
        for m in methods:
            d = summ[view].get(m, {})
            if not d:
                continue
            c = sorted(d)
            mu = np.array([d[x][0] for x in c]) * 100
            sd = np.array([d[x][1] for x in c]) * 100
            ax.errorbar(c, mu, yerr=sd, marker="o", ms=3, capsize=2, label=m)
        ax.set_title(f"{name}: {title}")
        ax.set_xlabel("number of pairwise constraints")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("clustering error (%)")
    axes[1].legend()
    fig.tight_layout()
    fig.savefig(outdir / f"{name}.png", dpi=110)
    plt.close(fig)


def run_config(args: argparse.Namespace, name: str) -> dict:
    """What the records of ``name`` depend on: the options that shape the run."""
    keep = (
        "methods draws n_init quick default_sigma_only n_counts large_n_counts large_counts "
        "large_draws graph_full sigmas"
    ).split()
    return {"dataset": name, **{k: getattr(args, k) for k in keep}}


def merge_runs(name: str, outdir: Path, header: list[str], args: argparse.Namespace) -> None:
    """Rebuild the table and curves of ``name`` from the tables of several (split) runs."""
    files = sorted(records_dir(outdir).glob(f"{name}*{SUFFIX}"))
    rows = [r for f in files for r in read_table(f)[1]]
    # split runs may repeat a cell (same seeds, same result): keep one
    rows = list({(r["sigma_over_r"], r["s"], r["draw"], r["method"]): r for r in rows}.values())
    sig = sorted({r["sigma_over_r"] for r in rows})
    X_y = DATASETS[name][0]()
    y = X_y[1]
    k = len(np.unique(y))
    graph_rows = [r for r in rows if r["method"] in GRAPH_METHODS]
    info = {
        "n": len(y),
        "k": k,
        "r": float(rows[0]["sigma"]) / rows[0]["sigma_over_r"],
        # SL / SSKK missing from some sigma values (the reduced large-set schedule)
        "large": bool(graph_rows) and len({r["sigma_over_r"] for r in graph_rows}) < len(sig),
        "graph_draws": len({r["draw"] for r in graph_rows}) if graph_rows else 0,
        "graph_sigmas": sorted({r["sigma_over_r"] for r in graph_rows}),
        "sigmas_done": sig,
        "n_sigmas": 9,
    }
    summ = summarise(rows, name, args.methods)
    table = markdown(name, info, summ, args.methods, args)
    plot(name, summ, args.methods, outdir)
    note = f"Merged from {', '.join(f.name for f in files)}."
    body = header + [table, note, "", f"![{name}]({name}.png)", ""]
    (outdir / f"{name}.md").write_text("\n".join(body))
    print(table)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--datasets", default="usps,mnist04,wdbc,sonar,iris")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--draws", type=int, default=10, help="constraint draws per count")
    p.add_argument(
        "--n-init", type=int, default=10, help="k-means restarts per draw (papers: 1, averaged)"
    )
    p.add_argument("--quick", action="store_true", help="3 counts, 5 sigma values")
    p.add_argument("--default-sigma-only", action="store_true")
    p.add_argument("--n-counts", type=int, default=10, help="constraint counts (of 10)")
    p.add_argument(
        "--large-n-counts", type=int, default=10, help="constraint counts on n > 3000 (of 10)"
    )
    p.add_argument("--large-counts", type=int, default=4, help="SL/SSKK counts on n > 3000")
    p.add_argument("--large-draws", type=int, default=10, help="SL/SSKK draws on n > 3000")
    p.add_argument(
        "--graph-full",
        action="store_true",
        help="SL/SSKK on every sigma, count and draw also on n > 3000",
    )
    p.add_argument("--out", default=str(RESULTS))
    p.add_argument("--sigmas", default="", help="subset of the grid, as multiples of r")
    p.add_argument("--tag", default="", help="suffix of the output files (split runs)")
    p.add_argument(
        "--merge",
        action="store_true",
        help="only rebuild <dataset>.md/.png from all <dataset>* tables (split runs)",
    )
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")  # disconnected-graph and solver warnings at extreme sigma
    args.methods = [m for m in METHODS if m in args.methods.split(",")]
    names = args.datasets.split(",")
    for nm in names:
        if nm not in DATASETS:
            p.error(f"unknown dataset {nm!r}; choose from {', '.join(DATASETS)}")
    outdir = Path(args.out) / "ccsr_ccskl"
    outdir.mkdir(parents=True, exist_ok=True)
    tag = ("_quick" if args.quick else "") + args.tag
    cli_args = sys.argv[1:] if argv is None else argv
    header = [
        "# CCSR / CCSKL protocol" + (" (quick run)" if args.quick else ""),
        "",
        f"Command: `python -m benchmarks.bench_ccsr_ccskl_protocol {' '.join(cli_args)}`",
        "",
        "Protocol: 20-NN 'or' Gaussian graphs; constraints per the authors' generator (s ML per "
        "class and s CL per class pair, drawn with replacement; counts = s k(k+1)/2, nominal); "
        f"{args.draws} constraint draws per count, k-means (k-means++) with {args.n_init} "
        "restart(s) per draw, lowest inertia kept; "
        "CCSR m = 15, CCSKL m = 20, SSKK normalized-cut kernel with penalty n/(kc), SL with "
        "Kamvar's additive normalisation, NCut = NJW (k-means on unit rows of the k smallest "
        "eigenvectors; the papers used Yu-Shi discretisation). CCSR-n / CCSKL-n: the same "
        "learnt embeddings with k-means on unit-norm rows (not in the papers). 'Best of "
        "grid' takes, per "
        "method and count, the sigma with the lowest mean error. Deviations from the papers "
        "(50 draws, each averaging 50 single k-means runs): fewer draws and best-of-restarts "
        "k-means instead of the average of single runs; SL and SSKK on the large datasets "
        "run only at sigma = r and on a subset of counts unless `--graph-full` (see each "
        "table). "
        f"Threads: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}.",
        "",
    ]
    if args.merge:
        for nm in names:
            merge_runs(nm, outdir, header, args)
        return
    t_all = time.perf_counter()
    for nm in names:
        rows = []
        t = time.perf_counter()

        def write(info, nm=nm, rows=rows, t=t):
            summ = summarise(rows, nm, args.methods)
            table = markdown(nm, info, summ, args.methods, args)
            plot(nm + tag, summ, args.methods, outdir)
            body = header + [
                table,
                f"Time: {time.perf_counter() - t:.0f} s.",
                "",
                f"![{nm}]({nm}{tag}.png)",
                "",
            ]
            (outdir / f"{nm}{tag}.md").write_text("\n".join(body))
            write_table(rows, table_path(outdir, nm + tag), config=run_config(args, nm))
            return table

        info = run_dataset(nm, args, rows, print, checkpoint=write)
        print(write(info), flush=True)
        print(f"wrote {outdir / f'{nm}{tag}.md'}", flush=True)
    print(f"total time {time.perf_counter() - t_all:.0f} s")


if __name__ == "__main__":
    main()
