"""A batch through every layer of a network, read layer by layer: where it makes NaN itself,
and the state of its units (ReLUs that never fire, saturated sigmoids). The watchdog reads it
when training stops or stalls, to name the cause the run shows, never per batch."""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass

import numpy as np

from .._compat import mx

# A layer's input kept where its function is defined (x stands for that input); each one is
# followed in tests/test_watchdog.py and trains.
DOMAIN_FIXES = {
    "sqrt": "mx.sym.sqrt(mx.sym.abs(x) + 1e-6)",
    "log": "mx.sym.log(mx.sym.abs(x) + 1e-6)",
}


@dataclass(frozen=True)
class LayerOutput:
    layer: str
    op: str
    attrs: dict
    value: np.ndarray


@contextlib.contextmanager
def _layer_by_layer():
    """A binding whose layers are the network's own: MXNet's MKLDNN build fuses a layer into
    the one before it (FullyConnected and sqrt become one "sg_mkldnn_fully_connected_eltwise"),
    which hides the layer that made NaN. Its note that fusion is off (C++, on stderr) is not the
    student's to read."""
    before = os.environ.get("MXNET_SUBGRAPH_BACKEND")
    os.environ["MXNET_SUBGRAPH_BACKEND"] = "NONE"
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as nowhere:
            os.dup2(nowhere.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        if before is None:
            del os.environ["MXNET_SUBGRAPH_BACKEND"]
        else:
            os.environ["MXNET_SUBGRAPH_BACKEND"] = before


def layer_outputs(module, inputs: dict, initializer=None) -> list[LayerOutput]:
    """Each layer's output for ``inputs`` (name: array, the data and labels of one batch), in
    the network's order, at the module's weights or, given ``initializer``, at initial ones."""
    symbol = module.symbol
    internals = symbol.get_internals()
    with _layer_by_layer():
        executor = internals.simple_bind(
            mx.cpu(), grad_req="null", **{n: a.shape for n, a in inputs.items()}
        )
    arg_params, aux_params = module.get_params()
    for name, array in {**executor.arg_dict, **executor.aux_dict}.items():
        known = arg_params.get(name, aux_params.get(name))
        if name in inputs:
            array[:] = inputs[name]
        elif initializer is not None:
            initializer(mx.init.InitDesc(name, getattr(known, "attrs", None)), array)
        elif known is not None:
            array[:] = known
    nodes = {node["name"]: node for node in json.loads(symbol.tojson())["nodes"]}
    variables = set(internals.list_inputs())
    found = []
    with np.errstate(all="ignore"):
        for name, output in zip(internals.list_outputs(), executor.forward(is_train=True)):
            node = nodes.get(name.removesuffix("_output"))
            if node is None or node["op"] == "null" or node["name"] in variables:
                continue
            found.append(
                LayerOutput(node["name"], node["op"], node.get("attrs", {}), output.asnumpy())
            )
    return found


def layer_making_nan(outputs: list[LayerOutput]) -> LayerOutput | None:
    """The first layer whose output is NaN or infinite (its inputs, the layers before, were not)."""
    return next((o for o in outputs if not np.isfinite(o.value).all()), None)


def dead_units(output: LayerOutput) -> tuple[int, int] | None:
    """(units that give 0 for every row, units) of a ReLU layer; None for another layer."""
    if not (output.op == "Activation" and output.attrs.get("act_type") == "relu"):
        return None
    value = output.value.reshape(output.value.shape[0], output.value.shape[1], -1)
    return int((value == 0).all(axis=(0, 2)).sum()), value.shape[1]
