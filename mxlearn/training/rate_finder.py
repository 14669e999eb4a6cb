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
import math

import numpy as np

from .._compat import mx
from ..devices import check_context
from ..errors import InputError
from ..guards import data_values
from ..language import say
from ..metrics.smoothing import weight_for_lag
from ..module import Module
from . import rate_finder_checks as checks
from .rate_finder_checks import NUM_BATCHES
from .rate_finder_plot import SKIP_START, RateFinding, Smoothed, steepest_descent

# fast.ai's beta=0.98 makes the average trail by 49 batches: 3.5 decades at 100 batches, which
# put the steepest descent near the rates where the raw loss already exploded. By default beta
# is chosen from the batches per decade so that the average trails by a quarter of a decade,
# whatever num_batches, start and stop (at the defaults: beta 0.914, about 22 batches averaged).
LAG_DECADES = 0.25
CHECK_EVERY = 10  # batches between two reads of the losses from the device


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
    given). Drawing them moves MXNet's generator on (MXNet cannot put it back): call
    ``mxlearn.seed`` again before a fit that should repeat. Frozen parameters
    (``fixed_param_names``) stay frozen. The network must end with a SoftmaxOutput. ``context``: where to train, by default
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
    checks.check_rates(start, stop, num_batches, beta)
    source = checks.network_of(mod_or_symbol)
    checks.classifier_head(source)
    checks.check_iterator(train_iter, source)
    checks.check_shapes(mod_or_symbol, source, train_iter)
    with _told_as_lr_find():
        checks.check_rows(train_iter, source)  # every row, as fit checks them
    rates = start * (stop / start) ** (np.arange(num_batches) / (num_batches - 1))
    params = checks.check_optimizer_request(optimizer, optimizer_params)
    params["learning_rate"] = float(rates[0])
    if beta is None:
        beta = weight_for_lag(LAG_DECADES * (num_batches - 1) / math.log10(stop / start))
    trial = _fresh_module(mod_or_symbol, source, train_iter, context, seed, optimizer, params)
    losses, smoothed, exploded = _measure(trial, train_iter, rates, CrossEntropy(source), beta)
    rates = rates[: len(losses)]
    diverged = float(rates[-1]) if exploded else None
    # the first values of the average lean on few losses (its correction for the start at 0
    # divides their noise by a small number): no slope is read before it spans its own lag
    skip = max(SKIP_START, math.ceil(beta / (1 - beta)))
    suggested = steepest_descent(rates, smoothed, skip)
    finding = RateFinding(rates, losses, smoothed, suggested, diverged)
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
        if error.problem.startswith(checks.CALLED):  # lr_find's own words
            raise
        problem = say("{called}: {problem}", called=checks.CALLED, problem=error.problem)
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
                say(
                    "{called}: train_iter gave no batch, read from its start.", called=checks.CALLED
                ),
                fix=say(
                    "an iterator that gives at least one batch (an NDArrayIter with "
                    "last_batch_handle='discard' needs batch_size rows or more), e.g. {example}",
                    example=checks.ITER_EXAMPLE,
                ),
            )


def _fresh_module(given, symbol, train_iter, context, seed, optimizer, params) -> Module:
    """A new module over ``symbol``, bound for training on ``train_iter``'s shapes, with a
    copy of ``given``'s weights when it has them, else Xavier's, and its optimizer."""
    initialized = isinstance(given, mx.mod.BaseModule) and given.params_initialized
    if context is None:
        context = getattr(given, "contexts", None) or mx.cpu()  # a mxlearn.Module's devices
    else:
        check_context(context, checks.CALLED)  # else the trial's Module() would be named
    trial = Module(
        with_logits(symbol),
        # frozen layers stay frozen in the trial (a student fine-tuning the top)
        fixed_param_names=given._fixed_param_names if isinstance(given, mx.mod.Module) else None,
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
