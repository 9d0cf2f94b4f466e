"""Sphinx configuration of fedtheory's documentation (built by ``./scripts/docs``)."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import fedtheory  # noqa: E402

project = "fedtheory"
author = "fedtheory contributors"
copyright = "fedtheory contributors (MIT licence)"
release = version = fedtheory.__version__

extensions = [
    "myst_nb",  # MyST Markdown pages and notebooks (includes myst_parser)
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",  # the NumPy-style docstrings
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax 3 served from _static: math renders without network
    "fedtheory_docs",  # generated theorem pages, notebooks, the fedtheory-output directive
]
myst_enable_extensions = ["dollarmath", "amsmath", "deflist"]
myst_heading_anchors = 3
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "_ext", "**.ipynb_checkpoints"]

# The notebooks are stored with their outputs (./scripts/notebooks executes them; a test
# fails while a stored output is stale): the site shows those, it executes nothing.
nb_execution_mode = "off"
nb_merge_streams = True
# Markdown that a notebook's cells display (a theorem's ``_repr_markdown_``, a report section)
# is parsed as MyST with the extensions above, so its $...$ and $$...$$ are typeset like the
# pages' own math (myst-nb's default, CommonMark, would show them as raw LaTeX).
nb_render_markdown_format = "myst"

autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = True  # "Attributes" sections as fields, not a second description
# unqualified names in docstrings (e.g. ``C``) that several classes define: Sphinx picks one
suppress_warnings = ["ref.python"]

html_theme = "alabaster"
html_title = f"fedtheory {release}"
html_theme_options = {
    "description": "Federated-learning theory checked against experiment",
    # a wide content column: figures keep legible text and code needs less scrolling
    "page_width": "1400px",  # narrower screens get the full width (sidebar below)
    "body_max_width": "none",
}
html_static_path = ["_static"]
html_css_files = ["fedtheory.css"]  # code blocks scroll visibly, figures fill the column
