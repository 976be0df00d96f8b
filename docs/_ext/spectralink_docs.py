"""Sphinx helpers of the spectralink site: README sections and the command's own help.

* ``readme_sections``: the README's sections (those the site shows as they are) are written
  to ``docs/_readme/<slug>.md`` at the start of every build, with their links rewritten for
  the site, so the README and the site say the same thing without a second copy.
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
import re
from pathlib import Path

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

#: README heading -> file under docs/_readme/ (the heading itself is left out).
README_SECTIONS = {
    "### Model selection": "model_selection",
    "## Active selection: which pairs to ask": "active",
    "## Command line": "command_line",
    "## Methods": "methods",
    "## Defaults: constraints never hurt": "defaults",
    "## Speed: neighbour search, threads, progress": "speed",
    "## New points and saved models": "predict",
    "## Data directory": "data_directory",
    "## Results": "results",
}
#: README anchors -> the site page holding that section.
README_ANCHORS = {
    "model-selection": "/model_selection.md",
    "active-selection-which-pairs-to-ask": "/active.md",
}


def _site_link(target: str) -> str:
    """A README link target as a link of the site (absolute from the docs directory)."""
    if target.startswith("#"):
        return README_ANCHORS[target[1:]]
    if target.startswith("docs/"):
        path = target[len("docs") :]
        if path.endswith("/"):
            return path + "README.md" if path != "/results/" else "/results.md"
        return path
    return target


def readme_sections(app) -> None:
    root = Path(app.srcdir).parent
    text = (root / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    out = Path(app.srcdir) / "_readme"
    out.mkdir(exist_ok=True)
    in_code = False
    heads = []  # (line index, level, heading) of real headings (not comments in code)
    for i, line in enumerate(lines):
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and re.match(r"#{1,6} ", line):
            heads.append((i, len(line) - len(line.lstrip("#")), line))
    for heading, name in README_SECTIONS.items():
        found = [h for h in heads if h[2] == heading]
        if not found:
            logger.warning("README.md has no heading %r (docs/_ext/spectralink_docs.py)", heading)
            continue
        start, level, _ = found[0]
        end = next((i for i, lv, _ in heads if i > start and lv <= level), len(lines))
        body = "\n".join(lines[start + 1 : end]).strip() + "\n"
        body = re.sub(r"\]\(([^)\s]+)\)", lambda m: f"]({_site_link(m.group(1))})", body)
        path = out / f"{name}.md"
        if not path.exists() or path.read_text(encoding="utf-8") != body:
            path.write_text(body, encoding="utf-8")


def _parser():
    from spectralink.cli import _build_parser

    return _build_parser()


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
        table = nodes.table(classes=["spectralink-methods"])
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
    app.connect("builder-inited", readme_sections)
    app.add_directive("spectralink-help", SpectralinkHelp)
    app.add_directive("spectralink-methods-table", SpectralinkMethodsTable)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-check-consistency", _check_documented)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
