"""Reductions of a graph by its constraints: must-link merging, cannot-link re-indexing,
2-colouring of the cannot-link graph.

Rangapuram & Hein (2012), "Constrained 1-spectral clustering", AISTATS, Section 2.2
(Lemma 2.3: contracting a must-link component into one vertex whose weight is the sum of
its vertices' weights preserves the cut, the generalized volume and hence the normalized
cut of every partition that keeps the component together); Xu, Li & Schuurmans (2009)
encode ``v_i = v_j`` the same way. Shared by COSC and SCLC; pure functions on sparse
matrices and index arrays.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, connected_components

__all__ = [
    "consistent_partition",
    "merge_colour_classes",
    "merge_vertices",
    "reduce_cannot_links",
    "restrict_cannot_links",
    "two_colouring",
]

_EMPTY_CL = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))


def merge_vertices(
    W: sp.spmatrix, g: np.ndarray, groups: np.ndarray
) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Contract every group of vertices into one super-vertex (Section 2.2, Lemma 2.3).

    ``w_{tau l} = sum_{i in T} w_il``, ``g_tau = sum_{i in T} g_i``, edges inside a group
    are dropped. New ids follow the first occurrence of each group, so singletons keep
    their relative order. Cut and gvol, hence NCut and ``F_gamma``, are unchanged for every
    partition that does not split a group.

    Returns
    -------
    W_reduced : CSR matrix, g_reduced : ndarray, mapping : ndarray (old id -> new id)
    """
    groups = np.asarray(groups)
    _, first, inverse = np.unique(groups, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    mapping = rank[inverse.ravel()]
    m = len(first)
    n = len(groups)
    P = sp.csr_matrix((np.ones(n), (np.arange(n), mapping)), shape=(n, m))
    Wr = (P.T @ sp.csr_matrix(W) @ P).tocsr()
    Wr.setdiag(0)
    Wr.eliminate_zeros()
    Wr.sort_indices()
    return Wr, np.bincount(mapping, g, minlength=m), mapping


def reduce_cannot_links(
    cl: np.ndarray, weights: np.ndarray, mapping: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cannot-links re-indexed through a merge ``mapping`` and de-duplicated (max weight).

    Raises ``ValueError`` when a cannot-link falls inside one merged group (inconsistent).
    """
    if len(cl) == 0:
        return _EMPTY_CL
    pairs = np.sort(mapping[cl], axis=1)
    bad = np.flatnonzero(pairs[:, 0] == pairs[:, 1])
    if len(bad):
        a, b = cl[bad[0]]
        raise ValueError(
            f"inconsistent constraints: cannot-link ({a}, {b}) joins two points that must be "
            "in the same cluster."
        )
    uniq, inv = np.unique(pairs, axis=0, return_inverse=True)
    w = np.zeros(len(uniq))
    np.maximum.at(w, inv.ravel(), weights)
    return uniq[:, 0].astype(np.int64), uniq[:, 1].astype(np.int64), w


def two_colouring(n: int, ci: np.ndarray, cj: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2-colour the cannot-link graph; ``(colour, component)``, -1 for unconstrained vertices.

    Raises ``ValueError`` on an odd cycle: the cannot-links are then inconsistent for two
    clusters.
    """
    colour = np.full(n, -1, dtype=np.int64)
    comp = np.full(n, -1, dtype=np.int64)
    if len(ci) == 0:
        return colour, comp
    Q = sp.csr_matrix((np.ones(len(ci)), (ci, cj)), shape=(n, n))
    Q = (Q + Q.T).tocsr()
    _, lab = connected_components(Q, directed=False)
    touched = np.zeros(n, dtype=bool)
    touched[ci] = touched[cj] = True
    for root in np.unique(np.concatenate([ci, cj])):
        if colour[root] >= 0:
            continue
        order, pred = breadth_first_order(Q, root, directed=False, return_predecessors=True)
        colour[root] = 0
        for node in order[1:]:
            colour[node] = 1 - colour[pred[node]]
        comp[order] = lab[root]
    clash = np.flatnonzero(colour[ci] == colour[cj])
    if len(clash):
        raise ValueError(
            "inconsistent constraints for 2 clusters: the cannot-links contain an odd cycle "
            f"(through the pair ({ci[clash[0]]}, {cj[clash[0]]}) of the reduced graph), so no "
            "bipartition satisfies them all. Use mode='soft' or more clusters."
        )
    return colour, comp


def consistent_partition(mask: np.ndarray, cl: tuple, g: np.ndarray) -> np.ndarray:
    """Repair a bipartition so every cannot-link is separated (a consistent start, Thm 3.1).

    Valid when the cannot-links form a matching, as after the 2-colouring merge: for every
    violated pair the lighter endpoint (by vertex weight) changes side.
    """
    mask = np.asarray(mask, dtype=bool).copy()
    ci, cj, _ = cl
    for a, b in zip(ci, cj, strict=True):
        if mask[a] == mask[b]:
            mask[a if g[a] <= g[b] else b] = not mask[a]
    if mask.all() or not mask.any():
        mask[int(np.argmin(g))] = not mask[int(np.argmin(g))]
    return mask


def merge_colour_classes(
    W: sp.spmatrix, g: np.ndarray, cl: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, tuple]:
    """Derived must-links of a bipartition: merge each colour class of every cannot-link
    component (:func:`two_colouring`), so each component becomes two super-vertices joined
    by one (unweighted) cannot-link.

    In any bipartition satisfying the cannot-links, the vertices of one colour class lie on
    the same side, so the merge keeps every consistent bipartition (and its normalized cut).

    Returns
    -------
    W_reduced, g_reduced, mapping (old id -> new id), cannot-links ``(i, j, ones)``
    """
    n = W.shape[0]
    colour, comp = two_colouring(n, cl[0], cl[1])
    groups = np.where(colour >= 0, n + 2 * comp + colour, np.arange(n))
    W2, g2, mapping = merge_vertices(W, g, groups)
    ci, cj, _ = reduce_cannot_links(np.column_stack(cl[:2]), cl[2], mapping)
    return W2, g2, mapping, (ci, cj, np.ones(len(ci)))


def restrict_cannot_links(
    cl: tuple[np.ndarray, np.ndarray, np.ndarray], idx: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cannot-links with both ends in ``idx`` (of ``n`` vertices), re-indexed to
    positions in ``idx``."""
    ci, cj, w = cl
    if len(ci) == 0:
        return _EMPTY_CL
    pos = np.full(n, -1, dtype=np.int64)
    pos[idx] = np.arange(len(idx))
    a, b = pos[ci], pos[cj]
    keep = (a >= 0) & (b >= 0)
    return a[keep], b[keep], w[keep]
