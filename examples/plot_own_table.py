"""
Clustering your own table, with pairs named by ID
==================================================

Your data is usually a table: one row per item, an ID column, some numeric features; and
the pairs you know are written with those IDs ("these two belong together", "these two do
not"). This example writes such a table and such a pairs file, clusters the table with the
pairs, and joins the labels back onto the IDs. The command line does the same in one line:
``spectralink cluster items.csv -k 3 --id-column item_id --constraints pairs.csv -o
labels.csv``.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

from spectralink import CCSR, Constraints, NCut
from spectralink.metrics import clustering_error

# %%
# A table as users have it: an ID column and the features (the wine data, 178 rows), and a
# file of pairs named by ID. Here the pairs are drawn from the known classes; in practice a
# person answers them (``spectralink query`` chooses which pairs to ask).

wine = load_wine(as_frame=True)
table = wine.data.copy()
table.insert(0, "item_id", [f"wine-{i:03d}" for i in range(len(table))])
classes = wine.target.to_numpy()

drawn = Constraints.from_labels(classes, n_pairs=60, random_state=0)
ids = table["item_id"].to_numpy()
pairs = pd.DataFrame(
    [(ids[i], ids[j], "ml") for i, j in drawn.must_link]
    + [(ids[i], ids[j], "cl") for i, j in drawn.cannot_link],
    columns=["i", "j", "kind"],
)

folder = Path(tempfile.mkdtemp())
table.to_csv(folder / "items.csv", index=False)
pairs.to_csv(folder / "pairs.csv", index=False)
print(pairs.head())

# %%
# Read both back as a user would: the features are every column but the ID, the pairs
# name rows by ID (``ids=`` looks each one up among the table's IDs).

items = pd.read_csv(folder / "items.csv")
X = StandardScaler().fit_transform(items.drop(columns="item_id"))
cons = Constraints.from_csv(folder / "pairs.csv", n_samples=len(items), ids=items["item_id"])
print(f"{len(items)} rows, {cons.n_must_link} must-links, {cons.n_cannot_link} cannot-links")

model = CCSR(n_clusters=3, random_state=0).fit(X, constraints=cons)
base = NCut(n_clusters=3, random_state=0).fit(X)

# %%
# The labels, joined back onto the IDs: one row per item, in the table's order. Here the
# classes are known, so the error of both partitions can be measured.

labels = pd.DataFrame({"item_id": items["item_id"], "label": model.labels_})
result = items.merge(labels, on="item_id")
print(result[["item_id", "alcohol", "proline", "label"]].head())
print(f"pairs violated: {model.n_violated_} of {len(pairs)}")
errors = {
    name: clustering_error(classes, m.labels_) for name, m in [("NCut", base), ("CCSR", model)]
}
print("clustering error:", ", ".join(f"{name} {e:.3f}" for name, e in errors.items()))

# %%
# The clusters on two of the features, one colour per label.

fig, ax = plt.subplots(figsize=(6, 4))
scatter = ax.scatter(result["alcohol"], result["proline"], c=result["label"], s=15)
ax.set_xlabel("alcohol")
ax.set_ylabel("proline")
ax.set_title("wine, clustered with 60 pairs named by ID")
ax.legend(*scatter.legend_elements(), title="label")
fig.tight_layout()
