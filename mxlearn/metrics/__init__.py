"""Metrics: the catalogue (names, directions, fit checks), deferred device-side values,
MetricHistory (pure data) and the recorder that fills it."""

from .catalogue import F1, MAE, MSE, RMSE, MetricFacts, create_metric, facts_of, facts_of_name
from .deferred import DeferredMetric
from .diagnosis import diagnose
from .directions import improves
from .findings import Finding
from .history import MetricHistory
from .recorder import TrainingRecorder

__all__ = [
    "F1",
    "MAE",
    "MSE",
    "RMSE",
    "DeferredMetric",
    "Finding",
    "MetricHistory",
    "TrainingRecorder",
    "create_metric",
    "diagnose",
    "MetricFacts",
    "facts_of",
    "facts_of_name",
    "improves",
]
