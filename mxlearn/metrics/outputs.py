"""Which output of a network with several loss layers a metric measures.

MXNet pairs a metric with every output and label by position, so on ``mx.sym.Group([classifier,
regression])`` 'acc' averages the classifier's accuracy with a meaningless one of the regression
head. Here a metric of a known kind measures the one output of its kind (its ``output_names``
and ``label_names`` are set to it); two candidates, or none, are refused, naming the outputs. A
metric given ``output_names`` is checked against them; a custom metric keeps MXNet's pairing.
"""

from __future__ import annotations

from .. import network
from .._compat import mx
from ..errors import InputError
from .catalogue import check_metric_fits, metric_kind
from .deferred import leaf_metrics


def layer_kind(layer) -> str | None:
    if layer.is_classification:
        return "classification"
    return "regression" if layer.op in network.REGRESSION_OUTPUTS else None


def match_outputs(metric, layers, output_names, called: str) -> None:
    """Point each leaf of ``metric`` at the one output (and label) it measures."""
    listed = ", ".join(f"'{layer.output_name}' ({layer.op})" for layer in layers)
    for leaf in leaf_metrics(metric):
        wanted = metric_kind(leaf)
        if leaf.output_names:
            _check_given(leaf, wanted, layers, output_names, listed, called)
            continue
        if wanted is None:
            continue  # a custom metric: MXNet's pairing, as its author wrote it
        candidates = [layer for layer in layers if layer_kind(layer) == wanted]
        if len(candidates) == 1:
            leaf.output_names, leaf.label_names = [candidates[0].output_name], [candidates[0].name]
            continue
        example = candidates[0] if candidates else layers[0]
        problem = f"'{leaf.name}' measures a {wanted} output, and this network has " + (
            f"several: {listed}." if candidates else f"none among its outputs: {listed}."
        )
        raise InputError(
            f"{called}: {problem}",
            fix=f"say which: mx.metric.create('{leaf.name}', output_names=['"
            f"{example.output_name}'], label_names=['{example.name}'])",
        )


def _check_given(leaf, wanted, layers, output_names, listed, called) -> None:
    for name in leaf.output_names:
        if name not in output_names:
            raise InputError(
                f"{called}: '{leaf.name}' is given output_names={leaf.output_names}, and the "
                f"network has no output '{name}'; its outputs: {listed}.",
                fix=f"output_names=['{layers[0].output_name}']",
            )
        layer = next((lay for lay in layers if lay.output_name == name), None)
        if layer is not None and wanted is not None and layer_kind(layer) != wanted:
            raise InputError(
                f"{called}: '{leaf.name}' measures a {wanted} output, and '{name}' is a "
                f"{layer.op}.",
                fix="point the metric at an output of its kind: " + listed,
            )


def check_metric_fits_network(metric, symbol, label_inputs: dict, data_descs, called: str) -> None:
    """:func:`check_metric_fits` for a network: its kind from its loss layers (``label_inputs``:
    label name -> network.LabelInput), its classes from its output shape; with several loss
    layers, each metric is pointed at the output it measures."""
    layers = list(label_inputs.values())
    if len(layers) > 1:
        match_outputs(metric, layers, symbol.list_outputs(), called)
        return
    kind = layer_kind(layers[0]) if layers else None
    classes = None
    try:
        _, out_shapes, _ = symbol.infer_shape_partial(**{d.name: d.shape for d in data_descs})
        if kind == "classification" and out_shapes and len(out_shapes[0]) == 2:
            classes = out_shapes[0][1]
    except mx.base.MXNetError:
        pass  # the bind that follows explains shape problems
    check_metric_fits(metric, kind, classes, called)
