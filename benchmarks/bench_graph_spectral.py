"""Time, peak memory and recall of the spectral core: k-NN Gaussian graph + 20 eigenvectors.

For every data set (``100k``: a Gaussian mixture of 100,000 points in 50 dimensions with
20 components; ``mnist``: MNIST's 70,000 x 784 digits from the data directory; ``1M``: the
same mixture at 1,000,000 points; a number, e.g. ``3000``: the mixture at that many points,
for a quick run) and every neighbour search

* ``faiss``: ``spectralink.neighbors.kneighbors`` with its default method (exact up to
  50,000 points, the recall-calibrated faiss IVF above);
* ``nndescent``: the same pipeline with ``method="nndescent"`` (PyNNDescent, the optional
  extra; run with ``random_state=None`` so that it may use every core, as the library
  does then);
* ``sklearn``: the same pipeline with ``method="sklearn"`` (scikit-learn's exact search),
  skipped above ``--sklearn-max`` points (an exact search grows as n^2),

a fresh process runs ``kneighbors`` (k = 20) -> ``gaussian_knn_graph`` (sigma = mean k-th
neighbour distance) -> ``laplacian_eigenvectors`` (m = 20) twice: ``cold`` is the first
call in the process (it pays faiss's import or numba's compilation), ``warm`` the second.
Then recall@20 is measured against exact float64 neighbours (NumPy brute force, independent
of faiss) of 2,000 random points. Peak memory is the process's ``ru_maxrss`` (the input
data included). Results: ``docs/results/neighbours.md``.

Examples
--------
    python -m benchmarks.bench_graph_spectral --data 100k,mnist
    python -m benchmarks.bench_graph_spectral --data 1M --impls faiss --markdown out.md --append
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import warnings

import numpy as np

from benchmarks._common import peak_rss_mib, run_module

N_FEATURES = 50
N_COMPONENTS = 20
N_NEIGHBORS = 20
N_EIGVECS = 20
SEED = 0
RECALL_SAMPLE = 2000
SIZES = {"100k": 100_000, "1M": 1_000_000}


def make_mixture(n: int, d: int = N_FEATURES, k: int = N_COMPONENTS, seed: int = SEED):
    """A Gaussian mixture with unequal weights and spreads: clustered but overlapping."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((k, d))
    weights = rng.dirichlet(np.full(k, 5.0))
    y = rng.choice(k, size=n, p=weights)
    spread = rng.uniform(0.5, 1.0, k)
    X = centers[y] + rng.standard_normal((n, d)) * spread[y, None]
    return X, y


def _mixture_size(name: str) -> int | None:
    """Points of the mixture ``name`` names (``100k``, ``1M`` or a number of points); None
    for a data set of the data directory."""
    if name in SIZES:
        return SIZES[name]
    return int(name) if name.isdigit() else None


def _data(name: str) -> np.ndarray:
    n = _mixture_size(name)
    if n is not None:
        return make_mixture(n)[0]
    from spectralink.datasets import load

    return np.asarray(load(name)[0], dtype=np.float64)


