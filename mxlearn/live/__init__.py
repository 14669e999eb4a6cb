"""Live training curves: a notebook widget, an in-place image, or a console twin."""

from .backends import choose_backend, prepare_for_kernel
from .plot import LivePlot

prepare_for_kernel()

__all__ = ["LivePlot", "choose_backend"]
