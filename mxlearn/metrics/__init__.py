"""Metrics and their values: the catalogue (names, directions, ranges, fit checks), deferred
device-side values, MetricHistory (pure data) and the recorder that fills it."""

from .catalogue import F1, MAE, MSE, RMSE, create_metric, higher_is_better, improves, value_range
from .deferred import DeferredMetric
from .history import MetricHistory
from .recorder import TrainingRecorder

__all__ = [
    "F1",
    "MAE",
    "MSE",
    "RMSE",
    "DeferredMetric",
    "MetricHistory",
    "TrainingRecorder",
    "create_metric",
    "higher_is_better",
    "improves",
    "value_range",
]
