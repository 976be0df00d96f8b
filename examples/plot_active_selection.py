"""
Which pairs to ask: active selection against random pairs
=========================================================

A person answers "same group?" for pairs of points. :func:`spectralink.active.learn` runs
the loop: choose a batch of pairs, ask, refit, repeat. Here the ground-truth labels of the
digits data (1,797 images, 10 classes) play the person. Random pairs are compared with two
strategies that choose the pairs from the data and the current partition: FFQS
(explore-consolidate) and ``spectral`` (the library's default): the error of CCSR after the
same number of questions. One run per budget, so the curves are noisy; the measured
averages over several data sets and seeds are in the results (``docs/results/active/``).
"""

import matplotlib.pyplot as plt

from spectralink import CCSR
from spectralink.active import learn
from spectralink.datasets import load
from spectralink.metrics import clustering_error

X, y = load("digits")
budgets = [0, 50, 150]
strategies = ["random", "ffqs", "spectral"]

unconstrained = clustering_error(y, CCSR(n_clusters=10, random_state=0).fit(X).labels_)
errors = {s: [unconstrained] for s in strategies}
for strategy in strategies:
    for n_queries in budgets[1:]:
        est, answered, report = learn(
            CCSR(n_clusters=10, random_state=0),
            X,
            y,
            n_queries,
            batch_size=20,
            strategy=strategy,
            random_state=0,
        )
        errors[strategy].append(clustering_error(y, est.labels_))
    print(f"{strategy:>8}:", "  ".join(f"{e:.3f}" for e in errors[strategy]))

fig, ax = plt.subplots(figsize=(6, 4))
for strategy in strategies:
    ax.plot(budgets, errors[strategy], marker="o", label=strategy)
ax.set_xlabel("questions asked (pairs)")
ax.set_ylabel("clustering error")
ax.set_title("digits, CCSR: error after n questions")
ax.legend()
fig.tight_layout()
