"""A fit run's plan: its callbacks, in order, and the arguments MXNet's own fit gets.

The order of the callbacks is the order every hook runs in: the recording first (it names each
batch and records each epoch's values before anyone reads them), then the live plot and the
watchdog, then the user's MXNet-style callbacks, then what acts on a finished epoch (checkpoint
saving, reports, early stopping), and the user's own Callback objects last.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from .._compat import mx
from ..checkpoint.random_state import RandomStreams
from ..errors import N_, InputError
from ..guards import data_values
from ..guards.arguments import as_list
from ..guards.batch_values import QueuedValueChecks
from ..guards.fit_arguments import check_callbacks
from ..guards.prefetching import PrefetchWatch
from ..metrics.deferred import leaf_metrics
from ..metrics.directions import facts_of
from ..metrics.recorder import TrainingRecorder
from ..states import WeightsFrom
from ..weights_digest import weights_digest
from .callback import Callback, CallbackList, RunContext, check_hook_names
from .data_checks import DataValueChecks, PrefetchChecks
from .epoch_report import EpochReporting, shown_without_plot
from .mxnet_callbacks import MXNetCallbacks
from .recording import MetricRecording
from .request import FitRequest
from .watchdog import DivergenceWatchdog


class MetricNamedTwice(InputError):
    says = N_(
        "mod.fit(): two metrics are named {names}: their values would be recorded as one "
        "curve, and a best epoch or early stopping could not tell them apart."
    )
    fix_says = N_("give each its own name, e.g. mx.metric.create('acc', name='{name}_2')")


class TwoMeaningsOfOneName(InputError):
    says = N_(
        "mod.fit(): training and validation both report '{name}', measured by "
        "{train_kind} and by {validation_kind}: the history, the plot and diagnose "
        "would read two different things as one curve."
    )
    fix_says = N_(
        "give the validation metric a name of its own, e.g. "
        "mx.metric.CustomMetric(feval, name='{name}_2')"
    )


# MXNet's fit parameters after train_data; the three callback slots are the CallbackList's.
SLOTS = ("batch_end_callback", "epoch_end_callback", "eval_end_callback")
MXNET_ARGUMENTS = tuple(
    name
    for name in inspect.signature(mx.mod.BaseModule.fit).parameters
    if name not in ("self", "train_data", *SLOTS)
)


@dataclass
class FitPlan:
    callbacks: CallbackList
    mxnet_arguments: dict
    data_checks: DataValueChecks  # how the training data's values are checked
    prefetch: PrefetchWatch  # the threads of PrefetchingIters among the iterators (or none)
    plotted: bool = False  # a callback shows every epoch's values (a live plot)

    @property
    def rows_checked(self) -> bool:
        """Every training row was checked before the run."""
        return self.data_checks.facts is not None

    @property
    def queued_checks(self):
        """The per-batch checks the module queues (an iterator whose rows are not in memory)."""
        return self.data_checks.queued

    @property
    def run(self) -> RunContext:
        return self.callbacks.run


def _by_name(metric) -> dict:
    """name -> metric, as the history names them; two of one name would share one curve."""
    leaves = leaf_metrics(metric)
    names = [leaf.name for leaf in leaves]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise MetricNamedTwice(names=twice, name=twice[0])
    return dict(zip(names, leaves))


def plan_fit(module, request: FitRequest, plot, saver, stopper, resumed) -> FitPlan:
    """The plan of one fit: ``request`` holds fit's checked arguments; ``plot``,
    ``saver``, ``stopper`` are the LivePlot, Checkpoint and EarlyStopping (or None);
    ``resumed`` the ResumeState it continues (or None)."""
    user_callbacks = check_callbacks(request.callbacks, Callback)
    for callback in user_callbacks:
        check_hook_names(callback)
    eval_data = request.eval_data
    run = _run_context(module, request, plot, resumed)
    recording = MetricRecording(
        run.recorder, request.eval_metric, request.validation_metric, request.train_data
    )
    data_checks = _data_checks(module, request.train_data, eval_data)
    callbacks: list[Callback] = [recording]
    if plot is not None:
        callbacks.append(plot)
    callbacks += shown_without_plot(request.live, user_callbacks)
    prefetch = PrefetchWatch([request.train_data, eval_data], "mod.fit()")
    if prefetch.threads:
        callbacks.append(PrefetchChecks(prefetch))
    callbacks += [data_checks, DivergenceWatchdog()]  # bad data is named before divergence
    # before checkpoint saving: a fresh run's seed is drawn when its first epoch is done
    callbacks.append(RandomStreams(resumed))
    mxnet_style = MXNetCallbacks(
        request.batch_end_callback, request.epoch_end_callback, request.eval_end_callback
    )
    if mxnet_style.functions():
        callbacks.append(mxnet_style)
    if saver is not None:
        callbacks.append(saver)  # a Checkpoint is its own callback
    reports = as_list(request.epoch_report_callback)
    if reports:
        callbacks.append(EpochReporting(reports))
    if stopper is not None:
        callbacks.append(stopper)
    # a LivePlot or EarlyStopping given both as fit's argument and in callbacks= runs once
    callbacks += [c for c in user_callbacks if not any(c is mine for mine in callbacks)]
    arguments = {name: getattr(request, name) for name in MXNET_ARGUMENTS}
    arguments["eval_metric"] = recording.train_metric
    arguments["validation_metric"] = recording.validation_metric
    plan = FitPlan(CallbackList(callbacks, run), arguments, data_checks, prefetch)
    plan.plotted = any(c.shows_epoch_values for c in callbacks)
    return plan


def _run_context(module, request: FitRequest, plot, resumed) -> RunContext:
    # A fresh history per fit (a resumed one continues the checkpoint's), also when the same
    # LivePlot draws several fits: the plot reads the run's recorder.
    recorder = TrainingRecorder(clock=plot.clock) if plot is not None else TrainingRecorder()
    if resumed is not None:
        recorder.history = resumed.history()
    validating = request.eval_data is not None
    train_metrics = _by_name(request.eval_metric)
    validation_metrics = _by_name(request.validation_metric) if validating else {}
    _check_one_meaning(train_metrics, validation_metrics)
    return RunContext(
        module,
        recorder,
        request.begin_epoch,
        request.num_epoch,
        has_validation=validating,
        train_data=request.train_data,
        resumed_from=resumed.prefix if resumed is not None else None,
        initializer=request.initializer,
        epoch=request.begin_epoch,
        train_metrics=train_metrics,
        validation_metrics=validation_metrics,
        given_weights=request.arg_params is not None
        or (
            module.weights_from in (WeightsFrom.GIVEN, WeightsFrom.TRAINED)
            and not request.force_init
        ),
        start_weights=_start_weights(module, request, resumed),
    )


def _start_weights(module, request: FitRequest, resumed) -> str | None:
    """The digest of the weights the run starts from, once per fit (a check compares it with a
    checkpoint's); None when fit's initializer makes them."""
    if module.params_initialized and not request.force_init:
        return weights_digest(*module.get_params())  # MXNet's init_params keeps them then
    if request.arg_params is not None:
        return weights_digest(request.arg_params, request.aux_params)
    if resumed is not None:
        return weights_digest(resumed.arg_params, resumed.aux_params)
    return None


def _check_one_meaning(train: dict, validation: dict) -> None:
    """A name both phases report is one curve, one subplot and one direction in the history:
    refused when training and validation measure it with metrics of different meaning (MXNet's
    accuracy for training, a custom error rate named 'accuracy' for validation)."""
    for name in train.keys() & validation.keys():
        if facts_of(train[name]) != facts_of(validation[name]):
            kinds = type(train[name]).__name__, type(validation[name]).__name__
            raise TwoMeaningsOfOneName(name=name, train_kind=kinds[0], validation_kind=kinds[1])


def _rules(module, data) -> dict:
    provided = data.provide_data, getattr(data, "provide_label", None)
    return data_values.rules_for(module.symbol, module.label_inputs, *provided)


def _data_checks(module, train_data, eval_data) -> DataValueChecks:
    """Every row of in-memory iterators checked now, before an epoch trains; for others, each
    batch's checks queued and read on the watchdog's schedule."""
    if eval_data is not None:
        rules = _rules(module, eval_data)
        data_values.check_source(eval_data, "validation", rules)
    rules = _rules(module, train_data)
    facts = data_values.check_source(train_data, "training", rules)
    if facts is not None:
        return DataValueChecks(facts=facts)
    names = [d.name for d in train_data.provide_data]
    return DataValueChecks(queued=QueuedValueChecks("training", names, rules))
