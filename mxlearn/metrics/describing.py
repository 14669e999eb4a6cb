"""``history.describe(name, higher_is_better=..., value_range=...)``: what a user says a custom
metric measures, checked before the history believes it (a wrong direction would turn every
"best" and every finding around)."""

from __future__ import annotations

import math
import numbers

from ..errors import N_, InputError, closest
from .directions import MetricFacts, is_direction


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
    """Two finite real numbers in a list or tuple (or array), the lower first."""
    if isinstance(value, _NOT_PAIRS) or not hasattr(value, "__len__") or len(value) != 2:
        return False
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value):
        return False
    low, high = (float(v) for v in value)
    return math.isfinite(low) and math.isfinite(high) and low < high


def described(history, metric, higher_is_better, value_range) -> MetricFacts:
    """The facts ``history.describe`` records, or the InputError that says what to fix."""
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
