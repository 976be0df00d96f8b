"""``spectralink cluster --dask`` on a synthetic Parquet dataset, against the in-core fit.

Writes ``--rows`` x ``--dims`` float32 rows of ``--k`` Gaussian clusters as ``--files``
Parquet files with an integer ``id`` column, ``--pairs`` random pairs named by ID (kind from
the generating labels) and the generating labels (Parquet, ``id,label``); then runs the
command line for each of ``--methods`` with ``--dask local:WORKERS`` and prints its summary
(error against the generating labels, time, the largest worker's memory). With
``--in-core``, SCACS is also fitted in memory on the same rows and pairs: its time per row
against the Dask run, and the agreement (ARI) of the two labellings.

    python -m benchmarks.bench_dask --rows 200000 --dims 8 --files 4 --pairs 400 \\
        --methods scacs,ccskl,auto --in-core
    python -m benchmarks.bench_dask --rows 10000000 --dims 16 --pairs 2000 \\
        --worker-memory 4GB --methods scacs --in-core
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from spectralink import SCACS, Constraints
from spectralink.experiments import provenance_line
from spectralink.metrics import adjusted_rand_score, clustering_error


def generate(folder: Path, rows: int, dims: int, k: int, files: int, n_pairs: int, seed: int):
    """The dataset, file by file (memory: one file at a time); returns the pairs' path."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=6.0, size=(k, dims))
    (folder / "data").mkdir(parents=True, exist_ok=False)
    (folder / "truth").mkdir()
    start = 0
    for f, m in enumerate(np.diff(np.linspace(0, rows, files + 1).astype(np.int64))):
        y = rng.integers(k, size=m)
        X = (centers[y] + rng.normal(size=(m, dims))).astype(np.float32)
        ids = np.arange(start, start + m, dtype=np.int64)
        frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(dims)])
        frame.insert(0, "id", ids)
        frame.to_parquet(folder / "data" / f"part.{f:03d}.parquet", index=False)
        pd.DataFrame({"id": ids, "label": y}).to_parquet(
            folder / "truth" / f"part.{f:03d}.parquet", index=False
        )
        start += m
    ij = rng.choice(rows, size=(n_pairs, 2), replace=False)
    labels = pd.read_parquet(folder / "truth").set_index("id")["label"]
    yi, yj = labels.loc[ij[:, 0]].to_numpy(), labels.loc[ij[:, 1]].to_numpy()
    pairs = folder / "pairs.csv"
    pd.DataFrame({"i": ij[:, 0], "j": ij[:, 1], "kind": np.where(yi == yj, "ml", "cl")}).to_csv(
        pairs, index=False
    )
    return pairs


def run_cli(folder: Path, method: str, args: argparse.Namespace) -> tuple[dict, Path]:
    out = folder / f"labels_{method}"
    cmd = [
        sys.executable, "-m", "spectralink", "cluster", str(folder / "data"), "--dask",
        f"local:{args.workers}", "-k", str(args.k), "--method", method, "--id-column", "id",
        "-c", str(folder / "pairs.csv"), "-y", str(folder / "truth"), "-o", str(out),
        "--no-progress", "--scale", "none",
    ]  # fmt: skip
    if args.worker_memory:
        cmd += ["--worker-memory", args.worker_memory]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
        raise SystemExit(f"{method}: the command failed")
    text = done.stdout

    def grab(pattern: str) -> float:
        match = re.search(pattern, text)
        return float(match.group(1)) if match else float("nan")

    return {
        "method": method,
        "error": grab(r"error\s+([0-9.]+)"),
        "fit_s": grab(r"fit ([0-9.]+) s"),
        "labelled_s": grab(r"every label written ([0-9.]+) s"),
        "command_s": wall,
        "worker_peak_gb": grab(r"largest worker ([0-9.]+) GB"),
    }, out


def in_core(folder: Path, args: argparse.Namespace, dask_labels: Path | None) -> dict:
    frame = pd.read_parquet(folder / "data")
    X = frame.drop(columns="id").to_numpy(np.float32)
    ids = frame["id"].to_numpy()
    del frame
    position = pd.Series(np.arange(len(ids)), index=ids)
    pairs = pd.read_csv(folder / "pairs.csv")
    ij = np.column_stack([position.loc[pairs["i"]], position.loc[pairs["j"]]])
    ml = (pairs["kind"] == "ml").to_numpy()
    cons = Constraints(ij[ml], ij[~ml], n_samples=len(X))
    t0 = time.perf_counter()
    est = SCACS(args.k, random_state=0).fit(X, constraints=cons)
    t = time.perf_counter() - t0
    truth = pd.read_parquet(folder / "truth").set_index("id")["label"].loc[ids].to_numpy()
    out = {"in_core_s": t, "in_core_error": clustering_error(truth, est.labels_)}
    if dask_labels is not None:
        got = pd.read_parquet(dask_labels).set_index("id")["label"].loc[ids].to_numpy()
        out["ari_dask_vs_in_core"] = adjusted_rand_score(est.labels_, got)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=200_000)
    p.add_argument("--dims", type=int, default=8)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--files", type=int, default=4)
    p.add_argument("--pairs", type=int, default=400)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--worker-memory", default=None)
    p.add_argument("--methods", default="scacs,ccskl,auto")
    p.add_argument("--in-core", action="store_true")
    p.add_argument("--dir", default=None, help="where to write the dataset (default: a temp dir)")
    p.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="write the dataset there and keep it; a folder an earlier run kept is reused",
    )
    args = p.parse_args()
    print(provenance_line())
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        folder = Path(tmp) if args.keep is None else args.keep
        t0 = time.perf_counter()
        if not (folder / "pairs.csv").exists():
            generate(folder, args.rows, args.dims, args.k, args.files, args.pairs, seed=0)
        took = time.perf_counter() - t0
        print(f"dataset: {args.rows:,} rows x {args.dims} float32, {args.k} clusters, "
              f"{args.files} files, {args.pairs} pairs by ID ({took:.0f} s)")  # fmt: skip
        scacs_labels = None
        for method in args.methods.split(","):
            row, out = run_cli(folder, method, args)
            scacs_labels = out if method == "scacs" else scacs_labels
            print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                            for k, v in row.items()))  # fmt: skip
            sys.stdout.flush()
        if args.in_core:
            row = in_core(folder, args, scacs_labels)
            print("in-core SCACS  " + "  ".join(f"{k}={v:.4g}" for k, v in row.items()))


if __name__ == "__main__":
    main()
