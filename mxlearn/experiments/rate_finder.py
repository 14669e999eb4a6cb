"""``lr_find``: Leslie Smith's range test (fast.ai's ``lr_find``), one short run from fresh
copies of the weights at rates growing from ``start`` to ``stop``; the reading and the figure
are :mod:`.rate_finder_plot`'s. Refusals name lr_find, with fit's rules where fit has them.
"""

from __future__ import annotations

import contextlib
import json
import math

import numpy as np

from .. import network, rules
from .._compat import mx
from ..boundary import public
from ..devices import check_context
from ..errors import N_, ArgumentTypeError, InputError
from ..guards import binding, data_values
from ..guards.optimizer_settings import check_optimizer, settings_dict
from ..metrics.smoothing import weight_for_lag
from ..module import Module
from ..module import parameters as P
from .rate_finder_plot import SKIP_START, RateFinding, Reading, Smoothed

CALLED = "mxlearn.lr_find()"
EXAMPLE = "mxlearn.lr_find(mod, train_iter, start=1e-6, stop=10, num_batches=300)"
# The loss trails the rate by the ~10 gradients momentum averages: at 100 batches (14 a decade)
# that is 0.7 of a decade, and suggestions came out too large; at 300 (43 a decade) the loss
# follows within a quarter of a decade, and the whole test takes about 0.2 s.
NUM_BATCHES = 300
# beta chosen so that the average trails by a quarter of a decade whatever the span (fast.ai's
# 0.98 trails by 49 batches: 3.5 decades at 100 batches, into the raw loss's explosion).
LAG_DECADES = 0.25
# Batches between two reads of the losses, the one wait on the device: reading every batch
# makes the CPU wait for every step; the up to 9 batches past an explosion are not recorded.
CHECK_EVERY = 10
COLLAPSE_BATCHES = 10  # one class for every row this many batches in a row: collapsed
EXPLODED, COLLAPSED = "exploded", "collapsed"
RULES = dict(
    mod_or_symbol=rules.instance(
        (mx.sym.Symbol, mx.mod.BaseModule), N_("a Module or a network (an mx.sym Symbol)"), EXAMPLE
    ),
    train_iter=P.FIT["train_data"],
    start=rules.number("start=1e-6", above=0),
    stop=rules.number("stop=10", above=0),
    # fewer batches cannot show where the loss falls and where it explodes
    num_batches=rules.whole(10, f"num_batches={NUM_BATCHES}"),
    optimizer=P.TRAINING["optimizer"],
    optimizer_params=P.TRAINING["optimizer_params"],
    beta=rules.number("beta=None", minimum=0, below=1, optional=True),
    plot=rules.flag("plot=False"),
    seed=rules.whole(0, "seed=0", optional=True),
)


class NoNetworkYet(InputError):
    says = N_("{called}: this {kind} has no network until it is bound.")
    fix_says = N_("bind it first, or give lr_find the network: {example}")


class NotAClassifier(InputError):
    says = N_(
        "{called} supports only classification losses: the network must end with one "
        "SoftmaxOutput, and this one ends with {found}."
    )
    fix_code = "net = mx.sym.SoftmaxOutput(net, name='softmax')"


class StartNotBelowStop(InputError):
    says = N_(
        "{called}: start={start!r} is not below stop={stop!r}; the rate grows from start to stop."
    )
    fix_code = "start=1e-6, stop=10"


class SpanBeyondFloats(InputError):
    says = N_(
        "{called}: from start={start!r} to stop={stop!r} is more than a computer's numbers can "
        "span."
    )
    fix_code = "start=1e-6, stop=10"


class NoLabels(InputError):
    says = N_(
        "{called}: train_iter gives no labels, and the loss compares the network's output with "
        "the labels."
    )
    fix_code = P.ITERATOR


class FeedsUnknownInputs(InputError):
    says = N_(
        "{called}: train_iter feeds {names}, which the network has no input for (it reads: "
        "{inputs})."
    )
    fix_code = "mx.io.NDArrayIter({{{data!r}: X}}, {{{label!r}: y}}, batch_size=64)"


class UnfedInputs(InputError):
    says = N_(
        "{called}: the network reads {names}, which train_iter does not give (it gives {given})."
    )
    fix_says = N_("give every input in the iterator's data: mx.io.NDArrayIter({{...}}, y)")


class OptimizerObject(ArgumentTypeError):
    says = N_(
        "{called} makes its own optimizer (the given one would be trained on and its rate "
        "changed); give its name and settings."
    )
    fix_code = "optimizer='sgd', optimizer_params={{'momentum': 0.9}}"


class SetsTheRate(InputError):
    says = N_(
        "{called}: optimizer_params sets {names}, but lr_find sets the learning rate itself, "
        "from start to stop."
    )
    fix_says = N_("leave {names} out of optimizer_params")


