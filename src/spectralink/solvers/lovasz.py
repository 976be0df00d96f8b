"""Set functions of the constrained normalized cut and their Lovász extensions.

Rangapuram & Hein (2012), "Constrained 1-spectral clustering", AISTATS, Section 2:

* the balancing function ``S_hat(C) = gvol(C) gvol(V \\ C) / gvol(V)`` with vertex
  weights ``g`` and its Lovász extension ``S(f) = (1/2G) sum_ij g_i g_j |f_i - f_j|``,
  evaluated in O(n log n) through the sorted difference vector ``s(f)``, which is also a
  subgradient of ``S`` at ``f``;
* the total variation ``TV_W(f) = sum_{i<j} w_ij |f_i - f_j|``, the Lovász extension of
  the cut;
* the penalised ratio ``F_gamma(C) = (cut(C) + gamma #viol(C)) (1/gvol(C) + 1/gvol(V\\C))``
  (paper eq. 1, gamma multiplying the number of violated cannot-links) and its exact
  minimisation over the level sets of a vector (optimal thresholding, Theorem 2.2) in
  O(n log n + |E| + |CL|) by cumulative sums over the sorted order.

Graphs are passed as undirected edge lists ``(i, j, w)`` with every edge once.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

__all__ = [
    "ThresholdResult",
    "balance_extension",
    "balance_set",
    "balance_subgradient",
    "edge_list",
    "optimal_threshold",
    "penalised_ratio",
    "total_variation",
]


def edge_list(W: sp.spmatrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Undirected edges of a symmetric matrix, each once (upper triangle): ``(i, j, w)``."""
    U = sp.triu(sp.csr_matrix(W), k=1).tocoo()
    keep = U.data != 0
    return U.row[keep].astype(np.int64), U.col[keep].astype(np.int64), U.data[keep].astype(float)


def total_variation(f: np.ndarray, i: np.ndarray, j: np.ndarray, w: np.ndarray) -> float:
    """``TV(f) = sum_e w_e |f_i - f_j|`` over undirected edges, the Lovász extension of the cut."""
    return float(np.dot(w, np.abs(f[i] - f[j])))


