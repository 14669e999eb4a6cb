"""A learning-rate range test: which rate to train with, measured before training.

One short run from fresh copies of the weights raises the learning rate exponentially, batch
by batch, from ``start`` to ``stop`` (Leslie Smith's range test, fast.ai's ``lr_find``). The
loss first barely moves (the rate is too small), then falls, then explodes (the rate is too
large). The rate where the smoothed loss falls fastest is a good first choice: large enough to
learn quickly, still well below the rates where training breaks down.

:mod:`rate_probe` answers another question (after a run diverged: which of a few smaller rates
still learns) and trains one fresh module per candidate; this finder trains one module once.
What they share, a fresh MXNet Module trained on the run's own batches, is a few lines of
MXNet calls, written here for a rate that changes every batch.

The loss is the cross-entropy of the network's SoftmaxOutput, computed on the device; the host
reads the losses every :data:`CHECK_EVERY` batches, the one wait on the device. Stopping at an
explosion needs that read: reading every batch would make the CPU wait for every step, and
the up to 9 batches trained past an explosion cost a few milliseconds and are not recorded.
"""

from __future__ import annotations

import json
import math
import numbers

import numpy as np

from .. import network
from .._compat import mx
from ..errors import ArgumentTypeError, InputError
from ..guards.optimizer_settings import check_optimizer, settings_dict
from ..language import say
from ..module import Module
from .rate_finder_plot import RateFinding

CALLED = "lr_find()"
MIN_BATCHES = 10
CHECK_EVERY = 10  # batches between two reads of the losses from the device
SKIP_START = 10  # smoothed values too young to have a slope
EXPLOSION = 4.0  # the smoothed loss this many times its lowest value: the rate is too large
# A loss that never fell by this share of its level after the first batches did not fall:
# wandering within a few percent (a rate too small to move it, a dead network) suggests nothing.
MIN_FALL = 0.05
EXAMPLE = "mxlearn.lr_find(mod, train_iter, start=1e-6, stop=10, num_batches=100)"


def lr_find(
    mod_or_symbol,
    train_iter,
    start: float = 1e-6,
    stop: float = 10,
    num_batches: int = 100,
    optimizer: str = "sgd",
    optimizer_params=None,
    context=None,
    beta: float = 0.98,
    plot: bool = True,
    seed: int | None = None,
) -> RateFinding:
    """Train fresh copies of the weights for ``num_batches`` batches of ``train_iter`` while
    the learning rate grows exponentially from ``start`` to ``stop``; stop early when the
    smoothed loss passes 4 times its lowest value or turns NaN.

    ``mod_or_symbol``: a bound, initialized Module (its weights are copied; the module itself,
    its weights and its optimizer are left as they were), or a network (an mx.sym Symbol, or
    a Module not initialized yet: fresh weights from ``mx.init.Xavier()``, drawn from MXNet's
    generator as ``mxlearn.seed`` left it, or after ``mx.random.seed(seed)`` when ``seed`` is
    given). The network
    must end with a SoftmaxOutput. ``context``: where to train, by default the module's
    devices (a mxlearn.Module), else the CPU. ``train_iter`` is read from its start, again
    from its start when it ends, and reset when the test is over. ``beta``: the smoothing
    weight of the loss (an exponential moving average, corrected for its start at 0).
    ``plot``: show the figure at the end (see :meth:`RateFinding.plot`).
    """
    _check_rates(start, stop, num_batches, beta)
    source = _network(mod_or_symbol)
    head = classifier_head(source)
    _check_iterator(train_iter, source)
    params = _check_optimizer(optimizer, optimizer_params)
    trial = _fresh_module(mod_or_symbol, source, train_iter, context, seed)
    rates = start * (stop / start) ** (np.arange(num_batches) / (num_batches - 1))
    trial.init_optimizer(
        optimizer=optimizer, optimizer_params={**params, "learning_rate": float(rates[0])}
    )
    try:
        with np.errstate(all="ignore"):
            losses, smoothed, exploded = _train(trial, train_iter, rates, CrossEntropy(head), beta)
    finally:
        train_iter.reset()
    rates = rates[: len(losses)]
    finding = RateFinding(
        rates,
        losses,
        smoothed,
        steepest_descent(rates, smoothed),
        float(rates[-1]) if exploded else None,
    )
    if plot:
        finding.plot()
    return finding


