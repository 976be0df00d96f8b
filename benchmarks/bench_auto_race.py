"""Auto's search against the exhaustive one: time, choice and error, in the same run.

For every data set and draw of ``--pairs`` random labelled pairs (the draws of
``benchmarks.bench_model_selection``'s seeds), ``Auto(k, search="exhaustive")`` (every
candidate on every repeat of the folds, k-way COSC at its defaults; "race none" in the
table) and ``Auto(k)`` (``search="fast"``: raced at ``spectralink.auto.RACE_N_SE``
standard errors, k-way COSC in its search schedule ``SEARCH_SCHEDULES``) are fitted one
after the other; the table gives each one's time, the method and parameters chosen, its
clustering error, and how many candidates were set aside after the first repeat.
``--cosc-schedule full`` gives the fast search COSC as an estimator at its defaults (not
rescheduled), to measure racing alone.
Wine, breast cancer and segmentation are standardised (as in ``model_selection/``). Run it
alone on the machine::

    python -m benchmarks.bench_auto_race --datasets iris,wine,breast_cancer,digits --draws 3

Results: ``docs/results/model_selection/auto_cost.md``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

from benchmarks._model_selection import load_dataset
from spectralink import COSC, Auto, Constraints
from spectralink.auto import RACE_N_SE, default_methods
from spectralink.experiments import cell_seed
from spectralink.metrics import clustering_error


def full_schedule(n: int, k: int) -> list:
    """Auto's default candidates with k-way COSC given as an estimator at its defaults (a
    named COSC runs its search schedule inside the search)."""
    return [COSC(k, guard=None) if m == "cosc" else m for m in default_methods(n, k)]


def choice(auto: Auto) -> str:
    params = ", ".join(f"{k}={v!r}" for k, v in auto.best_params_.items())
    return auto.best_method_ + (f" ({params})" if params else "")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", default="iris,wine,breast_cancer,digits")
    p.add_argument("--pairs", type=int, default=400)
    p.add_argument("--draws", type=int, default=3)
    p.add_argument("--cosc-schedule", choices=("search", "full"), default="search")
    args = p.parse_args()
    print(f"load average before: {os.getloadavg()}", flush=True)
    warnings.simplefilter("ignore")
    print("\n| data | draw | race | time (s) | ratio to race=None | chosen | error | set aside |")
    print("|---|---|---|---|---|---|---|---|")
    agree = total = 0
    ratios: list[float] = []
    for name in args.datasets.split(","):
        X, y = load_dataset(name)
        k = len(np.unique(y))
        for draw in range(args.draws):
            seed = cell_seed(0, args.pairs, draw)
            cons = Constraints.from_labels(y, args.pairs, random_state=seed)
            full = full_schedule(len(y), k)
            t0 = time.perf_counter()
            base = Auto(k, search="exhaustive", random_state=seed, verbose=0)
            base.fit(X, constraints=cons)
            t_base = time.perf_counter() - t0
            print(
                f"| {name} | {draw} | none | {t_base:.1f} | 1.00 | {choice(base)} "
                f"| {clustering_error(y, base.labels_):.3f} | 0 |",
                flush=True,
            )
            methods = full if args.cosc_schedule == "full" else None
            t0 = time.perf_counter()
            fast = Auto(k, methods=methods, random_state=seed, verbose=0)
            fast.fit(X, constraints=cons)
            t = time.perf_counter() - t0
            out = fast.search_.cv_results_.get("raced_out")
            n_out = int(out.sum()) if out is not None else 0
            same = choice(fast) == choice(base)
            agree += same
            total += 1
            ratios.append(t / t_base)
            print(
                f"| {name} | {draw} | {RACE_N_SE:g} | {t:.1f} | {t / t_base:.2f} | {choice(fast)}"
                f"{'' if same else ' (differs)'} | {clustering_error(y, fast.labels_):.3f} "
                f"| {n_out} |",
                flush=True,
            )
    print(
        f"\nsame choice as the exhaustive search: {agree} of {total}; time ratio median "
        f"{np.median(ratios):.2f}, range {min(ratios):.2f}-{max(ratios):.2f}"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
