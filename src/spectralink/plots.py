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
    log_x: bool = False,
    dpi: int = 120,
):
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
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi)
        with atomic_write(path, "wb") as fh:
            fh.write(buf.getvalue())
    return fig
