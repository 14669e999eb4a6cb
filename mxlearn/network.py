"""What a symbol (network) expects: its inputs, the label each loss layer reads, shapes; to
explain mistakes in the network's own terms ("SoftmaxOutput 'softmax' expects the label ...").
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from ._compat import mx
from .language import say

# Loss layers whose second input is the label; their label is a class index for the first
# group and a target value for the second.
CLASSIFICATION_OUTPUTS = {"SoftmaxOutput", "SVMOutput"}
REGRESSION_OUTPUTS = {"LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput"}
_PARAM_SUFFIXES = ("_weight", "_bias", "_gamma", "_beta", "_moving_mean", "_moving_var")


@dataclass(frozen=True)
class LabelInput:
    """A label variable and the loss layer that reads it."""

    name: str  # e.g. 'softmax_label'
    op: str  # e.g. 'SoftmaxOutput'
    layer: str  # e.g. 'softmax'
    # SoftmaxOutput(use_ignore=True): rows with this label are left out of the loss
    ignore_label: float | None = None
    # the axis a SoftmaxOutput's softmax runs over: -1 (preserve_shape), 1 (multi_output), or
    # None for all of a row's values at once (MXNet's default, and SVMOutput's)
    class_axis: int | None = None

    @property
    def is_classification(self) -> bool:
        return self.op in CLASSIFICATION_OUTPUTS

    def classes(self, output_shape) -> int:
        """How many classes a label may name, for an output of ``output_shape``."""
        if self.class_axis is None:
            return math.prod(output_shape[1:])
        return output_shape[self.class_axis]

    def reads_probabilities(self, label_shape, output_shape) -> bool:
        """A SoftmaxOutput label shaped like its output holds a probability per class: MXNet
        takes the gradient as output minus label (label smoothing, soft targets)."""
        return self.op == "SoftmaxOutput" and tuple(label_shape) == tuple(output_shape)

    @property
    def probability_axis(self) -> int:
        """The classes' axis of a probability label shaped like the output."""
        return 1 if self.class_axis == 1 else -1

    @property
    def output_name(self) -> str:
        return f"{self.layer}_output"

    def describe(self) -> str:
        return say(
            "{op} '{layer}' expects the label '{name}'",
            op=self.op,
            layer=self.layer,
            name=self.name,
        )


def probability_labels(label_inputs, output_shapes: dict, label_shapes) -> set[str]:
    """The names of the labels (``label_shapes``: (name, shape) pairs) that hold a probability
    per class, as their loss layers (``label_inputs``: LabelInputs) read them."""
    shapes = dict(label_shapes or ())
    return {
        layer.name
        for layer in label_inputs
        if layer.name in shapes
        and layer.reads_probabilities(shapes[layer.name], output_shapes.get(layer.output_name, ()))
    }


def is_set(attrs: dict, name: str) -> bool:  # MXNet writes an operator's flags as text
    return attrs.get(name, "False").lower() in ("true", "1")


def ignore_label(attrs: dict) -> float | None:
    return float(attrs.get("ignore_label", "-1")) if is_set(attrs, "use_ignore") else None


def class_axis(attrs: dict) -> int | None:
    if is_set(attrs, "preserve_shape"):
        return -1
    return 1 if is_set(attrs, "multi_output") else None


def label_inputs(symbol) -> list[LabelInput]:
    """The label variables of ``symbol``, found through the loss layers that read them."""
    nodes = json.loads(symbol.tojson())["nodes"]
    found: dict[str, LabelInput] = {}
    for node in nodes:
        op = node["op"]
        if op in CLASSIFICATION_OUTPUTS | REGRESSION_OUTPUTS and len(node["inputs"]) > 1:
            label_node = nodes[node["inputs"][1][0]]
            if label_node["op"] == "null":
                attrs = node.get("attrs", {})
                found[label_node["name"]] = LabelInput(
                    label_node["name"], op, node["name"], ignore_label(attrs), class_axis(attrs)
                )
    # A '*_label' variable read by another operator (a custom loss) is still a label.
    for name in symbol.list_arguments():
        if name.endswith("_label") and name not in found:
            found[name] = LabelInput(name, "operator", name[: -len("_label")])
    return list(found.values())


def input_names(symbol, label_names=()) -> list[str]:
    """Arguments that are neither parameters nor labels: what a data iterator must feed."""
    labels = {li.name for li in label_inputs(symbol)} | set(label_names)
    return [
        a for a in symbol.list_arguments() if a not in labels and not a.endswith(_PARAM_SUFFIXES)
    ]


def describe_inputs(symbol) -> str:
    """One line naming what the network reads, e.g. "data 'data'; label 'softmax_label' (...)"."""
    parts = [say("data '{name}'", name=n) for n in input_names(symbol)]
    parts += [
        say("label '{name}' ({expects})", name=li.name, expects=li.describe())
        for li in label_inputs(symbol)
    ]
    return say("; ").join(parts) if parts else say("no inputs")


def _argument_shapes(symbol, given: dict) -> dict | None:
    try:
        arg_shapes, _, _ = symbol.infer_shape_partial(**given)
    except mx.base.MXNetError:
        return None
    return dict(zip(symbol.list_arguments(), map(tuple, arg_shapes)))


def infer_param_shapes(symbol, param_names, input_shapes: dict) -> dict | None:
    """Parameter shapes the network would need for ``input_shapes``, or None if impossible."""
    shapes = _argument_shapes(symbol, input_shapes)
    return None if shapes is None else {n: shapes[n] for n in param_names if n in shapes}


def infer_label_shapes(symbol, data_shapes: dict, label_names) -> dict:
    """Label shapes implied by the data shapes alone (empty for labels the network leaves open)."""
    shapes = _argument_shapes(symbol, data_shapes) or {}
    return {n: shapes[n] for n in label_names if shapes.get(n)}
