"""What the page shows of a row: its pixels, its image file, its text, or its values.

Every view is plain JSON the page draws itself: pixels as numbers on a canvas (no image
encoding on the server), an image file by a URL the server answers for that row only, text
as text, and the values of the two rows side by side with the columns that differ most
marked.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from os import PathLike
from pathlib import Path

import numpy as np

from ..io import csv_delimiter

#: Columns marked as differing most, in the side-by-side view of values.
N_HIGHLIGHTED = 3
#: Columns shown at most in that view (those that differ most first, then in order).
MAX_VALUES = 40


def parse_image_shape(text: str) -> tuple[int, int]:
    """``"8x8"`` -> ``(8, 8)`` (height x width)."""
    parts = text.lower().replace("*", "x").split("x")
    if len(parts) != 2 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"--image-shape {text!r} must look like HxW, e.g. 8x8 or 32x32.")
    return int(parts[0]), int(parts[1])


def read_column(path: str | PathLike, column: str, option: str) -> list[str]:
    """The cells of one column of a text table (by header name or 1-based position)."""
    path = Path(path)
    if path.suffix.lower() not in (".csv", ".tsv", ".txt"):
        raise ValueError(f"{option} needs a text table (.csv, .tsv, .txt), not {path}.")
    delimiter = csv_delimiter(path) or ","
    with open(path, newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.reader(fh, delimiter=delimiter) if r and any(c.strip() for c in r)]
    if not rows:
        raise ValueError(f"{path}: holds no rows.")
    header = [c.strip() for c in rows[0]]
    if column in header:
        at = header.index(column)
    elif column.isdigit() and 1 <= int(column) <= len(header):
        at = int(column) - 1
    else:
        raise ValueError(
            f"{option} {column!r}: no such column in {path} (columns: {', '.join(header)})."
        )
    body = rows[1:]
    short = next((t for t, r in enumerate(body) if len(r) <= at), None)
    if short is not None:
        raise ValueError(f"{path}:{short + 2}: the row has no column {column!r}.")
    return [r[at] for r in body]


class ItemView:
    """How the rows of the data are shown.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The features as read (before scaling): what the values view and pixels show.
    names : sequence of str, default=None
        Feature names (``"column J"`` when ``None``).
    ids : sequence of str, default=None
    image_shape : (int, int), default=None
        Draw each row as a grey image of this shape (height, width).
    image_paths : sequence of str, default=None
        One image file per row (the page fetches it from the server).
    texts : sequence of str, default=None
        One text per row.
    """

    def __init__(
        self,
        X: np.ndarray,
        *,
        names: Sequence[str] | None = None,
        ids: Sequence[str] | None = None,
        image_shape: tuple[int, int] | None = None,
        image_paths: Sequence[str | PathLike] | None = None,
        texts: Sequence[str] | None = None,
    ) -> None:
        n, d = X.shape
        self.X = X
        self.names = [f"column {c + 1}" for c in range(d)] if names is None else list(names)
        self.ids = None if ids is None else [str(v) for v in ids]
        self.image_shape = image_shape
        if image_shape is not None and image_shape[0] * image_shape[1] != d:
            raise ValueError(
                f"--image-shape {image_shape[0]}x{image_shape[1]} holds "
                f"{image_shape[0] * image_shape[1]} pixels, but the rows have {d} values."
            )
        for given, what in ((image_paths, "image paths"), (texts, "texts")):
            if given is not None and len(given) != n:
                raise ValueError(f"{len(given)} {what} for {n} rows.")
        self.image_paths = None if image_paths is None else [Path(p) for p in image_paths]
        self.texts = None if texts is None else [str(t) for t in texts]
        self._lo, self._hi = (float(X.min()), float(X.max())) if image_shape else (0.0, 1.0)
        # the spread of each column, so that "differs most" does not mean "in larger units"
        scale = X.std(axis=0)
        self._scale = np.where(scale > 0, scale, 1.0)

    @property
    def kind(self) -> str:
        """``"pixels"``, ``"image"``, ``"text"`` or ``"values"``."""
        if self.image_shape is not None:
            return "pixels"
        if self.image_paths is not None:
            return "image"
        return "text" if self.texts is not None else "values"

    def image_path(self, i: int) -> Path | None:
        """The image file of row ``i`` (the only files the server sends)."""
        return None if self.image_paths is None else self.image_paths[i]

    def item(self, i: int) -> dict:
        """What the page shows of row ``i``."""
        out: dict = {"index": int(i), "id": str(i) if self.ids is None else self.ids[i]}
        if self.image_shape is not None:
            out["pixels"] = {
                "shape": list(self.image_shape),
                "values": [round(float(v), 6) for v in self.X[i]],
                "range": [self._lo, self._hi],
            }
        elif self.image_paths is not None:
            out["image"] = f"api/image/{int(i)}"
        elif self.texts is not None:
            out["text"] = self.texts[i]
        return out

    def pair(self, i: int, j: int) -> dict:
        """The two rows' views, and for a table of values the columns side by side."""
        out = {"kind": self.kind, "items": [self.item(i), self.item(j)]}
        if self.kind == "values":
            gap = np.abs(self.X[i] - self.X[j]) / self._scale
            order = np.argsort(-gap, kind="stable")
            marked = {c for c in order[:N_HIGHLIGHTED].tolist() if gap[c] > 0}
            shown = sorted(order[:MAX_VALUES].tolist())
            out["values"] = [
                {
                    "name": self.names[c],
                    "values": [_short(self.X[i, c]), _short(self.X[j, c])],
                    "differs": c in marked,
                }
                for c in shown
            ]
            out["n_columns"] = int(self.X.shape[1])
        return out


def _short(v: float) -> str:
    return f"{float(v):.4g}"