class GaveNoBatch(InputError):
    says = N_("{called}: train_iter gave no batch, read from its start.")
    fix_says = N_(
        "an iterator that gives at least one batch (an NDArrayIter with "
        "last_batch_handle='discard' needs batch_size rows or more), e.g. {example}"
    )


class RefusedInTheTrial(InputError):  # the trial's refusal, with its kind, is the __cause__
    says = N_("{called}: {problem}")


@public(CALLED, **RULES)
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
    """Train fresh copies of the weights for ``num_batches`` batches while the learning rate
    grows exponentially from ``start`` to ``stop``; stop early when the loss explodes (the
    smoothed loss past 4 times its lowest, or NaN) or collapses (one class predicted for every
    row of 10 batches in a row, the loss back to ln(classes): ``finding.collapsed``).
    ``finding.suggested`` is a tenth of the rate where the smoothed loss comes within its noise
    of its lowest, or None with ``finding.no_suggestion`` and ``finding.retry`` saying why.

    ``mod_or_symbol``: a bound, initialized Module (its weights are copied, it is left as it
    was), or a network (an mx.sym Symbol, or a Module not initialized yet: Xavier weights from
    MXNet's generator, after ``mx.random.seed(seed)`` when ``seed`` is given; drawing them moves
    the generator on, so call ``mxlearn.seed`` again before a fit that should repeat). Frozen
    parameters stay frozen; the network must end with a SoftmaxOutput. ``context``: by default
    the module's devices, else the CPU. ``train_iter`` and NumPy's random state are left as
    they were (a seeded fit afterwards shuffles as it would have). ``beta``: the loss's
    smoothing weight, by default trailing the loss by a quarter of a decade of rate.
    """
    if isinstance(mod_or_symbol, mx.sym.Symbol):
        source = mod_or_symbol
    else:
        try:
            source = mod_or_symbol.symbol
        except AssertionError:  # a BucketingModule knows its network once bound
            kind = type(mod_or_symbol).__name__
            raise NoNetworkYet(called=CALLED, kind=kind, example=EXAMPLE) from None
    params = _refuse(mod_or_symbol, source, train_iter, start, stop, optimizer, optimizer_params)
    rates = start * (stop / start) ** (np.arange(num_batches) / (num_batches - 1))
    params["learning_rate"] = float(rates[0])
    if beta is None:
        beta = weight_for_lag(LAG_DECADES * (num_batches - 1) / math.log10(stop / start))
    trial = _fresh_module(mod_or_symbol, source, train_iter, context, seed, optimizer, params)
    loss_of = CrossEntropy(source)
    losses, smoothed, broke, at = _measure(trial, train_iter, rates, loss_of, beta)
    rates, diverged = rates[: len(losses)], (float(rates[at]) if broke else None)
    # no value is read before the average spans its own lag (its first values are noise)
    skip = max(SKIP_START, math.ceil(beta / (1 - beta)))
    reading = Reading(rates[: at + 1], losses[: at + 1], smoothed[: at + 1], beta, skip, broke)
    guessing = loss_of.classes_loss
    finding = RateFinding(rates, losses, smoothed, reading, diverged, broke == COLLAPSED, guessing)
    if plot:
        finding.plot()
    return finding


def _refuse(given, symbol, train_iter, start, stop, optimizer, optimizer_params) -> dict:
    """What the rules, one value each, cannot refuse; the optimizer's settings."""
    if start >= stop:
        raise StartNotBelowStop(called=CALLED, start=start, stop=stop)
    if not math.isfinite(stop / start):  # the rates would overflow to inf
        raise SpanBeyondFloats(called=CALLED, start=start, stop=stop)
    graph = json.loads(symbol.tojson())
    heads = [graph["nodes"][head[0]] for head in graph["heads"]]
    if len(heads) != 1 or heads[0]["op"] != "SoftmaxOutput":
        found = ", ".join(
            f"{n['op']} '{n['name']}'" if n["op"] != "null" else f"'{n['name']}'" for n in heads
        )
        raise NotAClassifier(called=CALLED, found=found)
    if not train_iter.provide_label:
        raise NoLabels(called=CALLED)
    if isinstance(optimizer, mx.optimizer.Optimizer):
        raise OptimizerObject(called=CALLED)
    # the usual example sets the learning rate, which lr_find sets itself
    check_optimizer(optimizer, optimizer_params, CALLED, "optimizer_params={'momentum': 0.9}")
    params = settings_dict(optimizer_params)
    taken = [repr(name) for name in ("learning_rate", "lr_scheduler") if name in params]
    if taken:
        raise SetsTheRate(called=CALLED, names=", ".join(taken))
    _refuse_inputs(given, symbol, train_iter)
    return params


