"""
How much do constraints help?
=============================

The papers' protocol in miniature: draw random pairs from the ground truth of iris, cluster
with and without them, and measure the clustering error (the error of the best one-to-one
matching of clusters to classes). NCut ignores the constraints; CCSR and E2CP use them. All
methods of a draw see the same pairs.
"""

import matplotlib.pyplot as plt

from spectralink.datasets import load
from spectralink.experiments import format_table, run_protocol, summarize

X, y = load("iris")
records = run_protocol(
    X,
    y,
    ["ncut", "ccsr", "e2cp"],
    [0, 50, 100, 200],
    n_trials=5,
    random_state=0,
    dataset="iris",
    progress=False,
)
summary = summarize(records, metric="error")
print(format_table(summary))

# %%
# The same numbers as curves: mean ± one standard deviation over the draws.

fig, ax = plt.subplots(figsize=(6, 4))
for method in ["ncut", "ccsr", "e2cp"]:
    rows = sorted((r for r in summary if r["method"] == method), key=lambda r: r["n_constraints"])
    counts = [r["n_constraints"] for r in rows]
    mean = [r["mean"] for r in rows]
    std = [r["std"] for r in rows]
    ax.errorbar(counts, mean, yerr=std, marker="o", capsize=3, label=method)
ax.set_xlabel("number of random pairs")
ax.set_ylabel("clustering error")
ax.set_title("iris: error against the number of constraints")
ax.legend()
fig.tight_layout()
