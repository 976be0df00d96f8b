"""Time and peak memory of SCACS and LSC-R at scale, in-core and on a local Dask cluster.

Configurations: MNIST (70,000 x 784), shuttle (58,000 x 9) and 2,000,000 x 50 synthetic
points (10 Gaussian clusters, float64), each with SCACS (c = 100 labelled instances,
beta0 = 0.1 as in the paper's large-scale runs) and LSC-R, p = 500, r = 3, backend
NumPy (in-core) or Dask (``LocalCluster(processes=False)``, 1 worker, 2 threads).

Every configuration runs in its own subprocess; the figures are the fit wall time and
the process's peak resident memory (``resource.getrusage(RUSAGE_SELF).ru_maxrss``),
which includes the data itself (given separately as "data MB"). For the Dask synthetic
run the data are generated block by block on the cluster and never held whole.
Targets (2 cores): MNIST SCACS under 5 s, 2M points under 4 GB in-core. Results, with the
paper's figure: ``docs/results/scacs/README.md`` (``scale.md``); every measurement also goes
to the table ``docs/results/records/scacs/scale.jsonl.gz`` (``benchmarks/_store.py``).

Usage::

    SPECTRALINK_DATA=/path/to/datasets python -m benchmarks.bench_scacs_scale [--quick]
        [--threads 2] [--n-init 10]

``--quick`` drops the 2M-point runs to 500,000 points.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time

import numpy as np

from benchmarks._common import RESULTS, run_module
from benchmarks._store import table_path, write_table

OUT = RESULTS / "scacs"
SYN_D, SYN_K, SYN_CHUNK = 50, 10, 65_536


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _syn_block(start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows start..stop of the synthetic set, reproducible block by block."""
    rng = np.random.default_rng(start)
    centers = np.random.default_rng(12345).uniform(-4, 4, size=(SYN_K, SYN_D))
    y = rng.integers(0, SYN_K, size=stop - start)
    X = rng.standard_normal((stop - start, SYN_D))
    X += centers[y]
    return X, y


def _synthetic(n: int, dask: bool):
    starts = list(range(0, n, SYN_CHUNK))
    y = np.concatenate([_syn_block(s, min(n, s + SYN_CHUNK))[1] for s in starts])
    if dask:
        import dask
        import dask.array as da

        blocks = [
            da.from_delayed(
                dask.delayed(lambda a, b: _syn_block(a, b)[0])(s, min(n, s + SYN_CHUNK)),
                (min(n, s + SYN_CHUNK) - s, SYN_D),
                dtype=np.float64,
            )
            for s in starts
        ]
        return da.concatenate(blocks), y
    X = np.empty((n, SYN_D))
    for s in starts:
        X[s : min(n, s + SYN_CHUNK)] = _syn_block(s, min(n, s + SYN_CHUNK))[0]
    return X, y


def child(dataset: str, method: str, backend: str, n_syn: int, n_init: int) -> dict:
    import warnings

    from spectralink import LSCR, SCACS, Constraints, datasets
    from spectralink.metrics import clustering_error

    base = _rss_mb()
    client = None
    if backend == "dask":
        from dask.distributed import Client, LocalCluster

        threads = int(os.environ.get("OMP_NUM_THREADS", "2")) or 2
        cluster = LocalCluster(
            processes=False, n_workers=1, threads_per_worker=max(2, threads), dashboard_address=":0"
        )
        client = Client(cluster)
    if dataset == "synthetic":
        X, y = _synthetic(n_syn, backend == "dask")
    else:
        X, y = datasets.load(dataset)
        if backend == "dask":
            import dask.array as da

            X = da.from_array(X, chunks=(8192, -1))
    data_mb = _rss_mb() - base
    k = len(np.unique(y))
    if method == "SCACS":
        model = SCACS(k, beta0=0.1, n_init=n_init, random_state=0, guard=None)
        cons = Constraints.from_labeled_subset(y, 100, random_state=0)
    else:
        model = LSCR(k, n_init=n_init, random_state=0)
        cons = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        model.fit(X, constraints=cons)
        fit_s = time.perf_counter() - t0
    acc = 1.0 - clustering_error(y, model.labels_)
    if client is not None:
        client.close()
    return {
        "dataset": dataset,
        "n": len(y),
        "method": method,
        "backend": backend,
        "fit_s": fit_s,
        "peak_mb": _rss_mb(),
        "data_mb": data_mb,
        "acc": acc,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="500k synthetic points instead of 2M")
    ap.add_argument("--threads", type=int, default=2, help="BLAS threads per run")
    ap.add_argument("--n-init", type=int, default=10, help="k-means restarts")
    ap.add_argument("--datasets", default="mnist,shuttle,synthetic")
    ap.add_argument("--backends", default="numpy,dask")
    ap.add_argument("--child", nargs=3, metavar=("DATASET", "METHOD", "BACKEND"))
    ap.add_argument("--n-syn", type=int, default=None)
    args = ap.parse_args(argv)
    n_syn = args.n_syn or (500_000 if args.quick else 2_000_000)
    if args.child:
        print(json.dumps(child(*args.child, n_syn, args.n_init)))
        return
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(args.threads)
    rows = []
    for ds in args.datasets.split(","):
        for backend in args.backends.split(","):
            for method in ("LSCR", "SCACS"):
                cmd = ["--child", ds, method, backend, "--n-syn", str(n_syn),
                       "--n-init", str(args.n_init)]  # fmt: skip
                proc = run_module("benchmarks.bench_scacs_scale", cmd, env=env)
                if proc.returncode != 0:
                    print(f"{ds} {method} {backend} FAILED:\n{proc.stderr[-2000:]}", flush=True)
                    continue
                r = json.loads(proc.stdout.strip().splitlines()[-1])
                rows.append(r)
                print(
                    f"{r['dataset']:>10} n={r['n']:>8} {r['method']:>5} {r['backend']:>5}  "
                    f"fit {r['fit_s']:7.2f} s  peak {r['peak_mb']:7.0f} MB  "
                    f"(data {r['data_mb']:6.0f} MB)  ACC {r['acc']:.3f}",
                    flush=True,
                )
    lines = [
        "## SCACS / LSC-R at scale: fit time and peak memory",
        "",
        f"p=500, r=3, SCACS with c=100 labelled (beta0=0.1), k-means n_init={args.n_init}, "
        f"{args.threads} BLAS threads; Dask = LocalCluster(processes=False), 1 worker x 2 "
        "threads. Peak = max RSS of the run's process (data included). Measured on a shared "
        "2-core machine under load from other jobs: times are inflated.",
        "",
        "| dataset | n | method | backend | fit (s) | peak RSS (MB) | data (MB) | ACC |",
        "|---|---:|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['dataset']} | {r['n']} | {r['method']} | {r['backend']} | "
            f"{r['fit_s']:.2f} | {r['peak_mb']:.0f} | {r['data_mb']:.0f} | "
            f"{r['acc']:.3f} |"
        )
    OUT.mkdir(parents=True, exist_ok=True)
    name = "scale_quick" if args.quick else "scale"
    (OUT / f"{name}.md").write_text("\n".join(lines) + "\n")
    config = {"threads": args.threads, "n_init": args.n_init, "n_syn": n_syn}
    write_table(rows, table_path(OUT, name), config=config)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
