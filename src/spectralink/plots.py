"""Curves of a score against the number of constraints, from experiment records; a
clustering drawn in two dimensions with its constraints; the score of every k with the k
chosen.

Figures are drawn on matplotlib's Agg canvas directly (no pyplot, no screen, and the
user's interactive backend is left alone) and saved as PNG atomically.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .experiments import summarize
from .io import atomic_write

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from sklearn.base import BaseEstimator

    from .constraints import Constraints

__all__ = [
    "METRIC_LABELS",
    "embedding_2d",
    "plot_clustering",
    "plot_k_scan",
    "plot_metric_curves",
]

#: Axis labels of the record metrics.
METRIC_LABELS = {
    "error": "clustering error (Hungarian)",
    "majority_error": "majority-vote error",
    "ari": "adjusted Rand index",
    "nmi": "normalized mutual information",
    "violated": "fraction of violated constraints",
    "ncut": "normalized cut (reference graph)",
    "time_s": "fit time (s)",
}


# PLR0915 (statements): one figure drawn in order (curves, bands, axes, legend, file), each
# step a few lines.
def plot_metric_curves(  # noqa: PLR0915
    records: Sequence[Mapping],
    path: str | os.PathLike | None = None,
    *,
    metric: str = "error",
    title: str | None = None,
    xlabel: str = "number of constraints",
    log_x: bool = False,
    dpi: int = 120,
) -> Figure:
    """Mean of ``metric`` vs number of constraints, one line per method, ± std band.

    The shaded band is ±1 sample standard deviation over the constraint draws (the
    legend says so). Failed runs are left out of the means; a method with failures says
    how many in its legend entry, and a method none of whose runs succeeded is left out
    of the axes and named below them.

    Parameters
    ----------
    records : sequence of dict
        Rows from :func:`spectralink.experiments.run_protocol`.
    path : path, default=None
        Where to save the PNG (written atomically). ``None`` only returns the figure.
    metric : str, default="error"
        A record metric (see :data:`spectralink.experiments.METRICS`).
    title : str, default=None
        Figure title; ``None`` uses the dataset name of the records.
    xlabel : str, default="number of constraints"
    log_x : bool, default=False
        Logarithmic x axis, so that counts such as 0, 50, 100, 200 are evenly spread. A
        count of 0 has no logarithm: the axis is symmetric-log, linear between 0 and the
        smallest positive count and logarithmic above it (the axis label says so).
    dpi : int, default=120

    Returns
    -------
    fig : matplotlib.figure.Figure

    Raises
    ------
    ValueError
        When no run succeeded: there would be nothing to draw.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    rows = summarize(records, metric)
    if not rows:
        raise ValueError("no records to plot.")
    methods = list(dict.fromkeys(r["method"] for r in rows))
    shown = [m for m in methods if any(r["n_ok"] for r in rows if r["method"] == m)]
    if not shown:
        raise ValueError(f"no successful run to plot: every run of {', '.join(methods)} failed.")
    fig = Figure(figsize=(6.4, 4.4))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    counts = sorted({float(r["n_constraints"]) for r in rows if r["method"] in shown})
    for method in shown:
        mine = [r for r in rows if r["method"] == method and r["n_ok"] > 0]
        x = np.array([r["n_constraints"] for r in mine], dtype=float)
        mean = np.array([r["mean"] for r in mine])
        std = np.array([r["std"] for r in mine])
        all_runs = [r for r in rows if r["method"] == method]
        failed = sum(r["n_failed"] for r in all_runs)
        total = failed + sum(r["n_ok"] for r in all_runs)
        # failed runs are not in the mean; say so rather than hide them
        label = f"{method} ({failed}/{total} runs failed)" if failed else method
        (line,) = ax.plot(x, mean, marker="o", markersize=4, label=label)
        ax.fill_between(x, mean - std, mean + std, color=line.get_color(), alpha=0.2, lw=0)
    handles, _ = ax.get_legend_handles_labels()
    handles.append(Patch(facecolor="0.5", alpha=0.3, lw=0, label="±1 std over draws"))
    positive = [c for c in counts if c > 0]
    if log_x and positive:
        if counts[0] == 0:
            # log(0) does not exist: a linear stretch from 0 to the smallest count
            ax.set_xscale("symlog", linthresh=positive[0], linscale=0.5)
            xlabel += f" (log scale; linear below {positive[0]:g})"
        else:
            ax.set_xscale("log")
            xlabel += " (log scale)"
        ax.set_xticks(counts)
        ax.set_xticklabels([f"{c:g}" for c in counts])
        ax.minorticks_off()
    if title is None:
        names = sorted({str(r.get("dataset", "")) for r in records} - {""})
        title = ", ".join(names)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(METRIC_LABELS.get(metric, metric))
    ax.grid(True, alpha=0.3)
    ax.legend(handles=handles, loc="best", frameon=False)
    left_out = [m for m in methods if m not in shown]
    if left_out:
        fig.text(
            0.01,
            0.01,
            f"not drawn, every run failed: {', '.join(left_out)}",
            fontsize="small",
            va="bottom",
        )
    fig.tight_layout(rect=(0, 0.04 if left_out else 0, 1, 1))
    if path is not None:
        _save_png(fig, path, dpi)
    return fig


