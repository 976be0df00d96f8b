"""The held-out guard's cost and effect: every constrained method with and without it.

For each data set, method and count of random correct pairs (one draw per seed), the method is
fitted twice at its defaults, ``guard="held_out"`` and ``guard=None``, and the script reports
the fit times (median of ``--repeats`` fits each, alternated), their ratio, the clustering
errors, NCut's error on the same data and how often the guard returned the unconstrained
partition. Times are wall-clock on the machine that runs it; read the ratios.

    python -m benchmarks.bench_guard                       # wine, breast cancer, digits
    python -m benchmarks.bench_guard --datasets digits --methods ccsr,scacs --counts 200

Real sets are standardised (``StandardScaler``) except digits and USPS (pixels). Writes
``docs/results/guard/cost.md`` with ``--write``.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
from sklearn.preprocessing import StandardScaler

from spectralink import get_method
from spectralink.datasets import load
from spectralink.experiments import cell_seed, draw_constraints
from spectralink.metrics import clustering_error

from ._common import RESULTS

METHODS = ("ccsr", "ccskl", "e2cp", "lscp", "cosc", "scacs", "fcsc", "sl", "copkmeans")
PIXELS = {"digits", "usps"}


def load_set(name: str) -> tuple[np.ndarray, np.ndarray]:
    X, y = load(name)
    X = np.asarray(X, dtype=np.float64)
    if name not in PIXELS:
        X = StandardScaler().fit_transform(X)
    return X, np.asarray(y)


def timed_fit(name: str, k: int, X, cons, seed: int, guard) -> tuple[float, object]:
    est = get_method(name)(n_clusters=k, random_state=seed)
    if "guard" in est.get_params():
        est.set_params(guard=guard)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        est.fit(X, constraints=cons)
        return time.perf_counter() - t0, est


def run(args) -> list[dict]:
    rows = []
    for ds in args.datasets:
        X, y = load_set(ds)
        k = len(np.unique(y))
        for count in args.counts:
            for draw in range(args.draws):
                seed = cell_seed(0, count, draw)
                cons = draw_constraints(y, count, "pairs", seed)
                _, ncut = timed_fit("ncut", k, X, None, seed, None)
                e_ncut = clustering_error(y, ncut.labels_)
                for m in args.methods:
                    if m == "fcsc" and len(y) > 3000:
                        continue
                    times: dict = {"held_out": [], None: []}
                    fitted = {}
                    for _ in range(args.repeats):
                        for guard in ("held_out", None):
                            t, est = timed_fit(m, k, X, cons, seed, guard)
                            times[guard].append(t)
                            fitted[guard] = est
                    g, p = fitted["held_out"], fitted[None]
                    rows.append({
                        "dataset": ds, "method": m, "count": count, "draw": draw,
                        "t_guard": statistics.median(times["held_out"]),
                        "t_plain": statistics.median(times[None]),
                        "err_guard": clustering_error(y, g.labels_),
                        "err_plain": clustering_error(y, p.labels_),
                        "err_ncut": e_ncut, "fallback": bool(g.fallback_),
                    })  # fmt: skip
                    r = rows[-1]
                    ratio = r["t_guard"] / r["t_plain"]
                    print(
                        f"{ds:14s} {m:9s} {count:5d} d{draw} time x{ratio:.2f} "
                        f"({r['t_plain']:.2f} s -> {r['t_guard']:.2f} s)  error "
                        f"{r['err_plain']:.3f} -> {r['err_guard']:.3f} (NCut {e_ncut:.3f})"
                        f"{'  fallback' if r['fallback'] else ''}",
                        flush=True,
                    )
    return rows


def report(rows: list[dict], args) -> str:
    out = [
        "# The held-out guard: cost and effect",
        "",
        "Produced by `python -m benchmarks.bench_guard "
        + f"--datasets {','.join(args.datasets)} --methods {','.join(args.methods)} "
        + f"--counts {','.join(map(str, args.counts))} --draws {args.draws} "
        + f"--repeats {args.repeats} --write`.",
        "Each cell: medians over draws of the fit time without and with the guard (each the",
        "median of the repeats), their ratio, mean errors without / with the guard, NCut's,",
        "and the draws where the guard returned the unconstrained partition.",
        "",
        "| data | method | pairs | time, no guard (s) | with guard (s) | ratio | error, no guard "
        "| with guard | NCut | fallbacks |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    order = {
        (d, m): (i, j) for i, d in enumerate(args.datasets) for j, m in enumerate(args.methods)
    }
    keys = sorted(
        {(r["dataset"], r["method"], r["count"]) for r in rows},
        key=lambda t: (*order[t[:2]], t[2]),
    )
    for ds, m, c in keys:
        rs = [r for r in rows if (r["dataset"], r["method"], r["count"]) == (ds, m, c)]
        tp = statistics.median(r["t_plain"] for r in rs)
        tg = statistics.median(r["t_guard"] for r in rs)
        out.append(
            f"| {ds} | {m} | {c} | {tp:.2f} | {tg:.2f} | {tg / tp:.1f} | "
            f"{np.mean([r['err_plain'] for r in rs]):.3f} | "
            f"{np.mean([r['err_guard'] for r in rs]):.3f} | "
            f"{np.mean([r['err_ncut'] for r in rs]):.3f} | "
            f"{sum(r['fallback'] for r in rs)} / {len(rs)} |"
        )
    ratios = [r["t_guard"] / r["t_plain"] for r in rows]
    out += ["", f"Median time ratio over all cells: {statistics.median(ratios):.1f}; "
            f"largest {max(ratios):.1f}.", ""]  # fmt: skip
    return "\n".join(out)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", default="wine,breast_cancer,digits")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--counts", default="50,200,1000")
    p.add_argument("--draws", type=int, default=2)
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--write", action="store_true", help="write docs/results/guard/cost.md")
    args = p.parse_args(argv)
    args.datasets = args.datasets.split(",")
    args.methods = args.methods.split(",")
    args.counts = [int(c) for c in args.counts.split(",")]
    text = report(run(args), args)
    print(text)
    if args.write:
        out = RESULTS / "guard" / "cost.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)


if __name__ == "__main__":
    main()
