"""The one way into a training run: ``Callback`` hooks, called through a ``CallbackList``, which
MXNet's three callback slots get and which turns each slot call into the hooks, in the order of
its callbacks; they share a :class:`RunContext` (docs/architecture.md draws the sequence).

Raising :class:`StopTraining` in a hook ends training after the epoch that is running: the
other callbacks still get that hook, the epoch finishes (validation, ``on_epoch_done``, its
checkpoint), then the run ends with ``run.outcome == 'stopped'``. Raised in ``on_train_begin``
it ends the run before the first batch. Any other exception ends the run at once
(``run.outcome == 'failed'``); ``on_train_end`` still reaches every callback.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..boundary import warn
from ..errors import N_, ArgumentTypeError, Signal, did_you_mean
from ..language import say
from ..metrics.directions import direction, remember_stated, resolve_name
from ..states import Outcome


class NotAHook(ArgumentTypeError):
    says = N_("{method} is not a hook, so fit would never call it. {suggestion}")
    fix_says = N_("name the method after one of the hooks: {hooks}")


class StopTraining(Signal):
    """Raise it inside a fit callback to end training after this epoch; fit catches it.

    Its message (``StopTraining('validation accuracy reached 0.8')``) is printed when fit ends
    and kept in ``run.stop_reason``.
    """


class Callback:
    """Base of everything that takes part in a ``fit`` run; override the hooks you need.

    ``shows_epoch_values = True`` on a callback that shows every epoch's values itself (a live
    plot): fit then leaves out MXNet's own per-epoch log lines.

    Every hook gets the run's :class:`RunContext` (``run.module``, ``run.history``,
    ``run.epoch``, ...). Hooks run on the training thread: a slow hook slows training.

    Examples
    --------
    >>> import logging, mxlearn
    >>> from mxlearn import mx
    >>> X, y = mxlearn.datasets.synthetic_classification(num_samples=128)
    >>> train_iter = mx.io.NDArrayIter(X[:96], y[:96], batch_size=32)
    >>> val_iter = mx.io.NDArrayIter(X[96:], y[96:], batch_size=32)
    >>> class EpochPrinter(mxlearn.Callback):
    ...     def on_epoch_done(self, run, epoch):
    ...         print(f"epoch {epoch}: validation accuracy {run.history.last('accuracy', 'validation'):.2f}")
    >>> quiet = logging.getLogger("quiet")  # only the callback's lines, not MXNet's log
    >>> mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4), logger=quiet)
    >>> mod.fit(train_iter, eval_data=val_iter, num_epoch=2, callbacks=[EpochPrinter()])
    epoch 0: validation accuracy ...
    epoch 1: validation accuracy ...
    """

    shows_epoch_values = False

    def on_train_begin(self, run: RunContext) -> None:
        """Training starts (``run.begin_epoch`` is the first epoch it trains). MXNet's fit binds
        the module and initializes its parameters and optimizer after this hook."""

    def on_batch_end(self, run: RunContext, batch: int) -> None:
        """Batch ``batch`` (counted from 0 in each epoch) of epoch ``run.epoch`` is trained."""

    def on_epoch_end(self, run: RunContext, epoch: int) -> None:
        """The training pass of ``epoch`` is done; validation has not run yet."""

    def on_validation_end(self, run: RunContext, epoch: int) -> None:
        """The validation values of ``epoch`` are in ``run.history`` (fit with eval_data)."""

    def on_epoch_done(self, run: RunContext, epoch: int) -> None:
        """Everything for ``epoch`` is done, validation included: values are final."""

    def on_interrupt(self, run: RunContext) -> None:
        """The user interrupted training; ``on_train_end`` follows."""

    def on_train_end(self, run: RunContext) -> None:
        """The run ended: ``run.outcome`` is 'completed', 'stopped', 'interrupted' or 'failed'."""


HOOKS = tuple(name for name in vars(Callback) if name.startswith("on_"))
# A stop asked for during an epoch takes effect once the epoch is done; at the start, at once.
_STOPPING_HOOKS = ("on_train_begin", "on_epoch_done")


def _overrides(callback: Callback, hook: str) -> bool:
    """The callback has its own ``hook`` (in its class, or set on the object itself)."""
    method = getattr(callback, hook)
    return getattr(method, "__func__", method) is not getattr(Callback, hook)


def check_hook_names(callback: Callback) -> None:
    """A misspelled hook (``on_epoch_ends``) would never be called: refuse it instead."""
    for name in dir(type(callback)):
        if name.startswith("on_") and name not in HOOKS:
            method, suggestion = f"{type(callback).__name__}.{name}", did_you_mean(name, HOOKS)
            raise NotAHook(method=method, suggestion=suggestion, hooks=", ".join(HOOKS))


def _name(method) -> str:
    owner, name = getattr(method, "__self__", None), getattr(method, "__name__", repr(method))
    return f"{type(owner).__name__}.{name}" if owner is not None else name


@dataclass
class RunContext:
    """What the callbacks of one ``fit`` run share."""

    module: object  # the Module being trained
    recorder: object  # the TrainingRecorder that fills the history (counters, progress)
    begin_epoch: int
    num_epoch: int  # the epoch to stop before
    has_validation: bool
    train_data: object = None  # the training iterator (checkpoints save its order)
    resumed_from: str | None = None  # the prefix of the checkpoint this run continues
    initializer: object = None  # fit's initializer (a divergence probe starts from it)
    epoch: int = 0  # the epoch being trained (or just trained)
    batch: int = -1  # the latest batch's index within its epoch
    # The loss is past the divergence limit now: these weights should not become a checkpoint.
    weights_suspect: bool = False
    last_checkpoint: tuple[str, int] | None = None  # (prefix, epochs completed) of the newest
    # MXNet's generator is reseeded from it before each epoch after a run's first (RandomStreams)
    run_seed: int | None = None
    # data_values.DataFacts when every training row was checked before the run (else None)
    data_facts: object = None
    outcome: Outcome | None = None  # how the run ended, set before on_train_end
    stop_reason: str | None = None  # the first StopTraining's message
    # the run starts from weights fit did not initialise (arg_params, set or trained before)
    given_weights: bool = False
    start_weights: str | None = None  # their weights_digest (None: the initializer's)
    # name -> metric object, as the history names them: what training and validation measure
    train_metrics: dict = field(default_factory=dict)
    validation_metrics: dict = field(default_factory=dict)
    # MXNet's own arguments of the slot being dispatched, for callbacks that pass them on
    mxnet_args: tuple = field(default=(), repr=False)

    @property
    def nothing_trained(self) -> bool:
        """No batch of this run has been trained (so far)."""
        return self.batch == -1 and self.epoch == self.begin_epoch

    @property
    def history(self):
        """The MetricHistory: every value so far (a resumed run's earlier ones too)."""
        return self.recorder.history

    def judged_metric(self, spec: str | None, higher_is_better, called: str) -> tuple[str, bool]:
        """The run's name of the validation metric ``spec`` means (the first when None), and
        whether higher is better; a custom metric's stated direction is kept in the history."""
        measured = self.validation_metrics
        name = resolve_name(spec, measured, called) if spec is not None else next(iter(measured))
        is_higher = direction(name, measured[name], higher_is_better, called)
        remember_stated(self.history, name, measured[name], is_higher)
        return name, is_higher


class CallbackList:
    """The callbacks of one run, in order, and the three functions MXNet's fit slots get."""

    def __init__(self, callbacks: list[Callback], run: RunContext) -> None:
        self.callbacks = list(callbacks)
        self.run = run
        # Per hook, the callbacks that override it: a batch's dispatch then costs no call to
        # the base class's empty methods.
        self._overriding = {
            hook: [getattr(c, hook) for c in self.callbacks if _overrides(c, hook)]
            for hook in HOOKS
        }

    def dispatch(self, hook: str, *args) -> None:
        """Call ``hook`` on every callback. A StopTraining is remembered, and raised once all
        had their turn at the start of the run or at the end of an epoch."""
        for method in self._overriding[hook]:
            try:
                method(self.run, *args)
            except StopTraining as stop:
                self.request_stop(str(stop))
            except StopIteration as error:
                # MXNet's fit reads an ended epoch from StopIteration: a callback's must not
                # pass for one (PEP 479 does the same for generators).
                raise RuntimeError(
                    say("{callback} raised StopIteration", callback=_name(method))
                ) from error
        if self.run.stop_reason is not None and hook in _STOPPING_HOOKS:
            raise StopTraining(self.run.stop_reason)

    def request_stop(self, reason: str) -> None:
        if self.run.stop_reason is None:
            self.run.stop_reason = reason or say("Training stopped by a callback (StopTraining).")

    def dispatch_to_all(self, hook: str) -> list[Exception]:
        """For the run's last hooks (interrupt, train end): every callback gets its turn even
        when one fails; the errors are returned in the order they happened."""
        errors = []
        ended_well = self.run.outcome in (Outcome.COMPLETED, Outcome.STOPPED)
        for method in self._overriding[hook]:
            try:
                method(self.run)
            except StopTraining:
                pass  # the run is ending already
            except Exception as error:
                # the loop raises the first one of a run that ended well; the rest are told
                if errors or not ended_well:
                    warn(
                        say(
                            "{callback} failed while fit was ending: {error_type}: {error}",
                            callback=_name(method),
                            error_type=type(error).__name__,
                            error=error,
                        )
                    )
                errors.append(error)
        return errors

    # ---------------------------------------------------------------- MXNet's slots
    def slots(self) -> dict:
        """fit's keyword arguments for MXNet's callback slots: each slot gets one function."""
        after_training = self.epoch_end if not self.run.has_validation else self._epoch_end_only
        return {
            "batch_end_callback": self.batch_end,
            "epoch_end_callback": after_training,
            "eval_end_callback": self.eval_end,
        }

    def batch_end(self, param) -> None:
        self.run.epoch, self.run.batch, self.run.mxnet_args = param.epoch, param.nbatch, (param,)
        self.dispatch("on_batch_end", param.nbatch)

    def _epoch_end_only(self, epoch, symbol, arg_params, aux_params) -> None:
        # With eval_data, the epoch is done only after validation (eval_end below).
        self.run.epoch, self.run.mxnet_args = epoch, (epoch, symbol, arg_params, aux_params)
        self.dispatch("on_epoch_end", epoch)

    def epoch_end(self, epoch, symbol, arg_params, aux_params) -> None:
        self._epoch_end_only(epoch, symbol, arg_params, aux_params)
        self.dispatch("on_epoch_done", epoch)

    def eval_end(self, param) -> None:
        self.run.epoch, self.run.mxnet_args = param.epoch, (param,)
        self.dispatch("on_validation_end", param.epoch)
        self.dispatch("on_epoch_done", param.epoch)
