"""The held-out guard: constraints are used only when held-out pairs say they help.

An opt-in (``guard="held_out"``; the default, ``None``, is each paper's method as published):
a constrained estimator with it ends its ``fit`` here. Its price, measured in
``docs/results/guard/cost.md`` and ``docs/results/defaults/guard.md``, is five refits per fit
(a median 5.8x the fit) and part of the gains the pairs give; :class:`~spectralink.Auto`
keeps the same promise from the folds its search fits anyway. The
partition fitted to all the given pairs is compared with the *unconstrained* partition of
the same graph (NCut on the affinity the method built, LSC-R on its landmark graph, k-means
for COP-KMeans), on pairs the constrained fit did not see:

1. the constrained points are split into :data:`GUARD_FOLDS` folds
   (:func:`spectralink.constraints.split_constraints`, ``by="points"``): fold f holds out
   every pair with an endpoint among its points and trains on the pairs among the others,
   so a partition that carves the space around the given points is judged on points it
   never saw;
2. the method is refitted on each fold's training pairs (on the graph and eigenvectors
   already built), and its held-out pairs are scored against that refit and against the
   unconstrained partition;
3. the constrained partition (of all the pairs) is kept when its refits win the held-out
   pairs clearly (:func:`keeps_constrained`): of the held-out pairs exactly one of the two
   gets right, the refits get ``won`` and the unconstrained partition ``lost``, and
   ``won - lost`` must exceed :data:`GUARD_MARGIN` standard errors of that difference
   (``sqrt(won + lost)``, a sign test's: one-sided at the 5 % level, that the refits get
   more of them right than the unconstrained partition); it is also kept when it is the
   unconstrained partition (up to the names of the clusters);
4. and the refits must stand behind the partition returned: the held-out pairs judge the
   refits, not the fit on all the pairs, and a method whose search can land elsewhere with
   all the pairs (COSC's k-way search) may return a partition none of its refits resemble.
   On the pairs of *points* the returned and the unconstrained partitions disagree on, the
   refits must side with the returned one more often than with the unconstrained one
   (:func:`refit_sides`, summed over the refits; no threshold, a vote), also where the
   held-out pairs cannot decide and the given pairs judge (below). Otherwise the
   unconstrained partition is returned, with ``fallback_`` set and an
   :class:`~spectralink.exceptions.ConstraintsIgnoredWarning`.

Before any refit, two failed fits are vetoed and the unconstrained partition is returned at
once. The refits judge the method on part of the pairs, not the partition returned, so
neither shows in them:

* a *degenerate* partition where the unconstrained one is not: fewer clusters than it, or a
  cluster of fewer than :func:`~spectralink.metrics.min_cluster_size` points that no
  cannot-link asks for (the checks of
  :func:`~spectralink.metrics.partition_diagnostics`); pairs rarely fall in a handful of
  points, so neither given nor held-out pairs see one;
* a partition that violates more of the given pairs than the unconstrained one: fitting the
  pairs is what a constrained method is for, so a partition further from them than NCut's
  is a failed fit (e.g. an unlucky k-means start that merged a small cluster).

The held-out folds judge only partitions that pass.

With fewer constrained points than folds nothing can be held out; the given pairs then
judge, and the constrained partition must violate strictly fewer of them (one or two pairs
cannot be won "clearly", and they are all the user gave). A fold whose few training pairs
the method cannot fit (a ``ValueError``, e.g. none left) is not judged; when no fold is,
the given pairs judge. They also judge when the held-out pairs cannot decide: when the two
partitions disagree on at most ``GUARD_MARGIN ** 2`` of them (two), no lead could pass the
margin (``won - lost <= won + lost <= margin * sqrt(won + lost)``), so the held-out verdict
would be the unconstrained partition whatever the method did (common with a few dozen
pairs, which mostly fall inside clusters both partitions agree on). The user's pairs are
then all the evidence there is, and the same test applies to them: of the given pairs
exactly one partition gets right, the method's must lead by the same margin, so one or two
pairs cannot decide (a merge of two clusters that few random pairs touch shows as a pair
or two either way). The refits still vote (step 4): a fit on all the pairs that lands far
from refits that agree with the unconstrained partition on the held-out pairs can satisfy
every given pair and partition the rest worse (COSC, 1,000 pairs, 20,000 points, a 10 %
cluster: all pairs satisfied, error 0.29 against 0.004).

Violations of the pairs a fit was given say little: a method can satisfy them by carving
small regions around their points and still partition the rest worse. Held-out pairs
estimate how the partition agrees with the user's notion of "together" on points it was
not told about, which is what the user asked for. The margin makes the pairs earn their
place: a refit that wins a handful more held-out pairs than NCut is within the folds' noise.
``docs/results/guard/`` has the measurements behind the rule (folds, score,
margin) and its cost.

A method family says what "unconstrained", "refit" and "adopt" mean for it in one
:class:`GuardPlan` (its ``_guard_plan``); :func:`run_guard` carries the plan out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.metrics.cluster import pair_confusion_matrix

from ..constraints import Constraints, UnfoldableConstraintsError, split_constraints
from ..metrics import min_cluster_size, unrequested_small_clusters

__all__ = [
    "GUARD_FOLDS",
    "GUARD_MARGIN",
    "GuardPlan",
    "GuardReport",
    "degenerate_against",
    "held_out_can_decide",
    "held_out_guard",
    "keeps_constrained",
    "pairs_disagreeing",
    "refit_sides",
    "run_guard",
    "same_partition",
    "unguarded_clone",
]

#: Folds of the constrained points the guard refits on (each refit costs about one fit of
#: the method's steps after its graph and eigenvectors). Five folds train each refit on
#: about 64 % of the pairs (three: 44 %), so the refits stay close to the fit they judge.
GUARD_FOLDS = 5

#: Standard errors of the paired held-out difference by which the refits must beat the
#: unconstrained partition (:func:`keeps_constrained`): the one-sided 5 % point of the
#: normal, so a method no better on pairs than NCut is kept in about one fit in twenty (at
#: one standard error, one in six: ``docs/results/guard/`` has what that cost).
GUARD_MARGIN = 1.645


@dataclass(frozen=True)
class GuardPlan:
    """What the held-out guard needs from one method family, declared in one place (the
    estimator's ``_guard_plan(X)``).

    Attributes
    ----------
    reference : callable
        ``reference() -> fitted``: the unconstrained partition the method is judged against,
        something with ``labels_`` (NCut at its defaults, or on the method's own graph or
        eigenvectors when they are NCut's).
    refit : callable
        ``refit(training_constraints) -> labels``: the method fitted to part of the pairs,
        reusing what the fit built (graph, eigenvectors, basis).
    adopt : callable
        ``adopt(reference)``: the estimator takes over the reference's labels and what its
        ``predict`` needs to follow them.
    adopt_when_same : bool, default=False
        Adopt the reference also when the two partitions are the same (a model that is
        smoother over the data for ``predict``: the landmark methods).
    """

    reference: Callable[[], Any]
    refit: Callable[[Constraints], np.ndarray]
    adopt: Callable[[Any], None]
    adopt_when_same: bool = False


def run_guard(
    plan: GuardPlan,
    labels: np.ndarray,
    constraints: Constraints,
    random_state: int | np.random.RandomState | None,
) -> tuple[GuardReport | None, bool]:
    """Carry out ``plan`` for the partition ``labels``: the report of :func:`held_out_guard`
    and whether the reference was adopted (``fallback``)."""
    reference = plan.reference()
    report = held_out_guard(plan.refit, labels, reference.labels_, constraints, random_state)
    if report is not None and report.fallback:
        plan.adopt(reference)
        return report, True
    if plan.adopt_when_same and same_partition(labels, reference.labels_):
        plan.adopt(reference)
    return report, False


@dataclass(frozen=True)
class GuardReport:
    """What the held-out guard compared and decided (an estimator's ``guard_``).

    Attributes
    ----------
    n_held_out : int
        Held-out pairs judged, summed over the folds (a pair joining two folds' points is
        held out, and counted, in both); 0 when too few points were constrained to hold
        any out, and the given pairs were judged instead.
    violated : int
        Of those, the pairs violated by the method refitted without them (of the given
        pairs, by the method's partition).
    violated_reference : int
        The pairs violated by the unconstrained partition.
    fallback : bool
        Whether the unconstrained partition was returned.
    won, lost : int
        Of the held-out pairs exactly one of the two partitions gets right, those the
        refits get right (``won``) and those the unconstrained partition gets right
        (``lost``); on the given pairs when ``n_held_out`` is 0.
    vetoed : bool
        Whether the partition was refused before any refit: it violates more of the given
        pairs than the unconstrained one, or it is degenerate where that one is not
        (``degenerate``); ``n_held_out`` is then 0, and ``violated`` counts the given
        pairs.
    degenerate : bool
        Whether the veto was for a degenerate partition (``vetoed`` is then True too).
    undecided : bool
        Whether the held-out pairs could not decide (the partitions disagree on at most
        ``GUARD_MARGIN ** 2`` of the ``n_held_out``), so the given pairs judged, by the
        same margin:
        ``violated``, ``violated_reference``, ``won`` and ``lost`` then count the given
        pairs.
    sided, sided_reference : int
        When the method was refitted: of the pairs of *points* on which the partition
        fitted to all the pairs and the unconstrained one disagree (one puts them together,
        the other apart), summed over the refits, those on which the refit sides with the
        former (``sided``) and with the latter (``sided_reference``). The held-out pairs
        judge the refits; the partition returned must be one they stand behind, so it is
        kept only when ``sided > sided_reference`` (:func:`refit_sides`), also where the
        held-out pairs could not decide and the given pairs judged.
    """

    n_held_out: int
    violated: int
    violated_reference: int
    fallback: bool
    won: int = 0
    lost: int = 0
    vetoed: bool = False
    undecided: bool = False
    degenerate: bool = False
    sided: int = 0
    sided_reference: int = 0

    def summary(self) -> str:
        """The reason for the verdict, short enough for one warning line (``str(report)``
        has the whole reasoning)."""
        if self.degenerate:
            return "degenerate where the unconstrained partition is not"
        if self.vetoed:
            return (
                f"violates {self.violated} given pairs, the unconstrained partition "
                f"{self.violated_reference}"
            )
        where = "given" if self.undecided or self.n_held_out == 0 else "held-out"
        return f"{where} pairs only one partition gets right: won {self.won}, lost {self.lost}"

    def __str__(self) -> str:
        kept = "unconstrained partition returned" if self.fallback else "constrained partition kept"
        if self.degenerate:
            return (
                f"{kept}: the method's partition is degenerate (fewer clusters, or a cluster "
                "too small for any cannot-link to ask for) where the unconstrained one is not"
            )
        if self.vetoed:
            return (
                f"{kept}: of the given pairs, the method violates {self.violated}, more than "
                f"the unconstrained partition's {self.violated_reference}"
            )
        if self.undecided:
            given = (
                f"{kept}: the {self.n_held_out} held-out pairs could not decide (the two "
                f"partitions disagree on at most {int(GUARD_MARGIN**2)} of them); of the "
                f"given pairs, the method violates {self.violated}, the unconstrained "
                f"partition {self.violated_reference}; of those only one gets right, the "
                f"method {self.won}, the unconstrained partition {self.lost} (keeping needs "
                f"a lead above {GUARD_MARGIN:g} x sqrt({self.won + self.lost}))"
            )
            return given + self._sides_text() if self._refused_by_sides() else given
        if self.n_held_out == 0:
            return (
                f"{kept}: no pair could be held out (too few constrained points, or no refit "
                f"succeeded); of the given pairs, the method violates {self.violated}, the "
                f"unconstrained partition {self.violated_reference}"
            )
        held_out = (
            f"{kept}: of {self.n_held_out} held-out pairs, the method refitted without them "
            f"violates {self.violated}, the unconstrained partition {self.violated_reference}; "
            f"of those only one gets right, the refits {self.won}, the unconstrained "
            f"partition {self.lost} (keeping needs a lead above "
            f"{GUARD_MARGIN:g} x sqrt({self.won + self.lost}))"
        )
        return held_out + self._sides_text() if self._refused_by_sides() else held_out

    def _refused_by_sides(self) -> bool:
        """Whether the pairs that judged would keep the partition and the refits' side vote
        refused it."""
        return keeps_constrained(self.won, self.lost) and not self.sided > self.sided_reference

    def _sides_text(self) -> str:
        share = self.sided_reference / max(self.sided + self.sided_reference, 1)
        return (
            f"; but the partition fitted to all the pairs is not the refits': on the pairs "
            f"of points where it and the unconstrained partition disagree, the refits side "
            f"with the unconstrained one on {share:.0%}"
        )


def keeps_constrained(won: int, lost: int, margin: float = GUARD_MARGIN) -> bool:
    """The guard's rule: keep the constrained partition when its refits win the discordant
    held-out pairs (``won`` against the unconstrained partition's ``lost``) by more than
    ``margin`` standard errors of the difference, ``sqrt(won + lost)`` (a sign test's)."""
    won, lost = int(won), int(lost)
    return won - lost > margin * np.sqrt(won + lost)


def pairs_disagreeing(a: np.ndarray, b: np.ndarray) -> int:
    """Pairs of points one of two partitions puts together and the other apart (O(n), from
    the contingency table)."""
    c = pair_confusion_matrix(a, b)  # counts ordered pairs
    return int(c[0, 1] + c[1, 0]) // 2


def refit_sides(
    refit: np.ndarray, labels: np.ndarray, reference: np.ndarray, disagreeing: int | None = None
) -> tuple[int, int]:
    """Of the pairs of points ``labels`` and ``reference`` disagree on (one puts them
    together, the other apart), those ``refit`` sides with ``labels`` on and those it sides
    with ``reference`` on.

    ``refit`` agrees with exactly one of the two on each such pair, and equally with both on
    every other pair, so the counts follow from three pairwise disagreements. The first,
    ``labels`` against ``reference``, is the same for every refit: pass it as
    ``disagreeing`` (:func:`pairs_disagreeing`) to count it once.
    """
    both = pairs_disagreeing(labels, reference) if disagreeing is None else int(disagreeing)
    lead = pairs_disagreeing(refit, reference) - pairs_disagreeing(refit, labels)
    return (both + lead) // 2, (both - lead) // 2


def unguarded_clone(estimator: BaseEstimator) -> BaseEstimator:
    """An unfitted copy of ``estimator`` without its held-out guard (``guard=None`` when it
    has one): the method's own partition, for fits whose result only steers something
    else (the query loop's next pairs, a labelling page's preview) and would pay the
    guard's refits on every answer."""
    est = clone(estimator)
    if est.get_params(deep=False).get("guard") is not None:
        est.set_params(guard=None)
    return est


def same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two labelings are one partition (equal up to the names of the clusters)."""
    a, b = np.asarray(a), np.asarray(b)
    n_a, n_b = len(np.unique(a)), len(np.unique(b))
    if n_a != n_b:
        return False
    joint = np.unique(np.stack([a, b], axis=1), axis=0)
    return len(joint) == n_a


def held_out_guard(
    refit: Callable[[Constraints], np.ndarray],
    labels: np.ndarray,
    reference_labels: np.ndarray,
    constraints: Constraints,
    random_state: int | np.random.RandomState | None,
) -> GuardReport | None:
    """Judge a method against the unconstrained partition on held-out pairs.

    Parameters
    ----------
    refit : callable
        ``refit(training_constraints) -> labels``: the method fitted to part of the pairs.
    labels : ndarray of shape (n_samples,)
        The method's partition, fitted to all the pairs.
    reference_labels : ndarray of shape (n_samples,)
        The unconstrained partition.
    constraints : Constraints
        All the given pairs.
    random_state : int, RandomState or None
        Seeds the folds.

    Returns
    -------
    GuardReport, or None
        None when the two partitions are the same (nothing to choose, no refit). When the
        given pairs veto (``vetoed``), or with fewer constrained points than folds, the
        report judges the given pairs (``n_held_out`` 0).
    """
    if same_partition(labels, reference_labels):
        return None
    violated_ref = constraints.violated(reference_labels)
    violated_all = constraints.violated(labels)
    veto = _veto(labels, reference_labels, constraints, violated_all, violated_ref)
    if veto is not None:
        return veto
    try:
        folds, _ = split_constraints(constraints, GUARD_FOLDS, "points", random_state)
    except UnfoldableConstraintsError:
        folds = []
    n_held = violated = violated_reference = won = lost = sided = sided_reference = 0
    disagreeing = pairs_disagreeing(labels, reference_labels)
    for train, test in folds:
        if len(test) == 0:
            continue
        try:
            refitted = refit(constraints.take(train))
        except (ValueError, ArithmeticError):
            # the method cannot fit this fold's few pairs (e.g. none left): the fold is not
            # judged; the others are
            continue
        v, v_ref = constraints.violated(refitted)[test], violated_ref[test]
        violated += int(v.sum())
        violated_reference += int(v_ref.sum())
        won += int((~v & v_ref).sum())
        lost += int((v & ~v_ref).sum())
        n_held += len(test)
        with_labels, with_reference = refit_sides(refitted, labels, reference_labels, disagreeing)
        sided += with_labels
        sided_reference += with_reference
    if n_held == 0:  # nothing could be held out: the given pairs judge
        return _given_pairs_report(violated_all, violated_ref, vetoed=False)
    if not held_out_can_decide(won + lost):
        return _given_pairs_report(
            violated_all, violated_ref, vetoed=False, n_held_out=n_held,
            sides=(sided, sided_reference),
        )  # fmt: skip
    return GuardReport(
        n_held_out=n_held,
        violated=violated,
        violated_reference=violated_reference,
        fallback=not (keeps_constrained(won, lost) and sided > sided_reference),
        won=won,
        lost=lost,
        sided=sided,
        sided_reference=sided_reference,
    )


def _veto(labels, reference_labels, constraints, violated_all, violated_ref) -> GuardReport | None:
    """The guard's two vetoes, which need no refit, on violations already counted: a
    report with ``fallback`` (and ``vetoed``) set when ``labels`` is degenerate where
    ``reference_labels`` is not (:func:`degenerate_against`) or violates more of the given
    pairs; ``None`` when neither applies."""
    if degenerate_against(labels, reference_labels, constraints):
        return _given_pairs_report(violated_all, violated_ref, vetoed=True, degenerate=True)
    if violated_all.sum() > violated_ref.sum():
        return _given_pairs_report(violated_all, violated_ref, vetoed=True)
    return None


def degenerate_against(
    labels: np.ndarray, reference_labels: np.ndarray, constraints: Constraints
) -> bool:
    """Whether ``labels`` is degenerate where ``reference_labels`` is not: fewer clusters,
    or a cluster under :func:`~spectralink.metrics.min_cluster_size` points that no
    cannot-link asks for (:func:`~spectralink.metrics.unrequested_small_clusters`) when the
    reference has none."""
    labels, reference_labels = np.asarray(labels), np.asarray(reference_labels)
    if len(np.unique(labels)) < len(np.unique(reference_labels)):
        return True
    min_size = min_cluster_size(len(labels))
    return bool(unrequested_small_clusters(labels, constraints, min_size)) and not (
        unrequested_small_clusters(reference_labels, constraints, min_size)
    )


def held_out_can_decide(n_discordant: int, margin: float = GUARD_MARGIN) -> bool:
    """Whether ``n_discordant`` held-out pairs (those exactly one partition gets right) can
    keep the constrained partition under :func:`keeps_constrained`: the largest lead,
    all of them won, must pass ``margin * sqrt(n_discordant)``, i.e.
    ``n_discordant > margin ** 2``."""
    return keeps_constrained(int(n_discordant), 0, margin)


def _given_pairs_report(
    violated: np.ndarray,
    violated_ref: np.ndarray,
    vetoed: bool,
    n_held_out: int = 0,
    degenerate: bool = False,
    sides: tuple[int, int] = (0, 0),
) -> GuardReport:
    """The report when the given pairs judge: a veto, too few points to hold any out, or
    held-out pairs that cannot decide (``n_held_out`` > 0). With held-out pairs that cannot
    decide, the given pairs must pass the guard's margin; with none held out (fewer
    constrained points than folds: a pair or two, all the user gave) the partition must
    violate strictly fewer of them, as no lead on so few could pass a margin. Where the
    method was refitted (held-out pairs that cannot decide), the refits must also stand
    behind the partition returned: ``sides`` is ``(sided, sided_reference)``
    (:func:`refit_sides`, summed), and the partition is kept only when the first is larger.
    """
    won, lost = int((~violated & violated_ref).sum()), int((violated & ~violated_ref).sum())
    margin = GUARD_MARGIN if n_held_out > 0 else 0.0
    sided, sided_reference = sides
    disowned = n_held_out > 0 and not sided > sided_reference
    return GuardReport(
        n_held_out=n_held_out,
        violated=int(violated.sum()),
        violated_reference=int(violated_ref.sum()),
        fallback=vetoed or disowned or not keeps_constrained(won, lost, margin=margin),
        won=won,
        lost=lost,
        vetoed=vetoed,
        undecided=n_held_out > 0,
        degenerate=degenerate,
        sided=sided,
        sided_reference=sided_reference,
    )