def _save_png(fig, path, dpi: int) -> None:
    """Render first, then write the file whole (never a partial PNG)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    with atomic_write(path, "wb") as fh:
        fh.write(buf.getvalue())


def _nontrivial_columns(E: np.ndarray) -> np.ndarray:
    """Columns of an embedding that separate points: not constant, and not of one sign
    (on a connected graph only the trivial eigenvector, ``D^{1/2} 1``, keeps one sign)."""
    E = E.reshape(len(E), -1)
    scale = np.abs(E).max(axis=0)
    keep = []
    for c in range(E.shape[1]):
        col = E[:, c]
        tol = 1e-9 * max(scale[c], np.finfo(float).tiny)
        varies = np.ptp(col) > 1e-6 * max(scale[c], np.finfo(float).tiny)
        one_sign = (col >= -tol).all() or (col <= tol).all()
        if varies and not one_sign:
            keep.append(c)
    return E[:, keep]


def embedding_2d(estimator: BaseEstimator, X: ArrayLike) -> tuple[np.ndarray, tuple[str, str]]:
    """Two coordinates per point to draw a clustering in, and their axis labels.

    The first two nontrivial coordinates of the fitted spectral embedding
    (``estimator.embedding_``, or its ``best_estimator_``'s after a search) where the
    estimator has one with at least two; else the first two principal components of ``X``
    (one feature: the feature and zeros).

    Parameters
    ----------
    estimator : fitted estimator
    X : array-like of shape (n_samples, n_features)
        The data it was fitted on.

    Returns
    -------
    coords : ndarray of shape (n_samples, 2)
    axis_labels : (str, str)
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    # a search (Auto, ConstraintSearchCV) draws the embedding of the estimator it chose
    estimator = getattr(estimator, "best_estimator_", estimator)
    E = getattr(estimator, "embedding_", None)
    if E is not None and not hasattr(E, "compute"):  # a Dask embedding is not gathered
        E = np.asarray(E, dtype=np.float64)
        if E.shape[0] == n and np.isfinite(E).all():
            F = _nontrivial_columns(E)
            if F.shape[1] >= 2:
                name = type(estimator).__name__
                return F[:, :2], (f"{name} embedding 1", f"{name} embedding 2")
    if X.shape[1] == 1:
        return np.column_stack([X[:, 0] - X[:, 0].mean(), np.zeros(n)]), ("feature 1", "")
    from sklearn.decomposition import PCA

    # directions from an even sample of rows when there are many: they need no more
    pca = PCA(n_components=2, svd_solver="full").fit(X[:: n // 20000 + 1])
    return pca.transform(X), ("principal component 1", "principal component 2")


def plot_clustering(
    coords: ArrayLike,
    labels: ArrayLike,
    constraints: Constraints = None,
    path: str | os.PathLike | None = None,
    *,
    axis_labels: tuple[str, str] = ("", ""),
    title: str | None = None,
    max_pairs: int = 2000,
    dpi: int = 120,
) -> Figure:
    """Points coloured by cluster; must-links as solid lines, cannot-links dashed.

    Parameters
    ----------
    coords : array-like of shape (n_samples, 2)
        Where to draw each point (e.g. from :func:`embedding_2d`).
    labels : array-like of shape (n_samples,)
        Cluster of each point.
    constraints : Constraints, default=None
        Pairs to draw between the points.
    path : path, default=None
        Where to save the PNG (written atomically). ``None`` only returns the figure.
    axis_labels : (str, str), default=("", "")
    title : str, default=None
    max_pairs : int, default=2000
        At most this many pairs of each kind are drawn (an even sample, said in the
        legend), so that many constraints do not hide the points.
    dpi : int, default=120

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import LineCollection
    from matplotlib.figure import Figure

    P = np.asarray(coords, dtype=np.float64)
    labels = np.asarray(labels)
    if P.ndim != 2 or P.shape[1] != 2 or len(P) != len(labels):
        raise ValueError(
            f"coords must have shape (n_samples, 2) matching {len(labels)} labels, got {P.shape}."
        )
    fig = Figure(figsize=(6.4, 5.2))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    if constraints is not None:
        for pairs, style, color, kind in (
            (constraints.must_link, "solid", "0.15", "must-link"),
            (constraints.cannot_link, "dashed", "tab:red", "cannot-link"),
        ):
            if len(pairs) == 0:
                continue
            shown = pairs
            if len(pairs) > max_pairs:
                shown = pairs[np.linspace(0, len(pairs) - 1, max_pairs).astype(int)]
            if len(shown) < len(pairs):
                what = f"{kind} ({len(shown)} of {len(pairs)} shown)"
            else:
                what = f"{kind} ({len(pairs)})"
            ax.add_collection(
                LineCollection(
                    P[shown],
                    colors=color,
                    linestyles=style,
                    linewidths=0.8,
                    alpha=0.6,
                    label=what,
                    zorder=1,
                )
            )
    clusters = np.unique(labels)
    cmap = "tab10" if len(clusters) <= 10 else "tab20"
    palette = matplotlib.colormaps[cmap]
    for t, c in enumerate(clusters):
        mine = labels == c
        ax.scatter(
            P[mine, 0],
            P[mine, 1],
            s=12,
            color=palette(t % palette.N),
            label=f"cluster {c}",
            zorder=2,
            edgecolors="none",
        )
    ax.set_xlabel(axis_labels[0])
    ax.set_ylabel(axis_labels[1])
    if title:
        ax.set_title(title)
    ax.legend(loc="best", frameon=False, fontsize="small", markerscale=1.5)
    fig.tight_layout()
    if path is not None:
        _save_png(fig, path, dpi)
    return fig


def plot_k_scan(
    scan: object,
    path: str | os.PathLike | None = None,
    *,
    title: str | None = None,
    dpi: int = 120,
) -> Figure:
    """The score of every k (with one standard error of its difference to the best), the
    k chosen marked, and the eigengaps below.

    Parameters
    ----------
    scan : KScan
        What :func:`spectralink.model_selection.scan_n_clusters` returns (``Auto``'s
        ``k_scan_``).
    path : path, default=None
        Where to save the PNG (written atomically). ``None`` only returns the figure.
    title : str, default=None
    dpi : int, default=120

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    ks = np.asarray(scan.ks)
    fig = Figure(figsize=(6.4, 5.2))
    FigureCanvasAgg(fig)
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(2, 1))
    if scan.rule == "pairs":
        scores, se = np.asarray(scan.scores), np.asarray(scan.std_errors)
        what = "held-out kappa (bar: 1 s.e. of the difference to the best)"
        top.errorbar(ks, scores, yerr=se, fmt="o-", color="0.3", ms=4, capsize=2, label=what)
        tied = np.asarray(scan.tied)
        top.scatter(ks[tied], scores[tied], s=60, facecolors="none", edgecolors="tab:blue",
                    label="tied with the best", zorder=3)  # fmt: skip
        top.set_ylabel("held-out kappa")
    else:
        top.text(0.5, 0.5, "no pairs of both kinds: k by the eigengap", ha="center",
                 va="center", transform=top.transAxes)  # fmt: skip
    for ax in (top, bottom):
        ax.axvline(scan.n_clusters, color="tab:red", lw=1.2, ls="--")
    how = (
        " (a clear eigengap among the tied)"
        if scan.rule == "pairs" and scan.tie_rule == "eigengap" and np.sum(scan.tied) > 1
        else ""
    )
    top.plot([], [], color="tab:red", ls="--", label=f"chosen: k = {scan.n_clusters}{how}")
    top.legend(loc="best", frameon=False, fontsize="small")
    bottom.bar(ks, np.asarray(scan.eigengaps), color="0.6")
    bottom.set_ylabel("eigengap")
    bottom.set_xlabel("k")
    if title:
        top.set_title(title)
    fig.tight_layout()
    if path is not None:
        _save_png(fig, path, dpi)
    return fig
