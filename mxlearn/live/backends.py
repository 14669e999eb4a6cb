"""Which renderer fits where the code runs: a widget, an in-place image, or the console."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys

from ..errors import N_, InputError, did_you_mean
from ..states import Backend

BACKENDS = tuple(backend.value for backend in Backend)
ENV_VARIABLE = "MXLEARN_LIVE_BACKEND"


class NoSuchBackend(InputError):
    says = N_("LivePlot(backend={choice!r}): there is no such backend. {suggestion}")
    fix_says = N_(
        "backend='widget' (notebook), 'display' (notebook without widgets) or "
        "'console' (terminal, CI), or leave it out to choose automatically"
    )


def _kernel_shell():
    """The IPython shell of a Jupyter kernel, or None (a terminal, a script, IPython's REPL)."""
    ipython = sys.modules.get("IPython")  # not imported: not in IPython, and no cost to look
    if ipython is None:
        return None
    shell = ipython.get_ipython()
    return shell if shell is not None and hasattr(shell, "kernel") else None


def widgets_available() -> bool:
    """ipywidgets is importable and the frontend side (the JupyterLab/Notebook 7 manager) is
    installed beside it, which is how JupyterLab, Notebook 7 and VS Code render widgets."""
    if importlib.util.find_spec("ipywidgets") is None:
        return False
    return any(importlib.util.find_spec(m) for m in ("jupyterlab_widgets", "widgetsnbextension"))


def choose_backend(requested: str | None = None) -> Backend:
    """``requested``, else ``$MXLEARN_LIVE_BACKEND``, else what the environment supports."""
    choice = requested or os.environ.get(ENV_VARIABLE) or None
    if choice is not None:
        if choice not in BACKENDS:
            raise NoSuchBackend(choice=choice, suggestion=did_you_mean(choice, BACKENDS))
        return Backend(choice)
    if _kernel_shell() is None:
        return Backend.CONSOLE
    return Backend.WIDGET if widgets_available() else Backend.DISPLAY


def prepare_for_kernel() -> None:
    """In a Jupyter kernel that will draw widgets, import ipywidgets now, at ``import mxlearn``.

    The import takes 25-30 ms (more on a cold disk), and it would otherwise happen in the cell
    that trains, inside the student's first ``fit(live=True)``; the import cell is where
    waiting is expected. Elsewhere (a script, the tests, a terminal) nothing is imported.
    """
    if _kernel_shell() is None:
        return
    # a wrong $MXLEARN_LIVE_BACKEND, or a broken install, is reported when a plot is made
    with contextlib.suppress(Exception):
        if choose_backend() == "widget":
            import ipywidgets  # noqa: F401 - imported for its cost, used by the widget renderer
