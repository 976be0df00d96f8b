"""
Choosing the method and its bandwidth from the constraints
===========================================================

No labels are needed to choose: :class:`~spectralink.model_selection.ConstraintSearchCV`
cross-validates over the pairs (each fit sees all points and the training pairs) and scores
how well each partition satisfies the held-out pairs. :class:`~spectralink.Auto` runs such a
search over NCut and the constrained methods and keeps NCut unless a constrained method is
clearly better. The labels are used below only to report the error afterwards.
"""

import warnings

import matplotlib.pyplot as plt

from spectralink import CCSR, Constraints
from spectralink.datasets import load
from spectralink.exceptions import DisconnectedGraphWarning
from spectralink.metrics import clustering_error
from spectralink.model_selection import ConstraintSearchCV, relative_sigmas

X, y = load("iris")
# setosa is a connected component of its own in the k-NN graph: expected here, so the
# library's warning about disconnected graphs is silenced
warnings.filterwarnings("ignore", category=DisconnectedGraphWarning)
cons = Constraints.from_labels(y, n_pairs=200, random_state=0)

# %%
# A bandwidth search for CCSR: sigma as multiples of the default r (one neighbour search).

search = ConstraintSearchCV(
    CCSR(n_clusters=3, guard=None),
    {"sigma": relative_sigmas([0.25, 0.5, 1, 2, 4])},
    cv=5,
    random_state=0,
).fit(X, constraints=cons)
print("chosen:", search.best_params_, "score", round(search.best_score_, 3))
print("error of the refitted best:", round(clustering_error(y, search.labels_), 3))

res = search.cv_results_
labels = [str(p["sigma"]) for p in res["params"]]
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.bar(labels, res["mean_test_score"], yerr=res["std_test_score"], capsize=3, color="tab:blue")
ax.set_ylim(min(res["mean_test_score"]) - 0.1, 1.0)
ax.set_xlabel("sigma")
ax.set_ylabel("held-out pairs satisfied\n(balanced score)")
ax.set_title("CCSR on iris, 200 pairs: 5-fold score per bandwidth")
fig.tight_layout()

# %%
# ``Auto`` searches across methods too; ``describe()`` says what it chose and why.

from spectralink import Auto  # noqa: E402

auto = Auto(n_clusters=3, random_state=0).fit(X, constraints=cons)
print(auto.describe())
print("error:", round(clustering_error(y, auto.labels_), 3))
