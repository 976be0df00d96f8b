"""Sphinx configuration of the spectralink documentation site.

Build (from the repository root, after ``pip install ".[docs]"``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
os.environ.setdefault("MPLBACKEND", "Agg")

import spectralink  # noqa: E402

project = "spectralink"
author = "spectralink developers"
copyright = "spectralink developers, BSD-3-Clause"
version = release = spectralink.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
    "spectralink_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "results/records/**",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
]
templates_path = ["_templates"]

# MyST: README-style Markdown, heading anchors for in-page links, tables and math
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 4
# docs/results/ is written by the benchmark scripts, whose tables start at H2 or skip a level
suppress_warnings = ["myst.header"]

# API reference: one page per object, from the docstrings (numpydoc format)
autosummary_generate = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False


def _skip_sklearn_members(app, what, name, obj, skip, options):
    """Leave out what the estimators inherit from scikit-learn (get_params, metadata
    routing, ...): documented there, and their cross-references point into its docs."""
    module = getattr(obj, "__module__", None) or ""
    return True if module.startswith("sklearn") else skip


def setup(app):
    app.connect("autodoc-skip-member", _skip_sklearn_members)


# Gallery: the scripts in examples/, run at every build (a few seconds each, small data)
sphinx_gallery_conf = {
    "examples_dirs": str(HERE.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "min_reported_time": 1,
}

html_theme = "pydata_sphinx_theme"
html_title = f"spectralink {release}"
html_theme_options = {
    "github_url": "https://github.com/spectralink/spectralink",
    "navigation_with_keys": False,
    "show_toc_level": 2,
    # the pages are the top navigation bar; the sidebar lists the sections of the page
    # (the theme's section navigation is empty for a flat site), and the right-hand column
    # is left out so that wide tables and code have room
    "secondary_sidebar_items": [],
    "header_links_before_dropdown": 7,
}
html_sidebars = {"**": ["page-toc"]}
html_static_path = ["_static"]
html_css_files = ["spectralink.css"]
html_show_sourcelink = False
