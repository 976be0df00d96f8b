"""Why one draw of a check cell ended above NCut: what random pairs say about the partitions.

For one record of ``bench_defaults.py`` (instance, method, count, draw) the script refits the
method on the same data and pairs, fits NCut, and refits the method on the training pairs of
the guard's folds (:data:`spectralink.methods.GUARD_FOLDS`, by constrained points, seeded as
the guard seeds them). For the final partition and each refit it prints, beside the
clustering error:

* the share of all pairs of points it gets right (the Rand index: what uniformly drawn
  pairs, the protocol's, measure), its must-link and cannot-link shares and their mean;
* on a random pair on which it and NCut disagree, the probability that it is the one right;
* how many of the given pairs it violates, and its normalized cut on the method's graph
  (methods that keep ``affinity_matrix_``);
* for the folds, the held-out pairs it won and lost against NCut, and on which side of the
  pairs of points the final partition and NCut disagree on each refit falls
  (:func:`spectralink.methods.refit_sides`).

It ends with the probability that the guard's test (:func:`spectralink.methods.keeps_constrained`
on ``n_held_out`` held-out pairs) keeps a partition whose population rates are those of the
refits: how likely the pairs were to favour it by chance. With ``--method auto`` the partition
is that of the method Auto chose. "Final" is the method's own partition, also when the guard
refused it. Run on one core::

    python -m benchmarks.bench_guard_cell --instance noise-noise_dims10-n20000-s2 \\
        --method cosc --count 200 --trial 1

Results: ``docs/results/guard/cells.md``.
"""

from __future__ import annotations

import argparse
import json
import warnings
from math import sqrt
from pathlib import Path

import numpy as np
from scipy.stats import multinomial
from sklearn.metrics import adjusted_rand_score
from sklearn.metrics.cluster import pair_confusion_matrix

from benchmarks._families import family
from spectralink import get_method
from spectralink.constraints import split_constraints
from spectralink.experiments import draw_constraints
from spectralink.methods import (
    GUARD_FOLDS,
    GUARD_MARGIN,
    held_out_can_decide,
    keeps_constrained,
    refit_sides,
    unguarded_clone,
)
from spectralink.metrics import clustering_error, normalized_cut

RECORDS = Path(__file__).resolve().parents[1] / "docs/results/guard/families/records"


class PairRates:
    """Population pair rates of partitions against the classes ``y``."""

    def __init__(self, y: np.ndarray) -> None:
        self.y = y
        self.total = len(y) * (len(y) - 1) // 2

    def shares(self, r: np.ndarray) -> tuple[float, float, float]:
        """(all pairs, must-links, cannot-links) the partition ``r`` gets right."""
        c = pair_confusion_matrix(self.y, r) // 2  # rows: apart / together in y
        return (c[0, 0] + c[1, 1]) / self.total, c[1, 1] / c[1].sum(), c[0, 0] / c[0].sum()

    def discordant(self, r: np.ndarray, ref: np.ndarray) -> tuple[float, float]:
        """(share of pairs exactly one of ``r``, ``ref`` gets right, of those the share
        ``r`` gets right): the classes side with one of them on each pair they disagree on."""
        won, lost = refit_sides(self.y, r, ref)
        return (won + lost) / self.total, won / max(won + lost, 1)


def pass_probability(n_held: int, discordant: float, win: float) -> float:
    """P(the guard keeps the refits) when each of ``n_held`` held-out pairs is discordant
    with probability ``discordant`` and then won with probability ``win`` (the path on which
    too few discordant pairs leave the given pairs to judge is not counted)."""
    keeps = [
        (w, lost, n_held - w - lost)
        for w in range(n_held + 1)
        for lost in range(n_held + 1 - w)
        if held_out_can_decide(w + lost) and keeps_constrained(w, lost, GUARD_MARGIN)
    ]
    if not keeps:
        return 0.0
    p = [discordant * win, discordant * (1 - win), 1 - discordant]
    return float(multinomial.pmf(np.array(keeps), n_held, p).sum())


