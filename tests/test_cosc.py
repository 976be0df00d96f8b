"""COSC estimator: merging, consistency checks, Theorem 3.1, hard mode, k-way."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs

from spectralink import COSC as _COSC
from spectralink import Constraints
from spectralink.graph import adaptive_knn_affinity, degrees
from spectralink.metrics import clustering_error, majority_vote_error, normalized_cut
from spectralink.solvers.constraint_graph import (
    consistent_partition,
    merge_vertices,
    reduce_cannot_links,
    two_colouring,
)
from spectralink.solvers.cosc_binary import BinarySolver, distinct_states
from spectralink.solvers.lovasz import penalised_ratio


def COSC(*args, **kwargs):  # noqa: N802 - stands in for the class
    """The paper's method without the held-out guard: these tests check COSC's engine (the
    guard has its own tests)."""
    kwargs.setdefault("guard", None)
    return _COSC(*args, **kwargs)


def random_graph(n, density=0.4, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.random((n, n)) * (rng.random((n, n)) < density)
    A = np.triu(A, 1)
    A = A + A.T
    for i in range(n - 1):
        A[i, i + 1] = A[i + 1, i] = max(A[i, i + 1], 0.05)
    return sp.csr_matrix(A)


CENTERS = [[0.0, 0.0], [7.0, 0.0], [3.5, 6.0]]


def blobs(n=120, k=2, seed=0):
    X, y = make_blobs(n, centers=CENTERS[:k], cluster_std=1.5, random_state=seed)
    return X, y


# ----------------------------------------------------------------- graph
def test_adaptive_knn_affinity():
    X, _ = blobs(60)
    W = adaptive_knn_affinity(X, 10)
    assert abs(W - W.T).max() == 0
    assert W.diagonal().max() == 0
    assert W.data.max() <= 1 and W.data.min() > 0
    # every point reaches its 10 neighbours; the 10th one has weight >= exp(-4)
    assert np.all(np.diff(W.indptr) >= 10)
    assert np.sort(W.toarray(), axis=1)[:, -10].min() >= np.exp(-4) - 1e-12


# ----------------------------------------------------------------- item 4: merging
@pytest.mark.parametrize("seed", range(4))
def test_merging_preserves_ncut_of_ml_respecting_partitions(seed):
    n = 16
    W = random_graph(n, seed=seed)
    d = degrees(W)
    rng = np.random.default_rng(seed)
    ml = [(0, 5), (5, 9), (2, 3), (11, 15)]
    cons = Constraints(must_link=ml, cannot_link=[(0, 2), (9, 3), (1, 4)], n_samples=n)
    Wr, gr, mapping = merge_vertices(W, d, cons.ml_components)
    assert Wr.shape[0] == cons.n_ml_components == n - 4
    assert Wr.diagonal().max() == 0
    assert gr.sum() == pytest.approx(d.sum())
    ci, cj, _ = reduce_cannot_links(cons.cannot_link, cons.cl_weights, mapping)
    assert np.all(ci != cj)  # no cannot-link becomes a self-loop
    assert len(ci) == 2  # (0, 2) and (9, 3) join the same two groups: de-duplicated
    for _ in range(30):
        side = rng.random(Wr.shape[0]) < 0.5
        if side.all() or not side.any():
            continue
        lab = side[mapping].astype(int)
        _, ncut_r, _ = penalised_ratio(side, _edges(Wr), gr)
        assert ncut_r == pytest.approx(normalized_cut(W, lab), rel=1e-12)


def _edges(W):
    from spectralink.solvers.lovasz import edge_list

    return edge_list(W)


def test_cannot_link_inside_ml_group_is_rejected():
    mapping = np.array([0, 0, 1])
    with pytest.raises(ValueError, match="inconsistent"):
        reduce_cannot_links(np.array([[0, 1]]), np.ones(1), mapping)


def test_two_colouring_and_odd_cycle():
    colour, comp = two_colouring(6, np.array([0, 1, 3]), np.array([1, 2, 4]))
    assert colour[0] != colour[1] and colour[1] != colour[2] and colour[3] != colour[4]
    assert colour[5] == -1 and comp[0] == comp[2] != comp[3]
    with pytest.raises(ValueError, match="odd cycle"):
        two_colouring(3, np.array([0, 1, 0]), np.array([1, 2, 2]))


def test_fit_rejects_odd_cannot_link_cycle():
    X, _ = blobs(40)
    cons = Constraints(cannot_link=[(0, 1), (1, 2), (0, 2)], n_samples=40)
    with pytest.raises(ValueError, match="odd cycle"):
        COSC(2, n_starts=2, random_state=0).fit(X, constraints=cons)
    # a must-link chain closing the cycle is caught too
    cons = Constraints(must_link=[(0, 3)], cannot_link=[(0, 1), (1, 2), (2, 3)], n_samples=40)
    with pytest.raises(ValueError, match="odd cycle"):
        COSC(2, n_starts=2, random_state=0).fit(X, constraints=cons)


def test_bad_parameters():
    X, _ = blobs(30)
    with pytest.raises(ValueError, match="mode"):
        COSC(mode="strict").fit(X)
    with pytest.raises(ValueError, match="affinity"):
        COSC(affinity="rbf").fit(X)
    with pytest.raises(ValueError, match="n_starts"):
        COSC(n_starts=0).fit(X)
    with pytest.raises(ValueError, match="search"):
        COSC(search="exhaustive").fit(X)
    with pytest.raises(ValueError, match="n_jobs"):
        COSC(n_jobs=0).fit(X)
    with pytest.raises(ValueError, match="crit_tol"):
        COSC(crit_tol=1.5).fit(X)
    with pytest.raises(ValueError, match="n_perturbations"):
        COSC(n_perturbations=-1).fit(X)
    A = np.ones((4, 4))
    A[3, :] = A[:, 3] = 0
    with pytest.raises(ValueError, match="no edge"):
        COSC(affinity="precomputed").fit(A)


# ----------------------------------------------------------------- item 5: Theorem 3.1
@pytest.mark.parametrize("seed", range(4))
def test_guaranteed_mode_monotonicity(seed):
    n = 40
    W = random_graph(n, 0.15, seed)
    d = degrees(W)
    rng = np.random.default_rng(seed)
    pairs = np.array([rng.choice(n, 2, replace=False) for _ in range(6)])
    cl = reduce_cannot_links(np.sort(pairs, axis=1), np.ones(6), np.arange(n))
    # make the cannot-links a matching, as after the 2-colouring merge
    used, keep = set(), []
    for k, (a, b) in enumerate(zip(cl[0], cl[1], strict=True)):
        if a not in used and b not in used:
            keep.append(k)
            used |= {a, b}
    cl = tuple(x[keep] for x in cl)
    A = consistent_partition(rng.random(n) < 0.5, cl, d)
    solver = BinarySolver(W, d, cl, {"max_outer": 1000, "max_inner": 10000, "tol": 1e-6})
    _, ncut_a, viol_a = penalised_ratio(A, solver.edges, d, cl)
    assert viol_a == 0
    B, f, gamma = solver.guaranteed(A)
    _, ncut_b, viol_b = penalised_ratio(B, solver.edges, d, cl)
    assert gamma > d.sum() * ncut_a / 4
    assert viol_b == 0
    assert ncut_b <= ncut_a + 1e-12
    assert ncut_b < ncut_a  # a random start is never critical here


def test_distinct_states_keeps_the_best_of_each_partition():
    from spectralink.solvers.lovasz import ThresholdResult

    m1 = np.array([True, False, False])
    m2 = np.array([False, True, True])
    thrs = [
        ThresholdResult(m1, 0.5, 0.5, 0.0),
        ThresholdResult(m2, 0.3, 0.3, 0.0),
        ThresholdResult(m1.copy(), 0.2, 0.2, 0.0),
        None,
    ]
    states = ["a", "b", "c", "d"]
    vals = [t.value if t is not None else np.inf for t in thrs]
    assert distinct_states(states, thrs, vals) == ["c", "b"]
    assert distinct_states(["d"], [None], [np.inf]) == ["d"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_local_search_lowers_the_cut_and_keeps_cannot_links(seed):
    """The polish ends consistent, no higher, and at a partition no allowed move improves."""
    from spectralink.solvers.cosc_binary import local_search

    n = 16
    W = random_graph(n, 0.3, seed)
    g = degrees(W)
    ci, cj = np.array([0, 2, 4]), np.array([1, 3, 5])  # a matching, as after the merge
    cl = (ci, cj, np.ones(3))
    rng = np.random.default_rng(seed)
    start = consistent_partition(rng.random(n) < 0.5, cl, g)
    out = local_search(W, g, cl, start)
    assert np.all(out[ci] != out[cj])
    assert 0 < out.sum() < n
    ncut = normalized_cut(W, out.astype(int))
    assert ncut <= normalized_cut(W, start.astype(int)) + 1e-12
    # brute force over every single move (free vertex) and pair swap (cannot-link)
    free = np.setdiff1d(np.arange(n), np.concatenate([ci, cj]))
    moves = [[v] for v in free] + [[a, b] for a, b in zip(ci, cj, strict=True)]
    for mv in moves:
        m = out.copy()
        m[mv] = ~m[mv]
        if 0 < m.sum() < n:
            assert normalized_cut(W, m.astype(int)) >= ncut - 1e-12


def test_guaranteed_mode_estimator():
    X, y = blobs(100, seed=3)
    cons = Constraints.from_labels(y, 30, random_state=0)
    m = COSC(mode="guaranteed", random_state=0).fit(X, constraints=cons)
    assert m.n_violated_ == 0
    assert set(np.unique(m.labels_)) == {0, 1}


# ----------------------------------------------------------------- hard mode: 100 % satisfied
@pytest.mark.parametrize("seed,n_pairs", [(0, 20), (1, 60), (2, 120)])
def test_hard_mode_satisfies_all_constraints_synthetic(seed, n_pairs):
    X, y = blobs(120, seed=seed)
    rng = np.random.default_rng(seed)
    y_noisy = np.where(rng.random(120) < 0.15, 1 - y, y)  # constraints against the geometry
    cons = Constraints.from_labels(y_noisy, n_pairs, random_state=seed)
    m = COSC(n_starts=3, random_state=seed).fit(X, constraints=cons)
    assert m.n_violated_ == 0
    assert m.cut_ == pytest.approx(normalized_cut(m.affinity_matrix_, m.labels_))
    assert m.continuous_.shape == (120,)
    # the labels are a level set of the continuous solution
    t = m.continuous_[m.labels_ == 1]
    u = m.continuous_[m.labels_ == 0]
    assert t.min() > u.max() or u.min() > t.max()


@pytest.mark.parametrize("name,n_pairs", [("sonar", 80), ("breast_cancer_dedup", 60)])
def test_hard_mode_satisfies_all_constraints_real(name, n_pairs):
    from spectralink.datasets import load

    try:
        X, y = load(name)
    except Exception as exc:  # noqa: BLE001 - any missing-file error skips
        pytest.skip(f"{name} not available: {exc}")
    cons = Constraints.from_labels(y, n_pairs, random_state=0)
    m = COSC(n_starts=3, random_state=0).fit(X, constraints=cons)
    assert m.n_violated_ == 0
    assert 0 < m.labels_.sum() < len(y)


@pytest.mark.parametrize("seed", range(2))
def test_per_edge_inner_step(seed):
    """``inner_step="per_edge"`` reaches the solver, keeps hard mode consistent, k-way works."""
    X, y = blobs(120, seed=seed)
    rng = np.random.default_rng(seed)
    y_noisy = np.where(rng.random(120) < 0.15, 1 - y, y)
    cons = Constraints.from_labels(y_noisy, 40, random_state=seed)
    m = COSC(n_starts=3, inner_step="per_edge", random_state=seed).fit(X, constraints=cons)
    assert m.n_violated_ == 0
    assert 0 < m.labels_.sum() < 120
    W = m.affinity_matrix_
    g = degrees(W)
    cl = reduce_cannot_links(cons.cannot_link, cons.cl_weights, np.arange(120))
    for step, uniform in (("per_edge", False), ("uniform", True)):
        opts = COSC(inner_step=step)._settings().options(120)
        solver = BinarySolver(W, g, cl, opts, rng=np.random.RandomState(0))
        assert (solver.prob.edge_step is None) == uniform
    X3, y3 = blobs(150, k=3, seed=seed)
    cons3 = Constraints.from_labels(y3, 60, random_state=seed)
    m3 = COSC(3, inner_step="per_edge", random_state=seed).fit(X3, constraints=cons3)
    assert clustering_error(y3, m3.labels_) < 0.2


def test_unconstrained_and_must_link_only():
    X, y = blobs(100, seed=5)
    m0 = COSC(n_starts=3, random_state=0).fit(X)
    assert majority_vote_error(y, m0.labels_) < 0.1
    cons = Constraints(must_link=[(0, 1), (2, 3), (4, 5)], n_samples=100)
    m = COSC(n_starts=3, random_state=0).fit(X, constraints=cons)
    assert m.n_violated_ == 0


def test_soft_mode():
    X, y = blobs(100, seed=6)
    rng = np.random.default_rng(0)
    y_noisy = np.where(rng.random(100) < 0.2, 1 - y, y)
    cons = Constraints.from_labels(y_noisy, 60, random_state=1)
    hard = COSC(n_starts=3, random_state=0).fit(X, constraints=cons)
    free = COSC(mode="soft", gamma=0.0, n_starts=3, random_state=0).fit(X, constraints=cons)
    assert free.cut_ <= hard.cut_ + 1e-12
    soft = COSC(mode="soft", max_violations=3, n_starts=3, random_state=0).fit(X, constraints=cons)
    assert soft.n_violated_ <= 3


def test_deterministic():
    X, y = blobs(80, seed=7)
    cons = Constraints.from_labels(y, 20, random_state=0)
    a = COSC(n_starts=2, random_state=3).fit_predict(X, constraints=cons)
    b = COSC(n_starts=2, random_state=3).fit_predict(X, constraints=cons)
    assert np.array_equal(a, b)
    # the starts in threads give the same result
    m1 = COSC(n_starts=3, random_state=3).fit(X, constraints=cons)
    m2 = COSC(n_starts=3, n_jobs=2, random_state=3).fit(X, constraints=cons)
    assert np.array_equal(m1.labels_, m2.labels_)
    assert np.array_equal(m1.continuous_, m2.continuous_)


_OPTS = {"max_outer": 1000, "max_inner": 2000, "tol": 1e-6, "crit_tol": 1e-2, "n_jobs": 1}


def test_perturbation_only_keeps_improvements():
    # a perturbed restart replaces the run only when it lowers the
    # thresholded F_gamma, so it can never end higher, and on these graphs it helps
    gains = 0
    for seed in range(6):
        W = random_graph(40, density=0.15, seed=seed)
        g = degrees(W)
        cl = (np.array([0, 5, 9]), np.array([1, 20, 30]), np.ones(3))
        f0 = np.random.default_rng(seed).standard_normal(40)
        plain = BinarySolver(W, g, cl, {**_OPTS, "n_perturbations": 0}).run((f0, None, None), 0.5)
        pert = BinarySolver(W, g, cl, {**_OPTS, "n_perturbations": 10}).run(
            (f0, None, None), 0.5, seed
        )
        assert pert[1].value <= plain[1].value + 1e-12
        gains += pert[1].value < plain[1].value - 1e-6
    assert gains >= 2


def test_perturbation_deterministic_in_threads():
    X, y = blobs(80, seed=7)
    cons = Constraints.from_labels(y, 20, random_state=0)
    kw = {"n_starts": 3, "n_perturbations": 3, "random_state": 4}
    m1 = COSC(**kw).fit(X, constraints=cons)
    m2 = COSC(n_jobs=2, **kw).fit(X, constraints=cons)
    assert np.array_equal(m1.labels_, m2.labels_)
    assert np.array_equal(m1.continuous_, m2.continuous_)
    assert m1.n_violated_ == 0


# ----------------------------------------------------------------- k-way
@pytest.mark.parametrize("split_rule", ["min_cut", "reference"])
def test_kway(split_rule):
    X, y = blobs(150, k=3, seed=0)
    cons = Constraints.from_labels(y, 40, random_state=0)
    m = COSC(3, split_rule=split_rule, n_recursions=2, random_state=0).fit(X, constraints=cons)
    assert len(np.unique(m.labels_)) == 3
    assert len(m.clusterings_) == 2
    assert majority_vote_error(y, m.labels_) < 0.1
    assert m.n_violated_ <= len(cons) * 0.1
    ml_ok = m.labels_[cons.must_link[:, 0]] == m.labels_[cons.must_link[:, 1]]
    assert ml_ok.all()  # must-links are merged, never violated


def test_default_split_rule_separates_cannot_links_before_recutting_a_component():
    """Iris, 50 random pairs (a draw of bench_defaults.py): setosa is its own component, and
    the paper's rule cuts it in two (cheaper than separating the cannot-linked versicolor
    and virginica points); the default rule separates them."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    cons = Constraints.from_labels(y, 50, random_state=972014356)
    paper = COSC(3, split_rule="min_cut", random_state=972014356).fit(X, constraints=cons)
    default = COSC(3, random_state=972014356).fit(X, constraints=cons)
    setosa = y == 0
    assert len(np.unique(paper.labels_[setosa])) == 2
    assert len(np.unique(default.labels_[setosa])) == 1
    assert not np.any(np.isin(default.labels_[~setosa], default.labels_[setosa]))
    assert clustering_error(y, default.labels_) < clustering_error(y, paper.labels_) - 0.3
    assert default.n_violated_ < paper.n_violated_


