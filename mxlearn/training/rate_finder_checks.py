"""What :func:`~mxlearn.training.rate_finder.lr_find` checks before its trial trains, each
refusal in lr_find's name (the student never called the trial module's bind or init_params):
the network, the rates, the iterator and its rows, the shapes and the optimizer."""

from __future__ import annotations

import json
import math
import numbers

import numpy as np

from .. import network
from .._compat import mx
from ..errors import ArgumentTypeError, InputError
from ..guards import binding, data_values
from ..guards.optimizer_settings import check_optimizer, settings_dict
from ..language import say

CALLED = "lr_find()"
MIN_BATCHES = 10
# Both the loss and its average trail the rate, and by a number of batches: what matters is
# how far the rate grew meanwhile. Momentum 0.9 (and Adam's first moment) averages the last
# ~10 gradients; at 100 batches over 1e-6..10 (14 a decade) that is 0.7 of a decade, and on the
# scaled letters SGD with momentum gave suggestions of 0.33 to 2, where 3-epoch fits reached
# 0.05 to 0.8 accuracy (3 seeds of 5 below 0.1). At 300 batches (43 a decade) it gave 0.11 to
# 0.26, where they reach 0.82 to 0.87; the whole test takes about 0.1 s there.
NUM_BATCHES = 300
EXAMPLE = "mxlearn.lr_find(mod, train_iter, start=1e-6, stop=10, num_batches=300)"
ITER_EXAMPLE = "train_iter = mx.io.NDArrayIter(X, y, batch_size=64, shuffle=True)"


def network_of(mod_or_symbol):
    """The symbol to train: the given one, or the module's."""
    if isinstance(mod_or_symbol, mx.sym.Symbol):
        return mod_or_symbol
    if isinstance(mod_or_symbol, mx.mod.BaseModule):
        try:
            return mod_or_symbol.symbol
        except AssertionError:  # a BucketingModule knows its network once bound
            raise InputError(
                say(
                    "{called}: this {kind} has no network until it is bound.",
                    called=CALLED,
                    kind=type(mod_or_symbol).__name__,
                ),
                fix=say("bind it first, or give lr_find the network: {example}", example=EXAMPLE),
            ) from None
    raise ArgumentTypeError(
        say(
            "{called} needs a Module or a network (an mx.sym Symbol); got {kind}.",
            called=CALLED,
            kind=type(mod_or_symbol).__name__,
        ),
        fix=EXAMPLE,
    )


def classifier_head(symbol) -> dict:
    """The SoftmaxOutput node that ends ``symbol``; anything else is refused."""
    graph = json.loads(symbol.tojson())
    nodes = graph["nodes"]
    heads = [nodes[head[0]] for head in graph["heads"]]
    if len(heads) == 1 and heads[0]["op"] == "SoftmaxOutput":
        return heads[0]
    found = ", ".join(
        f"{node['op']} '{node['name']}'" if node["op"] != "null" else f"'{node['name']}'"
        for node in heads
    )
    raise InputError(
        say(
            "{called} supports only classification losses: the network must end with one "
            "SoftmaxOutput, and this one ends with {found}.",
            called=CALLED,
            found=found,
        ),
        fix="net = mx.sym.SoftmaxOutput(net, name='softmax')",
    )


def check_rates(start, stop, num_batches, beta) -> None:
    for name, value in (("start", start), ("stop", stop)):
        real = isinstance(value, numbers.Real) and not isinstance(value, bool)
        if not real or not math.isfinite(value) or value <= 0:
            raise InputError(
                say(
                    "{called}: {name}={value!r}, but a learning rate is a positive number.",
                    called=CALLED,
                    name=name,
                    value=value,
                ),
                fix="start=1e-6, stop=10",
            )
    if start >= stop:
        raise InputError(
            say(
                "{called}: start={start!r} is not below stop={stop!r}; the rate grows from "
                "start to stop.",
                called=CALLED,
                start=start,
                stop=stop,
            ),
            fix="start=1e-6, stop=10",
        )
    if not math.isfinite(stop / start):  # the rates would overflow to inf
        raise InputError(
            say(
                "{called}: from start={start!r} to stop={stop!r} is more than a computer's "
                "numbers can span.",
                called=CALLED,
                start=start,
                stop=stop,
            ),
            fix="start=1e-6, stop=10",
        )
    whole = isinstance(num_batches, (int, np.integer)) and not isinstance(num_batches, bool)
    if not whole or num_batches < MIN_BATCHES:
        raise InputError(
            say(
                "{called}: num_batches={value!r}, but it must be a whole number of at least "
                "{least}: fewer batches cannot show where the loss falls and where it explodes.",
                called=CALLED,
                value=num_batches,
                least=MIN_BATCHES,
            ),
            fix=f"num_batches={NUM_BATCHES}",
        )
    if beta is not None and not (isinstance(beta, numbers.Real) and 0 <= beta < 1):
        raise InputError(
            say(
                "{called}: beta={beta!r}, but the smoothing weight is a number from 0 (no "
                "smoothing) up to, not including, 1.",
                called=CALLED,
                beta=beta,
            ),
            fix="beta=None",
        )