def steepest_descent(rates, smoothed) -> float | None:
    """The rate where ``smoothed`` falls fastest against log(rate), looked for before its
    minimum (past it the loss rises) and after its first :data:`SKIP_START` values (they
    average a few batches only: their slopes are noise). None when the loss never fell."""
    smoothed = np.asarray(smoothed, dtype=np.float64)
    lowest = int(np.argmin(np.where(np.isfinite(smoothed), smoothed, np.inf)))
    first = SKIP_START  # a minimum among the first values has no slope worth reading
    if lowest - first < 1 or smoothed[lowest] > (1 - MIN_FALL) * smoothed[first]:
        return None
    part = slice(first, lowest + 1)
    slopes = np.gradient(smoothed[part], np.log(np.asarray(rates, dtype=np.float64)[part]))
    steepest = int(np.argmin(slopes))
    return float(rates[first + steepest]) if slopes[steepest] < 0 else None


class Smoothed:
    """The loss as an exponential moving average, divided by (1 - beta**n) so that the first
    values are not pulled towards the 0 it starts from; and whether it exploded."""

    def __init__(self, beta: float) -> None:
        self.beta, self.average, self.count = beta, 0.0, 0
        self.lowest = math.inf
        self.raw_over = False  # the previous raw loss was past the limit

    def add(self, loss: float) -> tuple[float, bool]:
        """The smoothed value with ``loss`` added, and whether the loss exploded there: the
        smoothed loss past 4 times its lowest, or the raw loss past it twice in a row (the
        average trails the raw loss by tens of batches, by then the rate has grown a decade)."""
        self.count += 1
        self.average = self.beta * self.average + (1 - self.beta) * loss
        value = self.average / (1 - self.beta**self.count)
        raw_over = not loss <= EXPLOSION * self.lowest  # NaN counts as over
        exploded = math.isnan(value) or value > EXPLOSION * self.lowest
        exploded = exploded or (raw_over and self.raw_over)
        self.raw_over = raw_over
        self.lowest = min(self.lowest, value)
        return value, exploded


class CrossEntropy:
    """A batch's mean cross-entropy against its labels, computed on the device from the
    logits (the SoftmaxOutput's input) as logsumexp - the true class's logit: an NDArray of one
    value, so that nothing waits for it.

    From the logits, not from the softmax's probabilities: a rate that blows the logits up to
    differences of hundreds makes the loss hundreds, as it is, where the probabilities would
    round to 0 and 1 and any clipping would cap the loss near 27 (MXNet's CrossEntropy metric
    gives 27.6 at most), too little for the smoothed loss to reach 4 times its best: the
    explosion would go unseen.
    """

    def __init__(self, head: dict) -> None:
        attrs = head.get("attrs", {})
        self.multi_output = _flag(attrs, "multi_output")
        self.preserve_shape = _flag(attrs, "preserve_shape")
        use_ignore = _flag(attrs, "use_ignore")
        self.ignore = float(attrs.get("ignore_label", "-1")) if use_ignore else None

    def __call__(self, logits, label, pad: int):
        rows = logits.shape[0] - pad  # rows an iterator repeated to fill its last batch
        if pad:
            logits, label = logits[:rows], label[:rows]
        label = label.as_in_context(logits.context)
        if self.preserve_shape:  # classes on the last axis
            axis, label = -1, label.reshape(logits.shape[:-1])
        elif self.multi_output:  # classes on axis 1, a label per position
            axis, label = 1, label.reshape((rows,) + logits.shape[2:])
        else:  # one softmax over each row's values
            axis, logits, label = 1, logits.reshape((rows, -1)), label.reshape((rows,))
        losses = -mx.nd.pick(mx.nd.log_softmax(logits, axis=axis), label, axis=axis)
        if self.ignore is None:
            return losses.mean()  # NaN stays NaN: that is an explosion too
        kept = label != self.ignore  # 1 where the row counts, else 0
        return (losses * kept).sum() / mx.nd.maximum(kept.sum(), 1)


def with_logits(symbol):
    """``symbol`` with the SoftmaxOutput's input as a second output (BlockGrad: no gradient
    flows from it), for the loss."""
    return mx.sym.Group([symbol, mx.sym.BlockGrad(symbol.get_children()[0])])


def _flag(attrs: dict, name: str) -> bool:
    return attrs.get(name, "False").lower() in ("true", "1")


