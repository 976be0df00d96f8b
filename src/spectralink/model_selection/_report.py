"""What a search chose, in words: :class:`SearchReport`, the line ``Auto.describe()`` and
``spectralink cluster --method auto`` print."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["SearchReport"]


@dataclass(frozen=True)
class SearchReport:
    """The choice of a search over methods and parameters, and the evidence for it.

    Attributes
    ----------
    method : str
        The method chosen (a registry name).
    params : dict
        Its parameters that the search set.
    selection : str
        How it was chosen: ``"cross-validation"``, or why there was no search (``"no
        constraints"``, ``"too few constraints"``, ``"not searched"``, ``"refit failed"``).
    overruled : str
        Why the search's choice was not kept (``"refit failed"``), else ``""``.
    scoring : str
        The held-out score's name.
    results : dict or None
        The search's ``cv_results_`` (``None`` without a search).
    index : int or None
        The row of ``results`` chosen (row 0 is NCut).
    split_by : str
        What the folds split (``"pairs"`` or ``"points"``).
    n_splits, n_repeats : int
        The folds, and how many times they were drawn.
    k_text : str
        What chose k, when it was chosen (``""`` otherwise).
    n_points, n_searched : int
        The points clustered, and those the search ran on (a sample of large data; 0:
        all of them).
    """

    method: str
    params: dict = field(default_factory=dict)
    selection: str = "cross-validation"
    overruled: str = ""
    scoring: str = "balanced"
    results: dict[str, Any] | None = None
    index: int | None = None
    split_by: str = "pairs"
    n_splits: int = 0
    n_repeats: int = 1
    k_text: str = ""
    n_points: int = 0
    n_searched: int = 0

    def __str__(self) -> str:
        name = (f"{self.k_text}; " if self.k_text else "") + self.method
        if self.params:
            name += " (" + ", ".join(f"{k}={v!r}" for k, v in self.params.items()) + ")"
        if self.results is None:
            return f"{name}: {self.selection}, no cross-validation"
        res, i = self.results, self.index
        text = (
            f"{name}: {self._folds()} cross-validated {self.scoring} score "
            f"{res['mean_test_score'][i]:.3f} ± {res['std_test_score'][i]:.3f} "
            f"(NCut {res['mean_test_score'][0]:.3f} ± {res['std_test_score'][0]:.3f}; "
            f"{len(res['params'])} candidates{self._raced()}, folds by "
            f"{self.split_by}{self._sample()})"
        )
        return text + (f"; {self.overruled}" if self.overruled else "")

    def _folds(self) -> str:
        folds = f"{self.n_splits // self.n_repeats}-fold"
        return folds if self.n_repeats == 1 else f"{folds} x {self.n_repeats}"

    def _raced(self) -> str:
        raced = int(np.sum(self.results.get("raced_out", 0)))
        return f", {raced} set aside after the first repeat" if raced else ""

    def _sample(self) -> str:
        if not self.n_searched:
            return ""
        return f"; chosen on {self.n_searched:,} of the {self.n_points:,} points"
