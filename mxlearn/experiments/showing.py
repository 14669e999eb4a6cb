"""A finished figure shown in a notebook: a widget where widgets render (with the same PNG
beside it for exported notebooks), else the PNG itself."""

from __future__ import annotations

import base64

from IPython.display import display

from ..language import say


def show_png(png: bytes, widget: bool) -> None:
    bundle = {
        "image/png": base64.b64encode(png).decode("ascii"),
        "text/plain": say("<comparison plot>"),
    }
    if widget:
        import ipywidgets as widgets

        image = widgets.Image(value=png, format="png")
        bundle = {**image._repr_mimebundle_(), **bundle}
    display(bundle, raw=True)
