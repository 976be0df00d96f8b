"""Weighted least squares over the PSD cone: the CCSR problem (Li, Liu & Tang 2009, eq. 17-20).

Solves

    min_{M in S^m, M PSD}  sum_s w_s (u_{i_s}^T M u_{j_s} - t_s)^2

exactly. Every term is linear in ``M``: ``u_i^T M u_j = <sym(u_i u_j^T), M>``. With the
isometric half-vectorisation ``svec`` (off-diagonal entries scaled by sqrt 2, so
``<X, Y>_F = svec(X) . svec(Y)``) the objective is the quadratic (eq. 18-19)

    L(z) = z^T G z - 2 h^T z + c,   z = svec(M),
    G = sum_s w_s a_s a_s^T,  h = sum_s w_s t_s a_s,  c = sum_s w_s t_s^2,
    a_s = svec(sym(u_i u_j^T)),

with ``G`` of size ``m(m+1)/2``. :func:`accumulate_gram` forms ``(G, h, c)`` in one pass of
blocked matrix products, ``O((n + |S|) m^4)``; :func:`psd_least_squares` then works on
``(G, h, c)`` alone, so its cost does not depend on the number of points or constraints.

The solver (instead of the paper's SDP with an ``(m^2+1)``-sized cone) is:

1. the unconstrained minimiser ``G z = h``; if ``smat(z)`` is PSD it is the answer;
2. otherwise FISTA (accelerated projected gradient, step ``1 / (2 lambda_max(G))``, adaptive
   momentum restart) on ``S^m``, the projection being the eigenvalue clipping;
3. every few iterations, a face step: with ``V`` the range of the current iterate (the
   eigenvalues the projection kept), minimise exactly over ``{V X V^T : X in S^r}`` by
   one linear solve. If ``X`` is PSD and the full gradient is PSD the KKT conditions hold
   and the face solution is the exact optimum, otherwise FISTA continues;
4. if FISTA has not certified after 100 iterations (a singular or ill-conditioned ``G``,
   typically from a nearly disconnected graph, where the optimum is not unique) and
   ``m <= 24``, a log-barrier Newton path following (duality gap bound ``m mu`` down to
   ``1e-12`` of the objective) followed by the same face solve.

The returned certificate holds the KKT residuals: ``grad L(M)`` PSD, ``M`` PSD and the
complementarity ``<grad L(M), M> = 0``.

References
----------
Li, Z., Liu, J., & Tang, X. (2009). Constrained clustering via spectral regularization.
CVPR, eq. 17-20.
Beck, A., & Teboulle, M. (2009). A fast iterative shrinkage-thresholding algorithm for
linear inverse problems. SIAM J. Imaging Sciences 2(1).
Boyd, S., & Vandenberghe, L. (2004). Convex Optimization, ch. 11 (barrier method).
O'Donoghue, B., & Candes, E. (2015). Adaptive restart for accelerated gradient schemes.
Foundations of Computational Mathematics 15(3).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import scipy.linalg as la
from scipy.linalg.blas import dsyrk
from scipy.sparse.linalg import eigsh

from ..parallel import blas_threads

__all__ = [
    "PSDLstsqResult",
    "accumulate_gram",
    "psd_least_squares",
    "smat",
    "svec",
    "svec_outer_rows",
]

_SQRT2 = np.sqrt(2.0)
#: faces with at most this many free parameters are solved by a dense factorisation
_DIRECT_FACE_MAX = 300


@lru_cache(maxsize=64)
def _triu(m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a, b = np.triu_indices(m)
    scale = np.where(a == b, 1.0, _SQRT2)
    for arr in (a, b, scale):
        arr.flags.writeable = False
    return a, b, scale


def svec(X: np.ndarray) -> np.ndarray:
    """Isometric half-vectorisation (upper triangle, off-diagonal entries times sqrt 2)."""
    a, b, scale = _triu(X.shape[0])
    return X[a, b] * scale


def smat(z: np.ndarray, m: int | None = None) -> np.ndarray:
    """Inverse of :func:`svec`."""
    if m is None:
        m = int(round((np.sqrt(8 * len(z) + 1) - 1) / 2))
    a, b, scale = _triu(m)
    X = np.zeros((m, m))
    X[a, b] = z / scale
    X[b, a] = X[a, b]
    return X


def svec_outer_rows(UI: np.ndarray, UJ: np.ndarray) -> np.ndarray:
    """Rows ``svec(sym(u_i u_j^T))`` for paired rows of ``UI`` and ``UJ`` (shape (b, m(m+1)/2))."""
    a, b, scale = _triu(UI.shape[1])
    return (UI[:, a] * UJ[:, b] + UI[:, b] * UJ[:, a]) * (0.5 * scale)


def accumulate_gram(
    U: np.ndarray,
    i: np.ndarray,
    j: np.ndarray,
    t: np.ndarray,
    w: np.ndarray | None = None,
    *,
    block_size: int = 4096,
) -> tuple[np.ndarray, np.ndarray, float]:
    """The quadratic ``(G, h, c)`` of eq. 18-19 for the terms ``(i_s, j_s, t_s, w_s)``.

    Parameters
    ----------
    U : ndarray of shape (n, m)
        Embedding, row ``i`` is ``u_i``.
    i, j : int arrays of shape (S,)
        Row pairs of the terms.
    t : ndarray of shape (S,)
        Targets (1 on the diagonal and must-links, 0 on cannot-links in CCSR).
    w : ndarray of shape (S,), default=None
        Non-negative weights of the squared residuals (1 if None).
    block_size : int
        Terms processed per matrix product; bounds the memory to ``block_size * m(m+1)/2``.

    Returns
    -------
    G : ndarray of shape (p, p), h : ndarray of shape (p,), c : float, with ``p = m(m+1)/2``.
    """
    U = np.asarray(U, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    w = np.ones_like(t) if w is None else np.asarray(w, dtype=np.float64)
    m = U.shape[1]
    p = m * (m + 1) // 2
    if np.any(w < 0):
        raise ValueError("weights must be non-negative.")
    G = np.zeros((p, p), order="F")
    h = np.zeros(p)
    for start in range(0, len(t), block_size):
        sl = slice(start, start + block_size)
        Ablk = svec_outer_rows(U[i[sl]], U[j[sl]])
        h += Ablk.T @ (w[sl] * t[sl])
        Ablk *= np.sqrt(w[sl])[:, None]
        # symmetric rank-b update (BLAS syrk: half the flops of a general product)
        G = dsyrk(1.0, Ablk.T, beta=1.0, c=G, trans=0, lower=0, overwrite_c=1)
    G = np.triu(G)
    return G + np.triu(G, 1).T, h, float(np.sum(w * t * t))


@dataclass
class PSDLstsqResult:
    """Solution of :func:`psd_least_squares`.

    Attributes
    ----------
    M : ndarray of shape (m, m), the PSD minimiser.
    objective : float, ``L(M)``.
    n_iter : int, FISTA iterations (0 when the unconstrained minimiser is PSD).
    method : str, ``"unconstrained"``, ``"face"`` (exact face solve) or ``"fista"``.
    kkt : dict with ``grad_min_eig`` (>= 0 up to rounding), ``M_min_eig``,
        ``complementarity`` ``<grad, M>``, ``stationarity``
        ``||M - P(M - grad/L)||_F / max(1, ||M||_F)``, and
        ``scale`` (the norm of the gradient at 0, to read the others relatively).
    """

    M: np.ndarray
    objective: float
    n_iter: int
    method: str
    kkt: dict = field(default_factory=dict)

    @property
    def converged(self) -> bool:
        k = self.kkt
        tol = 1e-7 * max(k["scale"], 1e-300)
        return (
            k["grad_min_eig"] >= -tol
            and k["M_min_eig"] >= -1e-9 * max(1.0, float(np.abs(self.M).max()))
            and abs(k["complementarity"]) <= tol * max(1.0, np.linalg.norm(self.M))
        )


def _project_psd(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    vals, vecs = np.linalg.eigh((X + X.T) / 2)
    keep = vals > 0
    V = vecs[:, keep]
    P = (V * vals[keep]) @ V.T
    return P, V, vals


def _largest_eigenvalue(G: np.ndarray) -> float:
    p = G.shape[0]
    if p == 0:
        return 0.0
    if p <= 300:
        return float(np.linalg.eigvalsh(G)[-1])
    v0 = np.full(p, 1.0 / np.sqrt(p))
    return float(eigsh(G, k=1, which="LA", v0=v0, tol=1e-6)[0][0]) * (1.0 + 1e-5)


def _objective(G, h, c, z) -> float:
    return float(z @ (G @ z) - 2.0 * h @ z + c)


def _face_solve(G, h, V, z):
    """Minimise over the face ``{V X V^T : X in S^r}``; None if the minimiser is not PSD.

    ``X -> V X V^T`` is an isometry, so in svec coordinates the face is ``z = P^T x`` with
    orthonormal rows ``P``. Small faces are solved directly, large ones by conjugate
    gradients on ``P G P^T x = P h`` (matrix-free, warm-started at ``P z``) to rounding level.
    """
    r = V.shape[1]
    if r == 0:
        return np.zeros(G.shape[0])
    a, b, scale = _triu(r)
    # row (a, b) of P is svec(V E_ab V^T) for the svec basis E_ab of S^r
    P = svec_outer_rows(V.T[a], V.T[b]) * scale[:, None]
    rhs = P @ h
    if len(a) <= _DIRECT_FACE_MAX:
        # a singular G leaves a set of minimisers: take the one nearest the iterate
        x0 = P @ z
        H = P @ G @ P.T
        x = x0 + _solve_psd_system(H, rhs - H @ x0)
    else:
        x = _cg(lambda v: P @ (G @ (v @ P)), rhs, P @ z, maxiter=5 * len(a))
    X = smat(x, r)
    if np.linalg.eigvalsh(X)[0] < -1e-12 * max(1.0, np.abs(X).max()):
        return None
    return x @ P


def _barrier(G, h, z_start, *, gap_tol: float = 1e-12, max_newton: int = 500):
    """Log-barrier path following: min ``z^T G z - 2 h^T z - mu logdet smat(z)``, mu -> 0.

    Newton's method on each barrier problem. The barrier
    keeps the Newton systems positive definite even when ``G`` is singular; they are
    solved in the variable scaled by the Cholesky factor of ``M``. Stops when the
    duality gap bound ``m mu`` is below ``gap_tol`` times the scale of the objective.
    """
    p = len(z_start)
    m = int(round((np.sqrt(8 * p + 1) - 1) / 2))
    a, b, scale = _triu(m)
    M = smat(z_start, m)
    alpha = max(np.linalg.norm(M) / np.sqrt(m), 1e-12)
    z = svec(M + alpha * np.eye(m))
    obj_scale = max(1.0, abs(float(z @ G @ z - 2 * h @ z)))
    mu = obj_scale / m

    def phi(z, mu):
        try:
            L = np.linalg.cholesky(smat(z, m))
        except np.linalg.LinAlgError:
            return np.inf
        return float(z @ G @ z - 2 * h @ z) - 2.0 * mu * np.sum(np.log(np.diag(L)))

    n_newton = 0
    while n_newton < max_newton:
        for _ in range(50):
            n_newton += 1
            # Newton step in the scaled variable X = L^{-1} dM L^{-T} (M = L L^T), where the
            # barrier Hessian is mu * I: the system stays well conditioned as mu -> 0
            L = np.linalg.cholesky(smat(z, m))
            T = svec_outer_rows(L.T[a], L.T[b]) * scale[:, None]
            Linv = la.solve_triangular(L, np.eye(m), lower=True)
            g = 2.0 * (G @ z - h) - mu * svec(Linv.T @ Linv)
            gs = T @ g
            Hs = 2.0 * (T @ G @ T.T)
            Hs[np.diag_indices_from(Hs)] += mu
            dz = -(la.solve((Hs + Hs.T) / 2, gs, assume_a="pos", check_finite=False) @ T)
            dec = -g @ dz
            if dec <= 1e-14 * obj_scale:
                break
            f0, t = phi(z, mu), 1.0
            while phi(z + t * dz, mu) > f0 - 0.25 * t * dec and t > 1e-12:
                t *= 0.5
            z = z + t * dz
        if m * mu <= gap_tol * obj_scale:
            break
        mu *= 0.05
    return z


def _candidate_ranks(lam: np.ndarray, *, many: bool) -> list[int]:
    """Ranks to try for the optimal face, from the positive eigenvalues of an iterate.

    The current rank first, then the ranks at the largest relative eigenvalue gaps (an
    iterate still carries small eigenvalues that vanish at the optimum). ``many`` tries
    every rank (cheap when the faces are small), otherwise the two largest gaps.
    """
    R = len(lam)
    if R <= 1:
        return [R]
    ratios = lam[1:] / lam[:-1]  # ascending eigenvalues: ratio > 1
    by_gap = [R - 1 - int(i) for i in np.argsort(-ratios)]
    return [R] + (by_gap if many else by_gap[:2])


def _solve_psd_system(H: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """A minimiser of ``x^T H x - 2 rhs^T x`` (Cholesky; least squares if H is singular)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", la.LinAlgWarning)
        try:
            return la.solve(H, rhs, assume_a="pos")
        except (la.LinAlgError, la.LinAlgWarning, ValueError):
            pass
    try:
        return la.lstsq(H, rhs, cond=1e-13)[0]
    except la.LinAlgError:
        # gelsd's SVD can fail to converge on some LAPACK builds; the QR-based driver solves
        # the same least-squares problem without an SVD
        return la.lstsq(H, rhs, cond=1e-13, lapack_driver="gelsy")[0]


