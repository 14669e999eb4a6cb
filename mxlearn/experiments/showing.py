"""A finished figure shown in a notebook: a widget where widgets render (with the same PNG
beside it for exported notebooks), else the PNG itself."""

from __future__ import annotations

import base64
import io
import os
import time

from IPython.display import display

from ..language import say
from ..live.backends import choose_backend


def show_png(png: bytes, widget: bool) -> None:
    bundle = {
        "image/png": base64.b64encode(png).decode("ascii"),
        "text/plain": say("<plot>"),
    }
    if widget:
        import ipywidgets as widgets

        image = widgets.Image(value=png, format="png")
        bundle = {**image._repr_mimebundle_(), **bundle}
    display(bundle, raw=True)


def figure_png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def show_figure(fig, name: str, backend: str | None = None) -> str | None:
    """Show ``fig`` where the code runs, as LivePlot chooses; in a terminal save it under
    runs/plots/ and say where (returning the path)."""
    chosen = choose_backend(backend)
    if chosen != "console":
        show_png(figure_png(fig), widget=chosen == "widget")
        return None
    path = os.path.join("runs", "plots", time.strftime(f"{name}-%Y%m%d-%H%M%S.png"))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, format="png")
    print(say("Plot saved to {path}", path=path), flush=True)
    return path