def check_iterator(train_iter, symbol) -> None:
    if not hasattr(train_iter, "provide_data") or not hasattr(train_iter, "reset"):
        raise ArgumentTypeError(
            say(
                "{called}: train_iter={kind} is not a data iterator.",
                called=CALLED,
                kind=type(train_iter).__name__,
            ),
            fix=ITER_EXAMPLE,
        )
    if not train_iter.provide_label:
        raise InputError(
            say(
                "{called}: train_iter gives no labels, and the loss compares the network's "
                "output with the labels.",
                called=CALLED,
            ),
            fix=ITER_EXAMPLE,
        )
    arguments = set(symbol.list_arguments())
    unknown = [d.name for d in (*train_iter.provide_data, *train_iter.provide_label)]
    unknown = [name for name in unknown if name not in arguments]
    if unknown:
        data = (network.input_names(symbol) or ["data"])[0]
        label = ([li.name for li in network.label_inputs(symbol)] or ["softmax_label"])[0]
        raise InputError(
            say(
                "{called}: train_iter feeds {names}, which the network has no input for (it "
                "reads: {inputs}).",
                called=CALLED,
                names=", ".join(repr(n) for n in unknown),
                inputs=network.describe_inputs(symbol),
            ),
            fix=f"mx.io.NDArrayIter({{{data!r}: X}}, {{{label!r}: y}}, batch_size=64)",
        )


def check_shapes(given, symbol, train_iter) -> None:
    """What the trial module's bind and init_params would refuse, refused here in lr_find's
    name: labels of the wrong shape, a module's weights made for inputs of another shape."""
    labels = {li.name: li for li in network.label_inputs(symbol)}
    names = [d.name for d in train_iter.provide_label]
    binding.check_label_shapes(
        symbol, train_iter.provide_data, train_iter.provide_label, names, labels, called=CALLED
    )
    _refuse_unfed_inputs(symbol, train_iter)
    if isinstance(given, mx.mod.BaseModule) and given.params_initialized:
        shapes = {name: tuple(a.shape) for name, a in given.get_params()[0].items()}
        bound = given.data_shapes if given.binded else None
        binding.check_params_fit(symbol, shapes, train_iter.provide_data, bound, CALLED, None)


def check_optimizer_request(optimizer, optimizer_params) -> dict:
    """The optimizer's settings; the learning rate is lr_find's to set."""
    if isinstance(optimizer, mx.optimizer.Optimizer):
        raise ArgumentTypeError(
            say(
                "{called} makes its own optimizer (the given one would be trained on and its "
                "rate changed); give its name and settings.",
                called=CALLED,
            ),
            fix="optimizer='sgd', optimizer_params={'momentum': 0.9}",
        )
    # the usual example sets the learning rate, which lr_find sets itself
    check_optimizer(optimizer, optimizer_params, CALLED, "optimizer_params={'momentum': 0.9}")
    params = settings_dict(optimizer_params)
    taken = [name for name in ("learning_rate", "lr_scheduler") if name in params]
    if taken:
        raise InputError(
            say(
                "{called}: optimizer_params sets {names}, but lr_find sets the learning rate "
                "itself, from start to stop.",
                called=CALLED,
                names=", ".join(repr(n) for n in taken),
            ),
            fix=say("leave {names} out of optimizer_params", names=", ".join(taken)),
        )
    return params


def _refuse_unfed_inputs(symbol, train_iter) -> None:
    """Arguments whose shapes the iterator's shapes do not decide are inputs it does not feed
    (the weights' shapes follow from the data's): MXNet's bind would name its own call."""
    given = {d.name: tuple(d.shape) for d in (*train_iter.provide_data, *train_iter.provide_label)}
    try:
        shapes, _, _ = symbol.infer_shape_partial(**given)
    except mx.base.MXNetError:
        return  # shapes that do not fit: the trial's own refusal explains them
    unfed = [n for n, s in zip(symbol.list_arguments(), shapes) if not s or 0 in s]
    if unfed:
        raise InputError(
            say(
                "{called}: the network reads {names}, which train_iter does not give (it gives "
                "{given}).",
                called=CALLED,
                names=", ".join(repr(n) for n in unfed),
                given=", ".join(repr(n) for n in given),
            ),
            fix=say("give every input in the iterator's data: mx.io.NDArrayIter({{...}}, y)"),
        )


def check_rows(train_iter, symbol) -> None:
    """Every row of an in-memory iterator checked as fit checks it (NaN, labels out of range),
    not only the first batch: a bad row later would quietly bend the curve."""
    labels = {li.name: li for li in network.label_inputs(symbol)}
    rules = data_values.rules_for(symbol, labels, train_iter.provide_data)
    data_values.check_source(train_iter, "training", rules)
