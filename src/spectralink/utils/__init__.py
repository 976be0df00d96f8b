"""Helpers every floor of the library may use; nothing here imports the rest of the package.

The parameter constraints (scikit-learn's ``_parameter_constraints`` vocabulary, re-exported here
so that one module touches scikit-learn's private validation module) and the input checks the
floors share.
"""

from ._sharing import (
    SHARED_MAX_BYTES,
    BoundedCache,
    content_hash,
    register_cache,
    shared_scope,
    sharing,
)
from ._validation import (
    NON_NEGATIVE,
    POSITIVE,
    HasMethods,
    Int,
    Interval,
    InvalidParameterError,
    Options,
    RealRange,
    StrOptions,
    check_features,
    check_n_clusters,
    check_params,
    validate_params,
)

__all__ = [
    "SHARED_MAX_BYTES",
    "BoundedCache",
    "content_hash",
    "register_cache",
    "shared_scope",
    "sharing",
    "HasMethods",
    "Int",
    "Interval",
    "InvalidParameterError",
    "NON_NEGATIVE",
    "Options",
    "POSITIVE",
    "RealRange",
    "StrOptions",
    "check_features",
    "check_n_clusters",
    "check_params",
    "validate_params",
]
