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

import contextlib
import json
import math
import numbers

import numpy as np

from .. import network
from .._compat import mx
from ..devices import check_context
from ..errors import ArgumentTypeError, InputError
from ..guards import binding, data_values
from ..guards.optimizer_settings import check_optimizer, settings_dict
from ..language import say
from ..metrics.smoothing import weight_for_lag
from ..module import Module
from .rate_finder_plot import RateFinding, Smoothed, steepest_descent

CALLED = "lr_find()"
MIN_BATCHES = 10
# Both the loss and its average trail the rate, and by a number of batches: what matters is
# how far the rate grew meanwhile. Momentum 0.9 (and Adam's first moment) averages the last
# ~10 gradients; at 100 batches over 1e-6..10 (14 a decade) that is 0.7 of a decade, and on the
# scaled letters SGD with momentum gave suggestions of 0.33 to 2, where 3-epoch fits reached
# 0.05 to 0.8 accuracy (3 seeds of 5 below 0.1). At 300 batches (43 a decade) it gave 0.11 to
# 0.26, where they reach 0.82 to 0.87; the whole test takes about 0.1 s there.
NUM_BATCHES = 300
# fast.ai's beta=0.98 makes the average trail by 49 batches: 3.5 decades at 100 batches, which
# put the steepest descent near the rates where the raw loss already exploded. By default beta
# is chosen from the batches per decade so that the average trails by a quarter of a decade,
# whatever num_batches, start and stop (at the defaults: beta 0.914, about 22 batches averaged).
LAG_DECADES = 0.25
CHECK_EVERY = 10  # batches between two reads of the losses from the device
EXAMPLE = "mxlearn.lr_find(mod, train_iter, start=1e-6, stop=10, num_batches=300)"
ITER_EXAMPLE = "train_iter = mx.io.NDArrayIter(X, y, batch_size=64, shuffle=True)"


