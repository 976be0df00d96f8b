"""Method names -> estimator classes: the one table every command and ``get_method`` read.

The table holds import targets as text and imports nothing when this module loads; a class is
imported the first time it is asked for. It names ``Auto`` beside the methods it searches over,
so the command line, the protocol runner and the catalog find every estimator by one name.
"""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec

__all__ = ["METHODS", "available_methods", "get_method", "method_name"]

#: CLI name -> "module:Class", the module's absolute name.
METHODS: dict[str, str] = {
    "ncut": "spectralink.methods.ncut:NCut",
    "sl": "spectralink.methods.sl:SpectralLearning",
    "copkmeans": "spectralink.methods.copkmeans:COPKMeans",
    "sskk": "spectralink.methods.sskk:SSKK",
    "ccsr": "spectralink.methods.ccsr:CCSR",
    "ccskl": "spectralink.methods.ccskl:CCSKL",
    "e2cp": "spectralink.methods.e2cp:E2CP",
    "lscp": "spectralink.methods.lscp:LSCP",
    "cosc": "spectralink.methods.cosc:COSC",
    "sclc": "spectralink.methods.sclc:SCLC",
    "scacs": "spectralink.methods.scacs:SCACS",
    "lscr": "spectralink.methods.lscr:LSCR",
    "fcsc": "spectralink.methods.fcsc:FCSC",
    "auto": "spectralink.auto:Auto",
}


def get_method(name: str) -> type:
    """The estimator class registered under ``name`` (case-insensitive).

    Raises
    ------
    ValueError
        When no estimator is registered under ``name``, or its module is missing.
    """
    key = name.lower() if isinstance(name, str) else name
    if key not in METHODS:
        raise ValueError(f"unknown method {name!r}; choose from {', '.join(available_methods())}.")
    module, cls = METHODS[key].split(":")
    try:
        mod = import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            raise ValueError(f"method {name!r} is not available in this version.") from None
        raise
    return getattr(mod, cls)


def available_methods() -> list[str]:
    """Registered method names whose module is present."""
    return [k for k, v in METHODS.items() if find_spec(v.split(":")[0])]


def method_name(estimator: object) -> str:
    """Registry name of an estimator's class (its class name when not registered).

    Parameters
    ----------
    estimator : estimator instance

    Returns
    -------
    str
        The :data:`spectralink.registry.METHODS` key of ``type(estimator)``, e.g.
        ``"ccsr"``; the class name for an unregistered class.
    """
    cls = type(estimator)
    for name, target in METHODS.items():
        if target.rsplit(":", 1)[1] == cls.__name__ and get_method(name) is cls:
            return name
    return cls.__name__
