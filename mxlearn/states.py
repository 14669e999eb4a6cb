"""The named states mxlearn keeps, as enums: how a run ended, where a module's weights come
from, a metric's phase, where a live plot draws. Each is a ``StrEnum``: its members equal the strings they replace
(``run.outcome == 'stopped'`` still holds), print as them and are written to JSON as them."""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    """How a fit ended; set before ``on_train_end``."""

    COMPLETED = "completed"
    STOPPED = "stopped"  # a callback raised StopTraining (early stopping among them)
    INTERRUPTED = "interrupted"  # Ctrl-C, or the notebook's "interrupt kernel"
    FAILED = "failed"


class WeightsFrom(StrEnum):
    """Where a module's weights come from: a fit from weights that are not fresh must not read
    its first batch as the network before training."""

    INITIALIZER = "initializer"
    GIVEN = "given"  # set_params, arg_params, a checkpoint
    TRAINED = "trained"  # updated


class Phase(StrEnum):
    TRAIN = "train"
    VALIDATION = "validation"


class Backend(StrEnum):
    """Where a LivePlot draws (mxlearn.live.renderers has a renderer for each)."""

    WIDGET = "widget"  # a notebook with ipywidgets
    DISPLAY = "display"  # a notebook without widgets: an image updated in place
    CONSOLE = "console"  # a terminal, a script, CI: one line per epoch and a PNG
