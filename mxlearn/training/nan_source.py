"""Where a network makes NaN or infinity itself: the first layer whose output is not finite
from finite inputs, at the run's initial weights and on the batch it trained last. Found, it is
the cause of a divergence (no learning rate avoids it), not the rate."""

from __future__ import annotations

import contextlib
import json
import os

import numpy as np

from .._compat import mx

# A layer's input kept where its function is defined (x stands for that input); each one is
# followed in tests/test_watchdog.py and trains.
DOMAIN_FIXES = {
    "sqrt": "mx.sym.sqrt(mx.sym.abs(x) + 1e-6)",
    "log": "mx.sym.log(mx.sym.abs(x) + 1e-6)",
}


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


def layer_making_nan(module, initializer, inputs: dict) -> tuple[str, str] | None:
    """(layer name, op) of the first layer that makes NaN or infinity from finite inputs on
    ``inputs`` (name: array, the data and labels of one batch), or None."""
    symbol = module.symbol
    internals = symbol.get_internals()
    shapes = {name: array.shape for name, array in inputs.items()}
    with _layer_by_layer():
        executor = internals.simple_bind(mx.cpu(), grad_req="null", **shapes)
    arg_params, aux_params = module.get_params()
    for name, array in {**executor.arg_dict, **executor.aux_dict}.items():
        if name in inputs:
            array[:] = inputs[name]
        else:  # the initial weights: those of the run's initializer
            known = arg_params.get(name, aux_params.get(name))
            initializer(mx.init.InitDesc(name, getattr(known, "attrs", None)), array)
    ops = {node["name"]: node["op"] for node in json.loads(symbol.tojson())["nodes"]}
    variables = set(internals.list_inputs())
    with np.errstate(all="ignore"):
        outputs = executor.forward(is_train=True)
        for name, output in zip(internals.list_outputs(), outputs):
            layer = name.removesuffix("_output")
            if layer in variables or ops.get(layer, "null") == "null":
                continue
            if not np.isfinite(output.asnumpy()).all():
                return layer, ops[layer]
    return None
