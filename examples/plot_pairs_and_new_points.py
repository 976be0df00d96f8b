"""
Must-links, cannot-links and new points in 2-D
==============================================

Three overlapping blobs, 30 random pairs drawn from the ground truth: must-links (same
cluster) in green, cannot-links (different clusters) dashed in red. Unconstrained NCut
against CCSR with the pairs; the background shows how each fitted model labels new points
(``predict``: a new point is linked to its nearest training points with the fitted graph's
weights and mapped into the learnt embedding).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_blobs

from spectralink import CCSR, Constraints, NCut
from spectralink.metrics import clustering_error

X, y = make_blobs(n_samples=300, centers=3, cluster_std=1.6, random_state=3)
cons = Constraints.from_labels(y, n_pairs=30, random_state=0)

models = {
    "NCut (pairs ignored)": NCut(n_clusters=3, random_state=0).fit(X),
    "CCSR (30 pairs)": CCSR(n_clusters=3, random_state=0).fit(X, constraints=cons),
}

# a grid of new points over the data, labelled by each fitted model
xx, yy = np.meshgrid(
    np.linspace(X[:, 0].min() - 1, X[:, 0].max() + 1, 120),
    np.linspace(X[:, 1].min() - 1, X[:, 1].max() + 1, 120),
)
grid = np.c_[xx.ravel(), yy.ravel()]

fig, axes = plt.subplots(1, 2, figsize=(10, 4.5), sharex=True, sharey=True)
for ax, (name, model) in zip(axes, models.items()):
    ax.contourf(xx, yy, model.predict(grid).reshape(xx.shape), alpha=0.15, cmap="viridis")
    for i, j in cons.must_link:
        ax.plot(X[[i, j], 0], X[[i, j], 1], color="tab:green", lw=1)
    for i, j in cons.cannot_link:
        ax.plot(X[[i, j], 0], X[[i, j], 1], color="tab:red", lw=0.8, ls="--")
    ax.scatter(X[:, 0], X[:, 1], c=model.labels_, s=12, cmap="viridis", edgecolors="none")
    error = clustering_error(y, model.labels_)
    ax.set_title(f"{name}: error {error:.3f}, {model.n_violated_} pairs violated")
fig.tight_layout()

# %%
# Fitted models also label held-out points. Here: fit on 200 points, predict the other 100.

rng = np.random.default_rng(0)
order = rng.permutation(len(X))
train, test = order[:200], order[200:]
cons_train = Constraints.from_labels(y[train], n_pairs=30, random_state=0)
model = CCSR(n_clusters=3, random_state=0).fit(X[train], constraints=cons_train)
print("error on the training points:", round(clustering_error(y[train], model.labels_), 3))
print("error on the held-out points:", round(clustering_error(y[test], model.predict(X[test])), 3))
