"""
Must-links, cannot-links and new points in 2-D
==============================================

Four blobs, and groups that the data alone cannot reveal: the two blobs on one diagonal
form one group, the two on the other diagonal the other. 40 random pairs are drawn from
these groups: must-links (same group) in green, cannot-links (different groups) dashed in
red. NCut ignores the pairs and splits the square in two halves; CCSR and COSC use them.
The background shows how each fitted model labels new points (``predict``).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_blobs

from spectralink import CCSR, COSC, Constraints, NCut
from spectralink.metrics import clustering_error

centres = [(0, 0), (0, 5), (5, 0), (5, 5)]
X, blob = make_blobs(n_samples=400, centers=centres, cluster_std=1.0, random_state=0)
y = np.array([0, 1, 1, 0])[blob]  # the diagonals are the groups
cons = Constraints.from_labels(y, n_pairs=40, random_state=0)

models = {
    "NCut (pairs ignored)": NCut(n_clusters=2, random_state=0).fit(X),
    "CCSR": CCSR(n_clusters=2, random_state=0).fit(X, constraints=cons),
    "COSC": COSC(n_clusters=2, random_state=0).fit(X, constraints=cons),
}

# a grid of new points over the data, labelled by each fitted model
xx, yy = np.meshgrid(np.linspace(-3.5, 8.5, 100), np.linspace(-3.5, 8.5, 100))
grid = np.c_[xx.ravel(), yy.ravel()]

fig, axes = plt.subplots(1, 3, figsize=(13, 4.5), sharex=True, sharey=True)
for ax, (name, model) in zip(axes, models.items(), strict=True):
    ax.contourf(xx, yy, model.predict(grid).reshape(xx.shape), alpha=0.15, cmap="coolwarm")
    for i, j in cons.must_link:
        ax.plot(X[[i, j], 0], X[[i, j], 1], color="tab:green", lw=1.2)
    for i, j in cons.cannot_link:
        ax.plot(X[[i, j], 0], X[[i, j], 1], color="tab:red", lw=0.8, ls="--")
    ax.scatter(X[:, 0], X[:, 1], c=model.labels_, s=10, cmap="coolwarm", edgecolors="none")
    error = clustering_error(y, model.labels_)
    violated = cons.violated(model.labels_).sum()  # NCut was fitted without the pairs
    ax.set_title(f"{name}\nerror {error:.3f}, {violated} of 40 pairs violated")
fig.tight_layout()

# %%
# Fitted models label held-out points too. Fit COSC on 300 points with 40 pairs among them,
# then predict the other 100 (a new point gets the weighted vote of its nearest training
# points' labels).

rng = np.random.default_rng(0)
order = rng.permutation(len(X))
train, test = order[:300], order[300:]
cons_train = Constraints.from_labels(y[train], n_pairs=40, random_state=0)
model = COSC(n_clusters=2, random_state=0).fit(X[train], constraints=cons_train)
print("error on the training points:", round(clustering_error(y[train], model.labels_), 3))
print("error on the held-out points:", round(clustering_error(y[test], model.predict(X[test])), 3))
