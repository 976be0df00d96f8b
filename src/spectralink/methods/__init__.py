"""Estimators, one module per method, and the name -> class registry used by the CLI."""

from __future__ import annotations

from importlib import import_module

__all__ = ["METHODS", "get_method", "available_methods"]

#: CLI name -> "module:Class", the module relative to this package. Modules are imported
#: on first use. ``auto`` sits above the methods (it searches over them) and lives beside
#: ``model_selection``; it is listed here so that every command and ``get_method`` find it.
METHODS: dict[str, str] = {
    "ncut": "ncut:NCut",
    "sl": "sl:SpectralLearning",
    "copkmeans": "copkmeans:COPKMeans",
    "sskk": "sskk:SSKK",
    "ccsr": "ccsr:CCSR",
    "ccskl": "ccskl:CCSKL",
    "e2cp": "e2cp:E2CP",
    "lscp": "lscp:LSCP",
    "cosc": "cosc:COSC",
    "sclc": "sclc:SCLC",
    "scacs": "scacs:SCACS",
    "lscr": "lscr:LSCR",
    "fcsc": "fcsc:FCSC",
    "auto": "..auto:Auto",
}


def get_method(name: str):
    """The estimator class registered under ``name`` (case-insensitive)."""
    key = name.lower()
    if key not in METHODS:
        raise ValueError(f"unknown method {name!r}; choose from {', '.join(available_methods())}.")
    module, cls = METHODS[key].split(":")
    try:
        mod = import_module(_module_name(module))
    except ModuleNotFoundError as exc:
        if exc.name == _module_name(module):
            raise ValueError(f"method {name!r} is not available in this version.") from None
        raise
    return getattr(mod, cls)


def _module_name(module: str) -> str:
    """Absolute module name of a registry entry (``"ncut"``, or ``"..auto"`` above)."""
    from importlib.util import resolve_name

    return resolve_name(module if module.startswith(".") else f".{module}", __name__)


def available_methods() -> list[str]:
    """Registered method names whose module is present."""
    from importlib.util import find_spec

    return [k for k, v in METHODS.items() if find_spec(_module_name(v.split(":")[0]))]