def balance_subgradient(f: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Sorted difference vector ``s(f)``, a subgradient of ``S`` at ``f`` (Section 2.1).

    With ``f_(1) <= ... <= f_(n)`` and tail sums ``R_i = sum_{j >= i} g_(j)``,
    ``s_(i) = g_(i) (G - R_i - R_{i+1}) / G``. It satisfies ``<s, f> = S(f)`` and
    ``<s, 1> = 0``.
    """
    order = np.argsort(f, kind="stable")
    gs = g[order]
    G = gs.sum()
    R = np.cumsum(gs[::-1])[::-1]
    R_next = np.append(R[1:], 0.0)
    s = np.empty_like(gs)
    s[order] = gs * (G - R - R_next) / G
    return s


def balance_extension(f: np.ndarray, g: np.ndarray) -> float:
    """Lovász extension ``S(f) = (1/2G) sum_ij g_i g_j |f_i - f_j|`` of the balancing function."""
    return float(np.dot(balance_subgradient(f, g), f))


def balance_set(mask: np.ndarray, g: np.ndarray) -> float:
    """Balancing function ``S_hat(C) = gvol(C) gvol(V \\ C) / gvol(V)``."""
    gC = float(g[mask].sum())
    G = float(g.sum())
    return gC * (G - gC) / G


def penalised_ratio(
    mask: np.ndarray,
    edges: tuple[np.ndarray, np.ndarray, np.ndarray],
    g: np.ndarray,
    cl: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    gamma: float = 0.0,
) -> tuple[float, float, float]:
    """``(F_gamma(C), NCut(C), #violated CLs)`` of the bipartition ``(C, V \\ C)`` (eq. 1).

    ``NCut`` here is ``cut (1/gvol(C) + 1/gvol(V\\C))``, the normalized cut with vertex
    weights ``g``. Trivial partitions give ``inf``.
    """
    mask = np.asarray(mask, dtype=bool)
    i, j, w = edges
    cut = float(w[mask[i] != mask[j]].sum())
    viol = 0.0
    if cl is not None and len(cl[0]):
        ci, cj, cw = cl
        viol = float(cw[mask[ci] == mask[cj]].sum())
    gC = float(g[mask].sum())
    gR = float(g[~mask].sum())
    if gC <= 0 or gR <= 0:
        return np.inf, np.inf, viol
    scale = 1.0 / gC + 1.0 / gR
    return (cut + gamma * viol) * scale, cut * scale, viol


class ThresholdResult(NamedTuple):
    """Best level set ``{f > t}`` of a vector under ``F_gamma``."""

    mask: np.ndarray  #: boolean indicator of C = {f > t}
    value: float  #: F_gamma(C) (or the subgraph objective, see ``outside``)
    ncut: float  #: cut (1/gvol(C) + 1/gvol(V\C)) on the given graph
    n_violated: float  #: weighted number of violated cannot-links


def optimal_threshold(
    f: np.ndarray,
    edges: tuple[np.ndarray, np.ndarray, np.ndarray],
    g: np.ndarray,
    cl: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    gamma: float = 0.0,
    *,
    outside: np.ndarray | None = None,
    max_violations: float | None = None,
) -> ThresholdResult | None:
    """Minimise ``F_gamma`` over the level sets of ``f`` (optimal thresholding, Theorem 2.2).

    Sorting ``f`` once, the cut, the generalized volume and the number of violated
    cannot-links of every prefix come from cumulative sums: an edge is internal to the
    prefix of the ``m`` smallest vertices iff the larger rank of its endpoints is below
    ``m``. Thresholds are taken only between distinct values; the trivial sets are excluded.
    Cost O(n log n + |E| + |CL|).

    Parameters
    ----------
    f : ndarray of shape (n,)
    edges : (i, j, w) undirected edge list (each edge once)
    g : ndarray of shape (n,)
        Positive vertex weights.
    cl : (i, j, w) cannot-link list, optional
    gamma : float
        Penalty per violated cannot-link.
    outside : ndarray of shape (n,), optional
        Subgraph variant used by the multi-partitioning: weight from every vertex to the
        vertices outside the subgraph. The objective becomes the change of the normalized
        multi-cut, ``(cut + o(C) + gamma v)/gvol(C) + (cut + o(C') + gamma v)/gvol(C')``,
        i.e. cuts measured against the whole graph.
    max_violations : float, optional
        Only consider level sets violating at most this (weighted) number of cannot-links.

    Returns
    -------
    ThresholdResult, or None when ``f`` is constant (no non-trivial level set) or no level
    set satisfies ``max_violations``.
    """
    f = np.asarray(f, dtype=float)
    n = f.shape[0]
    order = np.argsort(f, kind="stable")
    fs = f[order]
    valid = np.flatnonzero(fs[1:] > fs[:-1])  # prefix sizes m = valid + 1 in [1, n-1]
    if valid.size == 0:
        return None
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    i, j, w = edges
    deg = np.bincount(i, w, minlength=n) + np.bincount(j, w, minlength=n)
    vol = np.cumsum(deg[order])
    internal = np.cumsum(np.bincount(np.maximum(rank[i], rank[j]), w, minlength=n))
    cut = vol - 2.0 * internal
    gP = np.cumsum(g[order])
    G = gP[-1]
    viol = np.zeros(n)
    if cl is not None and len(cl[0]):
        ci, cj, cw = cl
        in_prefix = np.cumsum(np.bincount(np.maximum(rank[ci], rank[cj]), cw, minlength=n))
        lo = np.cumsum(np.bincount(np.minimum(rank[ci], rank[cj]), cw, minlength=n))
        viol = in_prefix + (cw.sum() - lo)  # both ends in the prefix, or both in the rest
    m = valid  # index m holds the prefix of size m + 1
    if max_violations is not None:
        m = m[viol[m] <= max_violations + 1e-9]
        if m.size == 0:
            return None
    gp, gr = gP[m], G - gP[m]
    ncut = cut[m] * (1.0 / gp + 1.0 / gr)
    if outside is None:
        value = (cut[m] + gamma * viol[m]) * (1.0 / gp + 1.0 / gr)
    else:
        oP = np.cumsum(outside[order])[m]
        oR = outside.sum() - oP
        pen = cut[m] + gamma * viol[m]
        value = (pen + oP) / gp + (pen + oR) / gr
    b = int(np.argmin(value))
    mask = np.zeros(n, dtype=bool)
    mask[order[m[b] + 1 :]] = True  # C = {f > t}, the complement of the prefix
    return ThresholdResult(mask, float(value[b]), float(ncut[b]), float(viol[m[b]]))
