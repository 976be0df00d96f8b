"""What one more candidate costs Auto: its time at the defaults and with k-way COSC at a
larger neighbourhood added, in the same run, against NCut on the same data.

Segmentation at 400 pairs misses criterion (b) of the model-selection results by a
margin that COSC with ``n_neighbors=20`` among Auto's candidates would close; this prints
what that candidate costs on the everyday-speed draw (one draw of 400 pairs, the timing
draw of ``benchmarks.bench_model_selection``). Run it alone on the machine, e.g.::

    OMP_NUM_THREADS=1 python -m benchmarks.bench_auto_cost --dataset digits --n-jobs 2

Results: ``docs/results/model_selection/README.md`` (the *cost* run).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

from benchmarks._model_selection import TIMING_COUNT, load_dataset
from spectralink import COSC, Auto, Constraints, NCut
from spectralink.auto import default_methods
from spectralink.experiments import cell_seed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", default="digits")
    p.add_argument("--n-jobs", type=int, default=2)
    p.add_argument("--n-neighbors", type=int, default=20, help="the added COSC's graph")
    args = p.parse_args()

    X, y = load_dataset(args.dataset)
    k = len(np.unique(y))
    seed = cell_seed(0, TIMING_COUNT, 0)
    cons = Constraints.from_labels(y, TIMING_COUNT, random_state=seed)
    print(f"load average before: {os.getloadavg()}", flush=True)
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    NCut(k, random_state=seed).fit(X)
    t_ncut = time.perf_counter() - t0
    runs = {
        "defaults": None,
        f"+ cosc n_neighbors={args.n_neighbors}": default_methods(len(y), k)
        + [COSC(k, n_neighbors=args.n_neighbors, guard=None)],
    }
    times = {}
    for name, methods in runs.items():
        t0 = time.perf_counter()
        auto = Auto(
            k,
            guard=None,
            methods=methods,
            search="exhaustive",
            random_state=seed,
            n_jobs=args.n_jobs,
        )
        auto.fit(X, constraints=cons)
        times[name] = time.perf_counter() - t0
        n_cand = len(auto.search_.cv_results_["params"])
        print(f"{args.dataset} {name}: Auto {times[name]:.1f} s ({times[name] / t_ncut:.0f} x "
              f"NCut's {t_ncut:.2f} s), {n_cand} candidates, chose {auto.best_method_} "
              f"{auto.best_params_}", flush=True)  # fmt: skip
    base, extra = times.values()
    print(f"ratio with / without: {extra / base:.2f}; load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
