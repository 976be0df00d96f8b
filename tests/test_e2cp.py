"""E2CP propagation (dense, low-rank, iterative forms), refinement and the E2CP estimator."""

import numpy as np
import pytest
import scipy.sparse as sp

from spectralink import E2CP, Constraints
from spectralink.graph import knn_affinity, normalized_adjacency, normalized_laplacian
from spectralink.methods.e2cp import dense_refinement_fits, refined_affinity
from spectralink.solvers.propagation import (
    chebyshev_steps,
    fill_values,
    masked_pairs,
    propagate_dense,
    propagate_pairs,
    propagate_sampled,
    propagation_operator,
    refine_dense,
    refine_masked,
    refine_values,
    solve_shifted_laplacian,
    spectral_bounds,
)


def _problem(seed=0, n_per=30, sep=3.0, n_pairs=60):
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 0.0], [sep, 0.0], [0.0, sep]])
    X = np.vstack([c + rng.standard_normal((n_per, 2)) for c in centers])
    y = np.repeat(np.arange(3), n_per)
    W = knn_affinity(X, n_neighbors=8)
    cons = Constraints.from_labels(y, n_pairs, random_state=seed)
    return X, y, W, cons


def _reference_F(W, cons, eta):
    # eq. 11 verbatim with explicit inverses
    n = W.shape[0]
    G = np.linalg.inv(eta * np.eye(n) + normalized_laplacian(W).toarray())
    return eta**2 * G @ cons.signed_matrix.toarray() @ G


@pytest.mark.parametrize("eta", [0.25, 1.0])
def test_dense_and_low_rank_propagation_equal_eq11(eta):
    X, y, W, cons = _problem(seed=1)
    ref = _reference_F(W, cons, eta)
    for solver in ("cholesky", "cg"):
        F = propagate_dense(W, cons, eta, solver=solver, tol=1e-13)
        np.testing.assert_allclose(F, ref, atol=1e-10)
    n = W.shape[0]
    rng = np.random.default_rng(0)
    rows, cols = rng.integers(0, n, 500), rng.integers(0, n, 500)
    # small blocks force several constraint blocks and re-solved shared endpoints
    for block in (None, 5):
        f = propagate_pairs(W, cons, rows, cols, eta, tol=1e-13, block_points=block)
        np.testing.assert_allclose(f, ref[rows, cols], atol=1e-8 * max(1.0, abs(ref).max()))
        assert np.max(np.abs(f - ref[rows, cols])) < 1e-8


def test_iterative_alpha_form_converges_to_closed_form():
    # Lu & Ip: F_v <- a S F_v + (1 - a) Y, then F_h <- a F_h S + (1 - a) F_v*, a = 1/(1 + eta)
    X, y, W, cons = _problem(seed=2)
    eta = 0.25
    alpha = 1.0 / (1.0 + eta)
    S = normalized_adjacency(W)[0].toarray()
    Y = cons.signed_matrix.toarray()
    Fv = np.zeros_like(Y)
    for _ in range(400):
        Fv = alpha * S @ Fv + (1 - alpha) * Y
    Fh = np.zeros_like(Y)
    for _ in range(400):
        Fh = alpha * Fh @ S + (1 - alpha) * Fv
    np.testing.assert_allclose(Fh, propagate_dense(W, cons, eta), atol=1e-10)


def test_cg_solver_and_operator_spectrum():
    X, y, W, cons = _problem(seed=3)
    eta = 0.25
    M = propagation_operator(W, eta)
    ev = np.linalg.eigvalsh(M.toarray())
    assert ev.min() >= eta - 1e-12 and ev.max() <= 2 + eta + 1e-12
    B = np.random.default_rng(0).standard_normal((W.shape[0], 4))
    U = solve_shifted_laplacian(M, B, tol=1e-12)
    np.testing.assert_allclose(M @ U, B, atol=1e-10)
    U_ref = np.linalg.solve(M.toarray(), B)
    # Chebyshev on [eta, 2 + eta]: residual-based stop, float64 and float32
    for tol, dtype in ((1e-12, np.float64), (1e-5, np.float32)):
        U = solve_shifted_laplacian(M, B, bounds=spectral_bounds(eta), tol=tol, dtype=dtype)
        assert U.dtype == dtype
        res = np.linalg.norm(B - M @ U.astype(float), axis=0) / np.linalg.norm(B, axis=0)
        assert res.max() <= tol * 1.01
        np.testing.assert_allclose(U, U_ref, atol=tol * 10 * np.abs(U_ref).max())
    # an interval missing most of the spectrum: the solver falls back to CG
    U = solve_shifted_laplacian(M, B, bounds=(0.5 * eta, 0.4), tol=1e-10)
    np.testing.assert_allclose(M @ U, B, atol=1e-8)
    with pytest.raises(ValueError, match="bounds"):
        solve_shifted_laplacian(M, B, bounds=(1.0, 0.5))


