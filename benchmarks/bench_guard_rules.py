"""How the held-out guard should judge: folds, score and margin, measured.

For each instance (synthetic families where constraints hurt or help, and real sets), method,
count of random correct pairs and draw, the script fits the method at its defaults without
the guard (``guard=None``) on all the pairs, fits NCut, and refits the method on the training
pairs of three folds of two kinds (:func:`spectralink.constraints.split_constraints`, by pairs
and by constrained points), recording the held-out must-links and cannot-links each refit
and NCut violate. The report then replays candidate rules on the records:

* ``none``: always keep the constrained partition;
* ``in_sample``: fall back to NCut when the partition violates more of the given pairs;
* ``<rule>+veto``: as ``<rule>``, and also fall back when the partition violates more of the
  given pairs than NCut (the library's veto, before the folds);
* ``margin``: fall back unless the refits' score beats NCut's by one binomial standard error
  of NCut's score on the held-out pairs;
* ``paired[@z][/g]``: fall back unless, of the held-out pairs exactly one of the two gets
  right, the refits get ``b`` and NCut ``c`` with ``b - c > z * sqrt(b + c)`` (``z``
  standard errors of a sign test, 1 unless given, :func:`spectralink.methods.keeps_constrained`);
  when ``b + c`` is too small for any lead to pass
  (:func:`spectralink.methods.held_out_can_decide`), the given pairs judge: keep when the
  partition violates strictly fewer of them, or with ``/g`` when it passes the same test
  on the given pairs (records without these counts fall back to ``notbetter``); with
  ``/s`` the refits must also side with the partition, not NCut, on more of the pairs of
  points the two disagree on (:func:`spectralink.methods.refit_sides`), and with ``/S``
  also where the given pairs judge (the library's rule is ``paired@1.645/g/S+veto``);
  there, ``/S<t>`` refuses only when more than the share ``t`` of the refits' sides go to
  NCut (a threshold for that path alone), and ``/M`` unless most refits, each counted
  once, side with the partition (a majority of refits instead of the pooled sides);
* ``<folds>:<score>:<mode>``: pooled held-out score of the refits against NCut's, ``acc``
  (share of pairs satisfied) or ``bal`` (mean of the must-link and cannot-link shares);
  ``worse``: fall back when the refits score lower; ``notbetter``: fall back unless they
  score higher (ties go to NCut); ``tie``: as ``notbetter``, but a tie is broken by the
  violations of the given pairs.

It counts the hurt cells (a cell's mean error more than 0.02 above NCut's) and the share of
the gain kept on the cells where the constrained partition helps by more than 0.02.

    python -m benchmarks.bench_guard_rules --jobs 2          # records, then the report
    python -m benchmarks.bench_guard_rules --report-only

Records go to ``docs/results/guard/rules.jsonl`` (appended; delete it to start over), the
report to ``docs/results/guard/rules.md``; ``--folds 5`` (the library's count) to
``rules_f5.jsonl`` and ``rules_f5.md``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from spectralink import get_method
from spectralink.constraints import split_constraints
from spectralink.experiments import cell_seed, draw_constraints
from spectralink.methods import (
    GUARD_FOLDS,
    GUARD_MARGIN,
    held_out_can_decide,
    keeps_constrained,
    refit_sides,
)
from spectralink.metrics import clustering_error

from ._common import RESULTS
from ._families import family

OUT = RESULTS / "guard"
INSTANCES = (
    ("overlap", {"std": 12, "n": 500}), ("overlap", {"std": 8, "n": 500}),
    ("overlap", {"std": 4, "n": 500}), ("overlap", {"std": 1, "n": 500}),
    ("anisotropic", {"ratio": 3, "n": 500}), ("anisotropic", {"ratio": 10, "n": 500}),
    ("unequal", {"smallest": 0.05, "n": 500}), ("unequal", {"smallest": 0.10, "n": 500}),
    ("noise", {"noise_dims": 40, "n": 500}), ("noise", {"noise_dims": 10, "n": 500}),
    ("many", {"k": 10, "n": 500}), ("real", {"dataset": "wine", "variant": "std"}),
    ("real", {"dataset": "breast_cancer", "variant": "std"}),
    ("real", {"dataset": "wine", "variant": "raw"}),
)  # fmt: skip
METHODS = ("ccsr", "ccskl", "e2cp", "lscp", "cosc", "scacs", "fcsc", "sl")
COUNTS = (50, 200, 1000)
DRAWS = 2
FOLDS = 3


#: The rule of :func:`spectralink.methods.held_out_guard` (with ``GUARD_FOLDS`` folds).
LIBRARY_RULE = f"points:acc:paired@{GUARD_MARGIN:g}/g/S+veto"


def _instance_name(fam: str, params: dict) -> str:
    return fam + "-" + "-".join(f"{a}{b}" for a, b in params.items())


def _held_counts(labels, cons, idx) -> list[int]:
    """[held-out must-links, cannot-links, violated must-links, violated cannot-links]."""
    v = cons.violated(labels)[idx]
    is_ml = idx < cons.n_must_link
    return [int(is_ml.sum()), int((~is_ml).sum()), int(v[is_ml].sum()), int(v[~is_ml].sum())]


def _discordant(labels, reference, cons, idx) -> list[int]:
    """Of the pairs ``idx``, [those only ``labels`` gets right, those only ``reference`` does]."""
    v, v_ref = cons.violated(labels)[idx], cons.violated(reference)[idx]
    return [int((~v & v_ref).sum()), int((v & ~v_ref).sum())]


def _fit(name: str, k: int, X, cons, seed: int) -> np.ndarray:
    est = get_method(name)(n_clusters=k)
    if "guard" in est.get_params():
        est.set_params(guard=None)
    est.set_params(random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, constraints=cons).labels_


def run_instance(
    fam: str, params: dict, folds: int = FOLDS, schemes_run: tuple[str, ...] = ("pairs", "points")
) -> list[dict]:
    X, y = family(fam, 1, **params)
    k = len(np.unique(y))
    name = _instance_name(fam, params)
    records = []
    for count in COUNTS:
        for draw in range(DRAWS):
            seed = cell_seed(0, count, draw)
            cons = draw_constraints(y, count, "pairs", seed)
            ncut = _fit("ncut", k, X, None, seed)
            schemes = {}
            for by in schemes_run:
                try:
                    schemes[by] = split_constraints(cons, folds, by, seed)[0]
                except ValueError:
                    pass
            everything = np.arange(len(cons))
            for m in METHODS:
                t0 = time.perf_counter()
                try:
                    labels = _fit(m, k, X, cons, seed)
                except Exception as exc:  # a failing method is a result
                    print(f"{name} {m} {count}: {type(exc).__name__}: {exc}", flush=True)
                    continue
                rec = {
                    "inst": name, "method": m, "count": count, "draw": draw, "n": len(y),
                    "k": k, "err": clustering_error(y, labels),
                    "err_ncut": clustering_error(y, ncut), "t_fit": time.perf_counter() - t0,
                    "insample": _held_counts(labels, cons, everything),
                    "insample_ncut": _held_counts(ncut, cons, everything),
                    # discordant given pairs: only the partition / only NCut right
                    "dg": _discordant(labels, ncut, cons, everything),
                }  # fmt: skip
                for by, scheme in schemes.items():
                    judged = []
                    for train, test in scheme:
                        try:
                            refit = _fit(m, k, X, cons.take(train), seed)
                        except Exception:
                            judged = None
                            break
                        judged.append({
                            "m": _held_counts(refit, cons, test),
                            "r": _held_counts(ncut, cons, test),
                            # discordant held-out pairs: only the refit / only NCut right
                            "d": _discordant(refit, ncut, cons, test),
                            # point pairs the partition and NCut disagree on: the refit
                            # sides with the partition / with NCut
                            "s": list(refit_sides(refit, labels, ncut)),
                        })  # fmt: skip
                    rec[by] = judged
                records.append(rec)
        print(f"{name} {count} done", flush=True)
    return records


# --------------------------------------------------------------------------- the rules
def _score(c, kind: str) -> float:
    n_ml, n_cl, v_ml, v_cl = c
    if kind == "acc":
        return 1 - (v_ml + v_cl) / max(n_ml + n_cl, 1)
    parts = [1 - v_ml / n_ml] if n_ml else []
    if n_cl:
        parts.append(1 - v_cl / n_cl)
    return float(np.mean(parts))


def falls_back(rec: dict, rule: str) -> bool:
    if rule.endswith("+veto"):
        # also when the partition violates more of the given pairs than NCut
        base = rule.removesuffix("+veto")
        m, r = rec["insample"], rec["insample_ncut"]
        return falls_back(rec, base) or m[2] + m[3] > r[2] + r[3]
    if rule == "none":
        return False
    if rule == "all":  # the unconstrained partition always (NCut's error)
        return True
    if rule == "in_sample":
        return _score(rec["insample"], "acc") < _score(rec["insample_ncut"], "acc")
    by, kind, mode = rule.split(":")
    folds = rec.get(by)
    if not folds:
        return False
    m = np.sum([f["m"] for f in folds], axis=0)
    r = np.sum([f["r"] for f in folds], axis=0)
    sm, sr = _score(m, kind), _score(r, kind)
    if mode == "worse":
        return sm < sr
    if mode.startswith("paired"):
        # "paired[@z][/g]": unless the refits win the discordant held-out pairs by z standard
        # errors (default 1); where they cannot decide, the given pairs judge: strictly fewer
        # violated, or with "/g" the same test with margin z on the discordant given pairs
        if any("d" not in f for f in folds):
            return not sm > sr
        full = mode
        mode, _, given_vote = mode.partition("/S")
        if full.endswith("/M"):
            mode, given_vote = mode.removesuffix("/M"), "M"
        sides_everywhere = mode != full
        sides = sides_everywhere or mode.endswith("/s")
        mode = mode.removesuffix("/s")
        z = float(mode.removesuffix("/g").partition("@")[2] or 1.0)
        b, c = np.sum([f["d"] for f in folds], axis=0)
        # the refits must side with the partition where it and NCut differ ("/s" where the
        # held-out pairs decide, "/S" also where the given pairs judge)
        disowned = False
        if sides:
            with_it, with_ncut = np.sum([f["s"] for f in folds], axis=0)
            disowned = not with_it > with_ncut
        if not held_out_can_decide(b + c, z):
            if sides_everywhere and _given_path_disowned(folds, given_vote, with_it, with_ncut):
                return True
            if mode.endswith("/g"):
                return not keeps_constrained(*rec["dg"], z)
            m, r = rec["insample"], rec["insample_ncut"]
            return not m[2] + m[3] < r[2] + r[3]
        return disowned or not keeps_constrained(b, c, z)
    if mode == "margin":  # unless the refits beat NCut by one binomial standard error
        n = max(r[0] + r[1], 1)
        return not sm > sr + np.sqrt(max(1 - sr, 1 / n) * sr / n)
    if mode == "notbetter" or sm != sr:
        return not sm > sr
    return _score(rec["insample"], "acc") <= _score(rec["insample_ncut"], "acc")


def _given_path_disowned(folds: list[dict], vote: str, with_it: int, with_ncut: int) -> bool:
    """The side vote where the given pairs judge, from the pooled sides ``with_it`` and
    ``with_ncut``: ``""`` the pooled vote, ``"M"`` a majority of refits, ``"<t>"`` more than
    the share ``t`` of the sides to NCut."""
    if not vote:
        return not with_it > with_ncut
    if vote == "M":
        return not 2 * sum(f["s"][0] > f["s"][1] for f in folds) > len(folds)
    return with_ncut > float(vote) * max(with_it + with_ncut, 1)


RULES = (
    ["none", "in_sample"]
    + [
        f"{by}:{kind}:{mode}"
        for by in ("pairs", "points")
        for kind in ("acc", "bal")
        for mode in ("worse", "notbetter", "tie")
    ]
    + ["points:acc:notbetter+veto", "points:acc:tie+veto", "points:acc:margin+veto"]
    + ["points:acc:paired+veto", "points:acc:paired@1/g+veto"]
    + [f"points:acc:paired@{z}{g}+veto" for z in (1.645, 2, 2.2, 2.5) for g in ("", "/g")]
    + [f"points:acc:paired@{z}/g/s+veto" for z in (1, 1.645, 2)]
    + [f"points:acc:paired@1.645/g/{v}+veto" for v in ("S", "S0.6", "S0.75", "M")]
)


def report(records: list[dict], folds: int = FOLDS) -> str:
    cells = defaultdict(list)
    for r in records:
        cells[(r["inst"], r["method"], r["count"])].append(r)

    def mean_err(rs, rule):
        return np.mean([r["err_ncut"] if falls_back(r, rule) else r["err"] for r in rs])

    helped = [c for c, rs in cells.items() if mean_err(rs, "none") < mean_err(rs, "all") - 0.02]
    lines = [
        "# The held-out guard: which rule",
        "",
        f"{len(records)} fits: {len(cells)} (instance, method, count) cells of "
        f"{DRAWS} draws, {len({r['inst'] for r in records})} instances, methods at their "
        f"defaults without the guard, {folds} folds. Produced by `python -m benchmarks."
        f"bench_guard_rules{'' if folds == FOLDS else f' --folds {folds}'}`.",
        "",
        "A cell is *hurt* when its mean error, with the rule applied, is more than 0.02 above "
        "NCut's; *gain kept* is the share of the error reduction of the cells the "
        f"constrained partitions help (by more than 0.02; {len(helped)} cells) that the rule "
        "keeps.",
        "",
        "| rule | hurt cells | gain kept | fallbacks |",
        "|---|---|---|---|",
    ]
    full = sum(
        np.mean([r["err_ncut"] for r in cells[c]]) - mean_err(cells[c], "none") for c in helped
    )
    for rule in RULES:
        by = rule.split(":")[0]
        if ":" in rule and not any(r.get(by) is not None for r in records):
            continue  # that scheme was not refitted (--by)
        if ":paired" in rule and not any("d" in f for r in records for f in r.get(by) or []):
            continue  # records made before the discordant pairs were counted
        if "/g" in rule and not all("dg" in r for r in records):
            continue  # records made before the discordant given pairs were counted
        if ("/s" in rule.lower() or "/M" in rule) and not any(
            "s" in f for r in records for f in r.get(by) or []
        ):
            continue  # records made before the refits' sides were counted
        hurt = [
            c
            for c, rs in cells.items()
            if mean_err(rs, rule) > np.mean([r["err_ncut"] for r in rs]) + 0.02
        ]
        kept = sum(np.mean([r["err_ncut"] for r in cells[c]]) - mean_err(cells[c], rule)
                   for c in helped)  # fmt: skip
        n_fb = sum(falls_back(r, rule) for r in records)
        share = kept / full if full > 0 else float("nan")
        lines.append(f"| `{rule}` | {len(hurt)} | {share:.2f} | {n_fb} / {len(records)} |")
    has_pairs = any("d" in f for r in records for f in r.get("points") or [])
    has_sides = any("s" in f for r in records for f in r.get("points") or [])
    chosen = (
        LIBRARY_RULE
        if has_sides
        else LIBRARY_RULE.replace("/S", "")
        if has_pairs
        else "points:acc:notbetter+veto"
    )
    which = (
        "the library's rule, without its side check: records made before the sides"
        if has_pairs and not has_sides
        else "the library's rule"
        if has_pairs and folds == GUARD_FOLDS
        else "for comparison: no margin, and records without discordant pairs"
        if not has_pairs
        else f"the library's rule, with {folds} folds"
    )
    lines += ["", f"Hurt cells under `{chosen}` ({which}):", ""]
    n_lines = len(lines)
    for c, rs in sorted(cells.items()):
        e, en = mean_err(rs, chosen), np.mean([r["err_ncut"] for r in rs])
        if e > en + 0.02:
            lines.append(f"* {c[0]}, {c[1]}, {c[2]} pairs: {e:.3f} against NCut's {en:.3f}")
    if len(lines) == n_lines:
        lines.append("* none")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--jobs", type=int, default=1, help="instances run in parallel")
    p.add_argument("--report-only", action="store_true")
    p.add_argument(
        "--folds", type=int, default=FOLDS, help=f"folds per scheme (library: {GUARD_FOLDS})"
    )
    p.add_argument(
        "--by", default="pairs,points", help="fold schemes to refit (others are not reported)"
    )
    args = p.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    stem = "rules" if args.folds == FOLDS else f"rules_f{args.folds}"
    path = OUT / f"{stem}.jsonl"
    if not args.report_only:
        done = set()
        if path.exists():
            done = {json.loads(line)["inst"] for line in path.read_text().splitlines()}
        todo = [(f, p_) for f, p_ in INSTANCES if _instance_name(f, p_) not in done]
        with ProcessPoolExecutor(max_workers=args.jobs) as pool, path.open("a") as fh:
            by = tuple(args.by.split(","))
            columns = (
                [*zip(*todo, strict=True), [args.folds] * len(todo), [by] * len(todo)]
                if todo
                else []
            )
            for recs in pool.map(run_instance, *columns) if todo else []:
                for r in recs:
                    fh.write(json.dumps(r) + "\n")
                fh.flush()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    text = report(records, args.folds)
    (OUT / f"{stem}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
