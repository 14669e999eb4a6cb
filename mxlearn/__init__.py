"""mxlearn: learn Apache MXNet's Module API in Jupyter, on the real MXNet engine."""

from . import checkpoint, checks, datasets, distributed, errors, models
from ._compat import mx
from .checkpoint import load_checkpoint
from .devices import auto_context, context_list, describe
from .early_stopping import EarlyStopping
from .epoch_report import EpochReport, StopTraining
from .errors import MXLearnError
from .history import MetricHistory
from .live import LivePlot
from .metrics import create_metric
from .module import Module, TrainingInterrupted
from .mutable_module import MutableModule
from .resuming import Checkpoint, resume
from .seeding import seed

__version__ = "0.1.0"

__all__ = [
    "Checkpoint",
    "EarlyStopping",
    "EpochReport",
    "LivePlot",
    "MetricHistory",
    "Module",
    "MutableModule",
    "StopTraining",
    "TrainingInterrupted",
    "MXLearnError",
    "auto_context",
    "context_list",
    "checkpoint",
    "checks",
    "create_metric",
    "datasets",
    "distributed",
    "describe",
    "errors",
    "load_checkpoint",
    "models",
    "mx",
    "resume",
    "seed",
]
