"""What the transitive closure of known constraints decides, and batches that stay undecided.

:func:`implied_pairs` reads the closure (same must-link component: must-link; a cannot-link
between the two components: cannot-link). The neighbourhood strategies read the known groups
off the constraints through :func:`known_structure`; :class:`BatchForest` accepts a pair into
a batch only while no pair of the batch is decided by the known constraints plus any answers
to the other pairs, so answers to one batch can never contradict each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ..constraints import Constraints


def cl_component_keys(constraints: Constraints) -> np.ndarray:
    """Sorted unique keys ``a * C + b`` (a < b) of the cannot-linked component pairs."""
    comp = constraints.ml_components
    c = constraints.n_ml_components
    cl = constraints.cannot_link
    if len(cl) == 0:
        return np.empty(0, dtype=np.int64)
    a, b = comp[cl[:, 0]], comp[cl[:, 1]]
    return np.unique(np.minimum(a, b).astype(np.int64) * c + np.maximum(a, b))


def implied_pairs(constraints: Constraints, pairs: ArrayLike) -> np.ndarray:
    """What the transitive closure of ``constraints`` says about each pair.

    Parameters
    ----------
    constraints : Constraints
    pairs : array-like of shape (m, 2)
        Point indices.

    Returns
    -------
    ndarray of shape (m,), int
        ``1``: the two points are in one must-link component (must-link implied, or the
        same point); ``-1``: a cannot-link joins their must-link components (cannot-link
        implied); ``0``: undecided.
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    out = np.zeros(len(pairs), dtype=np.int64)
    if len(pairs) == 0:
        return out
    n = constraints.n_samples
    if pairs.min() < 0 or pairs.max() >= n:
        raise ValueError(f"pair indices must be in [0, {n}).")
    comp = constraints.ml_components
    a, b = comp[pairs[:, 0]], comp[pairs[:, 1]]
    out[a == b] = 1
    keys = cl_component_keys(constraints)
    if len(keys):
        c = constraints.n_ml_components
        q = np.minimum(a, b).astype(np.int64) * c + np.maximum(a, b)
        out[np.isin(q, keys) & (a != b)] = -1
    return out


@dataclass
class Known:
    """The known structure of a constraint set, as the neighbourhood strategies see it."""

    comp: np.ndarray  # (n,) must-link component of every point
    n_comp: int
    cl_keys: np.ndarray  # sorted keys of cannot-linked component pairs
    constrained: np.ndarray  # (n,) bool: the point appears in a pair
    hoods: np.ndarray  # (l,) component ids of the neighbourhoods
    hood_of_comp: np.ndarray  # (n_comp,) index into hoods, -1 elsewhere
    excluded: np.ndarray  # (n_comp, l) bool: component cannot-linked to neighbourhood h
    members: list = field(default_factory=list)  # point indices of every neighbourhood

    @property
    def n_hoods(self) -> int:
        return len(self.hoods)


def known_structure(constraints: Constraints, n_clusters: int) -> Known:
    n = constraints.n_samples
    comp = constraints.ml_components
    n_comp = constraints.n_ml_components
    keys = cl_component_keys(constraints)
    constrained = np.zeros(n, dtype=bool)
    constrained[constraints.constrained_points] = True
    # greedy clique of the cannot-link graph over components, largest components first
    adj: dict[int, set] = {}
    a, b = np.divmod(keys, n_comp) if len(keys) else (np.empty(0, int), np.empty(0, int))
    for u, v in zip(a.tolist(), b.tolist(), strict=True):
        adj.setdefault(u, set()).add(v)
        adj.setdefault(v, set()).add(u)
    sizes = np.bincount(comp, minlength=n_comp)
    cand = np.unique(comp[constrained])
    order = cand[np.lexsort((cand, -sizes[cand]))]
    hoods: list[int] = []
    for c in order.tolist():
        if len(hoods) >= n_clusters:
            break
        if all(h in adj.get(c, ()) for h in hoods):
            hoods.append(c)
    hoods_arr = np.asarray(hoods, dtype=np.int64)
    hood_of_comp = np.full(n_comp, -1, dtype=np.int64)
    hood_of_comp[hoods_arr] = np.arange(len(hoods))
    excluded = np.zeros((n_comp, len(hoods)), dtype=bool)
    for u, v in zip(a.tolist(), b.tolist(), strict=True):
        if hood_of_comp[v] >= 0:
            excluded[u, hood_of_comp[v]] = True
        if hood_of_comp[u] >= 0:
            excluded[v, hood_of_comp[u]] = True
    members = [np.flatnonzero(comp == h) for h in hoods] if hoods else []
    return Known(comp, n_comp, keys, constrained, hoods_arr, hood_of_comp, excluded, members)


class BatchForest:
    """Accepts a pair only if the batch stays a forest over the must-link components
    that never joins two cannot-linked components (so no pair of the batch is decided by
    the known constraints plus any answers to the other pairs of the batch)."""

    def __init__(self, known: Known, exclude: set | None, n: int) -> None:
        self.comp = known.comp
        self.n_comp = known.n_comp
        self.cl = set(known.cl_keys.tolist())
        self.parent: dict[int, int] = {}
        self.trees: dict[int, list[int]] = {}
        self.exclude = exclude or set()
        self.n = n
        self.pairs: list[tuple[int, int]] = []

    def _find(self, c: int) -> int:
        root = c
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while self.parent.get(c, c) != root:
            self.parent[c], c = root, self.parent[c]
        return root

    def try_add(self, i: int, j: int) -> bool:
        i, j = int(i), int(j)
        if i == j:
            return False
        lo, hi = min(i, j), max(i, j)
        if lo * self.n + hi in self.exclude:
            return False
        ra, rb = self._find(int(self.comp[i])), self._find(int(self.comp[j]))
        if ra == rb:
            return False
        ta, tb = self.trees.get(ra, [ra]), self.trees.get(rb, [rb])
        C = self.n_comp
        if self.cl:
            for u in ta:
                for v in tb:
                    if min(u, v) * C + max(u, v) in self.cl:
                        return False
        self.parent[rb] = ra
        self.trees[ra] = ta + tb
        self.trees.pop(rb, None)
        self.pairs.append((lo, hi))
        return True

    def __len__(self) -> int:
        return len(self.pairs)
