"""The values an iterator feeds, checked on every row once, when fit or score starts: NaN,
infinity or magnitudes past 1.8e19 (their squares overflow float32) in the data and regression
targets, and classifier labels that are not class numbers. Iterators whose rows mxlearn cannot
see in memory get the same checks per batch (``batch_values``)."""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from .. import network
from .._compat import mx
from ..errors import N_, InputError
from ..language import say

# |x| beyond this: x * x overflows float32 (3.4e38)
ABSURD_MAGNITUDE = 1.8e19
_checked: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class NonFiniteData(InputError):  # also the kind of the first-batch and per-batch checks
    says = N_(
        "The {what} data '{name}' holds {nan} NaN, {inf} infinite and {huge} absurdly large (past "
        "1.8e19) values, in {where}. One is enough to turn the results (and, in training, every "
        "weight) into NaN; mxlearn checks every row before it trains or scores."
    )
    fix_says = N_(
        "clean the data before making the iterator, e.g. keep the finite rows: ok = "
        "np.isfinite(X).all(axis=1); X, y = X[ok], y[ok]"
    )


class NonFiniteLabels(NonFiniteData):
    says = N_(
        "The {what} labels '{name}' hold {nan} NaN, {inf} infinite and {huge} absurdly large (past "
        "1.8e19) values, in {where}. One is enough to turn the results (and, in training, every "
        "weight) into NaN; mxlearn checks every row before it trains or scores."
    )


class FractionalLabels(InputError):
    says = N_(
        "The {what} labels '{name}' of {layer} ({classes} classes) are not all class numbers, "
        "which are whole (MXNet would cut them to integers without a word): {where}, e.g. the "
        "label {label}."
    )
    fix_says = N_(
        "for classes, y = y.astype(int) after checking how they were coded; to predict a quantity, "
        "end the network with LinearRegressionOutput"
    )


class LabelsOutsideClasses(InputError):
    says = N_(
        "The {what} labels '{name}' of {layer} ({classes} classes) lie outside the classes "
        "0..{last} (MXNet would not complain, and every number it gave would be wrong): {where}, "
        "e.g. the label {label}."
    )
    fix_says = N_(
        "labels must be whole class numbers from 0 (e.g. y = y - 1 if they start at 1), or widen "
        "the last layer: FullyConnected(..., num_hidden=K) for K classes"
    )


@dataclass(frozen=True)
class LabelRule:  # a classification label: a whole number 0..classes-1 (or ignore_label)
    name: str
    classes: int
    describe: str  # e.g. "SoftmaxOutput 'softmax'"
    ignore_label: float | None = None


@dataclass(frozen=True)
class DataFacts:  # what the check found in clean data, for the watchdog's explanations
    rows: int
    largest: float  # the largest absolute value in the data

    def text(self) -> str:
        return say(
            "The data holds no NaN or infinity (all {rows} rows checked); its largest "
            "absolute value is {largest}.",
            rows=self.rows,
            largest=f"{self.largest:.3g}",
        )


def what_words(what: str) -> str:
    return {
        "training": say("training"),
        "validation": say("validation"),
        "evaluation": say("evaluation"),
    }.get(what, what)


def rolls_over(iterator) -> bool:
    """An NDArrayIter with ``last_batch_handle='roll_over'``: ``batch.pad`` counts real rows."""
    if isinstance(iterator, mx.io.ResizeIter):
        iterator = iterator.data_iter
    return getattr(iterator, "last_batch_handle", None) == "roll_over"


def source_arrays(iterator) -> tuple[list, list] | None:
    """The (name, NDArray) pairs of data and labels behind an in-memory ``iterator``."""
    if isinstance(iterator, mx.io.ResizeIter):
        iterator = iterator.data_iter
    if not isinstance(iterator, mx.io.NDArrayIter):
        return None
    pairs = [*iterator.data, *iterator.label]
    if not all(isinstance(a, mx.nd.NDArray) and a.stype == "default" for _, a in pairs):
        return None  # HDF5 or sparse: read per batch instead
    return list(iterator.data), list(iterator.label)


def label_rules(label_inputs: dict, output_shapes: dict, label_shapes=()) -> dict[str, LabelRule]:
    """label name -> rule, for the labels a classifier reads as class numbers (not those
    ``label_shapes``, (name, shape) pairs, show to hold probabilities)."""
    shapes = dict(label_shapes or ())
    soft = network.probability_labels(label_inputs.values(), output_shapes, shapes.items())
    rules = {}
    for name, layer in label_inputs.items():
        shape = output_shapes.get(layer.output_name)
        if not (layer.is_classification and shape and len(shape) >= 2) or name in soft:
            continue  # probabilities are checked as values, like a regression target
        if name in shapes and len(shapes[name]) == len(shape):
            continue  # as many axes as the output: no class numbers; the shape check says why
        describe = f"{layer.op} '{layer.layer}'"
        rules[name] = LabelRule(name, layer.classes(shape), describe, layer.ignore_label)
    return rules


