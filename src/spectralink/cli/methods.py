"""``spectralink methods [NAME]``: every method's capabilities, or one method's parameters."""

from __future__ import annotations

import argparse
import inspect

from ._options import common_parent, print_rows


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``methods`` command to ``subparsers``."""
    p = subparsers.add_parser(
        "methods",
        parents=[common_parent()],
        help="list the methods and what each can do, or one method's parameters",
        description="Without NAME: every method with its capabilities (k = 2 only, "
        "constraints, largest n, predict, Dask). With NAME: that method's parameters, "
        "their defaults and meanings.",
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="a method name (see the list)")
    p.set_defaults(func=run)


def _capabilities(info) -> dict[str, str]:
    """Printable capability cells of a :class:`spectralink.catalog.MethodInfo`."""
    return {
        "k": "2 only" if info.two_clusters_only else "any",
        "constraints": info.constraint_use,
        "largest n": "-" if info.max_samples is None else str(info.max_samples),
        "predict": "yes" if info.predicts else "no",
        "dask": "yes" if info.dask else "no",
        "scale": info.scale,
    }


def run(args: argparse.Namespace) -> int:
    """Run ``spectralink methods`` with the parsed ``args``; the exit status."""
    from ..catalog import describe, describe_all

    if args.name is None:
        infos = describe_all()
        rows = [("name", "class", *_capabilities(infos[0]))]
        rows += [(m.name, m.class_name, *_capabilities(m).values()) for m in infos]
        print_rows(rows)
        print(
            "\nlargest n: the cap at the defaults ('-': none). "
            "'spectralink methods NAME' lists a method's parameters."
        )
        return 0
    info = describe(args.name)
    print(f"{info.name} ({info.class_name}): {info.summary}")
    for key, value in _capabilities(info).items():
        if key == "largest n" and info.max_samples is not None:
            value += f" (parameter {info.max_samples_param})"
        print(f"  {key + ':':<13}{value}")
    print("parameters (--param NAME=VALUE):")
    rows = [
        (
            f"  {p.name}",
            "(required)" if p.default is inspect.Parameter.empty else f"= {p.default!r}",
            p.summary,
        )
        for p in info.params
    ]
    print_rows(rows)
    return 0