def test_kway_deterministic_with_parallel_splits():
    """Every split draws its random start from a seed fixed before the threads start."""
    X, y = blobs(150, k=3, seed=1)
    cons = Constraints.from_labels(y, 40, random_state=1)
    kw = {"n_recursions": 3, "random_state": 5}
    m1 = COSC(3, n_jobs=1, **kw).fit(X, constraints=cons)
    m2 = COSC(3, n_jobs=2, **kw).fit(X, constraints=cons)
    m3 = COSC(3, n_jobs=2, **kw).fit(X, constraints=cons)
    assert np.array_equal(m1.labels_, m2.labels_)
    assert np.array_equal(m2.labels_, m3.labels_)
    assert all(np.array_equal(a, b) for a, b in zip(m1.clusterings_, m2.clusterings_, strict=True))


@pytest.mark.slow
def test_result_does_not_depend_on_the_library_thread_count():
    """BLAS runs on one thread inside the fit and the random starts are seeded before the
    threads start: the library's thread setting (which n_jobs=None follows) changes the
    time, not the partition. With BLAS on the library's threads, this fit ended with a
    multi-cut of 0.1416 on one thread and 0.1846 on two."""
    from sklearn.datasets import load_digits

    from spectralink import config_context

    X, y = load_digits(return_X_y=True)
    cons = Constraints.from_labels(y, 400, random_state=0)
    fits = []
    for threads in (1, 2):
        with config_context(n_jobs=threads):
            fits.append(COSC(10, random_state=0).fit(X, constraints=cons))
    assert np.array_equal(fits[0].labels_, fits[1].labels_)
    assert fits[0].cut_ == fits[1].cut_