def exact_neighbours(X: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """k nearest neighbours of ``X[rows]`` (self excluded) by float64 NumPy brute force."""
    sq = np.einsum("ij,ij->i", X, X)
    out = np.empty((len(rows), k), dtype=np.int64)
    step = max(1, int(2e7 // X.shape[0]))  # about 160 MB of distances per block
    for s in range(0, len(rows), step):
        r = rows[s : s + step]
        D = sq[r, None] + sq[None, :] - 2.0 * (X[r] @ X.T)
        D[np.arange(len(r)), r] = np.inf
        part = np.argpartition(D, k, axis=1)[:, :k]
        order = np.argsort(np.take_along_axis(D, part, axis=1), axis=1)
        out[s : s + len(r)] = np.take_along_axis(part, order, axis=1)
    return out


def _child(impl: str, data: str) -> dict:
    t0 = time.perf_counter()
    from spectralink.graph import gaussian_knn_graph, sigma_from_distances
    from spectralink.neighbors import kneighbors
    from spectralink.parallel import n_threads
    from spectralink.spectral import laplacian_eigenvectors

    out = {"import_s": time.perf_counter() - t0, "threads": n_threads()}
    X = _data(data)
    out.update(n=int(X.shape[0]), d=int(X.shape[1]), rss_data_mib=peak_rss_mib())
    method = {"faiss": "auto", "nndescent": "nndescent", "sklearn": "sklearn"}[impl]
    seed = None if impl == "nndescent" else SEED
    warnings.simplefilter("ignore")  # disconnected mixture components are expected
    for run in ("cold", "warm"):
        w0, c0 = time.perf_counter(), time.process_time()
        dist, ind, info = kneighbors(
            X, N_NEIGHBORS, method=method, random_state=seed, return_info=True
        )
        w1 = time.perf_counter()
        W = gaussian_knn_graph(dist, ind, sigma_from_distances(dist))
        w2 = time.perf_counter()
        lam, V = laplacian_eigenvectors(W, N_EIGVECS, random_state=SEED)
        w3, c3 = time.perf_counter(), time.process_time()
        out[run] = {
            "neighbours_s": w1 - w0,
            "graph_s": w2 - w1,
            "eigen_s": w3 - w2,
            "total_s": w3 - w0,
            "cpu_s": c3 - c0,
            "peak_rss_mib": peak_rss_mib(),
            "search": info.describe(),
        }
        del dist, W, V
    sample = min(RECALL_SAMPLE, X.shape[0])
    rows = np.sort(np.random.default_rng(12345).choice(X.shape[0], sample, replace=False))
    truth = exact_neighbours(X, rows, N_NEIGHBORS)
    hits = [len(np.intersect1d(a, b)) for a, b in zip(ind[rows], truth, strict=True)]
    out["recall"] = float(np.sum(hits) / truth.size)
    return out


def _run_child(impl: str, data: str, timeout: float) -> dict:
    t0 = time.perf_counter()
    try:
        proc = run_module(
            "benchmarks.bench_graph_spectral", ["--child", impl, "--data", data], timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"skipped": f"timeout after {timeout:.0f} s"}
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        return {"skipped": f"failed (exit {proc.returncode}): {tail[0]}"}
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["process_s"] = time.perf_counter() - t0
    return res


COLUMNS = [
    ("data", "data", "s"),
    ("impl", "neighbours by", "s"),
    ("run", "run", "s"),
    ("neighbours_s", "neighbours (s)", ".1f"),
    ("graph_s", "graph (s)", ".1f"),
    ("eigen_s", "20 eigvecs (s)", ".1f"),
    ("total_s", "graph + eigvecs (s)", ".1f"),
    ("ratio", "cold / warm", ".2f"),
    ("cpu_s", "CPU (s)", ".1f"),
    ("peak_rss_mib", "peak RSS (MiB)", ".0f"),
    ("recall", "recall@20", ".3f"),
    ("search", "search", "s"),
]


def _rows(data: str, impl: str, res: dict) -> list[dict]:
    if "skipped" in res:
        return [{"data": data, "impl": impl, "run": "", "search": f"skipped: {res['skipped']}"}]
    ratio = res["cold"]["total_s"] / res["warm"]["total_s"]
    rows = []
    for run in ("cold", "warm"):
        row = {"data": data, "impl": impl, "run": run, **res[run]}
        if run == "cold":
            row.update(ratio=ratio, recall=res["recall"])
        rows.append(row)
    return rows


def _cells(row: dict) -> list[str]:
    return ["" if row.get(key) is None else format(row[key], spec) for key, _, spec in COLUMNS]


def _table(rows: list[dict]) -> list[str]:
    lines = [
        "| " + " | ".join(title for _, title, _ in COLUMNS) + " |",
        "|" + "|".join("---" for _ in COLUMNS) + "|",
    ]
    return lines + ["| " + " | ".join(_cells(r)) + " |" for r in rows]


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--data",
        default="100k,mnist,1M",
        help="comma list of 100k, mnist, 1M, or a number of points of the mixture (quick runs)",
    )
    p.add_argument("--impls", default="faiss,nndescent,sklearn", help="comma list")
    p.add_argument("--sklearn-max", type=int, default=100_000, help="skip sklearn above this n")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds per child process")
    p.add_argument("--markdown", help="write (or with --append, add) the table to this file")
    p.add_argument("--append", action="store_true")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.child:
        print(json.dumps(_child(args.child, args.data)))
        return 0

    import spectralink

    load_start = _load()
    rows = []
    for data in args.data.split(","):
        for impl in args.impls.split(","):
            n = _mixture_size(data) or 70_000
            if impl == "sklearn" and n > args.sklearn_max:
                res = {"skipped": f"n > --sklearn-max={args.sklearn_max} (exact search, O(n^2))"}
            else:
                res = _run_child(impl, data, args.timeout)
            new = _rows(data, impl, res)
            rows += new
            for r in new:
                print(" | ".join(_cells(r)), flush=True)
            if "import_s" in res:
                print(
                    f"  ({data}, {impl}: import {res['import_s']:.2f} s, "
                    f"{res['threads']} threads, process {res['process_s']:.0f} s)",
                    flush=True,
                )
    header = [
        f"- `python -m benchmarks.bench_graph_spectral --data {args.data} --impls {args.impls}`; "
        f"machine: {platform.machine()}, {os.cpu_count()} logical CPUs, Python "
        f"{platform.python_version()}, spectralink {spectralink.__version__}; load average "
        f"(1/5/15 min) at start {load_start}, at end {_load()}.",
    ]
    text = "\n".join(header + [""] + _table(rows)) + "\n"
    print()
    print(text)
    if args.markdown:
        mode = "a" if args.append else "w"
        with open(args.markdown, mode) as fh:
            fh.write(("\n" if args.append else "") + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