# PLR0915 (statements): a benchmark's protocol, step by step as its page describes it.
def main() -> None:  # noqa: PLR0915
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--instance", required=True, help="record file name without .jsonl")
    p.add_argument("--method", required=True)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--trial", type=int, required=True)
    p.add_argument("--records", type=Path, default=RECORDS)
    args = p.parse_args()

    lines = (args.records / f"{args.instance}.jsonl").read_text().splitlines()
    cfg = json.loads(lines[0])["config"]
    rec = next(
        r for r in map(json.loads, lines[1:])
        if (r["method"], r["n_constraints"], r["trial"]) == (args.method, args.count, args.trial)
    )  # fmt: skip
    if cfg["protocol"] != "pairs":
        raise SystemExit(f"{args.instance}: only the 'pairs' protocol's draws are rebuilt")
    X, y = family(cfg["family"], cfg["seed"], **cfg["params"])
    k, seed = cfg["k"], rec["seed"]
    cons = draw_constraints(y, args.count, "pairs", random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = get_method(args.method)(k, random_state=seed).fit(X, constraints=cons)
        ncut = get_method("ncut")(k, random_state=seed).fit(X).labels_
    print(
        f"{args.instance}, {args.method}, {args.count} pairs, draw {args.trial}: error "
        f"{rec['error']:.4f} in the record, {clustering_error(y, est.labels_):.4f} refitted now"
    )
    if args.method == "auto":
        print(f"Auto chose {est.best_method_} {est.best_params_} ({est.selection_})")
        est = est.best_estimator_
    report = getattr(est, "guard_", None)
    print(f"guard: {report}")
    rates = PairRates(y)
    graph = getattr(est, "affinity_matrix_", None)

    def describe(name: str, r: np.ndarray) -> None:
        rand, ml, cl = rates.shares(r)
        line = (
            f"{name:>6}: error {clustering_error(y, r):.4f}, ARI "
            f"{adjusted_rand_score(y, r):.4f}; pairs right {rand:.4f} (must-links {ml:.4f}, "
            f"cannot-links {cl:.4f}, mean {(ml + cl) / 2:.4f}); violates "
            f"{int(cons.violated(r).sum())} of the {len(cons)} given"
        )
        if graph is not None and graph.shape[0] == len(r):
            line += f"; normalized cut {normalized_cut(graph, r):.4f}"
        print(line + f"; sizes {sorted(np.bincount(r).tolist())}")

    final = est.labels_
    if getattr(est, "fallback_", False):  # the method's own partition, which the guard refused
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            final = unguarded_clone(est).fit(X, constraints=cons).labels_
    describe("final", final)
    describe("NCut", ncut)
    d, w = rates.discordant(final, ncut)
    print(
        f"final against NCut on a random pair: they disagree on {d:.4f}; the final one is "
        f"right on {w:.3f} of those"
    )
    if report is None or report.n_held_out == 0:
        return
    folds, _ = split_constraints(cons, GUARD_FOLDS, "points", est.random_state)
    won = lost = 0
    rates_d, rates_w, sides = [], [], []
    for train, test in folds:
        if len(test) == 0:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = unguarded_clone(est).fit(X, constraints=cons.take(train)).labels_
        v, v_ref = cons.violated(r)[test], cons.violated(ncut)[test]
        fw, fl = int((~v & v_ref).sum()), int((v & ~v_ref).sum())
        won, lost = won + fw, lost + fl
        d, w = rates.discordant(r, ncut)
        with_final, with_ncut = refit_sides(r, final, ncut)
        sides += [(with_final, with_ncut)]
        rates_d.append(d)
        rates_w.append(w)
        describe("refit", r)
        print(
            f"        held-out won {fw}, lost {fl}; on a random pair it disagrees with NCut "
            f"on {d:.4f}, right on {w:.3f} of those; of the pairs of points final and NCut "
            f"disagree on it sides with the final one on "
            f"{with_final / (with_final + with_ncut):.3f}"
        )
    print(
        f"held out: won {won}, lost {lost}; keeping needs a lead above "
        f"{GUARD_MARGIN} x sqrt({won + lost}) = {GUARD_MARGIN * sqrt(won + lost):.2f}"
    )
    with_final, with_ncut = np.sum(sides, axis=0)
    print(
        f"the refits side with the final partition on {with_final / (with_final + with_ncut):.3f}"
        " of the pairs of points it and NCut disagree on (summed over the refits; kept only "
        "above 0.5)"
    )
    chance = pass_probability(report.n_held_out, float(np.mean(rates_d)), float(np.mean(rates_w)))
    print(
        f"P(the guard's test on {report.n_held_out} held-out pairs keeps a partition with the "
        f"refits' mean rates) = {chance:.4f}"
    )


if __name__ == "__main__":
    main()