def rules_for(symbol, label_inputs: dict, provide_data, provide_label=()) -> dict[str, LabelRule]:
    """:func:`label_rules` for a network fed ``provide_data`` and ``provide_label``."""
    try:
        _, out_shapes, _ = symbol.infer_shape_partial(**{d.name: d.shape for d in provide_data})
    except mx.base.MXNetError:
        return {}  # the shape checks explain it
    outputs = dict(zip(symbol.list_outputs(), out_shapes or []))
    return label_rules(label_inputs, outputs, [(d.name, d.shape) for d in provide_label or ()])


def _where(count: int, rows: int, shuffled: bool, row: int) -> str:
    if shuffled:
        return say("{count} of its {rows} rows", count=count, rows=rows)
    return say(
        "{count} of its {rows} rows (the first is row {row}, counting from 0)",
        count=count,
        rows=rows,
        row=row,
    )


def check_data(name: str, values: np.ndarray, what: str, shuffled: bool, kind="data") -> float:
    """Refuse NaN, infinity and absurd magnitudes; the largest absolute value otherwise."""
    if len(values) == 0:
        return 0.0  # no rows: the iterator's own check says it gives no batch
    flat = values.reshape(len(values), -1)
    with np.errstate(invalid="ignore"):
        nan, inf, huge = np.isnan(flat), np.isinf(flat), np.abs(flat) > ABSURD_MAGNITUDE
    bad = nan | inf | huge
    rows = bad.any(axis=1)
    if rows.any():
        facts = dict(
            what=what_words(what),
            name=name,
            nan=int(nan.sum()),
            inf=int(inf.sum()),
            huge=int((huge & ~inf).sum()),
            where=_where(int(rows.sum()), len(flat), shuffled, int(np.argmax(rows))),
        )
        refused = NonFiniteLabels if kind == "labels" else NonFiniteData
        raise refused(**facts)
    return float(np.abs(flat).max()) if flat.size else 0.0


def check_labels(rule: LabelRule, values: np.ndarray, what: str, shuffled: bool) -> None:
    """Refuse labels that are not class numbers 0..classes-1 (ignore_label is one); counted in
    rows, a row's labels (one per position of a sequence) together."""
    if not values.size:
        return  # no rows: the iterator's own check says it gives no batch
    values = values.reshape(len(values), -1)
    allowed = values == rule.ignore_label  # all False for None
    fractional = (values != np.round(values)) & ~allowed
    outside = ((values < 0) | (values >= rule.classes)) & ~allowed & ~fractional

    def facts(wrong) -> dict:
        rows = wrong.any(axis=1)
        first = int(np.argmax(rows))
        return dict(
            what=what_words(what),
            name=rule.name,
            layer=rule.describe,
            classes=rule.classes,
            where=_where(int(rows.sum()), len(values), shuffled, first),
            label=f"{values[first][np.argmax(wrong[first])]:g}",
        )

    if fractional.any():
        raise FractionalLabels(**facts(fractional))
    if outside.any():
        raise LabelsOutsideClasses(last=rule.classes - 1, **facts(outside))


def check_source(iterator, what: str, rules: dict[str, LabelRule]) -> DataFacts | None:
    """Check every row of an in-memory iterator (once per set of arrays); None when mxlearn
    cannot see its rows."""
    arrays = source_arrays(iterator)
    if arrays is None:
        return None
    data, labels = arrays
    key = tuple(id(a) for _, a in data + labels), tuple(sorted(rules.items()))
    known = _checked.get(iterator)
    if known is not None and known[0] == key:
        return known[1]
    shuffled = bool(getattr(iterator, "shuffle", False))
    largest = max(check_data(name, a.asnumpy(), what, shuffled) for name, a in data)
    for name, array in labels:
        if name in rules:
            check_labels(rules[name], array.asnumpy(), what, shuffled)
        else:  # a regression target: finite and not absurd, like the data
            check_data(name, array.asnumpy(), what, shuffled, kind="labels")
    facts = DataFacts(rows=data[0][1].shape[0], largest=largest)
    _checked[iterator] = (key, facts)
    return facts
