"""spectralink: constrained spectral clustering with must-link and cannot-link pairs.

Estimators (scikit-learn compatible, ``fit(X, constraints=...)`` then ``labels_``):
NCut, SpectralLearning, COPKMeans, SSKK, CCSR, CCSKL, E2CP, LSCP, COSC, SCLC, SCACS, LSCR,
FCSC; and Auto, which chooses among them from the constraints alone.
"""

from __future__ import annotations

from .constraints import Constraints
from .parallel import config_context, get_config, set_config
from .registry import METHODS, get_method
from .similarity import learn_similarity

__version__ = "0.1.0"

_ESTIMATORS = {v.split(":")[1]: k for k, v in METHODS.items()}

__all__ = [
    "Constraints",
    "config_context",
    "get_config",
    "get_method",
    "learn_similarity",
    "set_config",
    *_ESTIMATORS,
]


def __getattr__(name: str):
    # estimators are imported on first use so `import spectralink` stays light
    if name in _ESTIMATORS:
        return get_method(_ESTIMATORS[name])
    raise AttributeError(f"module 'spectralink' has no attribute {name!r}")