def test_chebyshev_step_count_matches_rate():
    # rate 1/(s + sqrt(s^2 - 1)) = 1/2 for [0.25, 2.25]: 2 * 2^-k <= 1e-5 from k = 18
    assert chebyshev_steps(0.25, 2.25, 1e5) == 18
    assert chebyshev_steps(0.25, 2.25, 1.0) == 0
    k = chebyshev_steps(0.25, 2.25, 1e10)
    s = 1.25
    assert np.cosh(k * np.arccosh(s)) >= 1e10 > np.cosh((k - 1) * np.arccosh(s))


def test_numpy_and_compiled_paths_agree(monkeypatch):
    from spectralink.solvers import propagation, shifted_laplacian

    X, y, W, cons = _problem(seed=10)
    rows, cols = masked_pairs(W, cons)
    ref = _reference_F(W, cons, 0.25)[rows, cols]
    monkeypatch.setattr(propagation, "_compiled_kernels", lambda: None)
    monkeypatch.setattr(shifted_laplacian, "_compiled_kernels", lambda: None)
    f_np = propagate_pairs(W, cons, rows, cols, tol=1e-12, block_points=7)
    f32 = propagate_pairs(W, cons, rows, cols, tol=1e-5)
    monkeypatch.undo()
    f_jit = propagate_pairs(W, cons, rows, cols, tol=1e-12, block_points=7)
    np.testing.assert_allclose(f_np, ref, atol=1e-10)
    np.testing.assert_allclose(f_jit, ref, atol=1e-10)
    # float32 solves at tol 1e-5: F within a few 1e-5 of its scale
    np.testing.assert_allclose(f32, ref, atol=5e-5 * np.abs(ref).max())


def test_refinement_stays_in_unit_interval():
    rng = np.random.default_rng(4)
    w = rng.uniform(0, 1, 1000)
    f = rng.uniform(-3, 3, 1000)  # beyond [-1, 1]: clipped
    v = refine_values(w, f)
    assert v.min() >= 0 and v.max() <= 1
    # eq. 12 by cases, on F within range
    fc = np.clip(f, -1, 1)
    np.testing.assert_allclose(v, np.where(fc >= 0, 1 - (1 - fc) * (1 - w), (1 + fc) * w))

    X, y, W, cons = _problem(seed=4, n_pairs=200)
    F = 50 * propagate_dense(W, cons)  # exaggerate so clipping matters
    R = refine_dense(W, F)
    assert R.min() >= 0 and R.max() <= 1 and np.all(np.diag(R) == 0)
    np.testing.assert_allclose(R, R.T)
    rows, cols = masked_pairs(W, cons)
    Rm = refine_masked(W, rows, cols, F[rows, cols])
    assert Rm.data.min() >= 0 and Rm.data.max() <= 1
    # the masked refinement equals the dense one on its mask, and is 0 elsewhere
    mask = np.zeros(W.shape, bool)
    mask[rows, cols] = mask[cols, rows] = True
    np.testing.assert_allclose(Rm.toarray()[mask], R[mask], atol=1e-14)
    assert np.all(Rm.toarray()[~mask] == 0)


def test_masked_pairs_cover_graph_and_constraints():
    X, y, W, cons = _problem(seed=5)
    rows, cols = masked_pairs(W, cons)
    assert np.all(rows < cols)
    got = set(zip(rows.tolist(), cols.tolist(), strict=True))
    Wu = sp.triu(W, 1).tocoo()
    assert set(zip(Wu.row.tolist(), Wu.col.tolist(), strict=True)) <= got
    assert {tuple(p) for p in cons.must_link.tolist() + cons.cannot_link.tolist()} <= got


