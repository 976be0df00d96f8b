"""Compiled FISTA loop of :func:`spectralink.solvers.ratio_dca.solve_inner` (numba).

Same iterates as the NumPy loop there. Measured: at |E| ~ 1e3 the NumPy loop spends most of
its ~0.7 ms per iteration in call overhead, and a COSC fit needs 1e5-1e6 inner iterations.
The whole loop, including the candidate checks (inner primal value and, in descent mode, an
upper bound on the ratio ``F_gamma`` of the candidate that needs no sort), runs in compiled
code without the GIL, so independent RatioDCA runs can share the cores through threads.
"""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def proj(z, out):
    # Michelot's fixed point for the simplex threshold theta; theta lies in
    # [max z - 1, max z), so only the entries above max z - 1 are gathered (one pass over
    # z) and the fixed-point passes run over them alone
    n = z.shape[0]
    zmax = z.max()
    low = zmax - 1.0
    count = 0
    for k in range(n):
        count += z[k] > low
    u = np.empty(count)
    count = 0
    total = 0.0
    for k in range(n):
        if z[k] > low:
            u[count] = z[k]
            total += z[k]
            count += 1
    theta = (total - 1.0) / count
    while True:
        total = 0.0
        new_count = 0
        for k in range(u.shape[0]):
            above = u[k] > theta
            total += u[k] * above
            new_count += above
        new_theta = (total - 1.0) / new_count
        if new_count == count and new_theta == theta:
            break
        count = new_count
        if new_theta <= theta:
            break
        theta = new_theta
    for k in range(n):
        out[k] = max(z[k] - theta, 0.0)


@numba.njit(cache=True, nogil=True)
def direction(ei, ej, a, v, cC, c0, simplex, z, p):
    n = z.shape[0]
    inv = 1.0 / c0
    for k in range(n):
        z[k] = cC[k] + (v[k] if simplex else 0.0)
    for e in range(ei.shape[0]):
        t = a[e] * inv
        z[ei[e]] -= t
        z[ej[e]] += t
    if simplex:
        proj(z, p)
        for k in range(n):
            z[k] -= p[k]


@numba.njit(cache=True, nogil=True)
def _clip_step(ei, ej, w, y, a, Dy, bscale, step, es):
    # projected gradient step of every edge dual, in place in y; returns the restart
    # product <y - new, new - a>. Branch-free clip and two partial sums: the branchy form
    # of this loop ran 3-4x slower (mispredicted clips, one long dependency chain). es:
    # the edges' own step factors (diagonal preconditioner; the restart product is then
    # measured in its metric), or empty for the uniform step
    scaled = es.shape[0] > 0
    r0 = 0.0
    r1 = 0.0
    for e in range(ei.shape[0]):
        f = es[e] if scaled else 1.0
        b = bscale * w[e]
        val = min(max(y[e] + step * f * (Dy[ei[e]] - Dy[ej[e]]), -b), b)
        prod = (y[e] - val) * (val - a[e]) / f
        if e & 1:
            r1 += prod
        else:
            r0 += prod
        y[e] = val
    return r0 + r1


@numba.njit(cache=True, nogil=True)
# PLR0915 (statements): a compiled loop: a helper per step would cost a call per iteration.
def fista(  # noqa: PLR0915
    ei,
    ej,
    w,
    c,
    C,
    c0,
    sc,
    a,
    v,
    max_iter,
    eps,
    check_every,
    s,
    lam,
    target,
    descent,
    es,
):
    n = c.shape[0]
    m = ei.shape[0]
    simplex = C > 0
    lip = 4.0 if simplex else 2.0
    cC = c / sc
    bscale = c0 / sc  # the box of edge e is |alpha_e| <= bscale w_e
    # one buffer per edge holds the extrapolated point, then the new iterate: the edge
    # arrays dominate the memory traffic of an iteration
    y = a.copy()
    v_y = v.copy()
    v_new = np.empty(n)
    D = np.empty(n)
    p = np.empty(n)
    f = np.empty(n)
    f_best = np.zeros(n)
    p_best = np.inf  # lowest inner primal value seen (duality-gap test)
    r_best = np.inf  # upper bound on F_gamma of f_best in descent mode
    p_ret = np.inf  # inner primal value of the returned f_best
    has_best = False
    dual = -np.inf
    t = 1.0
    it = 0
    zero_dual = False
    step = 2.0 / (c0 * lip)
    inv = 1.0 / c0
    Dy = np.empty(n)  # direction at the extrapolated point, built by the fused loop below
    direction(ei, ej, a, v, cC, c0, simplex, Dy, p)
    for it in range(1, max_iter + 1):
        restart = _clip_step(ei, ej, w, y, a, Dy, bscale, step, es)
        if simplex:
            for k in range(n):
                p[k] = v_y[k] - (2.0 / lip) * Dy[k]
            proj(p, v_new)
            for k in range(n):
                restart += (v_y[k] - v_new[k]) * (v_new[k] - v[k])
        # gradient restart: drop the momentum when it points against the step
        if restart > 0:
            t = 1.0
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        mom = (t - 1.0) / t_new
        if simplex:
            for k in range(n):
                v_y[k] = v_new[k] + mom * (v_new[k] - v[k])
                v[k] = v_new[k]
                Dy[k] = cC[k] + v_y[k]
        else:
            Dy[:] = cC
        # momentum step fused with the scatter of the next direction (one pass over E)
        for e in range(m):
            an = y[e]
            val = an + mom * (an - a[e])
            a[e] = an
            y[e] = val
            val *= inv
            Dy[ei[e]] -= val
            Dy[ej[e]] += val
        if simplex:
            proj(Dy, p)
            for k in range(n):
                Dy[k] -= p[k]
        t = t_new
        if it % check_every != 0 and it != max_iter:
            continue
        direction(ei, ej, a, v, cC, c0, simplex, D, p)
        nd = np.sqrt(np.sum(D * D))
        dual = -sc * nd
        if sc * nd <= 1e-15:
            zero_dual = True
            break
        for k in range(n):
            f[k] = D[k] / nd
        tv = 0.0
        for e in range(m):
            tv += w[e] * abs(f[ei[e]] - f[ej[e]])
        prim = tv - np.dot(c, f)
        if simplex:
            prim += C * (f.max() - f.min())
        if descent:
            # keep the candidate with the lowest bound lam + prim / <s, f> >= F_gamma(f)
            # (see ratio_dca._ratio_bound): RatioDCA only needs its descent
            sf = np.dot(s, f)
            rat = lam + prim / sf if sf > 0 else np.inf
            if rat < r_best:
                r_best = rat
                p_ret = prim
                f_best[:] = f
                has_best = True
            p_best = min(p_best, prim)
            if r_best <= target:
                break
        elif prim < p_best:
            p_best = prim
            p_ret = prim
            f_best[:] = f
            has_best = True
        if abs(p_best - dual) <= eps * abs(dual):
            break
    return f_best, p_ret, dual, a, v, it, zero_dual, has_best
