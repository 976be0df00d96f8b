"""Time and peak memory of the spectral core: k-NN Gaussian graph + 20 Laplacian eigenvectors.

For every size n (synthetic Gaussian mixture, 50 dimensions, 20 components, fixed seed) the
script measures, each configuration in a fresh subprocess:

* ours: ``spectralink.graph.kneighbors`` (k = 20) -> ``gaussian_knn_graph`` (sigma = mean k-th
  neighbour distance) -> ``spectralink.spectral.laplacian_eigenvectors`` (m = 20), then
  ``kmeans_rows`` (20 clusters) so that the last column is comparable with scikit-learn;
* scikit-learn: ``SpectralClustering(affinity="nearest_neighbors", n_neighbors=20,
  n_clusters=20)``, whose ``fit`` covers graph, embedding and k-means.

Peak memory is the child's ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` (the input array is
included; its size is printed). Above the approximate-neighbour threshold the neighbour search
runs PyNNDescent, whose numba kernels are compiled once per process: the script times that
compilation on a tiny warm-up problem and reports it separately ("JIT") from the warm search.
``--cold`` adds a run with an empty numba disk cache (first use after installation).

Examples
--------
    python benchmarks/bench_graph_spectral.py --sizes 10k,100k
    python benchmarks/bench_graph_spectral.py --sizes 10k,100k,1M --markdown out.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

N_FEATURES = 50
N_COMPONENTS = 20
N_NEIGHBORS = 20
N_EIGVECS = 20
SEED = 0


def make_mixture(n: int, d: int = N_FEATURES, k: int = N_COMPONENTS, seed: int = SEED):
    """A Gaussian mixture with unequal weights and spreads: clustered but overlapping."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((k, d))
    weights = rng.dirichlet(np.full(k, 5.0))
    y = rng.choice(k, size=n, p=weights)
    spread = rng.uniform(0.5, 1.0, k)
    X = centers[y] + rng.standard_normal((n, d)) * spread[y, None]
    return X, y


def _peak_rss_mib() -> float:
    # ru_maxrss is KiB on Linux, bytes on macOS
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (2**20 if sys.platform == "darwin" else 2**10)


def _clock():
    return time.perf_counter(), time.process_time()


def _child_ours(n: int, knn_method: str, solver: str) -> dict:
    from sklearn.metrics import adjusted_rand_score

    from spectralink.graph import (
        ANN_THRESHOLD,
        gaussian_knn_graph,
        kneighbors,
        normalized_laplacian,
        sigma_from_distances,
    )
    from spectralink.spectral import kmeans_rows, laplacian_eigenvectors

    X, y = make_mixture(n)
    out = {"rss_data_mib": _peak_rss_mib(), "jit_s": 0.0}
    approximate = knn_method == "approximate" or (knn_method == "auto" and n > ANN_THRESHOLD)
    if approximate:
        # numba compiles PyNNDescent's kernels on first use in every process: time it apart
        w0, _ = _clock()
        kneighbors(X[:2000], N_NEIGHBORS, method="approximate", random_state=SEED)
        out["jit_s"] = time.perf_counter() - w0
    w0, c0 = _clock()
    dist, ind = kneighbors(X, N_NEIGHBORS, method=knn_method, random_state=SEED)
    w1, _ = _clock()
    W = gaussian_knn_graph(dist, ind, sigma_from_distances(dist))
    del dist, ind
    w2, _ = _clock()
    lam, V = laplacian_eigenvectors(W, N_EIGVECS, solver=solver, random_state=SEED)
    w3, c3 = _clock()
    labels = kmeans_rows(V, N_COMPONENTS, random_state=SEED)
    w4, _ = _clock()
    L = normalized_laplacian(W)
    residual = np.linalg.norm(L @ V - V * lam, axis=0).max()
    out.update(
        neighbours_s=w1 - w0,
        graph_s=w2 - w1,
        eigen_s=w3 - w2,
        total_s=w3 - w0,
        kmeans_s=w4 - w3,
        cpu_s=c3 - c0,
        peak_rss_mib=_peak_rss_mib(),
        residual=float(residual),
        lambda_max=float(lam[-1]),
        ari=float(adjusted_rand_score(y, labels)),
        nnz=int(W.nnz),
    )
    return out


