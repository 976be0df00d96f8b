"""Reading a feature CSV: ``spectralink.io.read_text_table`` against ``np.loadtxt``.

The table reader handles headers, pandas index columns, column choice and located
errors; on a clean numeric file it should cost about what NumPy's parser costs (it
uses it), the row-by-row reader being reserved for files that need it (quoted cells,
an ID column, errors to locate). Prints seconds per read and the ratio.

    python -m benchmarks.bench_io [--rows 100000] [--cols 20]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from spectralink.io import read_text_table


def best_of(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--cols", type=int, default=20)
    args = parser.parse_args()
    X = np.random.RandomState(0).randn(args.rows, args.cols)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.csv"
        names = ",".join(f"f{j}" for j in range(args.cols))
        np.savetxt(path, X, delimiter=",", header=names, comments="")
        ids = Path(tmp) / "ids.csv"  # an ID column sends the file through the row reader
        with open(ids, "w") as fh:
            fh.write(names + ",id\n")
            fh.writelines(",".join(map(repr, row)) + f",r{i}\n" for i, row in enumerate(X.tolist()))
        base = best_of(lambda: np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2))
        fast = best_of(lambda: read_text_table(path, ","))
        rows = best_of(lambda: read_text_table(ids, ",", id_column="id"))
    print(f"{args.rows} x {args.cols} CSV, best of 3:")
    print(f"  np.loadtxt                        {base:6.2f} s   1.00")
    print(f"  read_text_table (numeric file)    {fast:6.2f} s   {fast / base:.2f}")
    print(f"  read_text_table (with ID column)  {rows:6.2f} s   {rows / base:.2f}")


if __name__ == "__main__":
    main()
