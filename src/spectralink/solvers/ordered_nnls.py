"""Least squares with ordered non-negative coefficients: the CCSKL QP (Li & Liu 2009, eq. 13-16).

CCSKL learns ``beta_1 >= ... >= beta_m >= 0`` of ``K = sum_l beta_l v_l v_l^T`` from

    min_beta  sum_s c_s^2 (y_{i_s}^T diag(beta) y_{j_s} - t_s)^2            (eq. 12-16)

where ``y_i`` is row ``i`` of the eigenvector matrix ``F`` (``k_ij = (y_i o y_j)^T beta``).
The reparametrisation ``beta = T delta`` with ``T`` the upper-triangular matrix of ones
(``beta_l = sum_{q >= l} delta_q``) maps the ordered cone onto ``delta >= 0``, so the QP is
the non-negative least-squares problem ``min_{delta >= 0} ||diag(c) (Y_S T delta - t)||^2``
(the CCSKL quadratic program). ``Y_S T`` is a column cumulative sum. A thin QR
factorisation reduces the ``(n + |S|) x m`` problem to an ``m x m`` one, solved exactly by
Lawson-Hanson active-set NNLS.

References
----------
Li, Z., & Liu, J. (2009). Constrained clustering by spectral kernel learning. ICCV, eq. 13-16.
Lawson, C. L., & Hanson, R. J. (1974). Solving Least Squares Problems. Prentice-Hall, ch. 23.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as la
from scipy.optimize import nnls

__all__ = ["OrderedNNLSResult", "ordered_design", "ordered_nnls"]


def ordered_design(
    F: np.ndarray,
    i: np.ndarray,
    j: np.ndarray,
    t: np.ndarray,
    c: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Weighted design ``diag(c) Y_S T`` and right-hand side ``diag(c) t`` of the NNLS.

    Row ``s`` of ``Y_S`` is ``y_{i_s} o y_{j_s}`` (eq. 13); right-multiplying by ``T`` is a
    cumulative sum over columns.
    """
    F = np.asarray(F, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    c = np.ones_like(t) if c is None else np.asarray(c, dtype=np.float64)
    Y = F[i] * F[j]
    B = np.cumsum(Y, axis=1) * c[:, None]
    return B, c * t


@dataclass
class OrderedNNLSResult:
    """Solution of :func:`ordered_nnls`.

    Attributes
    ----------
    beta : ndarray of shape (m,), non-increasing and non-negative.
    delta : ndarray of shape (m,), ``delta_l = beta_l - beta_{l+1}`` (``beta_{m+1} = 0``).
    objective : float, the weighted squared error.
    kkt : dict with ``grad_min`` (``min_l grad_l``, >= 0 up to rounding) and
        ``complementarity`` (``grad . delta``), ``grad`` being the gradient in ``delta``.
    """

    beta: np.ndarray
    delta: np.ndarray
    objective: float
    kkt: dict = field(default_factory=dict)


def ordered_nnls(B: np.ndarray, r: np.ndarray) -> OrderedNNLSResult:
    """Solve ``min_{delta >= 0} ||B delta - r||^2`` and return ``beta = T delta``.

    Parameters
    ----------
    B : ndarray of shape (S, m)
        Design from :func:`ordered_design`.
    r : ndarray of shape (S,)

    Returns
    -------
    OrderedNNLSResult
    """
    B = np.asarray(B, dtype=np.float64)
    r = np.asarray(r, dtype=np.float64)
    if B.ndim != 2 or r.shape != (B.shape[0],):
        raise ValueError(f"B must be (S, m) and r (S,); got {B.shape} and {r.shape}.")
    if not (np.all(np.isfinite(B)) and np.all(np.isfinite(r))):
        raise ValueError("the design and targets must be finite.")
    m = B.shape[1]
    # ||B d - r||^2 = ||R d - Q^T r||^2 + ||r||^2 - ||Q^T r||^2: an m x m NNLS, independent of S
    Q, R = la.qr(B, mode="economic")
    qr_ = Q.T @ r
    delta, _ = nnls(R, qr_, maxiter=50 * max(m, 1))
    res = B @ delta - r
    grad = 2.0 * (B.T @ res)
    beta = np.cumsum(delta[::-1])[::-1]
    kkt = {"grad_min": float(grad.min()) if m else 0.0, "complementarity": float(grad @ delta)}
    return OrderedNNLSResult(beta, delta, float(res @ res), kkt)
