"""Method names -> estimator classes: the one table every command and ``get_method`` read.

The table holds import targets as text and imports nothing when this module loads; a class is
imported the first time it is asked for. It names ``Auto`` beside the methods it searches over,
so the command line, the protocol runner and the catalog find every estimator by one name.

A method in another package joins the table through the ``spectralink.methods`` entry-point
group of its distribution (``[project.entry-points."spectralink.methods"]`` in its
``pyproject.toml``, ``name = "module:Class"``): it is then listed by ``spectralink methods``,
fitted by ``--method name`` and ``get_method("name")``, and a candidate of
``Auto(methods=[..., "name"])`` (docs: "Writing a method"). A plugin cannot take the name of
a method of the library.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from importlib import import_module
from importlib.metadata import entry_points
from importlib.util import find_spec

__all__ = [
    "ENTRY_POINT_GROUP",
    "METHODS",
    "available_methods",
    "get_method",
    "method_name",
    "table",
]

#: The entry-point group another package registers its methods in.
ENTRY_POINT_GROUP = "spectralink.methods"

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


def table() -> dict[str, str]:
    """Every registered method, ``{name: "module:Class"}``: the library's :data:`METHODS`,
    then those of installed packages' ``spectralink.methods`` entry points (read again
    when ``sys.path`` changes; a name the library already uses is left to the library)."""
    out = dict(METHODS)
    for name, target in _plugins(tuple(sys.path)):
        out.setdefault(name, target)
    return out


@lru_cache(maxsize=4)
def _plugins(path: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``(name, "module:Class")`` of the entry points on ``path`` (the cache key)."""
    return tuple(
        (ep.name.lower(), ep.value.replace(" ", "")) for ep in entry_points(group=ENTRY_POINT_GROUP)
    )


def get_method(name: str) -> type:
    """The estimator class registered under ``name`` (case-insensitive).

    Raises
    ------
    ValueError
        When no estimator is registered under ``name``, or its module is missing.
    """
    key = name.lower() if isinstance(name, str) else name
    methods = table()
    if key not in methods:
        raise ValueError(f"unknown method {name!r}; choose from {', '.join(available_methods())}.")
    module, cls = methods[key].split(":")
    try:
        mod = import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            raise ValueError(f"method {name!r} is not available in this version.") from None
        raise
    return getattr(mod, cls)


def available_methods() -> list[str]:
    """Registered method names (the library's, then plugins') whose module is present."""
    return [k for k, v in table().items() if find_spec(v.split(":")[0])]


def method_name(estimator: object) -> str:
    """Registry name of an estimator's class (its class name when not registered).

    Parameters
    ----------
    estimator : estimator instance

    Returns
    -------
    str
        The :func:`table` key of ``type(estimator)``, e.g. ``"ccsr"``; the class name for
        an unregistered class.
    """
    cls = type(estimator)
    for name, target in table().items():
        if target.rsplit(":", 1)[1] == cls.__name__ and get_method(name) is cls:
            return name
    return cls.__name__
