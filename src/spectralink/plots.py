"""Curves of a score against the number of constraints, from experiment records.

Figures are drawn on matplotlib's Agg canvas directly (no pyplot, no screen, and the
user's interactive backend is left alone) and saved as PNG atomically.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping, Sequence

import numpy as np

from .experiments import atomic_write, summarize

__all__ = ["METRIC_LABELS", "plot_metric_curves"]

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


def plot_metric_curves(
    records: Sequence[Mapping],
    path: str | os.PathLike | None = None,
    *,
    metric: str = "error",
    title: str | None = None,
    xlabel: str = "number of constraints",
    dpi: int = 120,
):
    """Mean of ``metric`` vs number of constraints, one line per method, ± std band.

    Failed runs are left out of the means; a method with failures says how many in its
    legend entry.

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
    dpi : int, default=120

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = summarize(records, metric)
    if not rows:
        raise ValueError("no records to plot.")
    fig = Figure(figsize=(6.4, 4.4))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for method in dict.fromkeys(r["method"] for r in rows):
        mine = [r for r in rows if r["method"] == method and r["n_ok"] > 0]
        if not mine:
            continue
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
    if title is None:
        names = sorted({str(r.get("dataset", "")) for r in records} - {""})
        title = ", ".join(names)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(METRIC_LABELS.get(metric, metric))
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", frameon=False)
    fig.tight_layout()
    if path is not None:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi)
        with atomic_write(path, "wb") as fh:
            fh.write(buf.getvalue())
    return fig