def _train(trial, train_iter, rates, loss_of, beta) -> tuple[list, list, bool]:
    """(raw losses, smoothed losses, exploded): one batch per rate, until the loss explodes."""
    smoother = Smoothed(beta)
    losses, smoothed, pending = [], [], []
    batches = _cycle(train_iter)
    for step, rate in enumerate(rates):
        batch = next(batches)
        trial.optimizer.set_learning_rate(float(rate))
        trial.forward_backward(batch)
        trial.update()
        logits = trial.get_outputs()[1]
        pending.append(loss_of(logits, batch.label[0], int(batch.pad or 0)))
        if len(pending) < CHECK_EVERY and step < len(rates) - 1:
            continue
        for loss in mx.nd.concat(*pending, dim=0).asnumpy():  # the one wait on the device
            value, exploded = smoother.add(float(loss))
            losses.append(float(loss))
            smoothed.append(value)
            if exploded:
                return losses, smoothed, True
        pending = []
    return losses, smoothed, False


def _cycle(train_iter):
    """The iterator's batches from its start, again from the start each time it ends."""
    while True:
        train_iter.reset()
        empty = True
        for batch in train_iter:
            empty = False
            yield batch
        if empty:
            raise InputError(
                say("{called}: train_iter gave no batch after train_iter.reset().", called=CALLED),
                fix=say("an iterator with at least one batch, e.g. {example}", example=EXAMPLE),
            )


def _network(mod_or_symbol):
    """The symbol to train: the given one, or the module's."""
    if isinstance(mod_or_symbol, mx.sym.Symbol):
        return mod_or_symbol
    if isinstance(mod_or_symbol, mx.mod.BaseModule):
        return mod_or_symbol.symbol
    raise ArgumentTypeError(
        say(
            "{called} needs a Module or a network (an mx.sym Symbol); got {kind}.",
            called=CALLED,
            kind=type(mod_or_symbol).__name__,
        ),
        fix=EXAMPLE,
    )


def _fresh_module(given, symbol, train_iter, context, seed) -> Module:
    """A new module over ``symbol``, bound for training on ``train_iter``'s shapes, with a
    copy of ``given``'s weights when it has them, else Xavier's."""
    initialized = isinstance(given, mx.mod.BaseModule) and given.params_initialized
    if context is None:
        context = getattr(given, "contexts", None) or mx.cpu()  # a mxlearn.Module's devices
    trial = Module(
        with_logits(symbol),
        data_names=[d.name for d in train_iter.provide_data],
        label_names=[d.name for d in train_iter.provide_label],
        context=context,
    )
    trial.bind(train_iter.provide_data, train_iter.provide_label)
    if initialized:
        arg_params, aux_params = given.get_params()
        # init_params copies the values into the trial's own arrays: the given stay as they are
        trial.init_params(arg_params=arg_params, aux_params=aux_params)
    else:
        if seed is not None:
            mx.random.seed(seed)
        trial.init_params(mx.init.Xavier())
    return trial


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


def _check_rates(start, stop, num_batches, beta) -> None:
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
            fix="num_batches=100",
        )
    if not (isinstance(beta, numbers.Real) and 0 <= beta < 1):
        raise InputError(
            say(
                "{called}: beta={beta!r}, but the smoothing weight is a number from 0 (no "
                "smoothing) up to, not including, 1.",
                called=CALLED,
                beta=beta,
            ),
            fix="beta=0.98",
        )


def _check_iterator(train_iter, symbol) -> None:
    if not hasattr(train_iter, "provide_data") or not hasattr(train_iter, "reset"):
        raise ArgumentTypeError(
            say(
                "{called}: train_iter={kind} is not a data iterator.",
                called=CALLED,
                kind=type(train_iter).__name__,
            ),
            fix="train_iter = mx.io.NDArrayIter(X, y, batch_size=64, shuffle=True)",
        )
    if not train_iter.provide_label:
        raise InputError(
            say(
                "{called}: train_iter gives no labels, and the loss compares the network's "
                "output with the labels.",
                called=CALLED,
            ),
            fix="train_iter = mx.io.NDArrayIter(X, y, batch_size=64, shuffle=True)",
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


def _check_optimizer(optimizer, optimizer_params) -> dict:
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
    check_optimizer(optimizer, optimizer_params, CALLED)
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
