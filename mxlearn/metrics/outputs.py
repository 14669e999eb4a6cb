"""Which output of a network with several loss layers a metric measures.

MXNet pairs a metric with every output by position, so on ``mx.sym.Group([classifier,
regression])`` 'acc' averages in a meaningless accuracy of the regression head. Here a metric of
a known kind is pointed at the one output of its kind (two or none are refused); a metric given
``output_names`` is checked against them; a custom metric keeps MXNet's pairing.
"""

from __future__ import annotations

import weakref

from .. import network
from .._compat import mx
from ..errors import N_, InputError
from ..language import say
from .catalogue import check_metric_fits, metric_kind
from .deferred import leaf_metrics


class OutputNotChosen(InputError):  # several outputs of the metric's kind, or none
    fix_says = N_(
        "say which: mx.metric.create('{metric}', output_names=['{output}'], "
        "label_names=['{label}'])"
    )


class SeveralOutputsOfKind(OutputNotChosen):
    says = N_(
        "{called}: '{metric}' measures a {kind} output, and this network has several: {outputs}."
    )


class NoOutputOfKind(OutputNotChosen):
    says = N_(
        "{called}: '{metric}' measures a {kind} output, and this network has none among "
        "its outputs: {outputs}."
    )


class NoSuchOutput(InputError):
    says = N_(
        "{called}: '{metric}' is given output_names={given}, and the network has no "
        "output '{name}'; its outputs: {outputs}."
    )
    fix_code = "output_names=['{first}']"


class OutputOfOtherKind(InputError):
    says = N_("{called}: '{metric}' measures a {kind} output, and '{name}' is a {op}.")
    fix_says = N_("point the metric at an output of its kind: {outputs}")


class OtherHeadsLabel(InputError):
    says = N_(
        "{called}: '{metric}' compares the output '{name}' with the label '{label}', "
        "but {op} '{layer}' reads the label '{read}': the value would compare one "
        "head's predictions with another's targets."
    )
    fix_says = N_("label_names={own} (or leave label_names out: each output's own label is used)")


# Metric objects whose output_names mxlearn set (not their author): a later call on another
# network chooses again instead of reading names that belong to the first one.
_pointed: weakref.WeakSet = weakref.WeakSet()


def layer_kind(layer, probabilities=frozenset()) -> str | None:
    """classification, regression, or probabilities: a classifier whose labels (their names in
    ``probabilities``) hold a probability per class."""
    if layer.is_classification:
        return "probabilities" if layer.name in probabilities else "classification"
    return "regression" if layer.op in network.REGRESSION_OUTPUTS else None


def kind_words(kind: str) -> str:
    return say("classification") if kind == "classification" else say("regression")


def match_outputs(metric, layers, output_names, called: str, out_shapes: dict, soft=()) -> None:
    """Point each leaf of ``metric`` at the one output (and label) it measures, and check it
    fits that output (``out_shapes``: output name -> shape, or empty when unknown; ``soft``:
    the labels that hold probabilities)."""
    listed = ", ".join(f"'{layer.output_name}' ({layer.op})" for layer in layers)
    for leaf in leaf_metrics(metric):
        wanted = metric_kind(leaf)
        if leaf in _pointed:  # pointed by mxlearn for another call: choose again
            leaf.output_names = leaf.label_names = None
        if leaf.output_names:
            _check_given(leaf, wanted, layers, output_names, listed, called)
        elif wanted is not None:  # a custom metric keeps MXNet's pairing, as its author wrote it
            _choose_output(leaf, wanted, layers, listed, called)
        for name in leaf.output_names or []:
            layer = next((lay for lay in layers if lay.output_name == name), None)
            shape = out_shapes.get(name)
            classes = shape[1] if shape and len(shape) == 2 else None
            kind = layer_kind(layer, soft) if layer else None
            op, axis = (layer.op, layer.probability_axis) if layer else (None, -1)
            check_metric_fits(leaf, kind, classes, called, op, axis=axis)


def _choose_output(leaf, wanted, layers, listed, called) -> None:
    candidates = [layer for layer in layers if layer_kind(layer) == wanted]
    if len(candidates) == 1:
        leaf.output_names, leaf.label_names = [candidates[0].output_name], [candidates[0].name]
        _pointed.add(leaf)
        return
    example = candidates[0] if candidates else layers[0]
    refusal = SeveralOutputsOfKind if candidates else NoOutputOfKind
    facts = dict(called=called, metric=leaf.name, kind=kind_words(wanted), outputs=listed)
    raise refusal(output=example.output_name, label=example.name, **facts)


def _check_given(leaf, wanted, layers, output_names, listed, called) -> None:
    given = [next((lay for lay in layers if lay.output_name == n), None) for n in leaf.output_names]
    for name, layer in zip(leaf.output_names, given):
        facts = dict(called=called, metric=leaf.name, name=name, outputs=listed)
        if name not in output_names:
            first = layers[0].output_name
            raise NoSuchOutput(given=leaf.output_names, first=first, **facts)
        if layer is not None and wanted is not None and layer_kind(layer) != wanted:
            raise OutputOfOtherKind(kind=kind_words(wanted), op=layer.op, **facts)
    if any(layer is None for layer in given):
        return  # an output without a loss layer: only its author knows its labels
    own = [layer.name for layer in given]
    if leaf.label_names is None:
        leaf.label_names = own  # each output's loss layer says which label it reads
        return
    for name, layer, label in zip(leaf.output_names, given, leaf.label_names):
        if label != layer.name:
            facts = dict(called=called, metric=leaf.name, name=name, label=label, op=layer.op)
            raise OtherHeadsLabel(layer=layer.layer, read=layer.name, own=own, **facts)


def check_metric_fits_network(
    metric, symbol, label_inputs: dict, data_descs, called: str, label_descs=()
) -> None:
    """:func:`check_metric_fits` for a network: its kind from its loss layers (``label_inputs``:
    label name -> network.LabelInput) and the labels fed (``label_descs``), its classes from
    its output shape; with several outputs, each metric is pointed at the output it measures."""
    layers = list(label_inputs.values())
    try:
        _, shapes, _ = symbol.infer_shape_partial(**{d.name: d.shape for d in data_descs})
    except mx.base.MXNetError:
        shapes = None  # the bind that follows explains shape problems
    out_shapes = dict(zip(symbol.list_outputs(), shapes or []))
    fed = [(d.name, d.shape) for d in label_descs or ()]
    soft = network.probability_labels(layers, out_shapes, fed)
    if layers and (len(layers) > 1 or len(symbol.list_outputs()) > 1):
        match_outputs(metric, layers, symbol.list_outputs(), called, out_shapes, soft)
        return
    kind = layer_kind(layers[0], soft) if layers else None
    first = next(iter(out_shapes.values()), None)
    classes = first[1] if kind == "classification" and first and len(first) == 2 else None
    op, axis = (layers[0].op, layers[0].probability_axis) if layers else (None, -1)
    check_metric_fits(metric, kind, classes, called, op, axis=axis)
