"""Metric creation by name, with explanations instead of MXNet's bare assertions."""

from __future__ import annotations

from ._compat import mx
from .errors import ArgumentTypeError, InputError, did_you_mean


def metric_names() -> list[str]:
    return sorted(mx.registry.get_registry(mx.metric.EvalMetric))


def check_metric_spec(spec, called: str) -> None:
    """Raise InputError for a metric name MXNet does not know, naming the closest ones."""
    if isinstance(spec, mx.metric.EvalMetric) or callable(spec):
        return
    if isinstance(spec, (list, tuple)):
        for item in spec:
            check_metric_spec(item, called)
        return
    if not isinstance(spec, str):
        raise ArgumentTypeError(
            f"{called}: eval_metric={spec!r} is neither a metric name nor an mx.metric.EvalMetric.",
            fix="eval_metric='acc'",
        )
    if spec.lower() not in metric_names():
        raise InputError(
            f"{called}: there is no metric named '{spec}'. " + did_you_mean(spec, metric_names()),
            fix="eval_metric='acc' (or 'ce', 'mse', 'rmse', 'mae', 'f1', ['acc', 'ce'])",
        )


def create_metric(spec, called: str = "mxlearn.create_metric()", **kwargs):
    """Like ``mx.metric.create``, but unknown names and bad settings raise an explained error.

    Examples
    --------
    >>> metric = create_metric('acc')
    >>> metric.get()
    ('accuracy', nan)
    """
    if isinstance(spec, mx.metric.EvalMetric):
        return spec
    check_metric_spec(spec, called)
    try:
        return mx.metric.create(spec, **kwargs)
    except (AssertionError, TypeError, ValueError) as err:
        if "top_k" in str(err) or (isinstance(spec, str) and "top_k" in spec.lower()):
            raise InputError(
                f"{called}: the metric '{spec}' needs how many top guesses count (k > 1).",
                fix="mx.metric.create('top_k_accuracy', top_k=5)",
            ) from None
        raise InputError(f"{called}: cannot create the metric {spec!r}: {err}") from None