def _child_sklearn(n: int) -> dict:
    from sklearn.cluster import SpectralClustering
    from sklearn.metrics import adjusted_rand_score

    X, y = make_mixture(n)
    out = {"rss_data_mib": _peak_rss_mib(), "jit_s": 0.0}
    w0, c0 = _clock()
    model = SpectralClustering(
        n_clusters=N_COMPONENTS,
        affinity="nearest_neighbors",
        n_neighbors=N_NEIGHBORS,
        random_state=SEED,
    ).fit(X)
    w1, c1 = _clock()
    out.update(
        clustering_s=w1 - w0,
        cpu_s=c1 - c0,
        peak_rss_mib=_peak_rss_mib(),
        ari=float(adjusted_rand_score(y, model.labels_)),
    )
    return out


def _run_child(impl: str, n: int, args, env=None) -> dict:
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--child",
        impl,
        "--n",
        str(n),
        "--knn-method",
        args.knn_method,
        "--solver",
        args.solver,
    ]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=args.timeout, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        return {"skipped": f"timeout after {args.timeout:.0f} s"}
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        return {"skipped": f"failed (exit {proc.returncode}): {tail[0]}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _median_runs(runs: list[dict]) -> dict:
    ok = [r for r in runs if "skipped" not in r]
    if not ok:
        return runs[0]
    med = {}
    for key, value in ok[0].items():
        med[key] = statistics.median(r[key] for r in ok) if isinstance(value, float) else value
    return med | {"repeats": len(ok)}


def _fmt(x, spec=".1f"):
    return "" if x is None else format(x, spec)


COLUMNS = [
    ("n", "n", "d"),
    ("impl", "implementation", "s"),
    ("neighbours_s", "neighbours (s)", ".1f"),
    ("graph_s", "graph (s)", ".1f"),
    ("eigen_s", "20 eigvecs (s)", ".1f"),
    ("total_s", "graph + eigvecs (s)", ".1f"),
    ("jit_s", "numba JIT (s)", ".1f"),
    ("clustering_s", "+ k-means = clustering (s)", ".1f"),
    ("cpu_s", "CPU (s)", ".1f"),
    ("peak_rss_mib", "peak RSS (MiB)", ".0f"),
    ("rss_data_mib", "RSS after data (MiB)", ".0f"),
    ("residual", "max residual", ".1e"),
    ("ari", "ARI", ".3f"),
]


def _row_cells(row: dict) -> list[str]:
    if "skipped" in row:
        return [f"{row['n']:d}", row["impl"], f"skipped: {row['skipped']}"] + [""] * (
            len(COLUMNS) - 3
        )
    return [_fmt(row.get(key), spec) for key, _, spec in COLUMNS]


def _markdown(rows: list[dict], header: list[str]) -> str:
    lines = header + [
        "",
        "| " + " | ".join(title for _, title, _ in COLUMNS) + " |",
        "|" + "|".join("---" for _ in COLUMNS) + "|",
    ]
    lines += ["| " + " | ".join(_row_cells(r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _parse_sizes(text: str) -> list[int]:
    mult = {"k": 1_000, "m": 1_000_000}
    sizes = []
    for tok in text.split(","):
        tok = tok.strip().lower()
        scale = mult.get(tok[-1], 1)
        sizes.append(int(float(tok[:-1] if scale > 1 else tok) * scale))
    return sizes


def _load() -> str:
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10k,100k,1M", help="comma list, e.g. 10k,100k,1M")
    p.add_argument("--repeat", type=int, default=1, help="runs per configuration (median)")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per child run")
    p.add_argument(
        "--sklearn-max",
        type=int,
        default=200_000,
        help="skip scikit-learn above this n (exact O(n^2) neighbour search)",
    )
    p.add_argument("--knn-method", default="auto", choices=["auto", "exact", "approximate"])
    p.add_argument("--solver", default="auto", choices=["auto", "dense", "arpack", "lobpcg"])
    p.add_argument("--cold", action="store_true", help="also run with an empty numba cache")
    p.add_argument("--markdown", help="write the table to this Markdown file")
    p.add_argument(
        "--append", action="store_true", help="add the rows to the table already in --markdown"
    )
    p.add_argument("--child", choices=["ours", "sklearn"], help=argparse.SUPPRESS)
    p.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.child:
        if args.child == "ours":
            res = _child_ours(args.n, args.knn_method, args.solver)
        else:
            res = _child_sklearn(args.n)
        print(json.dumps(res))
        return 0

    import sklearn

    import spectralink
    from spectralink.graph import ANN_THRESHOLD

    sizes = _parse_sizes(args.sizes)
    load_start = _load()
    rows = []
    for n in sizes:
        configs = [("spectralink", "ours", None)]
        if args.cold and n > ANN_THRESHOLD:
            cache = tempfile.mkdtemp(prefix="numba-cold-")
            configs.append(
                ("spectralink, empty numba cache", "ours", {**os.environ, "NUMBA_CACHE_DIR": cache})
            )
        configs.append(("scikit-learn SpectralClustering", "sklearn", None))
        for label, impl, env in configs:
            if impl == "sklearn" and n > args.sklearn_max:
                row = {"skipped": f"n > --sklearn-max={args.sklearn_max} (exact O(n^2) k-NN)"}
            else:
                repeats = 1 if env is not None else args.repeat
                row = _median_runs([_run_child(impl, n, args, env) for _ in range(repeats)])
            row.update(n=n, impl=label)
            if "total_s" in row:
                row["clustering_s"] = row["total_s"] + row["kmeans_s"]
            rows.append(row)
            print(" | ".join(_row_cells(row)), flush=True)
    header = [
        "# Spectral core scaling: k-NN graph + 20 eigenvectors",
        "",
        f"Generated by `benchmarks/bench_graph_spectral.py --sizes {args.sizes} "
        f"--repeat {args.repeat}`: Gaussian mixture, {N_FEATURES} dimensions, "
        f"{N_COMPONENTS} components, k = {N_NEIGHBORS}, m = {N_EIGVECS} eigenvectors; "
        "every configuration in its own process, median of the repeats.",
        "",
        f"- machine: {platform.machine()}, {os.cpu_count()} logical CPUs, "
        f"Python {platform.python_version()}, spectralink {spectralink.__version__}, "
        f"scikit-learn {sklearn.__version__}",
        f"- load average (1/5/15 min) at start: {load_start}; at end: {_load()} "
        "(other jobs shared the CPUs: wall times are inflated by contention, CPU time less so)",
        "- `neighbours`, `graph`, `20 eigvecs`, `graph + eigvecs` exclude the one-off numba "
        "compilation of PyNNDescent (`numba JIT`, paid once per process; included in neither "
        "total). `clustering` adds k-means on the embedding: the scikit-learn row times the "
        "whole `SpectralClustering.fit` (its own graph, ARPACK embedding and k-means).",
        "- `peak RSS` is the process high-water mark including the input data "
        "(`RSS after data`); `max residual` = max_j ||L v_j - lambda_j v_j||.",
    ]
    text = _markdown(rows, header)
    print()
    print(text)
    if args.markdown and args.append and os.path.exists(args.markdown):
        with open(args.markdown) as fh:
            old = fh.read().rstrip("\n").split("\n")
        table = [line for line in text.rstrip("\n").split("\n") if line.startswith("| ")][1:]
        note = (
            f"- rows for n = {args.sizes} appended from a separate run "
            f"(load average at start: {load_start}; at end: {_load()})."
        )
        first_row = next(i for i, line in enumerate(old) if line.startswith("| "))
        text = "\n".join(old[: first_row - 1] + [note] + old[first_row - 1 :] + table) + "\n"
    if args.markdown:
        os.makedirs(os.path.dirname(os.path.abspath(args.markdown)), exist_ok=True)
        with open(args.markdown, "w") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
