"""Live training curves: a notebook widget, an in-place image, or a console twin."""

from .plot import LivePlot
from .renderers import choose_backend, prepare_for_kernel

prepare_for_kernel()

__all__ = ["LivePlot", "choose_backend"]