def test_refined_affinity_paths_agree_on_the_mask():
    X, y, W, cons = _problem(seed=6)
    Rd, pd = refined_affinity(W, cons, refinement="dense")
    Rm, pm = refined_affinity(W, cons, refinement="masked")
    assert (pd, pm) == ("dense", "masked")
    rows, cols = masked_pairs(W, cons)
    np.testing.assert_allclose(
        np.asarray(Rm[rows, cols]).ravel(), np.asarray(Rd[rows, cols]).ravel(), atol=1e-9
    )
    assert Rd.nnz > Rm.nnz  # positive propagation fills the dense refined graph in
    assert refined_affinity(W, cons, dense_max=10)[1] == "sampled"
    assert refined_affinity(W, cons)[1] == "dense"
    empty = Constraints(n_samples=W.shape[0])
    R0, _ = refined_affinity(W, empty)
    assert abs(R0 - W).max() == 0


def _reference_F_ml(W, cons, eta):
    # the must-link part of eq. 11: eta^2 G Y_ML G
    n = W.shape[0]
    G = np.linalg.inv(eta * np.eye(n) + normalized_laplacian(W).toarray())
    Y_ml = Constraints(cons.must_link, n_samples=n).signed_matrix.toarray()
    return eta**2 * G @ Y_ml @ G


def _fill_matrix(fill, n):
    S = np.zeros((n, n))
    v = fill_values(fill["f"], fill["f_ml"], fill["weight"])
    S[fill["rows"], fill["cols"]] = v
    S[fill["cols"], fill["rows"]] = v
    return S


def test_sampled_propagation_is_exact_on_its_pairs():
    X, y, W, cons = _problem(seed=1)
    n = W.shape[0]
    F, F_ml = _reference_F(W, cons, 0.25), _reference_F_ml(W, cons, 0.25)
    rows, cols = masked_pairs(W, cons)
    # small blocks: several must-link strata and cannot-link blocks
    for block in (None, 6):
        f, fill = propagate_sampled(
            W, cons, rows, cols, n_fill=10, tol=1e-12, random_state=0, block_points=block
        )
        np.testing.assert_allclose(f, F[rows, cols], atol=1e-10)
        r, c = fill["rows"], fill["cols"]
        assert len(r) > 0 and np.all(r < c)
        # off the exact pairs and the diagonal, each pair once
        mask = np.zeros((n, n), bool)
        mask[rows, cols] = True
        assert not mask[r, c].any()
        assert len(np.unique(r * n + c)) == len(r)
        np.testing.assert_allclose(fill["f"], F[r, c], atol=1e-10)
        np.testing.assert_allclose(fill["f_ml"], F_ml[r, c], atol=1e-10)
        # draws only where F_ML > 0, and max(F, 0) <= F_ML there
        assert fill["f_ml"].min() > 0 and np.all(fill["f"] <= fill["f_ml"] + 1e-12)
        assert fill["weight"].min() > 0


def test_sampled_fill_is_unbiased_and_converges():
    X, y, W, cons = _problem(seed=1)
    n = W.shape[0]
    rows, cols = masked_pairs(W, cons)
    mask = np.zeros((n, n), bool)
    mask[rows, cols] = mask[cols, rows] = True
    np.fill_diagonal(mask, True)
    # eq. 12 off the graph and the constrained pairs: max(F, 0)
    target = np.where(mask, 0.0, np.clip(_reference_F(W, cons, 0.25), 0, 1))

    def error(n_fill, seed):
        _, fill = propagate_sampled(
            W, cons, rows, cols, n_fill=n_fill, tol=1e-12, random_state=seed
        )
        return _fill_matrix(fill, n)

    errs = [np.linalg.norm(error(m, 0) - target) / np.linalg.norm(target) for m in (10, 4000)]
    assert errs[1] < 0.1 < errs[0]
    # the mean of independent estimates approaches the target (unbiased): 2,000 draws
    # per point in all, as 50 estimates of 40
    mean = np.mean([error(40, s) for s in range(50)], axis=0)
    assert np.linalg.norm(mean - target) / np.linalg.norm(target) < 0.12
    # row sums (the fill-in's share of the degrees) are estimated best; the total closely
    np.testing.assert_allclose(mean.sum(1), target.sum(1), rtol=0.1)
    assert abs(mean.sum() / target.sum() - 1) < 0.01