def _refuse_inputs(given, symbol, train_iter) -> None:
    """What the trial's bind and init_params would refuse in their own names (unknown or unfed
    inputs, label shapes, weights for other shapes); then every row, as fit checks them."""
    fed = {d.name: tuple(d.shape) for d in (*train_iter.provide_data, *train_iter.provide_label)}
    labels = {li.name: li for li in network.label_inputs(symbol)}
    unknown = [name for name in fed if name not in symbol.list_arguments()]
    if unknown:
        data = (network.input_names(symbol) or ["data"])[0]
        label = (list(labels) or ["softmax_label"])[0]
        names, inputs = ", ".join(map(repr, unknown)), network.describe_inputs(symbol)
        raise FeedsUnknownInputs(called=CALLED, names=names, inputs=inputs, data=data, label=label)
    label_names = [d.name for d in train_iter.provide_label]
    binding.check_label_shapes(
        symbol, train_iter.provide_data, train_iter.provide_label, label_names, labels, CALLED
    )
    with contextlib.suppress(mx.base.MXNetError):  # shapes that do not fit: the trial says so
        shapes, _, _ = symbol.infer_shape_partial(**fed)
        unfed = [n for n, s in zip(symbol.list_arguments(), shapes) if not s or 0 in s]
        if unfed:
            names, given_names = ", ".join(map(repr, unfed)), ", ".join(map(repr, fed))
            raise UnfedInputs(called=CALLED, names=names, given=given_names)
    if isinstance(given, mx.mod.BaseModule) and given.params_initialized:
        shapes = {name: tuple(a.shape) for name, a in given.get_params()[0].items()}
        bound = given.data_shapes if given.binded else None
        binding.check_params_fit(symbol, shapes, train_iter.provide_data, bound, CALLED, None)
    with _told_as_lr_find():
        provided = train_iter.provide_data, train_iter.provide_label
        rules_of = data_values.rules_for(symbol, labels, *provided)
        data_values.check_source(train_iter, "training", rules_of)


@contextlib.contextmanager
def _told_as_lr_find():
    """The trial module's refusals name lr_find, the call the student made."""
    try:
        yield
    except InputError as error:
        if error.fields.get("called") == CALLED:
            raise
        raise RefusedInTheTrial(called=CALLED, problem=error.problem, fix=error.fix) from error


def _measure(trial, train_iter, rates, loss_of, beta) -> tuple[list, list, str | None, int]:
    """:func:`_train` on ``train_iter``'s batches, the iterator and NumPy's random state left
    as they were. An NDArrayIter is read by an unshuffled iterator of lr_find's own: resetting
    the student's would reshuffle it, and a fit afterwards would see other batches."""
    own = None
    arrays = data_values.source_arrays(train_iter)
    if arrays is not None:
        handle = "discard" if getattr(train_iter, "last_batch_handle", "") == "discard" else "pad"
        own = mx.io.NDArrayIter(*map(dict, arrays), train_iter.batch_size, last_batch_handle=handle)
    random_state = np.random.get_state()
    try:
        with _told_as_lr_find(), np.errstate(all="ignore"):
            return _train(trial, own or train_iter, rates, loss_of, beta)
    finally:
        if own is None:
            train_iter.reset()
        np.random.set_state(random_state)


class CrossEntropy:
    """A batch's mean cross-entropy, on the device, from the logits (the SoftmaxOutput's
    input): from the probabilities, clipping would cap an exploding loss near 27 (MXNet's
    CrossEntropy metric), too little to reach 4 times its best, and the explosion go unseen."""

    def __init__(self, softmax_output) -> None:
        attrs = softmax_output.list_attr()  # the settings given to the SoftmaxOutput
        self.multi_output = network.is_set(attrs, "multi_output")
        self.preserve_shape = network.is_set(attrs, "preserve_shape")
        self.ignore = network.ignore_label(attrs)
        self.classes_loss = None  # ln(classes), once a batch was read

    def guessing(self, logits) -> float | None:
        """The loss of giving every class the same probability, ln(classes)."""
        axis = -1 if self.preserve_shape else 1
        self.classes_loss = math.log(logits.shape[axis]) if logits.shape[axis] > 1 else None
        return self.classes_loss

    def one_class(self, logits, pad: int):
        """1 when every row of the batch is predicted as one class, else 0 (on the device); a
        network with several outputs a row never counts as one class."""
        rows = logits.shape[0] - pad
        if self.preserve_shape or self.multi_output or rows < 2:
            return mx.nd.zeros((1,), ctx=logits.context)
        predicted = mx.nd.argmax(logits[:rows].reshape((rows, -1)), axis=1)
        return mx.nd.broadcast_equal(predicted, predicted[0:1]).min().reshape((1,))

    def __call__(self, logits, label, pad: int):
        rows = logits.shape[0] - pad  # rows an iterator repeated to fill its last batch
        if pad:
            logits, label = logits[:rows], label[:rows]
        label = label.as_in_context(logits.context)
        if label.shape == logits.shape:  # a probability per class: -sum(p log q) a softmax
            axis = -1 if self.preserve_shape else 1
            losses = -(label * mx.nd.log_softmax(logits, axis=axis)).sum(axis=axis)
            return losses.mean().reshape((1,))
        if self.preserve_shape:  # classes on the last axis
            axis, label = -1, label.reshape(logits.shape[:-1])
        elif self.multi_output:  # classes on axis 1, a label per position
            axis, label = 1, label.reshape((rows,) + logits.shape[2:])
        else:  # one softmax over each row's values
            axis, logits, label = 1, logits.reshape((rows, -1)), label.reshape((rows,))
        losses = -mx.nd.pick(mx.nd.log_softmax(logits, axis=axis), label, axis=axis)
        if self.ignore is None:
            return losses.mean().reshape((1,))  # NaN stays NaN: an explosion too
        kept = label != self.ignore  # 1 where the row counts, else 0
        return ((losses * kept).sum() / mx.nd.maximum(kept.sum(), 1)).reshape((1,))


