"""Record every estimator's labels at its defaults, to show a refactoring changed no result.

Runs each registered method at its defaults (the constrained ones with ``guard=None``: the
methods' own partitions) on iris, wine and digits (standardised where the units differ) and on
two synthetic sets, without constraints and with random correct pairs drawn
from the labels (fixed seeds), and writes one table of records (``benchmarks/_store.py``): per
(data set, pairs, method) the labels' SHA-256, the error against the classes and the labels
themselves. Run it before and after a change and compare the two files with ``--compare``.

    python -m benchmarks.record_labels --out docs/results/records/structure/labels_before.jsonl.gz
    python -m benchmarks.record_labels --compare \
        docs/results/records/structure/labels_before.jsonl.gz \
        docs/results/records/structure/labels_after.jsonl.gz
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import make_blobs, make_moons
from sklearn.preprocessing import StandardScaler

from benchmarks._common import without_guard
from benchmarks._store import load_doc, save_doc
from spectralink import Constraints
from spectralink.datasets import load
from spectralink.metrics import clustering_error
from spectralink.registry import available_methods, get_method

SEED = 0
PAIRS = (0, 100)


def datasets() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The record's data sets, features as the protocol scripts give them."""
    out = {}
    for name in ("iris", "wine", "digits"):
        X, y = load(name)
        if name == "wine":
            X = StandardScaler().fit_transform(X)
        out[name] = (np.asarray(X, dtype=float), y)
    X, y = make_blobs(n_samples=600, centers=4, cluster_std=2.0, n_features=5, random_state=3)
    out["blobs"] = (X, y)
    X, y = make_moons(n_samples=400, noise=0.08, random_state=3)
    out["moons"] = (X, y)
    return out


def record(methods: list[str]) -> dict:
    rows = {}
    for data_name, (X, y) in datasets().items():
        k = int(np.unique(y).size)
        for n_pairs in PAIRS:
            cons = None if n_pairs == 0 else Constraints.from_labels(y, n_pairs, random_state=SEED)
            for method in methods:
                est = without_guard(get_method(method)(n_clusters=k))
                if "random_state" in est.get_params():
                    est.set_params(random_state=SEED)
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        labels = est.fit_predict(X, constraints=cons)
                    except Exception as exc:  # recorded: an error must also stay the same
                        labels = None
                        error = f"{type(exc).__name__}: {exc}"
                seconds = time.perf_counter() - t0
                key = f"{data_name}/{n_pairs}/{method}"
                if labels is None:
                    rows[key] = {"raised": error}
                else:
                    labels = np.asarray(labels, dtype=np.int64)
                    rows[key] = {
                        "sha256": hashlib.sha256(labels.tobytes()).hexdigest(),
                        "error": round(float(clustering_error(y, labels)), 6),
                        "labels": "".join(chr(48 + int(v)) for v in labels),
                    }
                outcome = rows[key].get("error", rows[key].get("raised"))
                print(f"{key:32s} {seconds:7.2f} s  {outcome}", flush=True)
    return rows


def compare(before: str, after: str) -> int:
    a, b = (_by_key(load_doc(path)["records"]) for path in (before, after))
    differ = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    for key in differ:
        print(f"differs: {key}: {a.get(key, {}).get('error')} -> {b.get(key, {}).get('error')}")
    print(f"{len(set(a) | set(b)) - len(differ)} identical, {len(differ)} differ")
    return 1 if differ else 0


def _by_key(records: list[dict]) -> dict[str, dict]:
    return {r["key"]: {k: v for k, v in r.items() if k != "key"} for r in records}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="the table to write (gzipped JSON lines, ``.jsonl.gz``)")
    parser.add_argument("--methods", default=None, help="comma-separated (default: all)")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    methods = args.methods.split(",") if args.methods else available_methods()
    rows = record(methods)
    records = [{"key": key, **row} for key, row in rows.items()]
    if args.out:
        save_doc(args.out, {"config": {"pairs": list(PAIRS), "seed": SEED}, "records": records})
    else:
        sys.stdout.write("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
