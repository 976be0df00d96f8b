"""Estimators, one module per method, on the fit contract of :mod:`._base`.

The name -> class table that commands and ``get_method`` read is :mod:`spectralink.registry`.
What the floors above share with the methods is public here.
"""

from __future__ import annotations

from ._base import ConstrainedClusteringMixin, shareable_knn_graph

__all__ = ["ConstrainedClusteringMixin", "shareable_knn_graph"]