def test_kway_keeps_the_lowest_multicut_of_its_runs():
    """The kept run has the lowest multi-cut; stopping runs that reach it early changes
    nothing (the multi-cut never decreases along a run)."""
    from spectralink.solvers.cosc_kway import KwaySearch

    X, y = blobs(150, k=3, seed=2)
    cons = Constraints.from_labels(y, 30, random_state=2)
    est = COSC(3, n_recursions=4, random_state=3)
    m = est.fit(X, constraints=cons)
    W = m.affinity_matrix_
    d = degrees(W)
    Wr, gr, mapping = merge_vertices(W, d, cons.ml_components)
    clr = reduce_cannot_links(cons.cannot_link, cons.cl_weights, mapping)
    sizes = np.bincount(mapping).astype(float)
    ctx = KwaySearch(Wr, gr, clr, sizes, len(y), 3, est._settings(), np.random.RandomState(3))
    seeds = np.random.RandomState(3).randint(0, 2**31 - 1, size=4)
    finals = []
    for sd in seeds:
        labels, history = ctx.recursive_split(np.random.default_rng(sd))
        # the multi-cut grows along the run
        cuts = [ctx.multicut(h) for h in history]
        assert all(b >= a - 1e-12 for a, b in zip(cuts, cuts[1:], strict=False))
        finals.append(ctx.multicut(labels))
    assert normalized_cut(W, m.labels_) == pytest.approx(min(finals), rel=1e-9)


def test_kway_disconnected_graph():
    X, y = make_blobs(90, centers=[[0, 0], [50, 0], [0, 50]], cluster_std=1, random_state=0)
    m = COSC(3, n_recursions=1, random_state=0).fit(X)
    assert majority_vote_error(y, m.labels_) == 0
    assert m.cut_ == pytest.approx(0.0, abs=1e-12)


def test_default_starts_and_polish_depend_on_graph_size():
    """n_starts=None: 30 starts and the Fiduccia-Mattheyses polish of every split on small
    reduced graphs, 10 starts and the 10 lowest splits polished greedily on large ones; a
    given n_starts is kept; the thorough search triples it."""
    est = COSC()
    small, large = est._settings().options(2000), est._settings().options(2001)
    assert (small["n_starts"], small["polish_patience"]) == (30, 20)
    assert small["polish_top"] > 10**6
    assert (large["n_starts"], large["polish_top"], large["polish_patience"]) == (10, 10, 0)
    assert COSC(n_starts=4)._settings().options(100)["n_starts"] == 4
    assert COSC(n_starts=4, search="thorough")._settings().options(100)["n_starts"] == 12
    assert COSC(search="thorough")._settings().options(5000)["n_starts"] == 30
