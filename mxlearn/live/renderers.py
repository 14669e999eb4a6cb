"""The three faces of a LivePlot, with the same methods (what one cannot show is a no-op):
an ipywidgets box updated through its traits (widget), images and text replaced through
IPython display ids (display), epoch lines and a saved PNG (console); and :func:`show_figure`.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import io
import os
import sys
import time

from IPython.display import display

from ..atomic_write import atomic_write_bytes
from ..errors import N_, InputError, did_you_mean
from ..language import say
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
    """ipywidgets and its frontend side (how JupyterLab, Notebook 7 and VS Code render it)."""
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


# the parts of a widget made at ``import mxlearn``, for the kernel's first plot
_spare_widget: list[tuple] = []


def prepare_for_kernel() -> None:
    """In a kernel that will draw widgets, import ipywidgets (25-30 ms), make the first plot's
    widget (~3 ms: each part is a message) and draw a canvas to lend (figure.prepare_canvas) at
    ``import mxlearn``, where waiting is expected, not inside the student's first
    ``fit(live=True)``."""
    if _kernel_shell() is None:
        return
    # a wrong $MXLEARN_LIVE_BACKEND, or a broken install, is reported when a plot is made
    with contextlib.suppress(Exception):
        if choose_backend() == "widget":
            from .figure import prepare_canvas

            _spare_widget[:] = [_widget_parts()]
            prepare_canvas()


class NotInAKernel(InputError):
    says = N_(
        "LivePlot(backend='display') draws into a notebook's output, and this "
        "Python is not running in a Jupyter kernel."
    )
    fix_says = N_(
        "LivePlot(backend='console') prints the curves' values here (or leave "
        "backend out: mxlearn then chooses the console outside a notebook)"
    )


class Renderer:
    """What every face does with a call it cannot show: nothing."""

    wants_figure = True  # draws the figure while training
    shows_epoch_lines = False  # prints a line per epoch

    def _nothing(self, *shown) -> None:
        pass

    start = progress = figure = epoch = _nothing

    def findings(self, text: str) -> None:
        """Plain text as the output after the plot: the same words in a notebook read without
        widgets (an export) as in a live one."""
        display({"text/plain": text}, raw=True)


class ConsoleRenderer(Renderer):
    wants_figure = False  # draws nothing while training: only the final PNG
    shows_epoch_lines = True

    def __init__(self, png_path: str | None = None) -> None:
        self.png_path = png_path

    def epoch(self, text: str) -> None:
        print(text, file=sys.stdout, flush=True)

    def finish(self, png: bytes | None, text: str) -> str | None:
        print(text, flush=True)
        if png is None:
            return None
        path = saved_png(png, self.png_path, "training")
        print(say("Training plot saved to {path}", path=path), flush=True)
        return path

    def findings(self, text: str) -> None:
        print(text, flush=True)


class DisplayRenderer(Renderer):
    def __init__(self) -> None:
        self._text = self._image = None

    def start(self) -> None:
        self._text = display({"text/plain": say("starting...")}, raw=True, display_id=True)
        if self._text is None:  # IPython shows nothing it could update here
            raise NotInAKernel()
        waiting = {"text/plain": say("(the plot appears after the first batches)")}
        self._image = display(waiting, raw=True, display_id=True)

    def progress(self, text: str, fraction: float | None) -> None:
        self._text.update({"text/plain": text}, raw=True)

    def figure(self, frame: bytes) -> None:
        self._image.update(_image_bundle(frame, "image/jpeg"), raw=True)

    def finish(self, png: bytes | None, text: str) -> None:
        self.progress(text, 1.0)
        if png is not None:
            self._image.update(_image_bundle(png, "image/png"), raw=True)


class WidgetRenderer(Renderer):
    def __init__(self) -> None:
        parts = _spare_widget.pop() if _spare_widget else None
        if parts is None or not _all_open(parts):
            parts = _widget_parts()  # none made, or some of it closed since (Widget.close_all())
        self.bar, self.text, self.image, self.box = parts
        # a spare's words were said at import: in the language spoken now (no message if same)
        self.bar.description, self.text.value = say("training"), say("starting...")
        self._handle = None

    def _bundle(self, png: bytes | None) -> dict:
        # The widget view for live frontends, plus a PNG of the same plot for places that render
        # no widgets (an exported or statically viewed notebook).
        bundle = self.box._repr_mimebundle_()
        if png is not None:
            bundle.update(_image_bundle(png, "image/png"))
        return bundle

    def start(self) -> None:
        self._handle = display(self._bundle(None), raw=True, display_id=True)

    def progress(self, text: str, fraction: float | None) -> None:
        self.text.value = text
        if fraction is not None:
            self.bar.value = min(max(fraction, 0.0), 1.0)

    def figure(self, frame: bytes, format: str = "jpeg") -> None:
        with self.image.hold_sync():  # one message, whichever traits changed
            self.image.format = format
            self.image.value = frame

    def finish(self, png: bytes | None, text: str) -> None:
        with self.bar.hold_sync():  # the bar's value and colour in one message
            self.progress(text, 1.0)
            self.bar.bar_style = "success"
        if png is not None:
            self.figure(png, "png")  # the last frame is the PNG the saved notebook keeps
            if self._handle is not None:
                self._handle.update(self._bundle(png), raw=True)


def _widget_parts() -> tuple:
    """A progress bar, its text and the plot's image, in a box."""
    # Imported here, not at the top: only a notebook's widget needs ipywidgets
    import ipywidgets as widgets

    # every widget, and every Layout, is a message when shown: the plain ones share a Layout
    # (~1.2 ms a plot less)
    plain = widgets.Layout()
    bar = widgets.FloatProgress(
        value=0.0, max=1.0, description=say("training"), layout=widgets.Layout(width="320px")
    )
    text = widgets.HTML(value=say("starting..."), layout=plain)
    # flex-start: the plot keeps its own size instead of being stretched to the cell's width
    image = widgets.Image(
        format="jpeg", layout=widgets.Layout(max_width="100%", align_self="flex-start")
    )
    box = widgets.VBox([widgets.HBox([bar, text], layout=plain), image], layout=plain)
    return bar, text, image, box


