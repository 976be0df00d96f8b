"""COSC's inner FISTA solver with and without the per-edge step (diagonal preconditioner).

For each graph (COSC's adaptive 10-NN graph of a dataset, no constraints and with random
cannot-links at gamma > 0), takes the inner problem of RatioDCA's first step from the
second-eigenvector start and solves it with :func:`spectralink.solvers.ratio_dca.solve_inner`
twice: with the uniform step ``1 / c0^2`` of every edge (``c0^2 = max (deg_i + deg_j)``) and
with the per-edge step ``1 / (deg_i + deg_j)`` (``RatioProblem.edge_step``). Prints the
FISTA iterations needed to reach each relative duality gap, and the seconds they took
(results: ``docs/results/cosc/timing.md``).

Usage::

    python -m benchmarks.bench_cosc_preconditioner
    python -m benchmarks.bench_cosc_preconditioner --datasets sonar usps --max-iter 20000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from spectralink import Constraints
from spectralink.datasets import load
from spectralink.graph import adaptive_knn_affinity, degrees
from spectralink.solvers.constraint_graph import reduce_cannot_links
from spectralink.solvers.lovasz import balance_subgradient, edge_list
from spectralink.solvers.ratio_dca import (
    cl_subgradient,
    make_problem,
    ratio_functional,
    solve_inner,
)
from spectralink.spectral import constrained_fiedler

GAPS = (1e-2, 1e-3, 1e-4)


def inner_problem(W, y, n_pairs, gamma, seed):
    """``(prob, c, C)`` of RatioDCA's first step at ``gamma`` from the second eigenvector."""
    d = degrees(W)
    cl = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))
    if n_pairs:
        cons = Constraints.from_labels(y, n_pairs, random_state=seed)
        cl = reduce_cannot_links(cons.cannot_link, cons.cl_weights, np.arange(len(y)))
    prob = make_problem(edge_list(W), d, cl, per_edge_step=True)
    f = constrained_fiedler(W, d, random_state=seed)
    f = f / np.linalg.norm(f)
    lam = ratio_functional(f, prob, gamma)
    c = lam * balance_subgradient(f, prob.g)
    if gamma > 0 and prob.c_cl > 0:
        c = c + gamma * cl_subgradient(f, prob)
    return prob, c, gamma * prob.c_cl


def iterations_to_gap(prob, c, C, gap, max_iter):
    """FISTA iterations (and seconds) until the relative duality gap is below ``gap``."""
    beta = np.zeros(len(prob.edges[0]))
    v = np.zeros(prob.n)
    v[0] = 1.0
    t0 = time.perf_counter()
    res = solve_inner(prob, c, C, beta, v, max_iter=max_iter, eps=gap, check_every=5)
    seconds = time.perf_counter() - t0
    reached = abs(res.primal - res.dual) <= gap * abs(res.dual)
    return (res.n_iter if reached else None), seconds


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", nargs="+", default=["sonar", "diabetes", "digits", "usps"])
    p.add_argument("--pairs", type=int, default=200, help="random pairs of the gamma > 0 case")
    p.add_argument("--gamma", type=float, default=0.2)
    p.add_argument("--max-iter", type=int, default=20000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    print(
        "| graph | n | edges | mean step gain | case | gap | iterations uniform | "
        "iterations per-edge | ratio | seconds uniform | seconds per-edge |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.datasets:
        X, y = load(name)
        W = adaptive_knn_affinity(np.asarray(X, float), 10, random_state=args.seed)
        cases = (
            ("gamma 0", 0, 0.0),
            (f"gamma {args.gamma}, {args.pairs} pairs", args.pairs, args.gamma),
        )
        for label, n_pairs, gamma in cases:
            prob, c, C = inner_problem(W, y, n_pairs, gamma, args.seed)
            uniform = prob._replace(edge_step=None)
            iterations_to_gap(prob, c, C, 0.0, 5)  # compile the kernel before timing
            for gap in GAPS:
                iu, su = iterations_to_gap(uniform, c, C, gap, args.max_iter)
                ip, sp_ = iterations_to_gap(prob, c, C, gap, args.max_iter)
                ratio = f"{iu / ip:.2f}x" if iu and ip else "-"
                print(
                    f"| {name} | {prob.n} | {len(prob.edges[0])} | "
                    f"{prob.edge_step.mean():.2f} | {label} | {gap:g} | {iu or '>max'} | "
                    f"{ip or '>max'} | {ratio} | {su:.3f} | {sp_:.3f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
