"""Parameter validation in ``fit``: one clear message naming the parameter, the expected
type or range and the value received, for every estimator (scikit-learn's mechanism)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.utils._param_validation import InvalidParameterError, StrOptions
from sklearn.utils.estimator_checks import check_param_validation

from spectralink import Constraints
from spectralink.registry import available_methods, get_method

METHODS = available_methods()

#: (parameter, invalid value, expected-text pattern) examples; each applies to the
#: estimators that have the parameter.
CASES = [
    ("n_neighbors", "ten", r"an int in the range \[1, inf\)"),
    ("n_neighbors", 10.5, r"an int in the range \[1, inf\)"),
    ("n_neighbors", 0, r"an int in the range \[1, inf\)"),
    ("sigma", "auto", r"a float in the range \(0(\.0)?, inf\) or None"),
    ("sigma", -1.0, r"a float in the range \(0(\.0)?, inf\) or None"),
    ("sigma", np.inf, r"a float in the range \(0(\.0)?, inf\) or None"),
    ("n_init", 0, r"an int in the range \[1, inf\)"),
    ("n_init", True, r"an int in the range \[1, inf\)"),
    ("n_clusters", 1, r"an int in the range \[2, inf\)"),
    ("n_clusters", "3", r"an int in the range \[2, inf\)"),
    ("random_state", "seed", "an int in the range"),
]


def _cases():
    out = []
    for name in METHODS:
        params = get_method(name)().get_params()
        for param, value, pattern in CASES:
            if param in params:
                case_id = f"{name}-{param}={value!r}"
                out.append(pytest.param(name, param, value, pattern, id=case_id))
        # every string option refuses an unknown string, listing the options
        for param, constraints in get_method(name)._parameter_constraints.items():
            if any(isinstance(c, StrOptions) for c in constraints):
                out.append(
                    pytest.param(name, param, "unknown", "a str among",
                                 id=f"{name}-{param}=unknown")
                )  # fmt: skip
    return out


@pytest.fixture(scope="module")
def data():
    X, y = make_blobs(n_samples=40, centers=2, random_state=0)
    return X, Constraints.from_labels(y, 10, random_state=0)


@pytest.mark.parametrize(("name", "param", "value", "pattern"), _cases())
def test_invalid_parameter_gives_one_clear_message(name, param, value, pattern, data):
    X, cons = data
    est = get_method(name)(**{param: value})
    cls = type(est).__name__
    with pytest.raises(InvalidParameterError) as info:
        est.fit(X, constraints=cons)
    msg = str(info.value)
    assert msg.startswith(f"The '{param}' parameter of {cls} must be "), msg
    assert msg.endswith(f"Got {value!r} instead."), msg
    assert re.search(pattern, msg), msg
    assert isinstance(info.value, ValueError)  # callers catching ValueError keep working


@pytest.mark.parametrize("name", METHODS)
def test_scikit_learn_param_validation(name):
    """scikit-learn's own check: a constraint for every parameter, and an informative
    error for a value of no valid type and for out-of-range values."""
    est = get_method(name)()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_param_validation(type(est).__name__, est)


@pytest.mark.parametrize("name", METHODS)
def test_valid_parameters_are_not_refused(name, data):
    """numpy scalars are accepted wherever Python numbers are."""
    X, cons = data
    params = get_method(name)().get_params()
    numpy_params = {
        k: v for k, v in {"n_neighbors": np.int64(5), "sigma": np.float64(2.0),
                          "n_init": np.int32(2)}.items() if k in params
    }  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        get_method(name)(2, **numpy_params).fit(X, constraints=cons)


def test_cross_parameter_checks_remain():
    X, y = make_blobs(n_samples=40, centers=3, random_state=0)
    cons = Constraints.from_labels(y, 10, random_state=0)
    with pytest.raises(ValueError, match="n_components=50 must be between 1 and n_samples=40"):
        get_method("ccsr")(3, n_components=50).fit(X, constraints=cons)
    with pytest.raises(ValueError, match="2 clusters only"):
        get_method("sclc")(3).fit(X, constraints=cons)
    with pytest.raises(ValueError, match="exceeds max_samples=30"):
        get_method("fcsc")(3, max_samples=30).fit(X, constraints=cons)
    with pytest.raises(ValueError, match="n_nearest=20 exceeds the number of landmarks"):
        get_method("lscr")(3, n_landmarks=10, n_nearest=20).fit(X)
