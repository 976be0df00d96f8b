"""COSC: constrained 1-spectral clustering.

Rangapuram, S. S., & Hein, M. (2012). Constrained 1-spectral clustering. AISTATS.

Implemented here (equation numbers of the paper; the solvers are in
:mod:`spectralink.solvers.lovasz` and :mod:`spectralink.solvers.ratio_dca`, the search
engines in :mod:`spectralink.solvers.cosc_binary` and :mod:`spectralink.solvers.cosc_kway`;
this module is the estimator over them):

* must-link merging into a reduced graph with vertex weights (Section 2.2, Lemma 2.3), and
  for two clusters the derived must-links from 2-colouring the cannot-link graph;
* the penalised ratio ``F_gamma`` (eq. 1) and its tight relaxation (Theorems 2.2-2.3),
  minimised by RatioDCA (Algorithm 1) with the inner problem solved by FISTA (Lemmas 3.1-3.2);
* hard mode (gamma raised from 0 until no constraint is violated, then bisection), soft
  mode (a number of allowed violations, or a fixed gamma), and the guaranteed mode of
  Theorem 3.1 (start from a consistent partition with gamma above gvol(V) NCut / 4);
* k-way clustering by recursive soft-constrained bi-partitioning with the
  expected-violations rule (Section 5, eq. 6).

Speed (not from the paper): RatioDCA solves its inner problems only to a sufficient
decrease of the ratio and stops at a relative criticality tolerance (``crit_tol``), on
large graphs the gamma continuation drops starts that reached the same partition as a
better start, and the starts of one gamma value can run in threads (``n_jobs``). Quality
(not from the paper): the lowest-cut consistent splits found along the gamma path are
polished by a local search whose moves keep every cannot-link separated (``search``).
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from scipy.sparse.csgraph import connected_components
from sklearn.utils import check_random_state

from ..graph import DisconnectedGraphWarning, positive_degrees
from ..metrics import normalized_cut
from ..parallel import limit_threads, resolve_n_jobs
from ..solvers.constraint_graph import merge_vertices, reduce_cannot_links
from ..solvers.cosc_binary import COSCSettings, solve_binary
from ..solvers.cosc_kway import KwaySearch
from ..utils import NON_NEGATIVE, POSITIVE, Int, Options, RealRange, StrOptions
from ._base import COMMON_CONSTRAINTS, GUARD_CONSTRAINT, with_guard_doc
from ._graph import ConstrainedClusteringMixin

__all__ = ["COSC"]


# --------------------------------------------------------------------------- estimator
class COSC(ConstrainedClusteringMixin):
    """Constrained 1-spectral clustering (COSC).

    Minimises the normalized cut under must-link and cannot-link constraints through a
    tight continuous relaxation (RatioDCA on the penalised ratio ``F_gamma``). For two
    clusters the default hard mode satisfies every constraint whenever the constraints
    are consistent; more clusters use recursive soft-constrained bi-partitioning.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters k.
    mode : {"hard", "soft", "guaranteed"}, default="hard"
        Two-cluster problem. ``"hard"``: gamma = 0, 0.2, 0.4, ... until the best start
        violates no constraint, then bisection to 1 %, every start warm-started from its
        previous solution; the lowest cut among the consistent splits found, after the
        local search of ``search``, is kept. Every start continues along the schedule (as
        in the authors' code) when the reduced graph has at most ``2000`` vertices; on
        larger graphs, starts that reached the same partition as a better start do not
        (on USPS 0-vs-rest continuing them all tripled the time for a 0.25 % lower cut).
        ``"soft"``: at most ``max_violations`` violated cannot-links (same schedule), or a
        single run at ``gamma`` when given. ``"guaranteed"``: one run from a consistent
        partition obtained by 2-colouring, with gamma just above ``gvol(V) NCut / 4``
        (Theorem 3.1): the result is consistent and its cut no larger.
    search : {"standard", "thorough"}, default="standard"
        How hard the two-cluster problem (and, through its starts, each k-way split) is
        searched. ``"standard"``: ``n_starts`` starts; on a reduced graph of up to 2000
        vertices every consistent split found along the gamma path is polished by local
        search with Fiduccia-Mattheyses passes (20 moves of patience), on larger graphs
        the 10 lowest-cut ones by best-improvement moves (hard mode; a move changes the
        side of one point outside the cannot-links or swaps both ends of a cannot-link, so
        every cannot-link stays separated). ``"thorough"``: 3x ``n_starts`` (30 when
        None), 2x ``n_split_starts``, at least 10 perturbed restarts after every run
        (``n_perturbations``), every start continued at any size, and every consistent
        split found polished with Fiduccia-Mattheyses passes. On sonar, breast cancer and
        diabetes (70 runs, ``benchmarks/bench_cosc_search.py``) ``"standard"`` ended with
        a higher cut than ``"thorough"`` in 22 (0.49 % higher on average, at most 4.6 %),
        equal in 42 and lower in 6, at about 1/10 of its time; ``"thorough"`` itself, run
        with other seeds, ended higher than its first runs in 9 of the 70.
    gamma : float, default=None
        Soft mode: fixed penalty per violated cannot-link.
    max_violations : int, default=0
        Soft mode: allowed violated cannot-links (after merging).
    n_starts : int or None, default=None
        Two clusters: starts (second eigenvector of the reduced graph, the SCLC
        linear-constraint solution, then random vectors). None: 30 when the reduced graph
        has at most 2000 vertices, 10 on larger graphs (about 3x the time of 10 starts on
        small graphs, where a fit takes about a second; USPS 0-vs-rest keeps 10).
    affinity : {"adaptive_knn", "knn", "precomputed"}, default="adaptive_knn"
        ``"adaptive_knn"``: :func:`spectralink.graph.adaptive_knn_affinity`, the paper's graph;
        ``"knn"``: the Gaussian k-NN graph of the library; ``"precomputed"``: ``X`` is the
        affinity.
    n_neighbors : int, default=10
        Neighbours of the k-NN graph.
    sigma : float, default=None
        Bandwidth of ``affinity="knn"`` only.
    split_rule : {"reference", "min_cut"}, default="reference"
        k-way: which cluster to split. ``"min_cut"`` is the paper's rule (the split that
        minimises the normalized multi-cut) and reproduces the paper; ``"reference"`` is
        the heuristic of the authors' code, which favours splits separating many
        cannot-links. The paper's rule happily splits an already separated cluster again
        when that is cheaper than separating cannot-linked points (iris, 50 random pairs:
        setosa cut in two, error 0.47 in one draw of five); measured with 50-800 random
        pairs (``benchmarks/bench_defaults.py``, 5 draws), ``"reference"`` had a lower or
        equal mean error at every count on iris, wine, blobs and standardised
        segmentation (e.g. 0.35 against 0.52 at 200 pairs) and at four of five counts on
        digits.
    n_split_starts : int, default=2
        k-way: starts per split (second eigenvector + random).
    n_recursions : int, default=4
        k-way: full recursive runs; the lowest final multi-cut is kept. A run stops as
        soon as its multi-cut plus the smallest candidate split's increase reaches the
        best finished run's (a split never lowers the multi-cut). Measured with 5 draws
        on digits (400 pairs) and standardised segmentation, wine and iris (100-400
        pairs): 4 runs instead of 5 took 17-21 % less time (digits 3.37 -> 2.80 s CPU)
        and gave the same multi-cut in 18 of 20 draws, +14 % and +11 % in the other two
        (digits and segmentation; mean multi-cut +2.4 % and +2.1 %).
    max_gamma_runs : int, default=5
        k-way: gamma values per split (0, +0.1, increment doubling when the cut stalls).
    max_outer : int, default=1000
        Cap on RatioDCA steps per run.
    max_inner : int, default=2000
        Cap on the inner FISTA budget (100 iterations, doubled after a non-descent step).
        The authors' code uses 10000; a run ends with non-descent steps at growing budgets,
        and 2000 measured 1.8x faster on Sonar with cuts as low.
    tol : float, default=1e-6
        RatioDCA relative decrease that stops the descent.
    crit_tol : float, default=1e-2
        RatioDCA also stops when the inner dual certifies that the linearised objective
        cannot decrease by more than ``crit_tol`` relative to its size (the iterate is
        critical to that tolerance; the exact criterion is an inner optimum of 0). Each
        RatioDCA step stops its FISTA loop once the ratio decreased by 30 %, else at the
        inner budget. ``0`` proves criticality to the inner budget: on USPS 0-vs-rest
        ``1e-2`` needed 2.5x fewer FISTA iterations than ``3e-3``, for the same cut.
    n_perturbations : int, default=0
        Two clusters: after every RatioDCA run, up to this many restarts from the solution
        plus Gaussian noise of scale ``p * range(f)``, ``p = 0.001, 0.011, 0.021, ...``; a
        restart is kept when its thresholded ``F_gamma`` is lower, and the loop stops after
        5 that are not. The authors' code does this (10 tries) by default; here it is off
        by default because it multiplies the number of RatioDCA runs (see the COSC results
        README for its measured effect).
    inner_step : {"uniform", "per_edge"}, default="uniform"
        FISTA step of RatioDCA's inner problem. ``"uniform"``: every edge takes the step
        of the worst one, ``1 / max (deg_i + deg_j)``. ``"per_edge"``: edge ``(i, j)`` takes
        ``1 / (deg_i + deg_j)`` (a diagonal preconditioner, as safe; unweighted degrees),
        1.2-3.6x fewer FISTA iterations for the same inner duality gap and 1.1-1.6x faster
        fits (MNIST 70k 10-way, three draws: 79-162 s against 128-197 s on 2 cores; USPS
        0-vs-rest 3.8 s against 4.7 s). Each run then follows another path and may end in
        another local optimum: over many draws the cuts and errors move both ways (lower
        on digits and segmentation, higher on wine, where even rounding-level changes move
        the k-way result; ``docs/results/cosc/timing.md``), which is why it is not the
        default yet.
    n_jobs : int, default=None
        Threads running the starts of a gamma value and the candidate splits of a k-way
        level in parallel (``None``: the library's thread count,
        :func:`spectralink.set_config` or ``SPECTRALINK_NUM_THREADS``; ``-1``: all
        processors). The result does not depend on it: the random starts are seeded before
        the threads start, and BLAS runs on one thread inside the fit.
    random_state : int, RandomState or None
        Seeds the random starts of RatioDCA.
    <guard>

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    cut_ : float
        Normalized (multi-)cut ``sum_l cut(C_l, V\\C_l) / vol(C_l)`` on ``affinity_matrix_``.
    n_violated_ : int
        Number of the given constraints the labels violate.
    continuous_ : ndarray of shape (n_samples,) or None
        Two clusters: the RatioDCA solution lifted to the points (labels are a level set),
        or the indicator of the labels when the local search changed the split.
    gamma_ : float or None
        Two clusters: the penalty of the returned solution.
    clusterings_ : list of ndarray
        k-way: the labelings with 2, ..., k clusters of the kept recursion.
    affinity_matrix_ : sparse matrix of shape (n_samples, n_samples)

    Notes
    -----
    ``predict`` gives a new point the weighted vote of its ``n_neighbors`` nearest
    training points' labels, weighted by the fitted graph's weights (for
    ``"adaptive_knn"``: ``max(s_x(j), s_j(x))`` with the new point's own scale and the
    fitted ``sigma_j``, :func:`spectralink.graph.adaptive_knn_cross_affinity`). The
    partition is a level set of a non-linear RatioDCA solution (recursively, for k > 2),
    not a linear eigen-embedding, so there is nothing for a Nyström extension to reach.
    With a feature affinity the model keeps a reference to the training features (n x
    n_features floats, also pickled); with ``"precomputed"`` ``predict`` takes
    affinities of shape (n_new, n_train).

    References
    ----------
    Rangapuram, S. S., & Hein, M. (2012). Constrained 1-spectral clustering. AISTATS.
    Hein, M., & Setzer, S. (2011). Beyond spectral clustering: tight relaxations of balanced
    graph cuts. NIPS.
    Bühler, T., & Hein, M. (2009). Spectral clustering based on the graph p-Laplacian. ICML.
    """

    _scale = "sparse graph; the k-way recursion refits per split (costly for large n, k)"
    _parameter_constraints = {
        "guard": GUARD_CONSTRAINT,
        **{k: v for k, v in COMMON_CONSTRAINTS.items() if k != "n_init"},
        "mode": [StrOptions({"hard", "soft", "guaranteed"})],
        "search": [StrOptions({"standard", "thorough"})],
        "gamma": [NON_NEGATIVE, None],
        "max_violations": [Int(0)],
        "n_starts": [Int(1), None],
        "affinity": [StrOptions({"adaptive_knn", "knn", "precomputed"})],
        "split_rule": [StrOptions({"reference", "min_cut"})],
        "n_split_starts": [Int(1)],
        "n_recursions": [Int(1)],
        "max_gamma_runs": [Int(1)],
        "max_outer": [Int(1)],
        "max_inner": [Int(1)],
        "tol": [POSITIVE],
        "crit_tol": [RealRange(0, 1, closed="left")],
        "n_perturbations": [Int(0)],
        "inner_step": [StrOptions({"uniform", "per_edge"})],
        "n_jobs": [Int(1), Options(Integral, {-1}), None],
    }

    def __init__(
        self,
        n_clusters: int = 2,
        *,
        mode: str = "hard",
        search: str = "standard",
        gamma: float | None = None,
        max_violations: int = 0,
        n_starts: int | None = None,
        affinity: str = "adaptive_knn",
        n_neighbors: int = 10,
        sigma: float | None = None,
        split_rule: str = "reference",
        n_split_starts: int = 2,
        n_recursions: int = 4,
        max_gamma_runs: int = 5,
        max_outer: int = 1000,
        max_inner: int = 2000,
        tol: float = 1e-6,
        crit_tol: float = 1e-2,
        n_perturbations: int = 0,
        inner_step: str = "uniform",
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        guard: str | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.mode = mode
        self.search = search
        self.gamma = gamma
        self.max_violations = max_violations
        self.n_starts = n_starts
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.split_rule = split_rule
        self.n_split_starts = n_split_starts
        self.n_recursions = n_recursions
        self.max_gamma_runs = max_gamma_runs
        self.max_outer = max_outer
        self.max_inner = max_inner
        self.tol = tol
        self.crit_tol = crit_tol
        self.n_perturbations = n_perturbations
        self.inner_step = inner_step
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.guard = guard

    def _feature_affinities(self) -> set:
        return {"adaptive_knn", "knn"}

    def _settings(self) -> COSCSettings:
        """The parameters the search engines read (``n_jobs`` resolved to a thread count)."""
        return COSCSettings(
            mode=self.mode,
            gamma=self.gamma,
            max_violations=self.max_violations,
            search=self.search,
            n_starts=self.n_starts,
            split_rule=self.split_rule,
            n_split_starts=self.n_split_starts,
            n_recursions=self.n_recursions,
            max_gamma_runs=self.max_gamma_runs,
            max_outer=self.max_outer,
            max_inner=self.max_inner,
            tol=self.tol,
            crit_tol=self.crit_tol,
            n_perturbations=self.n_perturbations,
            inner_step=self.inner_step,
            n_jobs=resolve_n_jobs(self.n_jobs),
        )

    def _fit(self, X, constraints):
        W = self._affinity(X)
        # BLAS on one thread: COSC's dense steps are small (parallel BLAS there mostly
        # waits, e.g. digits 10-way 3.2 s wall / 5.4 s CPU on 2 threads against 2.7 s on
        # one), and the result then does not depend on the machine's thread count; the
        # parallelism is the threads of the starts and splits (n_jobs)
        with limit_threads(0.0):
            self._fit_graph(W, constraints)

    def _fit_graph(self, W, constraints):
        d = positive_degrees(W, "COSC")
        rng = check_random_state(self.random_state)
        n = W.shape[0]
        # explicit must-links: merge once (Section 2.2)
        Wr, gr, mapping = merge_vertices(W, d, constraints.ml_components)
        clr = reduce_cannot_links(constraints.cannot_link, constraints.cl_weights, mapping)
        if Wr.shape[0] < self.n_clusters:
            raise ValueError(
                f"the must-links leave {Wr.shape[0]} groups of points, fewer than "
                f"n_clusters={self.n_clusters}."
            )
        self.affinity_matrix_ = W
        self.continuous_ = None
        self.gamma_ = None
        if self.n_clusters == 2:
            labels_r, f_r, gamma = self._fit_binary(Wr, gr, clr, rng)
            lab = labels_r[mapping]
            self.continuous_ = f_r[mapping]
            self.gamma_ = gamma
            self.clusterings_ = [lab]
        else:
            sizes = np.bincount(mapping, minlength=Wr.shape[0]).astype(float)
            ctx = KwaySearch(Wr, gr, clr, sizes, n, self.n_clusters, self._settings(), rng)
            labels_r, history = ctx.fit()
            lab = labels_r[mapping]
            self.clusterings_ = [h[mapping] for h in history]
        self.labels_ = lab
        self.cut_ = normalized_cut(W, lab)

    def _fit_binary(self, Wr, gr, clr, rng):
        n_cc, _ = connected_components(Wr, directed=False)
        if n_cc > 1:
            warnings.warn(
                f"the (must-link reduced) graph has {n_cc} connected components: zero-cut "
                "bipartitions exist and COSC returns one of them when the constraints allow.",
                DisconnectedGraphWarning,
                stacklevel=4,
            )
        return solve_binary(Wr, gr, clr, self._settings(), rng)


COSC.__doc__ = with_guard_doc(COSC.__doc__, "NCut at its defaults")
