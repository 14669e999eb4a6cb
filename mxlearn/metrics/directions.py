"""What a metric measures: whether larger is better, the range its values lie in, and which of a
run's metrics a name given by the user means.

Known only for MXNet's own metrics (and mxlearn's versions of them), by their exact class, from
their rows in :data:`.catalogue.KNOWN_METRICS`: a ``CustomMetric`` or a user's ``EvalMetric``
subclass may measure anything, so for those the user says it (``higher_is_better=``); mxlearn
never guesses it from a name.
"""

from __future__ import annotations

import numpy as np

from ..errors import N_, InputError, closest
from .catalogue import MetricFacts, create_metric, known_metric, known_name


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
    """higher_is_better given against what is known of an MXNet metric."""

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


def facts_of(metric) -> MetricFacts | None:
    """What an MXNet metric object measures; None for a custom one."""
    row = known_metric(metric)
    return row and row.facts


def facts_of_name(name: str) -> MetricFacts | None:
    """What a metric named as MXNet's own report themselves measures; None for other names."""
    row = known_name(name)
    return row and row.facts


def improves(higher_is_better: bool, value: float, best: float | None, min_delta=0.0) -> bool:
    """Whether ``value`` beats ``best`` by more than ``min_delta`` (any value beats None)."""
    if best is None:
        return True
    gain = value - best if higher_is_better else best - value
    return gain > min_delta


def check_name(spec, called: str) -> None:
    """A metric is named by a string (its name in the run, or the factory's)."""
    if spec is not None and not isinstance(spec, str):
        raise NotAMetricName(called=called, kind=type(spec).__name__)


def resolve_name(spec: str, measured: dict, called: str) -> str:
    """The name under which a run records the metric ``spec`` means (``measured``: name ->
    metric object), accepting the factory's names in any case: 'acc' is 'accuracy', 'ce' is
    'cross-entropy', 'top_k_acc' is 'top_5_accuracy'."""
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
    """True or False (NumPy's booleans too); not 'False', 'lower', 0 or 1."""
    return isinstance(value, (bool, np.bool_))


def direction(name: str, metric, stated: bool | None, called: str) -> bool:
    """Whether larger is better for ``metric``: as stated by the user, else as known for
    MXNet's metrics; refused for a custom metric whose user did not say."""
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
    """A custom metric's direction, said to EarlyStopping or Checkpoint, kept in the run's
    history: diagnose and compare can then judge it too."""
    if facts_of(metric) is None:
        history.know(name, MetricFacts(higher_is_better, None))