def _cg(matvec, b, x, *, maxiter: int, rtol: float = 1e-14):
    r = b - matvec(x)
    p = r.copy()
    rr = r @ r
    stop = (rtol * np.linalg.norm(b)) ** 2
    for _ in range(maxiter):
        if rr <= stop:
            break
        Ap = matvec(p)
        alpha = rr / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rr_new = r @ r
        p = r + (rr_new / rr) * p
        rr = rr_new
    return x


def _certificate(G, h, c, z, L):
    m = int(round((np.sqrt(8 * len(z) + 1) - 1) / 2))
    M = smat(z, m)
    grad = 2.0 * (G @ z - h)
    Gm = smat(grad, m)
    step, _, _ = _project_psd(M - Gm / L)
    return {
        "grad_min_eig": float(np.linalg.eigvalsh(Gm)[0]),
        "M_min_eig": float(np.linalg.eigvalsh(M)[0]),
        "complementarity": float(grad @ z),
        "stationarity": float(np.linalg.norm(M - step) / max(1.0, np.linalg.norm(M))),
        "scale": float(2.0 * np.linalg.norm(h)),
    }


def psd_least_squares(
    G: np.ndarray,
    h: np.ndarray,
    c: float = 0.0,
    *,
    tol: float = 1e-10,
    max_iter: int = 5000,
    face_every: int | None = None,
) -> PSDLstsqResult:
    """Minimise ``z^T G z - 2 h^T z + c`` over ``z = svec(M)``, ``M`` PSD.

    Parameters
    ----------
    G : ndarray of shape (p, p), symmetric PSD; h : ndarray of shape (p,); c : float
        The quadratic from :func:`accumulate_gram`.
    tol : float, default=1e-10
        FISTA stops when ``||M_{k+1} - M_k||_F <= tol * max(1, ||M_k||_F)``.
    max_iter : int, default=5000
        FISTA iterations. A singular ``G`` (degenerate embeddings, e.g. a nearly
        disconnected graph) makes the optimum non-unique and convergence sublinear; the
        result then carries its certificate and ``converged`` may be False.
    face_every : int, default=None
        Minimum iterations between exact face solves; ``None`` picks 10 for ``m <= 24``
        and 100 above.

    Returns
    -------
    PSDLstsqResult
    """
    # the iterations are many small dense operations: threads only add overhead
    with blas_threads(1):
        return _psd_least_squares(G, h, c, tol=tol, max_iter=max_iter, face_every=face_every)


