"""mxlearn: learn Apache MXNet's Module API in Jupyter, on the real MXNet engine."""

# First: the thread pools are sized from the environment when their libraries load (NumPy's
# OpenBLAS too, when mxlearn is imported before NumPy), and MXNet loads below.
from . import cpu_share

cpu_share.size_thread_pool()

from .errors import SetupError as _SetupError


def _run_as_a_command() -> bool:
    """``python -m mxlearn ...`` or the ``mxlearn`` script: a setup MXNet cannot load ends the
    command with its explanation and no traceback, as the command's other errors do."""
    import os
    import sys

    argv = getattr(sys, "orig_argv", [])
    ran = any(flag == "-m" and name == "mxlearn" for flag, name in zip(argv, argv[1:]))
    return ran or os.path.basename(sys.argv[0]) == "mxlearn"


try:
    from . import _compat  # noqa: F401 - MXNet loads here
except _SetupError as error:
    if _run_as_a_command():
        raise SystemExit(f"\nmxlearn: {error}") from None
    raise

from . import checkpoint, checks, datasets, distributed, errors, models
from ._compat import mx
from .boundary import public as _public
from .checkpoint import Checkpoint, load_checkpoint
from .devices import auto_context, context_list, describe
from .errors import MXLearnError
from .exercises import hint
from .experiments.comparison import compare
from .experiments.layer_stats import LayerStats
from .experiments.rate_finder import RateFinding, lr_find
from .language import current_language
from .language import set_language as _set_language
from .live import LivePlot
from .metrics import MetricHistory, create_metric
from .module import Module, MutableModule, resume
from .network_view import NetworkView, show_network
from .seeding import seed
from .training import Callback, RunContext, StopTraining
from .training.early_stopping import EarlyStopping
from .training.epoch_report import EpochReport
from .training.loop import TrainingInterrupted
from .warning_lines import install as _install_warning_lines

set_language = _public("mxlearn.set_language()")(_set_language)
_install_warning_lines()  # mxlearn's warnings as one line, without a file and line number

__version__ = "0.1.0"

__all__ = [
    "Callback",
    "Checkpoint",
    "EarlyStopping",
    "EpochReport",
    "LayerStats",
    "LivePlot",
    "MetricHistory",
    "Module",
    "MutableModule",
    "NetworkView",
    "RateFinding",
    "RunContext",
    "StopTraining",
    "TrainingInterrupted",
    "MXLearnError",
    "auto_context",
    "context_list",
    "checkpoint",
    "checks",
    "compare",
    "create_metric",
    "current_language",
    "datasets",
    "distributed",
    "describe",
    "errors",
    "hint",
    "load_checkpoint",
    "lr_find",
    "models",
    "mx",
    "resume",
    "seed",
    "set_language",
    "show_network",
]