def test_sampled_refinement_converges_to_dense():
    X, y, W, cons = _problem(seed=3)
    Rd = refined_affinity(W, cons, refinement="dense", tol=1e-12)[0].toarray()
    errs = []
    for n_fill in (5, 50, 2000):
        Rs, path = refined_affinity(
            W, cons, refinement="sampled", n_fill=n_fill, tol=1e-12, random_state=0
        )
        assert path == "sampled"
        Rs = Rs.toarray()
        assert Rs.min() >= 0 and np.all(np.diag(Rs) == 0)
        np.testing.assert_allclose(Rs, Rs.T, atol=1e-15)
        errs.append(np.linalg.norm(Rs - Rd, 2) / np.linalg.norm(Rd, 2))
    assert errs[0] > errs[1] > errs[2] and errs[2] < 0.01
    # the spectral embedding follows: principal angles to the dense one's subspace
    from spectralink.spectral import laplacian_eigenvectors

    _, Vd = laplacian_eigenvectors(sp.csr_matrix(Rd), 3)
    _, Vs = laplacian_eigenvectors(sp.csr_matrix(Rs), 3)
    assert np.linalg.svd(Vd.T @ Vs, compute_uv=False).min() > 0.999


def test_sampled_path_properties():
    X, y, W, cons = _problem(seed=7)
    a = refined_affinity(W, cons, refinement="sampled", random_state=3)[0]
    b = refined_affinity(W, cons, refinement="sampled", random_state=3)[0]
    c = refined_affinity(W, cons, refinement="sampled", random_state=4)[0]
    assert abs(a - b).max() == 0 and abs(a - c).max() > 0
    # without must-links nothing is positive: the sampled path is the masked one
    cl_only = Constraints(cannot_link=cons.cannot_link, n_samples=W.shape[0])
    Rs = refined_affinity(W, cl_only, refinement="sampled")[0]
    Rm = refined_affinity(W, cl_only, refinement="masked")[0]
    assert abs(Rs - Rm).max() < 1e-12
    # F / max|F|: values within [0, 1], on the same pairs (a cannot-link at -1 may zero one)
    R = refined_affinity(W, cons, refinement="sampled", f_scale="max", random_state=3)[0]
    assert R.data.min() >= 0 and R.data.max() <= 1
    on_a = set(zip(*a.nonzero(), strict=True))
    assert set(zip(*R.nonzero(), strict=True)) <= on_a and R.nnz > 0.9 * a.nnz


def test_sampled_numpy_and_compiled_paths_agree(monkeypatch):
    from spectralink.solvers import propagation, shifted_laplacian

    X, y, W, cons = _problem(seed=10)
    rows, cols = masked_pairs(W, cons)
    f_jit, fill_jit = propagate_sampled(W, cons, rows, cols, tol=1e-12, random_state=0)
    monkeypatch.setattr(propagation, "_compiled_kernels", lambda: None)
    monkeypatch.setattr(shifted_laplacian, "_compiled_kernels", lambda: None)
    f_np, fill_np = propagate_sampled(W, cons, rows, cols, tol=1e-12, random_state=0)
    np.testing.assert_allclose(f_np, f_jit, atol=1e-12)
    np.testing.assert_array_equal(fill_np["rows"], fill_jit["rows"])
    np.testing.assert_array_equal(fill_np["cols"], fill_jit["cols"])
    np.testing.assert_allclose(fill_np["f"], fill_jit["f"], atol=1e-12)


def test_auto_path_uses_memory():
    assert dense_refinement_fits(1000, available=1e9)
    assert not dense_refinement_fits(5000, available=1e9)
    X, y, W, cons = _problem(seed=2)
    model = E2CP(3, n_neighbors=8, random_state=0).fit(X, constraints=cons)
    assert model.refinement_ == "dense"
    model = E2CP(3, n_neighbors=8, dense_max=50, random_state=0).fit(X, constraints=cons)
    assert model.refinement_ == "sampled"