def _psd_least_squares(G, h, c, *, tol, max_iter, face_every) -> PSDLstsqResult:
    G = np.asarray(G, dtype=np.float64)
    h = np.asarray(h, dtype=np.float64)
    p = G.shape[0]
    m = int(round((np.sqrt(8 * p + 1) - 1) / 2))
    if G.shape != (p, p) or h.shape != (p,) or m * (m + 1) // 2 != p:
        raise ValueError(
            f"G must be (p, p) and h (p,) with p = m(m+1)/2; got {G.shape} and {h.shape}."
        )
    if not (np.all(np.isfinite(G)) and np.all(np.isfinite(h))):
        raise ValueError("G and h must be finite.")
    lmax = _largest_eigenvalue(G)
    if lmax <= 0:
        z = np.zeros(p)
        cert = _certificate(G, h, c, z, 1.0)
        return PSDLstsqResult(smat(z, m), float(c), 0, "unconstrained", cert)
    L = 2.0 * lmax

    def accept(z, n_iter, method):
        return PSDLstsqResult(
            smat(z, m), _objective(G, h, c, z), n_iter, method, _certificate(G, h, c, z, L)
        )

    def kkt_ok(z):
        grad_min = np.linalg.eigvalsh(smat(2.0 * (G @ z - h), m))[0]
        return grad_min >= -1e-9 * max(2.0 * np.linalg.norm(h), 1e-300)

    # 1. unconstrained minimiser, accepted when it is already PSD
    z0 = _solve_psd_system(G, h)
    if np.linalg.eigvalsh(smat(z0, m))[0] >= 0:
        return accept(z0, 0, "unconstrained")
    # 2. FISTA from the projection of the unconstrained point, with face solves
    Mk, V, _ = _project_psd(smat(z0, m))
    z = svec(Mk)
    y = z.copy()
    theta = 1.0
    last_face = 0
    barrier_after = 100
    if face_every is None:
        face_every = 10 if p <= 300 else 100
    it = 0
    for it in range(1, max_iter + 1):
        if it > barrier_after and p <= _DIRECT_FACE_MAX:
            # slow FISTA (singular or ill-conditioned G): switch to the barrier method
            zb = _barrier(G, h, z)
            lam = np.linalg.eigvalsh(smat(zb, m))
            W_ = np.linalg.eigh(smat(zb, m))[1]
            for r in _candidate_ranks(lam[lam > 0], many=True):
                zf = _face_solve(G, h, W_[:, m - r :], zb)
                if zf is not None and kkt_ok(zf):
                    return accept(zf, it, "barrier+face")
            return accept(zb, it, "barrier")
        grad = 2.0 * (G @ y - h)
        Mn, V, vals = _project_psd(smat(y - grad / L, m))
        zn = svec(Mn)
        # adaptive restart: drop momentum when it points uphill
        if grad @ (zn - z) > 0:
            theta = 1.0
        theta_n = (1.0 + np.sqrt(1.0 + 4.0 * theta * theta)) / 2.0
        y = zn + ((theta - 1.0) / theta_n) * (zn - z)
        dz = np.linalg.norm(zn - z)
        z, theta = zn, theta_n
        if it - last_face >= face_every:
            last_face = it
            lam = vals[vals > 0]
            # the current rank and the two largest gaps: an iterate on its way to the
            # optimal face shows it there; trying every rank here (a failed face solve
            # costs as much as a successful one) is left to the barrier's exact end
            for r in _candidate_ranks(lam, many=False):
                zf = _face_solve(G, h, V[:, V.shape[1] - r :], z)
                if zf is not None and kkt_ok(zf):
                    return accept(zf, it, "face")
        if dz <= tol * max(1.0, np.linalg.norm(z)):
            break
    return accept(z, it, "fista")
