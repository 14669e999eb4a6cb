"""Sphinx's settings for the course site, one build a language (build.py passes
``-D language=en`` or ``zh_CN``, which also translates the theme's own labels).

Everything a page loads comes from the site itself: the theme ships its fonts and icons, no
notebook carries widget state (so MyST-NB adds no widget script), and math is shown as its TeX
source instead of through MathJax, which Sphinx loads from a CDN.
"""

from html import escape

from docutils import nodes

project = "mxlearn"
author = "the mxlearn course"
extensions = ["myst_nb"]  # reads .md pages and .ipynb notebooks (MyST Markdown in both)
exclude_patterns = ["_build", "**.ipynb_checkpoints"]

# The notebooks arrive executed by build.py (the student edition, run as `make tour` runs it):
# never run here, and never cached in a database beside the pages.
nb_execution_mode = "off"
nb_ipywidgets_js = {}  # the widget manager loads from a CDN: never, even for a saved widget
# An exercise's check fails until it is answered, in the notebook's language: Pygments' IPython
# traceback lexer stops at Chinese punctuation (a warning, which -W makes an error).
nb_render_error_lexer = "text"

html_theme = "sphinx_book_theme"  # Jupyter Book's own look, its assets in the package
html_title = "mxlearn"
html_theme_options = {
    "use_download_button": True,  # the .ipynb of the student edition, with its outputs
    "show_toc_level": 2,
}
html_math_renderer = "plain"  # see setup(): no MathJax


def _plain_math(self, node):
    """Math as its TeX source, in a <code> element, instead of a script from the internet."""
    text = node.astext()
    self.body.append(f'<code class="math">{escape(text)}</code>')
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("plain", (_plain_math, None), (_plain_math, None))
