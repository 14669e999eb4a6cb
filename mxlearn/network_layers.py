"""Every layer of a network with its output shape, its parameters (``mod.get_params()[0]``)
and auxiliary states (BatchNorm's moving averages, ``[1]``), found by MXNet's shape inference
alone (no data, no binding, no Graphviz): what :func:`mxlearn.show_network` draws.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field

import numpy as np

from . import network, rules
from ._compat import mx
from .boundary import condensed
from .errors import N_, InputError, did_you_mean

BYTES_PER_VALUE = 4  # float32, MXNet's default type
INPUT_OP = "Variable"  # how an input (data or label) is shown: it is made by mx.sym.Variable
EXAMPLE_CALL = "mxlearn.show_network(net, data_shapes=[('data', (32, 16))])"


class NotANetwork(InputError):
    says = N_("show_network() draws a network built with mx.sym; got {kind}.")
    fix_code = EXAMPLE_CALL


class ModuleForNetwork(NotANetwork):
    fix_code = "mxlearn.show_network(mod.symbol, data_shapes=train_iter.provide_data)"


class NeedsShapes(InputError):  # the fix: the call that gives each input a shape
    fix_says = N_(
        "{call} with the shape of one batch, batch size first; or "
        "data_shapes=train_iter.provide_data"
    )


class NoSuchShownInput(NeedsShapes):
    says = N_(
        "show_network(): the network has no input '{name}'. {hint} The network reads: {inputs}."
    )


class NotAShape(NeedsShapes):
    says = N_(
        "show_network({argument}=...): {shape!r} is not a shape for '{name}': a shape is a "
        "tuple of whole numbers above 0, batch size first, such as (32, 16)."
    )


class NotShapePairs(NeedsShapes):
    says = N_(
        "show_network({argument}={given!r}): expected a list of (name, shape) pairs such "
        "as [('data', (32, 16))], which is what an iterator's provide_data gives, or a "
        "dict {{'data': (32, 16)}}."
    )


class ShapesMissing(NeedsShapes):
    says = N_(
        "show_network(): no shape for {unknown}, so the layers' shapes cannot be worked out. "
        "The network reads: {inputs}."
    )


class TwoShapesGiven(InputError):
    says = N_("show_network(): '{name}' is given two shapes, {first} and {second}.")
    fix_says = N_("give each input one shape, in data_shapes, label_shapes or as {name}=...")


class ShapesNotInferred(InputError):
    says = N_(
        "show_network(): MXNet cannot work out the shapes of this network for {shapes}: {reason}"
    )
    fix_says = N_("check the input shapes against the layers: {call} shows the same error")


class ImageShapesNotInferred(ShapesNotInferred):
    fix_says = N_("images go in as (batch, channels, height, width), e.g. X.reshape(-1, 1, 28, 28)")


@dataclass(frozen=True)
class Layer:
    """One operator of the network, or one of its data and label inputs."""

    name: str
    op: str
    shapes: tuple  # the shape of each visible output, batch size first
    inputs: tuple = ()  # names of the layers that feed this one (parameters left out)
    params: dict = field(default_factory=dict)  # learned argument name -> shape
    aux: dict = field(default_factory=dict)  # auxiliary state name -> shape

    @property
    def shape(self) -> tuple:
        """The output shape; for an operator with several outputs, a tuple of shapes."""
        return self.shapes[0] if len(self.shapes) == 1 else self.shapes

    @property
    def is_input(self) -> bool:
        return self.op == INPUT_OP

    @property
    def param_count(self) -> int:
        return sum(int(np.prod(s)) for s in self.params.values())

    @property
    def aux_count(self) -> int:
        return sum(int(np.prod(s)) for s in self.aux.values())

    @property
    def output_bytes(self) -> int:  # for one batch of the given shapes
        return sum(int(np.prod(s)) for s in self.shapes) * BYTES_PER_VALUE

    @property
    def param_bytes(self) -> int:  # parameters and auxiliary states together
        return (self.param_count + self.aux_count) * BYTES_PER_VALUE


def check_symbol(symbol) -> None:
    if isinstance(symbol, mx.sym.Symbol):
        return
    a_module = isinstance(getattr(symbol, "symbol", None), mx.sym.Symbol)  # fix: its network
    raise (ModuleForNetwork if a_module else NotANetwork)(kind=type(symbol).__name__)


def given_shapes(symbol, data_shapes, label_shapes, shapes: dict) -> tuple[dict, set]:
    """All shapes given, by name, and the names given as data or labels (inputs, not
    parameters, whatever they are called)."""
    found: dict[str, tuple] = {}
    told_inputs = set()
    for argument, value in (("data_shapes", data_shapes), ("label_shapes", label_shapes)):
        for name, shape in _pairs(symbol, value, argument):
            _add(found, name, shape)
            told_inputs.add(name)
    for name, shape in shapes.items():  # data=(32, 16): fed too
        _add(found, name, _shape(symbol, shape, name, name))
        told_inputs.add(name)
    known = symbol.list_arguments() + symbol.list_auxiliary_states()
    for name in found:
        if name not in known:
            hint = did_you_mean(name, network.input_names(symbol) or known)
            inputs, call = network.describe_inputs(symbol), _example_call(symbol)
            raise NoSuchShownInput(name=name, hint=hint, inputs=inputs, call=call)
    return found, told_inputs


def _add(found: dict, name: str, shape: tuple) -> None:
    if name in found and found[name] != shape:
        raise TwoShapesGiven(name=name, first=found[name], second=shape)
    found[name] = shape


def _pairs(symbol, value, argument: str) -> list[tuple[str, tuple]]:
    """(name, shape) pairs from a list of pairs or DataDesc (a pair too), a dict, or one pair."""
    if value is None:
        return []
    items = list(value.items()) if isinstance(value, dict) else value
    if isinstance(value, tuple) and rules.is_shape_pair(value):
        items = [value]  # one pair without its list
    pairs = []
    for item in items if isinstance(items, (list, tuple)) else [None]:
        if not rules.is_shape_pair(item):
            raise NotShapePairs(argument=argument, given=value, call=_example_call(symbol))
        pairs.append((item[0], _shape(symbol, item[1], argument, item[0])))
    return pairs


def _shape(symbol, shape, argument: str, name: str) -> tuple:
    whole = rules.whole(1)
    if isinstance(shape, (list, tuple)) and shape and all(whole.test(n) is None for n in shape):
        return tuple(int(n) for n in shape)
    raise NotAShape(argument=argument, shape=shape, name=name, call=_example_call(symbol))


def _example_call(symbol, names=None) -> str:
    """The call that gives each input a shape (the letters' one, as an example)."""
    names = names or network.input_names(symbol) or ["data"]
    pairs = ", ".join(f"('{n}', (32, 16))" for n in names)
    return f"mxlearn.show_network(net, data_shapes=[{pairs}])"


def network_layers(symbol, shapes: dict, told_inputs: set) -> list[Layer]:
    """The network's layers in order: its data and label inputs, then each operator."""
    args, aux, outputs = _inferred(symbol, shapes)
    labels = {li.name for li in network.label_inputs(symbol)}
    # as a Module sees it: the inputs are what is fed (the shapes given) and the labels; every
    # other argument is a parameter, whatever its name ('w1', 'lstm_parameters')
    inputs = told_inputs | labels
    unknown = [n for n, s in {**args, **aux}.items() if not _known(s)]
    unknown += [n for n, s in outputs.items() if not _known(s) and n not in args]
    if unknown:
        _refuse_missing(symbol, [n for n in unknown if n in args or n in aux] or unknown, labels)
    nodes = json.loads(symbol.tojson())["nodes"]
    layers, counted = [], set()
    for node in nodes:
        name = node["name"]
        if node["op"] == "null":
            if name in inputs:
                layers.append(Layer(name, INPUT_OP, (outputs[name],)))
            continue
        feeds, params, states = [], {}, {}
        for source, *_ in node["inputs"]:
            source_name = nodes[source]["name"]
            if nodes[source]["op"] != "null" or source_name in inputs:
                if source_name not in feeds:
                    feeds.append(source_name)
            elif source_name not in counted:  # a shared parameter counts once, where first used
                counted.add(source_name)
                if source_name in aux:
                    states[source_name] = aux[source_name]
                else:
                    params[source_name] = args[source_name]
        layers.append(
            Layer(name, node["op"], _node_shapes(name, outputs), tuple(feeds), params, states)
        )
    return layers


def _known(shape) -> bool:
    return bool(shape) and all(n > 0 for n in shape)


def _node_shapes(name: str, outputs: dict) -> tuple:
    if f"{name}_output" in outputs:
        return (outputs[f"{name}_output"],)
    several = itertools.takewhile(lambda k: f"{name}_output{k}" in outputs, itertools.count())
    return tuple(outputs[f"{name}_output{k}"] for k in several)


def _inferred(symbol, shapes: dict) -> tuple[dict, dict, dict]:
    """Shapes by name of the arguments, the auxiliary states and every layer's outputs, from one
    inference over the network's internals; MXNet's refusal as one explained line."""
    internals = symbol.get_internals()
    try:
        arg_shapes, out_shapes, aux_shapes = internals.infer_shape_partial(**shapes)
    except mx.base.MXNetError as err:
        reason = condensed(err)
        # MXNet: "Input data should be 4D in batch-num_filter-y-x"
        refusal = ImageShapesNotInferred if "4D" in reason.split() else ShapesNotInferred
        call = f"net.infer_shape({', '.join(f'{n}={s}' for n, s in shapes.items())})"
        given = ", ".join(f"{n} {s}" for n, s in shapes.items())
        raise refusal(shapes=given, reason=reason, call=call) from None
    return (
        dict(zip(internals.list_arguments(), map(tuple, arg_shapes))),
        dict(zip(internals.list_auxiliary_states(), map(tuple, aux_shapes))),
        dict(zip(internals.list_outputs(), map(tuple, out_shapes))),
    )


def _refuse_missing(symbol, unknown: list, labels: set) -> None:
    data = [n for n in unknown if n in network.input_names(symbol)]
    missing_labels = [n for n in unknown if n in labels]
    fix = None  # the declared one: a shape for each data input
    if not data and missing_labels:
        pairs = ", ".join(f"('{n}', (32,))" for n in missing_labels)
        fix = f"mxlearn.show_network(net, data_shapes=..., label_shapes=[{pairs}])"
    unknown = ", ".join(f"'{n}'" for n in (data or missing_labels or unknown))
    inputs, call = network.describe_inputs(symbol), _example_call(symbol, data or None)
    raise ShapesMissing(unknown=unknown, inputs=inputs, call=call, fix=fix)
