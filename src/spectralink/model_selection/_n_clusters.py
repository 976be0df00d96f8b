"""How many clusters: k read from held-out pairs, with the eigengap where they say little.

Too few clusters break cannot-links, too many break must-links. For every k of a range,
CCSKL (Li, Liu & Tang 2009; the cheapest constrained method whose every fit reuses one
eigendecomposition) is fitted on each fold's training pairs, and the held-out pairs of all
the folds are pooled: Cohen's kappa between "must-link" and "put together", over them all,
estimates the adjusted Rand index of the k-cluster partition with the classes behind the
pairs (Warrens 2008), and a paired bootstrap over the pairs gives each k's standard error
against the best. Pooling, rather than averaging the folds' kappas, keeps the few held-out
must-links of a fold from making its kappa a coin toss. The eigenvectors of one graph serve
every k and fold: the largest k's are computed once.

Among the k within ``n_se`` standard errors of the best, the tie rule keeps one: by
default (``tie_break="auto"``) the k after which the normalized Laplacian's spectrum jumps
(von Luxburg 2007, section 8.3) when that jump is clear -- the range's largest eigengap at
least :data:`CLEAR_GAP_RATIO` times every other -- and the smallest tied k otherwise.
A clear jump is the graph's own say on k, where few must-links leave many k tied; without
one, the smallest tied k errs least on the sets measured. ``tie_break="smallest"`` and
``"eigengap"`` (the largest gap among the tied k, clear or not) are the two rules alone.
Without both kinds of pairs, the eigengap decides alone.

References
----------
Li, Z., Liu, J., & Tang, X. (2009). Constrained clustering via spectral regularization.
CVPR.
von Luxburg, U. (2007). A tutorial on spectral clustering. Statistics and Computing 17(4).
Warrens, M. J. (2008). On the equivalence of Cohen's kappa and the Hubert-Arabie adjusted
Rand index. Journal of Classification 25(2).
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ..constraints import Constraints, UnfoldableConstraintsError, constraint_folds
from ..graph import knn_affinity
from ..registry import get_method
from ..spectral import laplacian_eigenvectors
from ._scores import pair_kappa

__all__ = [
    "CLEAR_GAP_RATIO",
    "K_MAX_CAP",
    "KScan",
    "N_BOOTSTRAP",
    "check_k_range",
    "choose_n_clusters",
    "clear_eigengap_k",
    "default_k_range",
    "eigengap_n_clusters",
    "eigengaps",
    "scan_n_clusters",
]

#: Largest k of the default range, whatever n (each k is a k-means on k eigenvectors).
K_MAX_CAP = 30

#: ``tie_break="auto"`` follows the eigengap when the range's largest gap is at least this
#: many times its second largest: one jump that stands out, not the largest of many alike
CLEAR_GAP_RATIO = 2.0

TIE_BREAKS = ("auto", "smallest", "eigengap")


def default_k_range(n_samples: int) -> tuple[int, int]:
    """``(2, k_max)``: k_max grows as ``sqrt(n / 2)``, at least 10 and at most
    :data:`K_MAX_CAP` (and below ``n_samples``).

    Parameters
    ----------
    n_samples : int

    Returns
    -------
    tuple of int
    """
    k_max = int(np.clip(round(np.sqrt(n_samples / 2.0)), 10, K_MAX_CAP))
    return 2, max(2, min(k_max, n_samples - 1))


def check_k_range(n_clusters: tuple | None, n_samples: int) -> tuple[int, int]:
    """``(k_min, k_max)`` from ``None`` (:func:`default_k_range`) or a pair of ints,
    checked: ``2 <= k_min <= k_max < n_samples``.

    Parameters
    ----------
    n_clusters : None or (int, int)
    n_samples : int

    Returns
    -------
    tuple of int
    """
    if n_clusters is None:
        return default_k_range(n_samples)
    if (
        not isinstance(n_clusters, tuple | list)
        or len(n_clusters) != 2
        or not all(isinstance(k, numbers.Integral) for k in n_clusters)
    ):
        raise ValueError(
            f"n_clusters must be an int, None or a (k_min, k_max) pair of ints, got {n_clusters!r}."
        )
    lo, hi = (int(k) for k in n_clusters)
    if not 2 <= lo <= hi < n_samples:
        raise ValueError(
            f"n_clusters range {tuple(n_clusters)!r} must satisfy 2 <= k_min <= k_max < "
            f"n_samples = {n_samples}."
        )
    return lo, hi


def choose_n_clusters(
    X,
    constraints: Constraints,
    k_range: tuple[int, int],
    *,
    precomputed: bool = False,
    cv: int = 5,
    tie_break: str = "auto",
    random_state: int | np.random.RandomState | None = None,
) -> KScan:
    """:func:`scan_n_clusters` on the default graph of features ``X`` (20-NN Gaussian,
    sigma = r: CCSKL's and NCut's), or on ``X`` itself when ``precomputed``; pairs too few
    to fold leave the choice to the eigengap.

    Parameters
    ----------
    X : ndarray of shape (n, n_features), or sparse (n, n) affinity when ``precomputed``
    constraints : Constraints
    k_range : (int, int)
    precomputed : bool, default=False
    cv : int, default=5
    tie_break : {"auto", "smallest", "eigengap"}, default="auto"
        As in :func:`scan_n_clusters`.
    random_state : int, RandomState or None, default=None

    Returns
    -------
    KScan
    """
    W = X if precomputed else knn_affinity(X, random_state=random_state)
    options = {"cv": cv, "tie_break": tie_break, "random_state": random_state}
    try:
        return scan_n_clusters(W, constraints, k_range, **options)
    except UnfoldableConstraintsError:
        return scan_n_clusters(W, Constraints(n_samples=W.shape[0]), k_range, **options)


def eigengap_n_clusters(eigenvalues: np.ndarray, k_range: tuple[int, int]) -> int:
    """The k of ``k_range`` with the largest gap ``lambda_{k+1} - lambda_k`` between
    ascending normalized-Laplacian eigenvalues (von Luxburg 2007, section 8.3).

    Parameters
    ----------
    eigenvalues : ndarray of shape (m,)
        Ascending; ``m >= k_range[1] + 1``.
    k_range : (int, int)
        Smallest and largest k, inclusive.

    Returns
    -------
    int
    """
    lo, hi = k_range
    gaps = eigengaps(eigenvalues, k_range)
    return lo + int(np.argmax(gaps)) if hi >= lo else lo


def eigengaps(eigenvalues: np.ndarray, k_range: tuple[int, int]) -> np.ndarray:
    """``lambda_{k+1} - lambda_k`` for every k of ``k_range`` (eigenvalues ascending,
    1-based: ``lambda_1`` is the smallest)."""
    lo, hi = k_range
    lam = np.asarray(eigenvalues, dtype=np.float64)
    ks = np.arange(lo, hi + 1)
    return lam[ks] - lam[ks - 1]


@dataclass
class KScan:
    """What :func:`scan_n_clusters` measured, per k of the range.

    Attributes
    ----------
    n_clusters : int
        The k chosen.
    rule : {"pairs", "eigengap"}
        ``"pairs"``: by the held-out pairs (and the tie rule among the k they could not
        separate from the best); ``"eigengap"``: no pairs (or only one kind) to score with.
    ks : ndarray of int
        The k scanned, ascending.
    scores : ndarray of float
        Pooled held-out kappa at each k (nan without pairs).
    std_errors : ndarray of float
        Bootstrap standard error of each k's paired kappa difference to the best k (0 at
        the best).
    eigengaps : ndarray of float
        ``lambda_{k+1} - lambda_k`` at each k.
    tied : ndarray of bool
        The k within ``n_se`` standard errors of the best (the tie rule chose among them).
    tie_rule : {"smallest", "eigengap"}
        Which rule chose among the tied k (``"eigengap"`` also when the eigengap alone
        decided).
    """

    n_clusters: int
    rule: str
    ks: np.ndarray
    scores: np.ndarray
    std_errors: np.ndarray
    eigengaps: np.ndarray
    tied: np.ndarray
    tie_rule: str = "smallest"

    def k_by(self, tie_break: str) -> int:
        """The k that ``tie_break`` (as in :func:`scan_n_clusters`) keeps among this scan's
        tied k: the other tie rules replayed on the same scores, without refitting.

        Parameters
        ----------
        tie_break : {"auto", "smallest", "eigengap"}

        Returns
        -------
        int
        """
        _check_tie_break(tie_break)
        if self.rule == "eigengap":
            return self.n_clusters
        return int(self.ks[_break_tie(np.asarray(self.tied), self.eigengaps, tie_break)[0]])

    def score_of(self, k: int) -> float:
        """The score at ``k``."""
        return float(self.scores[np.flatnonzero(self.ks == k)[0]])

    def scores_by_k(self) -> dict[int, float]:
        """``{k: score}``."""
        return dict(zip(self.ks.tolist(), self.scores.tolist(), strict=True))

    def describe(self) -> str:
        """One phrase: the k chosen, of which range, by what and how clearly; when a k other
        than the best-scoring one is kept, why (the scores were within one standard error,
        and which tie rule chose)."""
        lo, hi = int(self.ks[0]), int(self.ks[-1])
        if self.rule == "eigengap":
            return f"k={self.n_clusters} (of {lo}-{hi}, by the eigengap: no pairs of both kinds)"
        chosen = self.score_of(self.n_clusters)
        best = int(self.ks[np.argmax(self.scores)])
        ties = int(self.tied.sum()) - 1
        if best == self.n_clusters:
            close = f"; {ties} other k within one standard error of it" if ties else ""
            return (
                f"k={self.n_clusters} (of {lo}-{hi}): the best held-out kappa, {chosen:.3f}{close}"
            )
        se = float(self.std_errors[np.flatnonzero(self.ks == self.n_clusters)[0]])
        why = (
            "the eigengap chose among them"
            if self.tie_rule == "eigengap"
            else "the smallest of them is kept"
        )
        return (
            f"k={self.n_clusters} (of {lo}-{hi}): held-out kappa {chosen:.3f}, within one "
            f"standard error ({se:.3f}) of the best, {self.score_of(best):.3f} at k={best}; "
            f"{ties + 1} k are that close and {why}"
        )


def _bootstrap_kappas(together: np.ndarray, must: np.ndarray, n_boot: int, rng) -> np.ndarray:
    """Kappa of every row of ``together`` (k x pairs) on ``n_boot`` resamples of the
    pairs (the same resample for every k, so differences are paired): (n_boot, k)."""
    n = together.shape[1]
    out = np.empty((n_boot, together.shape[0]))
    for b in range(n_boot):
        idx = rng.randint(0, n, n)
        t, m = together[:, idx], must[idx]
        agree = (t == m[None, :]).mean(axis=1)
        p_t, p_m = t.mean(axis=1), m.mean()
        chance = p_t * p_m + (1 - p_t) * (1 - p_m)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[b] = np.where(chance < 1.0, (agree - chance) / (1.0 - chance), 0.0)
    return out


#: Bootstrap resamples of the pooled held-out pairs behind each k's standard error.
N_BOOTSTRAP = 200


def scan_n_clusters(
    W: sp.spmatrix,
    constraints: Constraints,
    k_range: tuple[int, int],
    *,
    cv: int = 5,
    n_se: float = 1.0,
    tie_break: str = "auto",
    n_components: int = 20,
    random_state: int | np.random.RandomState | None = None,
) -> KScan:
    """Choose k by CCSKL's pooled held-out kappa over folds of the pairs.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        The graph (CCSKL's and NCut's default: a 20-NN Gaussian graph, or the user's
        affinity).
    constraints : Constraints
        All the pairs.
    k_range : (int, int)
        Smallest and largest k, inclusive (``2 <= lo <= hi < n``).
    cv : int, default=5
        Folds of the pairs (:func:`~spectralink.model_selection.constraint_folds`).
    n_se : float, default=1.0
        A k whose kappa is within ``n_se`` bootstrap standard errors of the paired
        difference to the best is tied with it.
    tie_break : {"auto", "smallest", "eigengap"}, default="auto"
        Among the tied k: ``"smallest"``, the smallest; ``"eigengap"``, the one with the
        largest eigengap; ``"auto"``, the k of the range's largest eigengap when it is tied
        and clear (:func:`clear_eigengap_k`), else the smallest.
    n_components : int, default=20
        Eigenvectors CCSKL adapts at k up to it (CCSKL's default); at larger k, k of them.
    random_state : int, RandomState or None, default=None
        Seeds the folds, the eigensolver, every fit and the bootstrap.

    Returns
    -------
    KScan
        ``scores`` are the pooled kappas, ``rule`` is ``"pairs"`` or ``"eigengap"``.
    """
    lo, hi = int(k_range[0]), int(k_range[1])
    n = W.shape[0]
    if not 2 <= lo <= hi < n:
        raise ValueError(f"k range ({lo}, {hi}) must satisfy 2 <= min <= max < n_samples = {n}.")
    _check_tie_break(tie_break)
    rng = check_random_state(random_state)
    seed = int(rng.randint(2**31 - 1))
    m = min(max(hi + 1, n_components), n)
    # connectivity is the fitted method's to report, at the k it is given
    vals, V = laplacian_eigenvectors(W, m, random_state=seed, check_connected=False)
    ks = np.arange(lo, hi + 1)
    gaps = eigengaps(vals, (lo, hi))
    if constraints.n_must_link == 0 or constraints.n_cannot_link == 0:
        # one kind alone always prefers an extreme k: the spectrum decides
        k = lo + int(np.argmax(gaps))
        nan = np.full(len(ks), np.nan)
        return KScan(k, "eigengap", ks, nan, nan, gaps, ks == k, "eigengap")
    ccskl = get_method("ccskl")
    pairs = constraints.pairs
    must = np.arange(len(constraints)) < constraints.n_must_link
    tested, together = [], [[] for _ in ks]
    for train, test in constraint_folds(constraints, cv, random_state=seed):
        fold = constraints.take(train)
        tested.append(test)
        for i, k in enumerate(ks):
            est = ccskl(int(k), n_components=max(n_components, int(k)), random_state=seed)
            with warnings.catch_warnings():
                # a degenerate partition at a wrong k is what the scan measures, not news
                warnings.simplefilter("ignore")
                fitted = est.set_params(guard=None).fit_embedding(V[:, : est.n_components], fold)
            labels = fitted.labels_
            together[i].append(labels[pairs[test, 0]] == labels[pairs[test, 1]])
    tested = np.concatenate(tested)
    together = np.array([np.concatenate(t) for t in together])
    kind = must[tested]
    scores = np.array([pair_kappa(t, kind) for t in together])
    best = int(np.argmax(scores))
    boot = _bootstrap_kappas(together, kind, N_BOOTSTRAP, rng)
    se = (boot - boot[:, [best]]).std(axis=0, ddof=1)
    tied = scores >= scores[best] - n_se * se
    tied[best] = True
    choice, rule = _break_tie(tied, gaps, tie_break)
    return KScan(int(ks[choice]), "pairs", ks, scores, se, gaps, tied, rule)


def clear_eigengap_k(gaps: np.ndarray, ratio: float = CLEAR_GAP_RATIO) -> int | None:
    """Index of the largest of ``gaps`` when it is at least ``ratio`` times every other
    (the spectrum has one clear jump), else None.

    Parameters
    ----------
    gaps : ndarray of shape (n_k,)
        Eigengaps over a range of k (:func:`eigengaps`).
    ratio : float, default=CLEAR_GAP_RATIO

    Returns
    -------
    int or None
    """
    gaps = np.asarray(gaps, dtype=np.float64)
    if len(gaps) < 2:
        return None
    top, second = np.sort(gaps)[::-1][:2]
    return int(np.argmax(gaps)) if top > 0 and top >= ratio * second else None


def _check_tie_break(tie_break: str) -> None:
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break must be 'auto', 'smallest' or 'eigengap', got {tie_break!r}.")


def _break_tie(tied: np.ndarray, gaps: np.ndarray, tie_break: str) -> tuple[int, str]:
    """The index chosen among the tied k, and the rule that chose it."""
    candidates = np.flatnonzero(tied)
    if tie_break == "eigengap":
        return int(candidates[np.argmax(gaps[tied])]), "eigengap"
    if tie_break == "auto":
        clear = clear_eigengap_k(gaps)
        if clear is not None and tied[clear]:
            return clear, "eigengap"
    return int(candidates[0]), "smallest"
