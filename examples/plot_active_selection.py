"""
Which pairs to ask: active selection against random pairs
=========================================================

A person answers "same group?" for pairs of points. :func:`spectralink.active.learn` runs
the loop: choose a batch of pairs, ask, refit, repeat. Here the ground-truth labels play the
person. Random pairs are compared with two strategies that choose the pairs from the data
and the current partition (FFQS, explore-consolidate, and ``spectral``, the library's
default): the error after the same number of questions.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import make_blobs

from spectralink import CCSR
from spectralink.active import learn
from spectralink.metrics import clustering_error

X, y = make_blobs(n_samples=400, centers=6, cluster_std=2.0, random_state=1)
budgets = [10, 20, 40, 80]
strategies = ["random", "ffqs", "spectral"]

errors = {s: [] for s in strategies}
for strategy in strategies:
    for n_queries in budgets:
        est, answered = learn(
            CCSR(n_clusters=6, random_state=0), X, y, n_queries,
            strategy=strategy, random_state=0,
        )
        errors[strategy].append(clustering_error(y, est.labels_))
    print(strategy, [round(e, 3) for e in errors[strategy]])

fig, ax = plt.subplots(figsize=(6, 4))
for strategy in strategies:
    ax.plot(budgets, errors[strategy], marker="o", label=strategy)
ax.set_xlabel("questions asked (pairs)")
ax.set_ylabel("clustering error")
ax.set_title("six blobs, CCSR: one run per budget")
ax.legend()
fig.tight_layout()
