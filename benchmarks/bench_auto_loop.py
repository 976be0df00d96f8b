"""What Auto costs inside the query loop, against one Auto fit, in the same run.

``learn(Auto(k), X, y, --queries)`` (the labels answer, strategy "auto", batches of 10)
searches only at checkpoints (``spectralink.active.SEARCH_MIN_PAIRS`` answers, then each
time they have doubled) and refits its choice in between; this prints its time beside one
``Auto(k).fit`` with ``--pairs`` random labelled pairs, one fit of the method Auto chose
there, and one NCut fit, each timed once in this process, and the ratios. Run it alone on
the machine::

    python -m benchmarks.bench_auto_loop --dataset digits --queries 200 --pairs 400

``--breakdown`` adds each candidate's mean fit time per fold; ``--queries 0`` skips the loop.

Results: ``docs/results/model_selection/auto_cost.md``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

from benchmarks._common import peak_rss_mib
from spectralink import Auto, Constraints, NCut
from spectralink.active import learn
from spectralink.datasets import load
from spectralink.metrics import clustering_error


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", default="digits")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--pairs", type=int, default=400)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--breakdown", action="store_true", help="print each candidate's mean fit time per fold"
    )
    args = p.parse_args()
    X, y = load(args.dataset)
    k = len(np.unique(y))
    print(f"load average before: {os.getloadavg()}", flush=True)
    warnings.simplefilter("ignore")
    cons = Constraints.from_labels(y, args.pairs, random_state=args.seed)
    t_auto, auto = timed(lambda: Auto(k, random_state=args.seed).fit(X, constraints=cons))
    winner = auto.search_.candidate(auto.best_index_)
    t_win, _ = timed(lambda: winner.fit(X, constraints=cons))
    t_ncut, _ = timed(lambda: NCut(k, random_state=args.seed).fit(X))
    if args.breakdown:
        res = auto.search_.cv_results_
        fits = np.isfinite(
            np.array([res[f"split{i}_test_score"] for i in range(auto.search_.n_splits_)])
        )
        print("\ncandidate | mean fit per fold (s) | folds fitted")
        for i, params in enumerate(res["params"]):
            extra = {key: v for key, v in params.items() if key != "estimator"}
            print(f"{params['estimator']!r} {extra or ''} | {res['mean_fit_time'][i]:.3f} | "
                  f"{int(fits[:, i].sum())}")  # fmt: skip
    if args.queries == 0:
        print(f"Auto {t_auto:.2f} s, chose {auto.describe()}; its choice {t_win:.2f} s "
              f"({t_auto / t_win:.1f}x); NCut {t_ncut:.2f} s")  # fmt: skip
        return
    t_loop, res = timed(
        lambda: learn(Auto(k, random_state=args.seed), X, y, args.queries, random_state=args.seed)
    )
    print(f"\n{args.dataset}: n = {len(y)}, k = {k}")
    print(f"Auto, {args.pairs} pairs:        {t_auto:8.2f} s  chose {auto.describe()}")
    print(f"  its choice, one fit:     {t_win:8.2f} s  (Auto / choice = {t_auto / t_win:.1f}x)")
    print(f"  NCut, one fit:           {t_ncut:8.2f} s  (Auto / NCut = {t_auto / t_ncut:.1f}x)")
    print(
        f"learn(Auto, {args.queries} queries): {t_loop:8.2f} s  "
        f"(learn / Auto fit = {t_loop / t_auto:.2f}x); final choice "
        f"{res.estimator.best_method_}, error {clustering_error(y, res.estimator.labels_):.3f}"
    )
    print(f"peak memory: {peak_rss_mib():.0f} MiB")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
