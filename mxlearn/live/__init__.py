"""Live training curves: a notebook widget, an in-place image, or a console twin."""

from .backends import choose_backend
from .plot import LivePlot

__all__ = ["LivePlot", "choose_backend"]
