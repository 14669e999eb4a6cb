"""Checks on the batches forward gets: their form every batch (attribute reads, no device work),
their values on the first training batch and score's first (a device read)."""

from __future__ import annotations

import numpy as np

from .._compat import mx
from ..errors import N_, ArgumentTypeError, InputError
from . import data_values
from .data_values import FractionalLabels, LabelsOutsideClasses, NonFiniteData, what_words


class WrongDataCount(InputError):
    says = N_(
        "mod.forward(): the batch holds {given} data arrays; the module reads {expected} ({names})."
    )
    fix_says = N_("build the iterator with one data array per name in data_names")


class NotADataBatch(ArgumentTypeError):
    says = N_(
        "mod.forward() takes an mx.io.DataBatch of NDArrays (what `for batch in train_iter` "
        "gives); got {kind}."
    )
    fix_says = N_(
        "for batch in train_iter: mod.forward(batch, is_train=True)  (for a NumPy array: "
        "mod.predict(X))"
    )


class ListOfNonBatches(NotADataBatch):  # MXNet's pre-sliced form: one DataBatch per device
    says = N_(
        "mod.forward() takes an mx.io.DataBatch of NDArrays (what `for batch in train_iter` "
        "gives), or a list of them, one per device; got a list of {kind}."
    )


class LabelsNotNDArrays(NotADataBatch):
    says = N_(
        "mod.forward(): a label of the batch is a {kind}, not an NDArray: MXNet copies each "
        "label to the devices with NDArray.copyto, which a {kind} does not have."
    )
    fix_says = N_(
        "make the labels NDArrays: mx.io.DataBatch([mx.nd.array(X)], [mx.nd.array(y)]), or take "
        "the batches from mx.io.NDArrayIter(X, y, batch_size=32)"
    )


class LabelsNotAList(LabelsNotNDArrays):
    says = N_(
        "mod.forward(): the batch's label is a {kind}, not a list of NDArrays (one for each "
        "label the module reads), which is what MXNet loads."
    )


class UnlabelledTrainingBatch(InputError):
    says = N_(
        "mod.forward(batch, is_train=True): the batch has no label, so there is nothing to learn "
        "from (MXNet would silently reuse the previous batch's labels)."
    )
    fix_says = N_(
        "train on batches from an iterator made with labels: mx.io.NDArrayIter(X, y, "
        "batch_size=32); for prediction use mod.forward(batch, is_train=False)"
    )


class NonFiniteFirstBatch(NonFiniteData):
    says = N_(
        "The first {what} batch's '{name}' holds {nan} NaN and {inf} infinite values; one is "
        "enough to turn the results (and, in training, every weight) into NaN."
    )


class FractionalFirstLabel(FractionalLabels):
    says = N_(
        "The first {what} batch has the label {label}, which is not a class number: {op} '{layer}' "
        "expects whole numbers 0...{last}. MXNet would cut it to an integer without a word."
    )


class FirstLabelOutsideClasses(LabelsOutsideClasses):
    says = N_(
        "The first {what} batch has the label {label}, but {op} '{layer}' has {classes} classes, "
        "numbered 0..{last}; MXNet would not complain, and every number it gave would be wrong."
    )


def explain_bad_batch(batch, data_shapes, data_names):
    data = getattr(batch, "data", None)
    if isinstance(data, (list, tuple)) and all(isinstance(d, mx.nd.NDArray) for d in data):
        given, expected, names = len(data), len(data_shapes), list(data_names)
        raise WrongDataCount(given=given, expected=expected, names=names)
    raise NotADataBatch(kind=type(batch).__name__)


def has_labels(batch) -> bool:
    """Per batch, attribute reads: whether it gives labels (a label that is one array, not a
    list, counts: check_labels names it; a truth test of it would fail)."""
    labels = getattr(batch, "label", None)
    return labels is not None and not (isinstance(labels, (list, tuple)) and not labels)


def check_labels(batch, label_shapes) -> None:
    """Labels MXNet can load: a list of NDArrays, when the module has label inputs to load
    them into (without, MXNet leaves a batch's labels alone)."""
    labels = getattr(batch, "label", None)
    if not label_shapes or labels is None:
        return
    if not isinstance(labels, (list, tuple)):
        raise LabelsNotAList(kind=_type_name(labels))
    for label in labels[: len(label_shapes)]:  # MXNet loads one per bound label
        if not isinstance(label, mx.nd.NDArray):
            raise LabelsNotNDArrays(kind=_type_name(label))


def _type_name(value) -> str:
    """numpy.ndarray, list: a type as its module names it (builtins without one)."""
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def check_values(mod, batch, what: str) -> None:
    """On a first batch only (one device read); labels in the bound label shapes' order."""
    check_labels(batch, mod.label_shapes)
    for desc, arr in zip(mod.data_shapes, batch.data):
        values = arr.asnumpy()
        if not np.isfinite(values).all():
            nan, inf = int(np.isnan(values).sum()), int(np.isinf(values).sum())
            raise NonFiniteFirstBatch(what=what_words(what), name=desc.name, nan=nan, inf=inf)
    label_inputs = mod.label_inputs
    # classifiers' class-number labels
    rules = data_values.label_rules(label_inputs, dict(mod.output_shapes), mod.label_shapes or ())
    for desc, arr in zip(mod.label_shapes or [], batch.label):
        if desc.name in rules:
            _check_classes(arr.asnumpy(), rules[desc.name].classes, label_inputs[desc.name], what)


def _check_classes(values, classes: int, layer, what: str) -> None:
    if layer.ignore_label is not None:  # SoftmaxOutput(use_ignore=True) skips these rows
        values = values[values != layer.ignore_label]
    facts = dict(what=what_words(what), op=layer.op, layer=layer.layer, last=classes - 1)
    fractional = values[values != np.round(values)]
    if fractional.size:
        raise FractionalFirstLabel(label=f"{fractional[0]:g}", **facts)
    wrong = values[(values < 0) | (values >= classes)]
    if wrong.size:
        raise FirstLabelOutsideClasses(label=f"{wrong[0]:g}", classes=classes, **facts)
