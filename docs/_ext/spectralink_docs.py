"""Sphinx helpers of the spectralink site: the method table and the command's own help.

* ``.. spectralink-methods-table::``: what every registered method can do, as
  ``spectralink methods`` prints it (:mod:`spectralink.catalog`, read from the classes).
* ``.. spectralink-help:: [SUBCOMMAND]``: the ``--help`` text of the command or of one
  subcommand, from the argument parser itself. A subcommand the parser has and no page
  shows is a build warning (an error under ``-W``), so a new subcommand cannot go
  undocumented.
"""

from __future__ import annotations

import contextlib
import io
import os

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)


def _parser():
    from spectralink.cli import build_parser

    return build_parser()


def _subparsers(parser) -> dict:
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


class SpectralinkHelp(SphinxDirective):
    """The ``--help`` text of ``spectralink`` or of one of its subcommands."""

    optional_arguments = 1

    def run(self):
        parser = _parser()
        if self.arguments:
            name = self.arguments[0]
            subs = _subparsers(parser)
            if name not in subs:
                raise self.error(f"spectralink has no subcommand {name!r}")
            parser = subs[name]
            documented = getattr(self.env, "spectralink_documented", {})
            documented[name] = self.env.docname
            self.env.spectralink_documented = documented
        # a fixed width, so that the page does not depend on the terminal of the build
        old = os.environ.get("COLUMNS")
        os.environ["COLUMNS"] = "92"
        try:
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                parser.print_help()
        finally:
            if old is None:
                del os.environ["COLUMNS"]
            else:
                os.environ["COLUMNS"] = old
        block = nodes.literal_block(buf.getvalue(), buf.getvalue())
        block["language"] = "text"
        return [block]


def _purge(app, env, docname):
    documented = getattr(env, "spectralink_documented", {})
    env.spectralink_documented = {k: v for k, v in documented.items() if v != docname}


class SpectralinkMethodsTable(SphinxDirective):
    """What every registered method can do (:func:`spectralink.catalog.describe_all`)."""

    HEADER = ("method", "k", "constraints", "largest n", "precomputed affinity", "Dask", "scale")

    def run(self):
        from sphinx import addnodes

        from spectralink.catalog import describe_all

        rows = []
        for info in describe_all():
            ref = addnodes.pending_xref(
                "",
                nodes.literal(info.class_name, info.class_name),
                refdomain="py",
                reftype="class",
                reftarget=f"spectralink.{info.class_name}",
                refexplicit=True,
                refwarn=True,
            )
            method = [ref, nodes.Text(f" ({info.name})")]
            rows.append(
                [
                    method,
                    "2 only" if info.two_clusters_only else "any",
                    info.constraint_use,
                    f"{info.max_samples:,}" if info.max_samples else "no cap",
                    "yes" if info.precomputed else "no",
                    "yes" if info.dask else "no",
                    info.scale,
                ]
            )
        # column widths from the content: equal widths overflow on the long "scale" cells
        table = nodes.table(classes=["spectralink-methods", "colwidths-auto"])
        group = nodes.tgroup(cols=len(self.HEADER))
        table += group
        for _ in self.HEADER:
            group += nodes.colspec(colwidth=1)
        head = nodes.thead()
        group += head
        head += self._row(self.HEADER)
        body = nodes.tbody()
        group += body
        for row in rows:
            body += self._row(row)
        return [table]

    @staticmethod
    def _row(cells):
        row = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            para = nodes.paragraph()
            if isinstance(cell, str):
                para += nodes.Text(cell)
            else:
                for node in cell:
                    para += node
            entry += para
            row += entry
        return row


def _merge(app, env, docnames, other):
    documented = getattr(env, "spectralink_documented", {})
    documented.update(getattr(other, "spectralink_documented", {}))
    env.spectralink_documented = documented


def _check_documented(app, env):
    missing = sorted(set(_subparsers(_parser())) - set(getattr(env, "spectralink_documented", {})))
    for name in missing:
        logger.warning("the subcommand %r has no 'spectralink-help:: %s' in the docs", name, name)


def setup(app):
    app.add_directive("spectralink-help", SpectralinkHelp)
    app.add_directive("spectralink-methods-table", SpectralinkMethodsTable)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-check-consistency", _check_documented)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