def _all_open(parts: tuple) -> bool:
    """Every widget and layout of ``_widget_parts()`` still open (a closed one has no comm)."""
    box = parts[3]
    shown = (*parts, *box.children)
    return all(w.comm is not None for w in (*shown, *(w.layout for w in shown)))


def _image_bundle(data: bytes, mimetype: str) -> dict:
    return {mimetype: base64.b64encode(data).decode("ascii"), "text/plain": say("<training plot>")}


# One row a backend: a new renderer is a class with the methods above and its row here.
RENDERERS = {
    Backend.WIDGET: lambda png_path: WidgetRenderer(),
    Backend.DISPLAY: lambda png_path: DisplayRenderer(),
    Backend.CONSOLE: ConsoleRenderer,  # the PNG is the console's picture of the run
}


def make_renderer(backend: Backend, png_path: str | None = None):
    return RENDERERS[Backend(backend)](png_path)


def saved_png(png: bytes, path: str | None, name: str) -> str:
    """``png`` written at ``path``, else at runs/plots/<name>-<time>.png; the path."""
    path = path or os.path.join("runs", "plots", time.strftime(f"{name}-%Y%m%d-%H%M%S.png"))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    atomic_write_bytes(path, png)
    return path


def figure_png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def show_figure(fig, name: str, backend: str | None = None) -> str | None:
    """A finished figure shown as LivePlot chooses: a widget (with the PNG beside it for
    exported notebooks), the PNG, or in a terminal a file under runs/plots/ (its path)."""
    chosen, png = choose_backend(backend), figure_png(fig)
    if chosen == "console":
        path = saved_png(png, None, name)
        print(say("Plot saved to {path}", path=path), flush=True)
        return path
    bundle = {"image/png": base64.b64encode(png).decode("ascii"), "text/plain": say("<plot>")}
    if chosen == "widget":
        import ipywidgets as widgets

        bundle = {**widgets.Image(value=png, format="png")._repr_mimebundle_(), **bundle}
    display(bundle, raw=True)
    return None
