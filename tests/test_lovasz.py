"""Lovász extensions, thresholding, the inner solver and RatioDCA of COSC."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from spectralink.metrics import normalized_cut
from spectralink.solvers.lovasz import (
    balance_extension,
    balance_set,
    balance_subgradient,
    edge_list,
    optimal_threshold,
    penalised_ratio,
    total_variation,
)
from spectralink.solvers.ratio_dca import (
    cl_subgradient,
    make_problem,
    project_simplex,
    ratio_dca,
    ratio_functional,
    solve_inner,
)


def random_graph(n, density=0.5, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.random((n, n)) * (rng.random((n, n)) < density)
    A = np.triu(A, 1)
    A = A + A.T
    # a path keeps it connected
    for i in range(n - 1):
        A[i, i + 1] = A[i + 1, i] = max(A[i, i + 1], 0.05)
    return sp.csr_matrix(A)


def random_cl(n, m, seed):
    rng = np.random.default_rng(seed)
    pairs = set()
    while len(pairs) < m:
        a, b = sorted(rng.choice(n, 2, replace=False))
        pairs.add((int(a), int(b)))
    p = np.array(sorted(pairs))
    return p[:, 0], p[:, 1], np.ones(m)


def all_sets(n):
    for bits in itertools.product([False, True], repeat=n):
        m = np.array(bits)
        if 0 < m.sum() < n:
            yield m


# ----------------------------------------------------------------- item 1: Lovász identities
@pytest.mark.parametrize("seed", range(5))
def test_balance_extension_identities(seed):
    rng = np.random.default_rng(seed)
    n = 9
    g = rng.random(n) + 0.1
    G = g.sum()
    f = rng.standard_normal(n)
    if seed == 0:
        f[[1, 4]] = f[2]  # ties
    s = balance_subgradient(f, g)
    pairwise = (g[:, None] * g[None, :] * np.abs(f[:, None] - f[None, :])).sum() / (2 * G)
    assert np.dot(s, f) == pytest.approx(pairwise, rel=1e-12)
    assert balance_extension(f, g) == pytest.approx(pairwise, rel=1e-12)
    assert abs(s.sum()) < 1e-12
    # subgradient inequality S(h) >= <s, h>
    for _ in range(20):
        h = rng.standard_normal(n)
        assert balance_extension(h, g) >= np.dot(s, h) - 1e-12
    for C in list(all_sets(n))[::37]:
        gc = g[C].sum()
        assert balance_extension(C.astype(float), g) == pytest.approx(gc * (G - gc) / G)
        assert balance_set(C, g) == pytest.approx(gc * (G - gc) / G)


def test_total_variation_is_cut_extension():
    W = random_graph(8, seed=3)
    e = edge_list(W)
    rng = np.random.default_rng(0)
    f = rng.standard_normal(8)
    dense = W.toarray()
    assert total_variation(f, *e) == pytest.approx(
        0.5 * (dense * np.abs(f[:, None] - f[None, :])).sum()
    )
    # co-area: TV(f) = integral of cut({f > t}) dt
    fs = np.sort(f)
    integral = sum((fs[k + 1] - fs[k]) * dense[f > fs[k]][:, f <= fs[k]].sum() for k in range(7))
    assert total_variation(f, *e) == pytest.approx(integral)
    C = f > 0
    assert total_variation(C.astype(float), *e) == pytest.approx(dense[C][:, ~C].sum())


def test_penalised_ratio_matches_ncut_for_degree_weights():
    W = random_graph(10, seed=1)
    e = edge_list(W)
    d = np.asarray(W.sum(1)).ravel()
    for C in list(all_sets(10))[::97]:
        F, ncut, v = penalised_ratio(C, e, d)
        assert F == pytest.approx(ncut)
        assert ncut == pytest.approx(normalized_cut(W, C.astype(int)))
        assert v == 0


# ----------------------------------------------------------------- item 3: thresholding
@pytest.mark.parametrize("seed", range(6))
def test_optimal_threshold_equals_brute_force_over_level_sets(seed):
    rng = np.random.default_rng(seed)
    n = 12
    W = random_graph(n, 0.4, seed)
    e = edge_list(W)
    g = rng.random(n) + 0.2
    cl = random_cl(n, 4, seed)
    f = np.round(rng.standard_normal(n), 1)  # rounding creates ties
    gamma = [0.0, 0.3, 2.0][seed % 3]
    thr = optimal_threshold(f, e, g, cl, gamma)
    levels = np.unique(f)[:-1]
    brute = [penalised_ratio(f > t, e, g, cl, gamma) for t in levels]
    k = int(np.argmin([b[0] for b in brute]))
    assert thr.value == pytest.approx(brute[k][0], rel=1e-12)
    assert thr.ncut == pytest.approx(brute[k][1], rel=1e-12)
    assert thr.n_violated == brute[k][2]
    assert penalised_ratio(thr.mask, e, g, cl, gamma)[0] == pytest.approx(thr.value)
    # restricted to feasible level sets
    feas = optimal_threshold(f, e, g, cl, 0.0, max_violations=0)
    ok = [b[1] for b in brute if b[2] == 0]
    if ok:
        assert feas.value == pytest.approx(min(ok))
    else:
        assert feas is None


def test_optimal_threshold_subgraph_variant_is_multicut_change():
    n = 14
    W = random_graph(n, 0.4, 7)
    d = np.asarray(W.sum(1)).ravel()
    idx = np.arange(9)  # the sub-cluster; the rest is "outside"
    sub = W[idx][:, idx]
    outside = d[idx] - np.asarray(sub.sum(1)).ravel()
    f = np.random.default_rng(1).standard_normal(9)
    thr = optimal_threshold(f, edge_list(sub), d[idx], outside=outside)
    best = np.inf
    for t in np.sort(f)[:-1]:
        lab = np.full(n, 2)
        lab[idx] = (f > t).astype(int)
        best = min(best, normalized_cut(W, lab))
    lab = np.full(n, 2)
    lab[idx] = thr.mask.astype(int)
    assert normalized_cut(W, lab) == pytest.approx(best)


def test_constant_vector_has_no_threshold():
    W = random_graph(5)
    assert optimal_threshold(np.ones(5), edge_list(W), np.ones(5)) is None


# ----------------------------------------------------------------- item 2: inner solver
def _inner_instance(n, seed, gamma, per_edge_step=False):
    W = random_graph(n, 0.3, seed)
    d = np.asarray(W.sum(1)).ravel()
    cl = random_cl(n, 3, seed)
    prob = make_problem(edge_list(W), d, cl, per_edge_step=per_edge_step)
    rng = np.random.default_rng(seed)
    f = rng.standard_normal(n)
    lam = ratio_functional(f, prob, gamma)
    c = lam * balance_subgradient(f, prob.g) + gamma * cl_subgradient(f, prob)
    v = np.zeros(n)
    v[np.argmin(f)] = 1.0
    return prob, c, gamma * prob.c_cl, v


@pytest.mark.parametrize("per_edge_step", [False, True])
@pytest.mark.parametrize("gamma", [0.0, 0.5])
def test_inner_solver_closes_duality_gap(gamma, per_edge_step):
    prob, c, C, v = _inner_instance(20, 0, gamma, per_edge_step)
    beta0 = np.zeros(len(prob.edges[0]))
    res = solve_inner(prob, c, C, beta0, v, max_iter=20000, eps=1e-10)
    assert abs(res.primal - res.dual) <= 1e-8 * abs(res.dual)
    assert res.primal < 0  # descent is possible from a random f
    assert np.linalg.norm(res.f) == pytest.approx(1.0)
    assert np.all(np.abs(res.beta) <= prob.edges[2] + 1e-12)
    # the compiled loop follows the same iterates as the NumPy one
    r1 = solve_inner(prob, c, C, beta0, v, max_iter=300, eps=0.0, compiled=False)
    r2 = solve_inner(prob, c, C, beta0, v, max_iter=300, eps=0.0, compiled=True)
    assert r1.primal == pytest.approx(r2.primal, rel=1e-9)
    assert np.allclose(r1.beta, r2.beta, atol=1e-9)


@pytest.mark.parametrize("per_edge_step", [False, True])
@pytest.mark.parametrize("gamma", [0.0, 0.5])
def test_inner_solver_descent_mode(gamma, per_edge_step):
    """Descent mode ranks candidates by an upper bound on F_gamma, stops at the target."""
    prob, c, C, v = _inner_instance(20, 1, gamma, per_edge_step)
    beta0 = np.zeros(len(prob.edges[0]))
    f0 = np.random.default_rng(1).standard_normal(20)  # the point _inner_instance linearised
    lam = ratio_functional(f0, prob, gamma)
    s = balance_subgradient(f0, prob.g)
    kw = dict(max_iter=400, eps=1e-10, target=lam * 0.99, gamma=gamma, lam=lam, s=s)
    r1 = solve_inner(prob, c, C, beta0, v, compiled=False, **kw)
    r2 = solve_inner(prob, c, C, beta0, v, compiled=True, **kw)
    for r in (r1, r2):
        assert r.ratio == pytest.approx(ratio_functional(r.f, prob, gamma), rel=1e-12)
        # the bound reached the sufficient decrease, so the loop stopped early
        bound = lam + r.primal / np.dot(s, r.f)
        assert r.ratio <= bound + 1e-12
        assert bound <= lam * 0.99
        assert r.n_iter < 400
    assert r1.n_iter == r2.n_iter
    assert r1.ratio == pytest.approx(r2.ratio, rel=1e-9)
    # an unreachable target: the whole budget, the lowest bound among the candidates
    r3 = solve_inner(
        prob, c, C, beta0, v, max_iter=60, eps=0.0, target=-1.0, gamma=gamma, lam=lam, s=s
    )
    assert r3.n_iter == 60 and r3.ratio < lam
    with pytest.raises(ValueError, match="lam and s"):
        solve_inner(prob, c, C, beta0, v, target=0.0)


def test_ratio_bound_is_an_upper_bound():
    """lam + p(f) / <s, f> >= F_gamma(f) for any f (subgradient inequalities of R2 and S)."""
    from spectralink.solvers.ratio_dca import _ratio_bound

    rng = np.random.default_rng(7)
    for gamma in (0.0, 0.3, 2.0):
        prob, c, C, _ = _inner_instance(15, 3, gamma)
        f0 = np.random.default_rng(3).standard_normal(15)
        lam = ratio_functional(f0, prob, gamma)
        s = balance_subgradient(f0, prob.g)
        for _ in range(200):
            f = f0 + rng.standard_normal(15) * rng.choice([0.01, 0.3, 3.0])
            f /= np.linalg.norm(f)
            p = total_variation(f, *prob.edges) - c @ f + C * (f.max() - f.min())
            assert _ratio_bound(lam, p, float(s @ f)) >= ratio_functional(f, prob, gamma) - 1e-12


@pytest.mark.parametrize("gamma", [0.0, 0.7])
def test_inner_solver_matches_cvxpy(gamma):
    cp = pytest.importorskip("cvxpy")
    prob, c, C, v = _inner_instance(15, 2, gamma)
    res = solve_inner(prob, c, C, np.zeros(len(prob.edges[0])), v, max_iter=50000, eps=1e-10)
    i, j, w = prob.edges
    f = cp.Variable(prob.n)
    obj = cp.sum(cp.multiply(w, cp.abs(f[i] - f[j]))) - c @ f
    if C > 0:
        obj = obj + C * (cp.max(f) - cp.min(f))
    val = cp.Problem(cp.Minimize(obj), [cp.norm(f, 2) <= 1]).solve(solver=cp.CLARABEL)
    assert res.primal == pytest.approx(val, rel=1e-6, abs=1e-7)


def test_inner_optimum_is_zero_below_the_minimum_ratio():
    """With lambda below min F the inner optimum is 0: the dual certifies no descent."""
    n = 8
    W = random_graph(n, 0.5, 4)
    d = np.asarray(W.sum(1)).ravel()
    prob = make_problem(edge_list(W), d)
    best = min(penalised_ratio(C, prob.edges, d)[0] for C in all_sets(n))
    f = np.random.default_rng(0).standard_normal(n)
    c = 0.9 * best * balance_subgradient(f, d)
    res = solve_inner(
        prob, c, 0.0, np.zeros(len(prob.edges[0])), np.zeros(n), max_iter=20000, eps=1e-12
    )
    assert res.f is None or res.dual > -1e-6
    assert res.primal >= -1e-6


def test_project_simplex():
    rng = np.random.default_rng(0)
    z = rng.standard_normal(30)
    p = project_simplex(z)
    assert p.min() >= 0 and p.sum() == pytest.approx(1.0)
    # optimality: <z - p, q - p> <= 0 for simplex vertices q
    for k in range(30):
        q = np.zeros(30)
        q[k] = 1
        assert np.dot(z - p, q - p) <= 1e-12


# ----------------------------------------------------------------- item 3: RatioDCA optimum
@pytest.mark.parametrize("seed,gamma", [(0, 0.0), (1, 0.2), (2, 1.0), (3, 5.0)])
def test_ratio_dca_reaches_brute_force_optimum(seed, gamma):
    n = 11
    W = random_graph(n, 0.35, seed)
    d = np.asarray(W.sum(1)).ravel()
    cl = random_cl(n, 3, seed)
    prob = make_problem(edge_list(W), d, cl)
    brute = min(penalised_ratio(C, prob.edges, d, cl, gamma)[0] for C in all_sets(n))
    rng = np.random.default_rng(seed)
    found = np.inf
    for _ in range(20):
        f0 = rng.standard_normal(n)
        res = ratio_dca(prob, f0, gamma)
        assert res.value <= ratio_functional(f0 / np.linalg.norm(f0), prob, gamma) + 1e-12
        thr = optimal_threshold(res.f, prob.edges, d, cl, gamma)
        assert thr.value >= brute - 1e-10
        found = min(found, thr.value)
    assert found == pytest.approx(brute, rel=1e-9)


@pytest.mark.parametrize("seed,gamma", [(0, 0.0), (2, 1.0)])
def test_ratio_dca_classical_and_fast_settings_agree(seed, gamma):
    """Descent-mode stopping and the relative criticality test keep the optimum found."""
    n = 11
    W = random_graph(n, 0.35, seed)
    d = np.asarray(W.sum(1)).ravel()
    cl = random_cl(n, 3, seed)
    prob = make_problem(edge_list(W), d, cl)
    brute = min(penalised_ratio(C, prob.edges, d, cl, gamma)[0] for C in all_sets(n))
    rng = np.random.default_rng(seed)
    for kw in ({"descent_tol": None, "crit_tol": 0.0}, {}):
        found = np.inf
        for _ in range(20):
            f0 = rng.standard_normal(n)
            res = ratio_dca(prob, f0, gamma, **kw)
            assert res.value <= ratio_functional(f0 / np.linalg.norm(f0), prob, gamma)
            found = min(found, optimal_threshold(res.f, prob.edges, d, cl, gamma).value)
        assert found == pytest.approx(brute, rel=1e-9)


def test_ratio_functional_on_indicators_is_set_ratio():
    n = 9
    W = random_graph(n, 0.5, 5)
    g = np.random.default_rng(5).random(n) + 0.5
    cl = random_cl(n, 4, 5)
    prob = make_problem(edge_list(W), g, cl)
    for C in list(all_sets(n))[::23]:
        assert ratio_functional(C.astype(float), prob, 0.8) == pytest.approx(
            penalised_ratio(C, prob.edges, g, cl, 0.8)[0]
        )


@pytest.mark.parametrize("seed", range(3))
def test_lipschitz_scale_bounds_incidence_norm(seed):
    """c0^2 >= ||B||^2 = lambda_max of the unweighted Laplacian: the step 1/4 is safe."""
    W = random_graph(25, 0.2, seed)
    prob = make_problem(edge_list(W), np.ones(25))
    lam_max = np.linalg.eigvalsh((prob.B.T @ prob.B).toarray()).max()
    deg_max = np.diff(W.indptr).max()
    assert prob.c0**2 >= lam_max - 1e-9
    assert prob.c0**2 <= 2 * deg_max
    # the reference scale sqrt(max #neighbours) is not safe in general
    assert lam_max > deg_max


@pytest.mark.parametrize("seed", range(3))
def test_per_edge_step_majorises_the_dual_hessian(seed):
    """diag(deg_i + deg_j) >= B B^T, so the step c0^2 / (deg_i + deg_j) of edge e is safe."""
    W = random_graph(25, 0.2, seed)
    prob = make_problem(edge_list(W), np.ones(25), per_edge_step=True)
    assert make_problem(edge_list(W), np.ones(25)).edge_step is None  # uniform by default
    B = prob.B.toarray()
    scale = prob.c0**2 / prob.edge_step  # deg_i + deg_j of every edge
    i, j, _ = prob.edges
    deg = np.diff(W.indptr)
    np.testing.assert_allclose(scale, deg[i] + deg[j])
    precond = B @ B.T / np.sqrt(np.outer(scale, scale))
    assert np.linalg.eigvalsh(precond).max() <= 1.0 + 1e-9
    assert prob.edge_step.min() == pytest.approx(1.0)
    # on an irregular graph some edges take a larger step than the uniform one
    assert prob.edge_step.max() > 1.0
