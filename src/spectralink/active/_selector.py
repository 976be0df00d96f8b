"""Choosing the next pairs to ask: :class:`PairSelector` (its strategies are a table of
functions in :mod:`._strategies`) and :func:`select_pairs`.

The selector builds what a strategy needs once per data set (distances, the k-NN graph and its
spectral embedding) and then chooses batches in O(n k) or O(n d) time; every batch is a
:class:`~spectralink.active._closure.BatchForest`, so no chosen pair is known or decided. The
strategies are described in :mod:`spectralink.active`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike

from ..constraints import Constraints, as_constraints
from ..graph import check_affinity
from ..model_selection import choose_n_clusters, default_k_range, eigengap_n_clusters
from ..spectral import laplacian_eigenvectors
from ..utils import (
    POSITIVE,
    Int,
    StrOptions,
    check_features,
    check_n_clusters,
    check_params,
    validate_params,
)
from ._closure import BatchForest, known_structure
from ._geometry import SelectionGeometry
from ._strategies import STRATEGY_FUNCTIONS

#: The strategy names :func:`select_pairs` and :func:`learn` accept (besides ``"auto"``).
STRATEGIES = ("random", "ffqs", "minmax", "npu", "spectral")
#: What ``strategy="auto"`` means (the measurements behind it: ``docs/results/active``).
AUTO_STRATEGY = "spectral"
#: Strategies that read the current partition (the estimator's ``labels_``).
PARTITION_STRATEGIES = frozenset({"npu", "spectral"})


def resolve_strategy(strategy: str) -> str:
    """The strategy name ``strategy`` stands for: one of :data:`STRATEGIES`.

    Case is ignored; ``"auto"`` resolves to :data:`AUTO_STRATEGY`.

    Raises
    ------
    ValueError
        If ``strategy`` is not one of :data:`STRATEGIES` or ``"auto"``.
    """
    if not isinstance(strategy, str) or strategy.lower() not in (*STRATEGIES, "auto"):
        raise ValueError(
            f"strategy must be one of {', '.join(STRATEGIES)} or 'auto', got {strategy!r}."
        )
    strategy = strategy.lower()
    return AUTO_STRATEGY if strategy == "auto" else strategy


class PairSelector:
    """Chooses the next pairs to ask, for one data set.

    ``fit(X)`` stores the data; what a strategy needs (squared norms for distances, the
    k-NN graph and its spectral embedding, a random forest on the partition) is computed
    on first use and kept, so that repeated :meth:`select` calls in a query loop cost
    O(n k) or O(n d) each. Nothing of size n x n is formed.

    Parameters
    ----------
    n_clusters : int or None
        Number of clusters k (the neighbourhood strategies look for k groups). ``None``:
        k by the eigengap of the selector's graph at ``fit``
        (:func:`~spectralink.model_selection.eigengap_n_clusters`, in
        :func:`~spectralink.model_selection.default_k_range`), until
        :meth:`use_n_clusters` gives another (the query loop passes the k its estimator
        chose from the answers).
    strategy : str, default="auto"
        One of :data:`STRATEGIES` or ``"auto"`` (:data:`AUTO_STRATEGY`).
    affinity : {"knn", "precomputed"}, default="knn"
        ``"precomputed"``: ``X`` is a square affinity matrix; the feature-space
        strategies (``"ffqs"``, ``"minmax"``, ``"npu"``) then work on its spectral
        embedding.
    n_neighbors : int, default=20
        Neighbours of the k-NN graph of the spectral embedding (the library's default).
    n_trees : int, default=50
        Trees of NPU's random forest (the paper's setting).
    prior : float, default=1.0
        ``"spectral"``: weight, in points, of the uniform prior on which group a partition
        cluster is, against the answers seen for its points.
    random_state : int, RandomState or None
        Seeds every random choice; a fitted selector draws from one generator, so a
        sequence of :meth:`select` calls is reproducible.

    Attributes
    ----------
    n_samples_ : int
    n_clusters_ : int
        The k the strategies use.
    strategy_ : str
        The resolved strategy name.
    embedding_ : ndarray of shape (n_samples, n_clusters)
        Row-normalised spectral embedding (computed on first use).
    geometry_ : SelectionGeometry
        What the strategies (:data:`~spectralink.active._strategies.STRATEGY_FUNCTIONS`)
        read of the data, kept between batches.
    """

    _parameter_constraints: dict = {
        "strategy": [str],
        "affinity": [StrOptions({"knn", "precomputed"})],
        "n_neighbors": [Int(1, None)],
        "n_trees": [Int(1, None)],
        "prior": [POSITIVE],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_clusters: int,
        *,
        strategy: str = "auto",
        affinity: str = "knn",
        n_neighbors: int = 20,
        n_trees: int = 50,
        prior: float = 1.0,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.strategy = strategy
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.n_trees = n_trees
        self.prior = prior
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def fit(self, X: ArrayLike) -> PairSelector:
        """Store the data (features, or an affinity with ``affinity="precomputed"``)."""
        params = {name: getattr(self, name) for name in self._parameter_constraints}
        check_params(self._parameter_constraints, params, type(self).__name__)
        self.strategy_ = resolve_strategy(self.strategy)
        if self.affinity == "precomputed":
            X, W = None, check_affinity(X)
        else:
            X, W = np.asarray(check_features(X), dtype=np.float64), None
        n = (X if X is not None else W).shape[0]
        self.n_samples_ = n
        k = 2 if self.n_clusters is None else check_n_clusters(self.n_clusters, n)
        self.geometry_ = SelectionGeometry(
            X, W, k, n_neighbors=self.n_neighbors, n_trees=self.n_trees, prior=self.prior,
            random_state=self.random_state,
        )  # fmt: skip
        self.n_clusters_ = None
        self.use_n_clusters(self._eigengap_k() if self.n_clusters is None else k)
        return self

    def use_n_clusters(self, k: int) -> PairSelector:
        """Let the strategies look for ``k`` groups from now on (what depends on k, the
        spectral embedding among them, is recomputed on next use); returns self."""
        self._check_fitted()
        k = check_n_clusters(k, self.n_samples_)
        if getattr(self, "n_clusters_", None) != k:
            self.n_clusters_ = k
            self.geometry_.set_n_clusters(k)
        return self

    def _eigengap_k(self) -> int:
        lo, hi = default_k_range(self.n_samples_)
        geo = self.geometry_
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a disconnected graph is still usable here
            vals, _ = laplacian_eigenvectors(geo.graph(), hi + 1, random_state=geo.seed())
        return eigengap_n_clusters(vals, (lo, hi))

    def _check_fitted(self) -> None:
        if not hasattr(self, "n_samples_"):
            raise ValueError("this PairSelector is not fitted; call fit(X) first.")

    @property
    def embedding_(self) -> np.ndarray:
        self._check_fitted()
        return self.geometry_.embedding

    # ------------------------------------------------------------------ select
    def rng_state(self) -> tuple:
        """The state of the selector's random stream (to save a session and resume it)."""
        return self.geometry_.rng.get_state()

    def set_rng_state(self, state: tuple) -> None:
        """Resume the selector's random stream from :meth:`rng_state`."""
        self.geometry_.rng.set_state(state)

    def select(
        self,
        n_pairs: int,
        constraints: Constraints | tuple | None = None,
        labels: ArrayLike | None = None,
        *,
        exclude: Iterable[tuple[int, int]] | None = None,
    ) -> np.ndarray:
        """The next ``n_pairs`` pairs to ask.

        Parameters
        ----------
        n_pairs : int
            Batch size. Fewer pairs are returned only when no undecided pair is left.
        constraints : Constraints, (must_link, cannot_link) or None
            The answers known so far.
        labels : array-like of shape (n_samples,), default=None
            The current partition (``estimator.labels_``), read by ``"npu"`` and
            ``"spectral"``; ``None``: NCut's partition of the selector's own graph.
        exclude : iterable of (i, j), default=None
            Pairs not to ask (e.g. asked and skipped).

        Returns
        -------
        ndarray of shape (m, 2), int64, m <= n_pairs
            One pair per row, ``i < j``.
        """
        self._check_fitted()
        n = self.n_samples_
        check_params({"n_pairs": [Int(0, None)]}, {"n_pairs": n_pairs}, "PairSelector.select")
        cons = as_constraints(constraints, n)
        if labels is not None:
            labels = np.asarray(labels)
            if labels.shape != (n,):
                raise ValueError(f"labels has shape {labels.shape}, expected ({n},).")
        excl = set()
        if exclude is not None:
            ex = np.asarray(list(exclude), dtype=np.int64).reshape(-1, 2)
            excl = set((ex.min(axis=1) * n + ex.max(axis=1)).tolist())
        known = known_structure(cons, self.n_clusters_)
        forest = BatchForest(known, excl, n)
        if n_pairs:
            STRATEGY_FUNCTIONS[self.strategy_](self.geometry_, known, forest, n_pairs, labels)
            if len(forest) < n_pairs:
                STRATEGY_FUNCTIONS["random"](self.geometry_, known, forest, n_pairs, labels)
        out = np.asarray(forest.pairs, dtype=np.int64).reshape(-1, 2)
        return out


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "n_pairs": [Int(0, None)],
        "n_clusters": [Int(2, None), None],
        "strategy": [str],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def select_pairs(
    X: ArrayLike,
    n_pairs: int,
    *,
    n_clusters: int,
    constraints: Constraints | tuple | None = None,
    estimator: object | None = None,
    strategy: str = "auto",
    random_state: int | np.random.RandomState | None = None,
) -> np.ndarray:
    """The next ``n_pairs`` pairs to ask a person about.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Features (or an affinity matrix when ``estimator`` has ``affinity="precomputed"``).
    n_pairs : int
        Number of pairs wanted.
    n_clusters : int or None
        Number of clusters k. ``None``: the estimator's ``n_clusters_`` when it chose one
        (``Auto(n_clusters=None)``), else chosen from ``constraints``
        (:func:`~spectralink.model_selection.choose_n_clusters`: held-out pairs, the
        eigengap without pairs of both kinds).
    constraints : Constraints, (must_link, cannot_link) or None
        The pairs answered so far.
    estimator : fitted estimator, default=None
        Its ``labels_`` are the current partition read by ``"npu"`` and ``"spectral"``
        (``None``: NCut's partition of the selector's graph). Only ``labels_`` and the
        ``affinity`` parameter are read.
    strategy : str, default="auto"
        One of :data:`STRATEGIES`, or ``"auto"`` (:data:`AUTO_STRATEGY`).
    random_state : int, RandomState or None

    Returns
    -------
    ndarray of shape (m, 2), int64
        ``m <= n_pairs`` pairs ``i < j``, none known or decided by the transitive closure
        of ``constraints`` (nor by the answers to the other returned pairs). ``m <
        n_pairs`` only when fewer undecided pairs are left.

    Notes
    -----
    Each call builds what the strategy needs (for ``"spectral"``: a k-NN graph and its
    spectral embedding); in a loop, fit a :class:`PairSelector` once and call its
    :meth:`~PairSelector.select`.
    """
    labels = None
    affinity = "knn"
    if estimator is not None:
        labels = getattr(estimator, "labels_", None)
        if getattr(estimator, "affinity", None) == "precomputed":
            affinity = "precomputed"
    selector = PairSelector(
        n_clusters or 2, strategy=strategy, affinity=affinity, random_state=random_state
    ).fit(X)
    if n_clusters is None:
        selector.use_n_clusters(_k_for(selector, estimator, constraints, random_state))
    return selector.select(n_pairs, constraints, labels)


def _k_for(selector: PairSelector, estimator, constraints, random_state) -> int:
    """k when ``select_pairs`` is not given one: the estimator's choice, else the pairs'."""
    k = getattr(estimator, "n_clusters_", None)
    if k is not None:
        return int(k)
    geo = selector.geometry_
    cons, pre = as_constraints(constraints, selector.n_samples_), geo.X is None
    data, k_range = (geo.W if pre else geo.X), default_k_range(selector.n_samples_)
    return choose_n_clusters(
        data, cons, k_range, precomputed=pre, random_state=random_state
    ).n_clusters
