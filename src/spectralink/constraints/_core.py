"""The :class:`Constraints` value object, its generators and coercion (see the package)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from os import PathLike

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.sparse.csgraph import connected_components
from sklearn.utils import check_random_state

from ..io import labeled_mask
from ..utils import Int, check_params
from ._csv import id_positions, write_pairs_csv


class InconsistentConstraintsError(ValueError):
    """Pairs that no partition satisfies: ``pair`` (row positions) is both a must-link and a
    cannot-link, or a cannot-link whose ends the must-link ``chain`` joins."""

    def __init__(self, message: str, pair: tuple[int, int], chain: list[int] | None = None):
        super().__init__(message)
        self.pair = pair
        self.chain = chain


def _as_pairs(pairs, name: str) -> np.ndarray:
    if pairs is None:
        return np.empty((0, 2), dtype=np.int64)
    arr = np.asarray(pairs)
    if arr.size == 0:
        return np.empty((0, 2), dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{name} must be an array of shape (n_pairs, 2), got shape {arr.shape}.")
    if not np.issubdtype(arr.dtype, np.integer):
        if not np.issubdtype(arr.dtype, np.floating) or not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must contain integer point indices.")
        if np.any(arr != np.round(arr)):
            bad = arr[np.any(arr != np.round(arr), axis=1)][0]
            raise ValueError(f"{name} pair {tuple(bad)} has a non-integer index.")
    return arr.astype(np.int64)


def _merge_duplicates(pairs: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort each pair (i < j), merge duplicates keeping the largest weight."""
    if len(pairs) == 0:
        return pairs, weights
    pairs = np.sort(pairs, axis=1)
    uniq, inverse = np.unique(pairs, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    merged = np.zeros(len(uniq))
    np.maximum.at(merged, inverse, weights)
    return uniq, merged


class Constraints:
    """Must-link and cannot-link pairs over ``n_samples`` points.

    Parameters
    ----------
    must_link : array-like of shape (n_ml, 2), default=None
        Pairs of point indices that belong to the same cluster.
    cannot_link : array-like of shape (n_cl, 2), default=None
        Pairs of point indices that belong to different clusters.
    n_samples : int
        Number of points the indices refer to.
    weights : array-like of shape (n_ml + n_cl,), default=None
        Positive weight (degree of belief) of each pair, must-links first then
        cannot-links, in the order given. ``None`` means weight 1 for every pair.

    Raises
    ------
    ValueError
        If an index is negative or ``>= n_samples``, a pair joins a point with itself,
        a pair is both must-link and cannot-link, a cannot-link joins two points
        connected by a chain of must-links, or a weight is not positive and finite.
        The message names the offending pair. Duplicate pairs (in either order) are
        merged into one, keeping the largest weight.

    Attributes
    ----------
    must_link : ndarray of shape (n_ml, 2), int64
        The distinct must-link pairs, each ``i < j``, sorted.
    cannot_link : ndarray of shape (n_cl, 2), int64
        The distinct cannot-link pairs, each ``i < j``, sorted.
    ml_weights : ndarray of shape (n_ml,)
        Weight of every must-link pair (1 when none was given).
    cl_weights : ndarray of shape (n_cl,)
        Weight of every cannot-link pair (1 when none was given).

    Examples
    --------
    >>> from spectralink import Constraints
    >>> c = Constraints(must_link=[(0, 1)], cannot_link=[(1, 2)], n_samples=3)
    >>> c.n_must_link, c.n_cannot_link
    (1, 1)
    >>> more = Constraints(must_link=[(1, 0)], cannot_link=[(0, 2)], n_samples=3)
    >>> (c | more).n_must_link, (c | more).n_cannot_link
    (1, 2)
    >>> c.take([1]).cannot_link.tolist()
    [[1, 2]]
    """

    def __init__(
        self,
        must_link: ArrayLike | None = None,
        cannot_link: ArrayLike | None = None,
        n_samples: int | None = None,
        weights: ArrayLike | None = None,
    ) -> None:
        ml = _as_pairs(must_link, "must_link")
        cl = _as_pairs(cannot_link, "cannot_link")
        check_params({"n_samples": [Int(1, None)]}, {"n_samples": n_samples}, "Constraints")
        self.n_samples = int(n_samples)

        if weights is None:
            w = np.ones(len(ml) + len(cl))
        else:
            w = np.asarray(weights, dtype=float).ravel()
            if w.shape[0] != len(ml) + len(cl):
                raise ValueError(
                    f"weights has {w.shape[0]} entries but there are {len(ml)} must-links and "
                    f"{len(cl)} cannot-links ({len(ml) + len(cl)} pairs)."
                )
            bad = np.flatnonzero(~np.isfinite(w) | (w <= 0))
            if len(bad):
                k = bad[0]
                pair = ml[k] if k < len(ml) else cl[k - len(ml)]
                raise ValueError(
                    f"weight {float(w[k])!r} of pair ({pair[0]}, {pair[1]}) must be positive "
                    "and finite."
                )

        for name, pairs in (("must-link", ml), ("cannot-link", cl)):
            if len(pairs) == 0:
                continue
            out = (pairs < 0) | (pairs >= self.n_samples)
            if out.any():
                i, j = pairs[np.flatnonzero(out.any(axis=1))[0]]
                raise ValueError(
                    f"{name} pair ({i}, {j}) has an index out of range [0, {self.n_samples})."
                )
            self_pairs = pairs[:, 0] == pairs[:, 1]
            if self_pairs.any():
                i = pairs[np.flatnonzero(self_pairs)[0], 0]
                raise ValueError(f"{name} pair ({i}, {i}) joins a point with itself.")

        self.must_link, self.ml_weights = _merge_duplicates(ml, w[: len(ml)])
        self.cannot_link, self.cl_weights = _merge_duplicates(cl, w[len(ml) :])
        self._check_consistency()

    # ------------------------------------------------------------------ validation
    def _check_consistency(self) -> None:
        ml, cl = self.must_link, self.cannot_link
        if len(ml) == 0 or len(cl) == 0:
            return
        n = self.n_samples
        ml_keys = ml[:, 0] * n + ml[:, 1]
        cl_keys = cl[:, 0] * n + cl[:, 1]
        both = np.intersect1d(ml_keys, cl_keys)
        if len(both):
            i, j = divmod(int(both[0]), n)
            raise InconsistentConstraintsError(
                f"pair ({i}, {j}) is both a must-link and a cannot-link.", (i, j)
            )
        comp = self.ml_components
        inside = comp[cl[:, 0]] == comp[cl[:, 1]]
        if inside.any():
            i, j = cl[np.flatnonzero(inside)[0]]
            chain = self._ml_path(int(i), int(j))
            raise InconsistentConstraintsError(
                f"cannot-link ({i}, {j}) joins two points linked by a chain of must-links "
                f"({' - '.join(map(str, chain))}); the constraints are inconsistent.",
                (int(i), int(j)),
                chain,
            )

    def _ml_path(self, source: int, target: int) -> list[int]:
        """A shortest must-link chain from ``source`` to ``target`` (for error messages)."""
        adj: dict[int, list[int]] = {}
        for a, b in self.must_link:
            adj.setdefault(int(a), []).append(int(b))
            adj.setdefault(int(b), []).append(int(a))
        parent = {source: source}
        frontier = [source]
        while frontier and target not in parent:
            nxt = []
            for u in frontier:
                for v in adj.get(u, ()):
                    if v not in parent:
                        parent[v] = u
                        nxt.append(v)
            frontier = nxt
        path = [target]
        while path[-1] != source:
            path.append(parent[path[-1]])
        return path[::-1]

    # ------------------------------------------------------------------ basic facts
    @property
    def n_must_link(self) -> int:
        return len(self.must_link)

    @property
    def n_cannot_link(self) -> int:
        return len(self.cannot_link)

    def __len__(self) -> int:
        return self.n_must_link + self.n_cannot_link

    @property
    def is_empty(self) -> bool:
        return len(self) == 0

    def __repr__(self) -> str:
        return (
            f"Constraints(n_samples={self.n_samples}, n_must_link={self.n_must_link}, "
            f"n_cannot_link={self.n_cannot_link})"
        )

    @property
    def is_weighted(self) -> bool:
        return bool(np.any(self.ml_weights != 1) or np.any(self.cl_weights != 1))

    @property
    def pairs(self) -> np.ndarray:
        """All pairs, shape ``(len(self), 2)``: the must-links, then the cannot-links.

        This is the indexing of :meth:`take` and :meth:`violated`: pair ``p`` is a
        must-link when ``p < n_must_link``.
        """
        return np.vstack([self.must_link, self.cannot_link])

    @property
    def weights(self) -> np.ndarray:
        """Weight of every pair of :attr:`pairs` (``ml_weights`` then ``cl_weights``)."""
        return np.concatenate([self.ml_weights, self.cl_weights])

    # ------------------------------------------------------------------ cached views
    @cached_property
    def ml_components(self) -> np.ndarray:
        """Component id of every point in the must-link graph (transitive closure).

        Points without must-links are singleton components. Ids are 0..n_components-1,
        numbered in order of first appearance of their smallest member.
        """
        n = self.n_samples
        ml = self.must_link
        graph = sp.coo_matrix((np.ones(len(ml)), (ml[:, 0], ml[:, 1])), shape=(n, n)).tocsr()
        _, labels = connected_components(graph, directed=False)
        # renumber by first occurrence so ids do not depend on SciPy internals
        _, first = np.unique(labels, return_index=True)
        order = np.argsort(first)
        remap = np.empty_like(order)
        remap[order] = np.arange(len(order))
        return remap[labels]

    @cached_property
    def n_ml_components(self) -> int:
        return int(self.ml_components.max()) + 1

    @cached_property
    def signed_matrix(self) -> sp.csr_matrix:
        """Sparse symmetric Q: +w on must-link pairs, -w on cannot-link pairs, 0 diagonal."""
        n = self.n_samples
        ml, cl = self.must_link, self.cannot_link
        rows = np.concatenate([ml[:, 0], ml[:, 1], cl[:, 0], cl[:, 1]])
        cols = np.concatenate([ml[:, 1], ml[:, 0], cl[:, 1], cl[:, 0]])
        mlw, clw = self.ml_weights, self.cl_weights
        vals = np.concatenate([mlw, mlw, -clw, -clw])
        return sp.csr_matrix((vals, (rows, cols)), shape=(n, n))

    @property
    def Y(self) -> sp.csr_matrix:
        """The E2CP/LSCP constraint matrix (ML = +w, CL = -w); same as :attr:`signed_matrix`."""
        return self.signed_matrix

    @cached_property
    def targets(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """CCSR/CCSKL target list ``(i, j, t, w)``.

        The first ``n_samples`` entries are the diagonal terms ``(i, i, 1, 1)``, then the
        must-links with target 1, then the cannot-links with target 0.
        """
        n = self.n_samples
        diag = np.arange(n)
        i = np.concatenate([diag, self.must_link[:, 0], self.cannot_link[:, 0]])
        j = np.concatenate([diag, self.must_link[:, 1], self.cannot_link[:, 1]])
        t = np.concatenate([np.ones(n), np.ones(self.n_must_link), np.zeros(self.n_cannot_link)])
        w = np.concatenate([np.ones(n), self.ml_weights, self.cl_weights])
        return i, j, t, w

    @cached_property
    def constrained_points(self) -> np.ndarray:
        """Sorted indices of the points that appear in at least one pair."""
        return np.unique(np.concatenate([self.must_link.ravel(), self.cannot_link.ravel()]))

    # ------------------------------------------------------------------ utilities
    def subset(self, indices: ArrayLike) -> Constraints:
        """Constraints restricted to the points ``indices``, re-indexed 0..len(indices)-1."""
        indices = np.asarray(indices, dtype=np.int64)
        pos = np.full(self.n_samples, -1, dtype=np.int64)
        pos[indices] = np.arange(len(indices))

        def keep(pairs, w):
            mapped = pos[pairs] if len(pairs) else pairs
            ok = (mapped >= 0).all(axis=1) if len(pairs) else np.zeros(0, bool)
            return mapped[ok], w[ok]

        ml, mlw = keep(self.must_link, self.ml_weights)
        cl, clw = keep(self.cannot_link, self.cl_weights)
        return Constraints(ml, cl, n_samples=len(indices), weights=np.concatenate([mlw, clw]))

    def take(self, indices: ArrayLike) -> Constraints:
        """The constraints made of the pairs ``indices`` of :attr:`pairs`, weights kept.

        Parameters
        ----------
        indices : array-like of int
            Positions in :attr:`pairs` (must-links ``0 .. n_must_link - 1``, then
            cannot-links), in any order; a repeated position counts once.

        Returns
        -------
        Constraints
            Over the same ``n_samples`` points; its pairs keep the canonical order
            (must-links then cannot-links, each sorted), not the order of ``indices``.
        """
        idx = np.asarray(indices)
        if idx.size == 0:
            idx = np.empty(0, dtype=np.int64)
        if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(
                f"indices must be a 1-d array of integer pair positions, got {idx.dtype} "
                f"array of shape {idx.shape}."
            )
        bad = (idx < 0) | (idx >= len(self))
        if bad.any():
            raise ValueError(
                f"pair position {int(idx[bad][0])} is out of range [0, {len(self)}) "
                f"({self.n_must_link} must-links then {self.n_cannot_link} cannot-links)."
            )
        m1 = self.n_must_link
        ml, cl = idx[idx < m1], idx[idx >= m1] - m1
        return Constraints(
            self.must_link[ml],
            self.cannot_link[cl],
            n_samples=self.n_samples,
            weights=np.concatenate([self.ml_weights[ml], self.cl_weights[cl]]),
        )

    def union(self, other: Constraints) -> Constraints:
        """The pairs of both sets (also ``self | other``).

        A pair in both keeps the larger weight, as duplicates do on construction.

        Raises
        ------
        ValueError
            If the two sets index different numbers of points, or together are
            inconsistent (the message names the pair, as the constructor's does).
        """
        if not isinstance(other, Constraints):
            raise TypeError(
                f"can only join Constraints with Constraints, got {type(other).__name__}."
            )
        if other.n_samples != self.n_samples:
            raise ValueError(
                f"cannot join constraints over {self.n_samples} points with constraints "
                f"over {other.n_samples} points."
            )
        return Constraints(
            np.vstack([self.must_link, other.must_link]),
            np.vstack([self.cannot_link, other.cannot_link]),
            n_samples=self.n_samples,
            weights=np.concatenate(
                [self.ml_weights, other.ml_weights, self.cl_weights, other.cl_weights]
            ),
        )

    def __or__(self, other: object) -> Constraints:
        if not isinstance(other, Constraints):
            return NotImplemented
        return self.union(other)

    def violated(self, labels: ArrayLike) -> np.ndarray:
        """Boolean mask over ``[must_link; cannot_link]`` of the pairs ``labels`` violates."""
        labels = np.asarray(labels)
        if labels.shape != (self.n_samples,):
            raise ValueError(
                f"labels has shape {labels.shape}, expected ({self.n_samples},) for these "
                "constraints."
            )
        ml, cl = self.must_link, self.cannot_link
        return np.concatenate(
            [labels[ml[:, 0]] != labels[ml[:, 1]], labels[cl[:, 0]] == labels[cl[:, 1]]]
        )

    # ------------------------------------------------------------------ generators
    @classmethod
    def from_labels(
        cls, y: ArrayLike, n_pairs: int, random_state: int | np.random.RandomState | None = None
    ) -> Constraints:
        """Random pairs labelled by ground truth (the protocol of COSC, LSCP, E2CP).

        ``n_pairs`` distinct pairs of distinct labelled points are drawn uniformly at
        random; a pair with equal labels becomes a must-link, otherwise a cannot-link.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Labels. Partial labels are allowed, as in scikit-learn's semi-supervised
            estimators: a negative number (e.g. ``-1``), ``NaN``, ``None`` or an empty
            string marks an unlabelled point, and no pair ever involves one.
        n_pairs : int
            Number of pairs, at most ``m * (m - 1) / 2`` for ``m`` labelled points.
        random_state : int, RandomState instance or None
            Seed of the draw.
        """
        y = _check_labels(y)
        n = len(y)
        check_params({"n_pairs": [Int(0, None)]}, {"n_pairs": n_pairs}, "from_labels")
        labeled = np.flatnonzero(labeled_mask(y))
        m = len(labeled)
        max_pairs = m * (m - 1) // 2
        if n_pairs > max_pairs:
            raise ValueError(
                f"n_pairs={n_pairs} exceeds the {max_pairs} distinct pairs of {m} "
                + (
                    f"labelled points ({n - m} of the {n} points are unlabelled)."
                    if m < n
                    else "points."
                )
            )
        rng = check_random_state(random_state)
        keys = np.empty(0, dtype=np.int64)
        while len(keys) < n_pairs:
            need = n_pairs - len(keys)
            i = rng.randint(0, m, size=2 * need + 16)
            j = rng.randint(0, m, size=2 * need + 16)
            ok = i != j
            lo, hi = np.minimum(i[ok], j[ok]), np.maximum(i[ok], j[ok])
            new = lo * m + hi
            # keep draw order (not sorted order) so the first n_pairs are a uniform sample
            _, first = np.unique(np.concatenate([keys, new]), return_index=True)
            keys = np.concatenate([keys, new])[np.sort(first)][:n_pairs]
        # draws are positions among the labelled points; map them back to rows of y
        i, j = (labeled[a] for a in np.divmod(keys, max(m, 1)))
        same = y[i] == y[j]
        pairs = np.column_stack([i, j])
        return cls(pairs[same], pairs[~same], n_samples=n)

    @classmethod
    def from_labeled_subset(
        cls, y: ArrayLike, n_labeled: int, random_state: int | np.random.RandomState | None = None
    ) -> Constraints:
        """All pairs among ``n_labeled`` randomly chosen points (the protocol of SCACS, FCSC).

        The chosen indices and their labels are kept in :attr:`labeled_indices` and
        :attr:`labeled_y`, which methods that encode the labelled block directly use.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Labels. A negative number (e.g. ``-1``), ``NaN``, ``None`` or an empty
            string marks an unlabelled point: the subset is chosen among the labelled
            points only, so no pair ever involves an unlabelled one. To use every known
            label, pass ``n_labeled`` equal to the number of labelled points.
        n_labeled : int
            Number of labelled points to choose.
        random_state : int, RandomState instance or None
            Seed of the choice.
        """
        y = _check_labels(y)
        n = len(y)
        check_params({"n_labeled": [Int(0, None)]}, {"n_labeled": n_labeled}, "from_labeled_subset")
        labeled = np.flatnonzero(labeled_mask(y))
        m = len(labeled)
        if n_labeled > m:
            raise ValueError(
                f"n_labeled={n_labeled} exceeds the number of "
                + (f"labelled points ({m} of {n})." if m < n else f"points ({n}).")
            )
        rng = check_random_state(random_state)
        idx = labeled[np.sort(rng.choice(m, size=n_labeled, replace=False))]
        a, b = np.triu_indices(n_labeled, k=1)
        i, j = idx[a], idx[b]
        same = y[i] == y[j]
        pairs = np.column_stack([i, j])
        out = cls(pairs[same], pairs[~same], n_samples=n)
        out.labeled_indices = idx
        out.labeled_y = y[idx].copy()
        return out

    labeled_indices: np.ndarray | None = None
    labeled_y: np.ndarray | None = None

    #: rows of the file read by :func:`read_constraints_csv` left without an answer
    n_unanswered: int = 0

    @classmethod
    def from_csv(
        cls,
        path: str | PathLike,
        n_samples: int,
        *,
        skip_unanswered: bool = False,
        ids: Sequence[str] | None = None,
    ) -> Constraints:
        """Read pairs from a CSV file; see :func:`read_constraints_csv`."""
        return read_constraints_csv(path, n_samples, skip_unanswered=skip_unanswered, ids=ids)

    def to_csv(self, path: str | PathLike, *, ids: Sequence[str] | None = None) -> None:
        """Write the pairs as a CSV file ``i,j,kind[,weight]``, atomically.

        Rows follow :attr:`pairs` (must-links, then cannot-links); the weight column is
        written only when :attr:`is_weighted`. ``ids`` (one distinct string per point)
        names the points by ID instead of index. ``Constraints.from_csv(path, n_samples,
        ids=ids)`` reads back the same constraints.
        """
        if ids is not None:
            id_positions(ids, self.n_samples)
        kinds = ["ml"] * self.n_must_link + ["cl"] * self.n_cannot_link
        weights = self.weights if self.is_weighted else None
        write_pairs_csv(path, self.pairs, kinds, weights, ids=ids)


def _check_labels(y) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be a 1-d array of labels, got shape {y.shape}.")
    if len(y) < 2:
        raise ValueError("y must hold at least 2 labels to draw pairs from.")
    return y


def read_constraints_csv(
    path: str | PathLike,
    n_samples: int,
    *,
    skip_unanswered: bool = False,
    ids: Sequence[str] | None = None,
) -> Constraints:
    """Read constraints from a CSV file with columns ``i,j,kind[,weight]``.

    ``kind`` is ``ml``/``cl``, ``must-link``/``cannot-link`` or ``1``/``-1``. A header
    row is optional (detected when its first field is not an integer, or not an ID).
    Indices are 0-based. With ``skip_unanswered=True`` a row whose ``kind`` is empty (a
    pair written by ``spectralink query`` and not answered yet) is skipped and counted
    in the returned object's ``n_unanswered``; otherwise it is an error.

    ``ids`` (one string per row of the data, all distinct) makes ``i`` and ``j`` row IDs
    instead of indices: each is looked up among ``ids``.
    """
    from ._files import read_constraints_files  # it builds on Constraints

    return read_constraints_files([path], n_samples, skip_unanswered=skip_unanswered, ids=ids)[0]


def as_constraints(constraints: Constraints | tuple | None, n_samples: int) -> Constraints:
    """Coerce ``None``, a :class:`Constraints` or a ``(must_link, cannot_link)`` pair.

    Raises ``ValueError`` when a given :class:`Constraints` was built for a different
    number of points.
    """
    if constraints is None:
        return Constraints(n_samples=n_samples)
    if isinstance(constraints, Constraints):
        if constraints.n_samples != n_samples:
            raise ValueError(
                f"constraints were built for {constraints.n_samples} points but X has "
                f"{n_samples} samples."
            )
        return constraints
    if isinstance(constraints, (tuple, list)) and len(constraints) == 2:
        return Constraints(constraints[0], constraints[1], n_samples=n_samples)
    raise TypeError(
        "constraints must be None, a spectralink.Constraints, or a (must_link, cannot_link) "
        f"pair of arrays; got {type(constraints).__name__}."
    )