def _two_moons(seed=0, n_per=60):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, np.pi, n_per)
    a = np.column_stack([np.cos(t), np.sin(t)])
    b = np.column_stack([1 - np.cos(t), 0.4 - np.sin(t)])
    X = np.vstack([a, b]) + 0.12 * rng.standard_normal((2 * n_per, 2))
    return X, np.repeat([0, 1], n_per)


@pytest.mark.parametrize("f_scale", ["clip", "max"])
def test_e2cp_constraints_help_and_is_deterministic(f_scale):
    from sklearn.metrics import adjusted_rand_score

    X, y = _two_moons()
    cons = Constraints.from_labels(y, 150, random_state=0)
    base = adjusted_rand_score(y, E2CP(2, random_state=0).fit_predict(X))
    model = E2CP(2, f_scale=f_scale, random_state=0).fit(X, constraints=cons)
    assert adjusted_rand_score(y, model.labels_) > base + 0.2
    again = E2CP(2, f_scale=f_scale, random_state=0).fit(X, constraints=cons)
    np.testing.assert_array_equal(model.labels_, again.labels_)
    assert model.refinement_ == "dense"
    assert model.embedding_.shape == (len(y), 2)
    R = model.affinity_matrix_
    assert R.data.min() >= 0 and R.data.max() <= 1
    # the same graph passed as a precomputed affinity gives the same clustering
    W = knn_affinity(X, n_neighbors=10)
    pre = E2CP(2, affinity="precomputed", f_scale=f_scale, random_state=0)
    np.testing.assert_array_equal(pre.fit(W, constraints=cons).labels_, model.labels_)


@pytest.mark.filterwarnings("ignore::spectralink.exceptions.DegeneratePartitionWarning")
def test_e2cp_sampled_path_keeps_the_fill_in():
    from sklearn.metrics import adjusted_rand_score

    # two long parallel stripes: the unconstrained cut splits both across their length
    rng = np.random.default_rng(0)
    X = np.vstack(
        [
            np.column_stack([rng.uniform(0, 10, 100), rng.normal(0, 0.3, 100) + offset])
            for offset in (0, 1.2)
        ]
    )
    y = np.repeat([0, 1], 100)
    cons = Constraints.from_labels(y, 100, random_state=0)
    ari = {
        path: adjusted_rand_score(
            y, E2CP(2, refinement=path, random_state=0, guard=None).fit(X, constraints=cons).labels_
        )
        for path in ("dense", "sampled", "masked")
    }
    assert ari["dense"] > 0.8 and ari["sampled"] > 0.8 and ari["masked"] < 0.3


def test_e2cp_masked_path_runs():
    X, y, W, cons = _problem(seed=8)
    m = E2CP(3, n_neighbors=8, refinement="masked", random_state=0).fit(X, constraints=cons)
    assert m.refinement_ == "masked"
    assert m.affinity_matrix_.nnz <= W.nnz + 2 * len(cons)


def test_bad_input():
    X, y, W, cons = _problem(seed=9)
    with pytest.raises(ValueError, match="refinement"):
        E2CP(3, refinement="full").fit(X, constraints=cons)
    with pytest.raises(ValueError, match="dense_max"):
        E2CP(3, refinement="dense", dense_max=10).fit(X, constraints=cons)
    with pytest.raises(ValueError, match="eta"):
        E2CP(3, eta=0.0).fit(X, constraints=cons)
    with pytest.raises(ValueError, match="f_scale"):
        E2CP(3, f_scale="norm").fit(X, constraints=cons)
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="n_fill"):
            E2CP(3, refinement="sampled", n_fill=bad).fit(X, constraints=cons)
    with pytest.raises(ValueError, match="max_n"):
        propagate_dense(W, cons, max_n=10)
    with pytest.raises(ValueError, match="constraints"):
        propagate_dense(W, Constraints(n_samples=3))
    with pytest.raises(ValueError, match="pair indices"):
        propagate_pairs(W, cons, np.array([0]), np.array([W.shape[0]]))
    with pytest.raises(ValueError, match="same shape"):
        refine_dense(W, np.zeros((2, 2)))
