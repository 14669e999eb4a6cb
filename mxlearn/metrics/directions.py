"""What a metric measures: whether larger is better, its range, and which of a run's metrics a
user's name means. Known only for MXNet's own metrics, by exact class (:data:`.catalogue.
KNOWN_METRICS`); for a custom one the user says it, and what they say is checked: a wrong
direction would turn every "best" and every finding around. Never guessed from a name."""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import N_, InputError, closest
from .catalogue import MetricFacts, create_metric, facts_of


class NotAMetricName(InputError):
    says = N_("{called}: give a metric's name, such as 'accuracy' or 'acc'; got {kind}.")
    fix_says = N_(
        "EarlyStopping('accuracy') or Checkpoint(prefix, best='accuracy'); the metric "
        "object itself goes to fit(eval_metric=...)"
    )


class NotMeasured(InputError):
    says = N_("{called}: this run measures no metric '{spec}'; its validation reports {measured}.")
    fix_says = N_("name one of {measured}")


class NotMeasuredNear(NotMeasured):
    says = N_(
        "{called}: this run measures no metric '{spec}'; its validation reports "
        "{measured}. Did you mean '{near}'?"
    )


class DirectionNotTrueOrFalse(InputError):
    says = N_(
        "{called}: higher_is_better={stated!r}; say True or False (a string such as "
        "'False' would count as True)."
    )
    fix_says = N_("{maker}(..., higher_is_better=False) for a loss or an error, True for a score")


class AgainstKnownDirection(InputError):
    fix_says = N_("leave higher_is_better out for MXNet's metrics")


class AgainstLargerIsBetter(AgainstKnownDirection):
    says = N_(
        "{called}: higher_is_better={stated} for '{name}' (class {kind}), for which larger is "
        "better: the best epoch would be the worst."
    )


class AgainstSmallerIsBetter(AgainstKnownDirection):
    says = N_(
        "{called}: higher_is_better={stated} for '{name}' (class {kind}), for which smaller is "
        "better: the best epoch would be the worst."
    )


class DirectionUnknown(InputError):
    says = N_(
        "{called}: '{name}' (class {kind}) is a metric mxlearn does not know, so it cannot "
        "tell whether a larger value is better, and will not guess."
    )
    fix_says = N_(
        "say it: {maker}(..., higher_is_better=True) for a score, False for a loss or an error"
    )


def improves(higher_is_better: bool, value: float, best: float | None, min_delta=0.0) -> bool:
    if best is None:
        return True
    gain = value - best if higher_is_better else best - value
    return gain > min_delta


def check_name(spec, called: str) -> None:
    if spec is not None and not isinstance(spec, str):
        raise NotAMetricName(called=called, kind=type(spec).__name__)


def resolve_name(spec: str, measured: dict, called: str) -> str:
    """The name a run records the metric ``spec`` under (``measured``: name -> metric), from the
    factory's names in any case: 'acc' is 'accuracy', 'ce' is 'cross-entropy'."""
    if spec in measured:
        return spec
    by_lower = {name.lower(): name for name in measured}
    if spec.lower() in by_lower:
        return by_lower[spec.lower()]
    try:
        created = create_metric(spec, called)
    except (InputError, TypeError):
        created = None
    if created is not None:
        if created.name in measured:
            return created.name
        # 'top_k_acc' makes a top-5 accuracy; the run may measure top 2: the class decides,
        # when exactly one of the run's metrics has it
        same = [name for name, metric in measured.items() if type(metric) is type(created)]
        if len(same) == 1:
            return same[0]
    near = closest(spec, measured)
    refusal = NotMeasuredNear if near else NotMeasured
    raise refusal(called=called, spec=spec, measured=list(measured), near=near and near[0])


def is_direction(value) -> bool:
    return isinstance(value, (bool, np.bool_))


def direction(name: str, metric, stated: bool | None, called: str) -> bool:
    """Whether larger is better for ``metric``: as stated, else as known for MXNet's metrics."""
    maker = called.split("(")[0]
    if stated is not None and not is_direction(stated):
        raise DirectionNotTrueOrFalse(called=called, stated=stated, maker=maker)
    facts = facts_of(metric)
    kind = type(metric).__name__
    if stated is not None and facts is not None and bool(stated) != facts.higher_is_better:
        against = AgainstLargerIsBetter if facts.higher_is_better else AgainstSmallerIsBetter
        raise against(called=called, stated=stated, name=name, kind=kind)
    if stated is not None:
        return bool(stated)
    if facts is None:
        raise DirectionUnknown(called=called, name=name, kind=kind, maker=maker)
    return facts.higher_is_better


def remember_stated(history, name: str, metric, higher_is_better: bool) -> None:
    """A custom metric's direction, said to EarlyStopping or Checkpoint, kept for diagnose."""
    if facts_of(metric) is None:
        history.know(name, MetricFacts(higher_is_better, None))


class NoSuchRecordedMetric(InputError):
    says = N_(
        "history.describe({metric!r}, ...): this history holds no metric of that name; "
        "it holds {recorded}."
    )
    fix_code = "history.describe({suggested!r}, higher_is_better=False)"


class DirectionNotSaid(InputError):
    says = N_("history.describe('{metric}', higher_is_better={value!r}): say True or False.")
    fix_says = N_(
        "higher_is_better=True for a score, False for a loss or an error: "
        "history.describe('{metric}', higher_is_better=True)"
    )


class DirectionAgainstMXNet(InputError):
    says = N_(
        "history.describe('{metric}', higher_is_better={value}): fit recorded "
        "'{metric}' from an MXNet metric for which the other way is better."
    )
    fix_says = N_("leave MXNet's own metrics as fit recorded them")


class NotARange(InputError):
    says = N_(
        "history.describe('{metric}', value_range={value!r}): a range is two finite "
        "numbers, the lower first."
    )
    fix_code = "value_range=(0.0, 1.0)"


_NOT_PAIRS = (str, bytes, set, frozenset, dict)  # sized, but not a (low, high) in order


def is_range(value) -> bool:
    if isinstance(value, _NOT_PAIRS) or not hasattr(value, "__len__") or len(value) != 2:
        return False
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value):
        return False
    low, high = (float(v) for v in value)
    return math.isfinite(low) and math.isfinite(high) and low < high


def described(history, metric, higher_is_better, value_range) -> MetricFacts:
    recorded = history.metrics()
    if not isinstance(metric, str) or (recorded and metric not in recorded):
        near = closest(metric, recorded) if isinstance(metric, str) else []
        suggested = (near or recorded or ["my_error"])[0]
        raise NoSuchRecordedMetric(metric=metric, recorded=recorded, suggested=suggested)
    if not is_direction(higher_is_better):
        raise DirectionNotSaid(metric=metric, value=higher_is_better)
    known = history.known.get(metric)
    if known is not None and known.higher_is_better != bool(higher_is_better):
        raise DirectionAgainstMXNet(metric=metric, value=bool(higher_is_better))
    if value_range is not None and not is_range(value_range):
        raise NotARange(metric=metric, value=value_range)
    low_high = None if value_range is None else tuple(float(v) for v in value_range)
    return MetricFacts(bool(higher_is_better), low_high)