def _train(trial, train_iter, rates, loss_of, beta) -> tuple[list, list, str | None, int]:
    """(raw losses, smoothed losses, EXPLODED, COLLAPSED or None, the batch it broke down at):
    one batch per rate. A collapse's loss is back to 0.9 to 1.5 times ln(classes) (a batch's
    labels move it; a network of raw features starts far above it and has not collapsed)."""
    smoother = Smoothed(beta)
    losses, smoothed, pending, streak = [], [], [], 0
    batches = _cycle(train_iter)
    for step, rate in enumerate(rates):
        batch = next(batches)
        trial.optimizer.set_learning_rate(float(rate))
        trial.forward_backward(batch)
        trial.update()
        logits = trial.get_outputs()[1]
        pad = int(batch.pad or 0)
        pending.append(loss_of(logits, batch.label[0], pad))
        pending.append(loss_of.one_class(logits, pad))
        if len(pending) < 2 * CHECK_EVERY and step < len(rates) - 1:
            continue
        read = mx.nd.concat(*pending, dim=0).asnumpy()  # the one wait on the device
        for loss, one_class in zip(read[0::2], read[1::2]):
            value, exploded = smoother.add(float(loss))
            losses.append(float(loss))
            smoothed.append(value)
            if exploded:
                return losses, smoothed, EXPLODED, len(losses) - 1
            guessing = loss_of.guessing(logits)
            back = guessing is not None and 0.9 * guessing <= loss <= 1.5 * guessing
            streak = streak + 1 if back and one_class == 1 else 0
            if streak >= COLLAPSE_BATCHES:
                return losses, smoothed, COLLAPSED, len(losses) - streak
        pending = []
    return losses, smoothed, None, len(losses)


def _cycle(train_iter):
    """The iterator's batches from its start, again from the start each time it ends."""
    while True:
        train_iter.reset()
        empty = True
        for batch in train_iter:
            empty = False
            yield batch
        if empty:
            raise GaveNoBatch(called=CALLED, example=P.ITERATOR)


def _fresh_module(given, symbol, train_iter, context, seed, optimizer, params) -> Module:
    """A module over ``symbol`` plus its logits (BlockGrad: no gradient flows from them),
    bound on ``train_iter``'s shapes, with a copy of ``given``'s weights, else Xavier's."""
    if context is None:
        context = getattr(given, "contexts", None) or mx.cpu()  # a mxlearn.Module's devices
    else:
        check_context(context, CALLED)  # else the trial's Module() would be named
    trial = Module(
        mx.sym.Group([symbol, mx.sym.BlockGrad(symbol.get_children()[0])]),
        # frozen layers stay frozen in the trial (a student fine-tuning the top)
        fixed_param_names=given._fixed_param_names if isinstance(given, mx.mod.Module) else None,
        data_names=[d.name for d in train_iter.provide_data],
        label_names=[d.name for d in train_iter.provide_label],
        context=context,
    )
    with _told_as_lr_find():
        trial.bind(train_iter.provide_data, train_iter.provide_label)
        if isinstance(given, mx.mod.BaseModule) and given.params_initialized:
            # init_params copies the values into the trial's own arrays: the given stay as they are
            arg_params, aux_params = given.get_params()
            trial.init_params(arg_params=arg_params, aux_params=aux_params)
        else:
            if seed is not None:
                mx.random.seed(seed)
            trial.init_params(mx.init.Xavier())
        trial.init_optimizer(optimizer=optimizer, optimizer_params=params)
    return trial