def lr_find(
    mod_or_symbol,
    train_iter,
    start: float = 1e-6,
    stop: float = 10,
    num_batches: int = NUM_BATCHES,
    optimizer: str = "sgd",
    optimizer_params=None,
    context=None,
    beta: float | None = None,
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
    given). The network must end with a SoftmaxOutput. ``context``: where to train, by default
    the module's devices (a mxlearn.Module), else the CPU.

    ``train_iter`` is left as it was: an NDArrayIter's arrays are read, in their current order,
    by an iterator of lr_find's own; another iterator is read from its start, again from its
    start when it ends, and reset when the test is over, and NumPy's random state (which a
    shuffling reset draws from) is put back, so a seeded fit afterwards shuffles as it would
    have. ``num_batches``: fewer than about 40 per decade of rate let the loss trail the rate
    (momentum averages ~10 batches) and the suggestion comes out too large. ``beta``: the
    smoothing weight of the loss (an exponential moving average, corrected for its start at
    0); by default chosen so that the average trails the loss by a quarter of a decade of rate.
    ``plot``: show the figure at the end (see :meth:`RateFinding.plot`).
    """
    _check_rates(start, stop, num_batches, beta)
    source = _network(mod_or_symbol)
    classifier_head(source)
    _check_iterator(train_iter, source)
    _check_shapes(mod_or_symbol, source, train_iter)
    rates = start * (stop / start) ** (np.arange(num_batches) / (num_batches - 1))
    params = {**_check_optimizer(optimizer, optimizer_params), "learning_rate": float(rates[0])}
    if beta is None:
        beta = weight_for_lag(LAG_DECADES * (num_batches - 1) / math.log10(stop / start))
    trial = _fresh_module(mod_or_symbol, source, train_iter, context, seed, optimizer, params)
    losses, smoothed, exploded = _measure(trial, train_iter, rates, CrossEntropy(source), beta)
    rates = rates[: len(losses)]
    diverged = float(rates[-1]) if exploded else None
    finding = RateFinding(rates, losses, smoothed, steepest_descent(rates, smoothed), diverged)
    if plot:
        finding.plot()
    return finding


def _measure(trial, train_iter, rates, loss_of, beta) -> tuple[list, list, bool]:
    """:func:`_train` on ``train_iter``'s batches, the iterator and NumPy's random state left
    as they were (see :func:`lr_find`)."""
    own = _own_reader(train_iter)
    random_state = np.random.get_state()
    try:
        with _told_as_lr_find(), np.errstate(all="ignore"):
            return _train(trial, own or train_iter, rates, loss_of, beta)
    finally:
        if own is None:
            train_iter.reset()
        np.random.set_state(random_state)


def _own_reader(train_iter):
    """An iterator of lr_find's own over an NDArrayIter's arrays, in their current order
    (unshuffled: it draws nothing from NumPy), or None for an iterator whose data mxlearn
    cannot read (it is then read and reset itself). Resetting the student's NDArrayIter would
    reshuffle its arrays: a fit afterwards would see other batches than without lr_find."""
    arrays = data_values.source_arrays(train_iter)
    if arrays is None:
        return None
    data, labels = arrays
    handle = getattr(train_iter, "last_batch_handle", "pad")
    return mx.io.NDArrayIter(
        dict(data),
        dict(labels),
        train_iter.batch_size,
        last_batch_handle="discard" if handle == "discard" else "pad",
    )


@contextlib.contextmanager
def _told_as_lr_find():
    """The trial module's refusals of the data (a NaN, a label out of range in the first
    batch) name lr_find, the call the student made; those its bind and init_params would word
    in their own names are checked before (:func:`_check_shapes`)."""
    try:
        yield
    except InputError as error:
        if error.problem.startswith(CALLED):  # lr_find's own words
            raise
        problem = say("{called}: {problem}", called=CALLED, problem=error.problem)
        raise InputError(problem, fix=error.fix) from error


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

    def __init__(self, softmax_output) -> None:
        attrs = softmax_output.list_attr()  # the settings given to the SoftmaxOutput
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
                say("{called}: train_iter gave no batch, read from its start.", called=CALLED),
                fix=say(
                    "an iterator that gives at least one batch (an NDArrayIter with "
                    "last_batch_handle='discard' needs batch_size rows or more), e.g. {example}",
                    example=ITER_EXAMPLE,
                ),
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


def _fresh_module(given, symbol, train_iter, context, seed, optimizer, params) -> Module:
    """A new module over ``symbol``, bound for training on ``train_iter``'s shapes, with a
    copy of ``given``'s weights when it has them, else Xavier's, and its optimizer."""
    initialized = isinstance(given, mx.mod.BaseModule) and given.params_initialized
    if context is None:
        context = getattr(given, "contexts", None) or mx.cpu()  # a mxlearn.Module's devices
    else:
        check_context(context, CALLED)  # else the trial's Module() would be named
    trial = Module(
        with_logits(symbol),
        data_names=[d.name for d in train_iter.provide_data],
        label_names=[d.name for d in train_iter.provide_label],
        context=context,
    )
    with _told_as_lr_find():
        trial.bind(train_iter.provide_data, train_iter.provide_label)
        if initialized:
            arg_params, aux_params = given.get_params()
            # init_params copies the values into the trial's own arrays: the given stay as they are
            trial.init_params(arg_params=arg_params, aux_params=aux_params)
        else:
            if seed is not None:
                mx.random.seed(seed)
            trial.init_params(mx.init.Xavier())
        trial.init_optimizer(optimizer=optimizer, optimizer_params=params)
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


def _check_iterator(train_iter, symbol) -> None:
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


def _check_shapes(given, symbol, train_iter) -> None:
    """What the trial module's bind and init_params would refuse, refused here in lr_find's
    name: labels of the wrong shape, a module's weights made for inputs of another shape."""
    labels = {li.name: li for li in network.label_inputs(symbol)}
    names = [d.name for d in train_iter.provide_label]
    binding.check_label_shapes(
        symbol, train_iter.provide_data, train_iter.provide_label, names, labels, called=CALLED
    )
    if isinstance(given, mx.mod.BaseModule) and given.params_initialized:
        shapes = {name: tuple(a.shape) for name, a in given.get_params()[0].items()}
        bound = given.data_shapes if given.binded else None
        binding.check_params_fit(symbol, shapes, train_iter.provide_data, bound, CALLED, None)


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
