"""Checks of what a run or a step produced: a score computed by hand, the checkpoints kept, a
batch a module accepts, the devices and kvstore it trained with, where training stopped or
resumed, what a callback recorded. ``mxlearn.checks`` re-exports them.
"""

from __future__ import annotations

import numpy as np

from .checkpoint import files, names
from .errors import N_, CheckFailed, InputError, MXLearnError, did_you_mean
from .language import say
from .metrics.findings import KINDS, kind_title
from .metrics.history import MetricHistory, NotInHistory


class ScoreDiffers(CheckFailed):
    says = N_(
        "You got {value}, but scoring '{name}' on these examples gives {expected:.4f}. "
        "A different number comes from other examples (the padding of the last batch "
        "counted, or another iterator), another metric, or a module trained since."
    )


class OtherCheckpointsKept(CheckFailed):
    says = N_(
        "The complete checkpoints of '{prefix}' on disk are {saved}, not {expected}. "
        "period says after how many epochs one is saved, keep how many of the newest "
        "stay."
    )


class BatchRefused(CheckFailed):
    says = N_("The module refuses this batch: {reason}")


class WrongBatchOutput(CheckFailed):
    says = N_("The module takes the batch but gives shape {shape}, not ({rows}, {classes}).")


class OtherDevices(CheckFailed):
    says = N_(
        "The module is bound on {bound}, not on {expected}: the devices come from "
        "Module(..., context=[...]), and a module not yet bound has none."
    )


class TrackerHooksNothing(CheckFailed):
    says = N_(
        "The tracker is a {kind} that overrides none of mxlearn.Callback's hooks, so fit "
        "never asked it anything: its values were not recorded by a callback."
    )


class OtherBestEpoch(CheckFailed):
    says = N_(
        "The callback holds best_epoch={epoch} and best_accuracy={accuracy}, but the "
        "run's best validation accuracy was {best:.4f}, in epoch {right}. The hook that "
        "runs after each epoch's validation, with the value in run.history, must keep "
        "the larger one and its epoch; fit must get the callback (callbacks=[...])."
    )


class NotAnMxlearnModule(CheckFailed):
    says = N_(
        "This is a {kind}: the check reads what an mxlearn.Module records while it trains (its "
        "history, its updates), which MXNet's own module does not keep."
    )
    fix_code = "mod = mxlearn.Module(net, context=ctx)"


class NoHistory(CheckFailed):
    says = N_("The module has no history yet: it has not been trained with fit.")
    fix_code = "mod.fit(train_iter, eval_data=val_iter, ...)"


class NoValidationAccuracy(CheckFailed):
    says = N_("The module's history holds no validation accuracy: fit ran without eval_data.")
    fix_code = "mod.fit(train_iter, eval_data=val_iter, ...)"


class NoValidationLoss(CheckFailed):
    says = N_(
        "The module's history holds no validation {metric}: fit ran without eval_data, or "
        "without {metric} among its eval_metric."
    )
    fix_code = "mod.fit(train_iter, eval_data=val_iter, eval_metric=['acc', '{metric}'], ...)"


class NotForPredictionOnly(CheckFailed):
    says = N_(
        "The module is {condition}: a module for predictions only is bound without label "
        "shapes and with for_training=False (it keeps no gradients)."
    )


class NotStoppedEarly(CheckFailed):
    says = N_(
        "Training ran {count} epochs and its best validation accuracy came in epoch "
        "{best}, {after} epochs before the end: stopping early after {patience} epochs "
        "without a better one ends {patience} epochs after the best, before "
        "num_epoch={num_epoch}."
    )


class NeverStopped(NotStoppedEarly):
    says = N_(
        "Training ran every epoch it was given ({count}): nothing stopped it. Stopping early "
        "after {patience} epochs without a better validation accuracy ends the run by itself, "
        "before num_epoch={num_epoch}."
    )


class NotEveryEpoch(CheckFailed):
    says = N_(
        "The run's validation accuracy holds epochs {first} to {last}, not every epoch from 0: "
        "the exercise trains a new module by one fit from the first epoch."
    )
    fix_says = N_("a new module, and fit without begin_epoch")


class OtherEpochsTrained(CheckFailed):
    says = N_(
        "This module's history holds training epochs {trained}, not {expected}: a run "
        "resumed after checkpoint {begin} trains epochs {begin} to {last} in a module of "
        "its own."
    )


class OtherKvstore(CheckFailed):
    says = N_(
        "The module's gradients were summed by {used}, not by a kvstore of kind '{kind}': "
        "fit takes the kind as kvstore=."
    )


class NotAComparison(CheckFailed):
    says = N_("This is a {kind}, not what mxlearn.compare returns.")


class OtherRunsCompared(CheckFailed):
    says = N_(
        "The comparison holds runs trained with {used}, not {expected}: compare the "
        "modules themselves (their settings come with them)."
    )


class OptimizerNotKnown(CheckFailed):
    says = N_(
        "Run {number} of the comparison holds no optimizer settings, so the check cannot tell "
        "which optimizer trained it: an optimizer given as an object (mxlearn does not read its "
        "name and settings), or a history compared without its module."
    )
    fix_code = "fit(..., optimizer='adam', optimizer_params={{'learning_rate': 0.003}})"


class OtherRunSettings(CheckFailed):
    says = N_(
        "Run {number} of the comparison ({optimizer}) {problem}: a comparison shows what one "
        "change does only when the runs differ in nothing else."
    )


class LossEndsHigher(CheckFailed):
    says = N_(
        "The run's validation {metric} ended at {last:.3f} (epoch {epoch}), not below {value}; "
        "its lowest was {lowest:.3f}, in epoch {lowest_epoch}."
    )


class OtherTraining(CheckFailed):
    says = N_(
        "The run trained {epochs} epochs of {rows} rows each, not {num_epoch} epochs of "
        "{want_rows}: a comparison with the run of the notebook holds when only what the "
        "exercise changes is changed."
    )


class NoSuchFindingKind(InputError):
    says = N_("There is no finding of kind {kind!r}.")


class FindingShown(CheckFailed):
    says = N_("The curves still show it: {finding}")


def history_of(mod, fitted: bool = True):
    """The history an mxlearn module keeps (None before a fit, unless ``fitted``)."""
    history = getattr(mod, "history", None)
    if isinstance(history, MetricHistory):
        return history
    if not hasattr(mod, "history"):  # MXNet's own module keeps none
        raise NotAnMxlearnModule(kind=type(mod).__name__)
    if fitted:
        raise NoHistory()
    return None


def _ok(template: str, **fields) -> None:
    print(say("OK: {text}", text=say(template, **fields)))


def score_matches(value, mod, eval_iter, metric) -> None:
    """A number (or ``score``'s list of pairs) you computed equals ``mod.score(eval_iter,
    metric)``: the check scores again and compares."""
    expected = mod.score(eval_iter, metric)
    if isinstance(value, list):
        value = dict(value).get(expected[0][0])
    if value is None or not np.isclose(float(value), expected[0][1], rtol=0, atol=1e-6):
        raise ScoreDiffers(value=value, name=expected[0][0], expected=expected[0][1])
    _ok(N_("{name} = {value:.4f}, as score gives it."), name=expected[0][0], value=expected[0][1])


def checkpoints_kept(prefix: str, epochs: list) -> None:
    """The checkpoints left on disk under ``prefix`` are exactly those of ``epochs``."""
    # complete checkpoints whose files verify: a .params file alone (or an empty one) is none
    saved = [e for e in names.manifested_epochs(prefix) if files.verifies(prefix, e)]
    if saved != sorted(epochs):
        raise OtherCheckpointsKept(prefix=prefix, saved=saved, expected=sorted(epochs))
    _ok(N_("checkpoints {saved} of '{prefix}' are on disk."), saved=saved, prefix=prefix)


def accepts_batch(mod, batch, num_classes: int) -> None:
    """The module takes ``batch`` in a prediction forward and gives one row per example."""
    rows = batch.data[0].shape[0]
    try:
        mod.forward(batch, is_train=False)
    except MXLearnError as refused:
        raise BatchRefused(reason=refused.problem, fix=refused.fix) from None
    shape = tuple(mod.get_outputs()[0].shape)
    if shape != (rows, num_classes):
        raise WrongBatchOutput(shape=shape, rows=rows, classes=num_classes)
    _ok(
        N_("a batch shaped {shape} goes through: {rows} rows of {classes} class scores."),
        shape=tuple(batch.data[0].shape),
        rows=rows,
        classes=num_classes,
    )


def on_devices(mod, contexts: list) -> None:
    """The module is bound on exactly these devices (it splits each batch across them)."""
    bound = list(mod.executor_group.contexts) if mod.binded else []
    if bound != list(contexts):
        raise OtherDevices(bound=bound, expected=list(contexts))
    _ok(N_("bound on {count} devices: {bound}."), count=len(bound), bound=bound)


def best_epoch_recorded(tracker, mod) -> None:
    """A callback's ``best_epoch`` and ``best_accuracy`` are the run's best validation epoch."""
    if not overrides_a_hook(tracker):
        raise TrackerHooksNothing(kind=type(tracker).__name__)
    epochs, values = _validation_accuracy(mod)
    best = max(values)
    got_epoch = getattr(tracker, "best_epoch", None)
    got = getattr(tracker, "best_accuracy", None)
    right = [e for e, v in zip(epochs, values) if v == best]
    if got_epoch not in right or got is None or not np.isclose(float(got), best):
        raise OtherBestEpoch(epoch=got_epoch, accuracy=got, best=best, right=right[0])
    _ok(N_("the callback found the best epoch, {epoch} ({best:.4f})."), epoch=got_epoch, best=best)


def _validation_accuracy(mod) -> tuple[list, list]:
    history = history_of(mod)
    if "accuracy" not in history.metrics():  # series would refuse the name
        raise NoValidationAccuracy()
    epochs, values = history.series("accuracy", "validation", "epoch")
    if not values:
        raise NoValidationAccuracy()
    return epochs, values


def overrides_a_hook(tracker) -> bool:
    # imported here: mxlearn.checks is imported by mxlearn before its training package
    from .training.callback import Callback

    hooks = [name for name in vars(Callback) if name.startswith("on_")]
    return isinstance(tracker, Callback) and any(
        getattr(type(tracker), hook) is not getattr(Callback, hook) for hook in hooks
    )


def for_prediction_only(mod) -> None:
    """The module is bound for predictions: no labels, no gradients."""
    if not mod.binded or mod.for_training or mod.label_shapes:
        condition = say("not bound")
        if mod.binded:
            condition = say(
                "bound with for_training={training} and label shapes {labels}",
                training=mod.for_training,
                labels=mod.label_shapes,
            )
        raise NotForPredictionOnly(condition=condition)
    _ok(N_("bound for predictions only: no labels, no gradients."))


def stopped_early(mod, patience: int, num_epoch: int) -> None:
    """fit stopped by itself: ``patience`` epochs after the best validation accuracy, before
    ``num_epoch`` or by an early stopping of that patience in the last epoch."""
    epochs, values = _validation_accuracy(mod)
    if epochs != list(range(len(epochs))):
        raise NotEveryEpoch(first=epochs[0], last=epochs[-1])
    best = epochs[int(np.argmax(values))]
    count, after = epochs[-1] + 1, epochs[-1] - best
    history = history_of(mod)
    # an early stopping of this patience judged the validation accuracy in this fit
    watched = (patience, "accuracy") in history.watched_with and count == num_epoch
    if not history.stops:
        if watched and after < patience:
            _ok(
                N_(
                    "early stopping (patience {patience}) watched all {count} epochs: validation "
                    "improved within every {patience}, so it had no cause to stop."
                ),
                patience=patience,
                count=count,
            )
            return
        # a run of fewer epochs whose best came 2 before its end, or of every epoch
        raise NeverStopped(count=count, patience=patience, num_epoch=num_epoch)
    if count >= num_epoch and not watched:  # stopped in the last epoch, by no early stopping
        raise NeverStopped(count=count, patience=patience, num_epoch=num_epoch)
    if after != patience:
        raise NotStoppedEarly(
            count=count, best=best, after=after, patience=patience, num_epoch=num_epoch
        )
    _ok(
        N_("training stopped after epoch {last}, {patience} epochs after the best ({best})."),
        last=epochs[-1],
        patience=patience,
        best=best,
    )


def resumed_epochs(mod, begin_epoch: int, num_epoch: int) -> None:
    """The module trained exactly the epochs from ``begin_epoch`` up to ``num_epoch``."""
    trained = sorted({r.epoch for r in history_of(mod).records if r.phase == "train"})
    expected = list(range(begin_epoch, num_epoch))
    if trained != expected:
        last = num_epoch - 1
        raise OtherEpochsTrained(trained=trained, expected=expected, begin=begin_epoch, last=last)
    _ok(N_("it trained epochs {first} to {last}."), first=begin_epoch, last=num_epoch - 1)


def uses_kvstore(mod, kind: str) -> None:
    """The module's gradients were summed by a kvstore of this kind ('local', 'device')."""
    used = mod.kvstore_type
    if used != kind:
        raise OtherKvstore(used=repr(used) if used else say("no kvstore"), kind=kind)
    _ok(N_("gradients summed by the kvstore '{kind}'."), kind=kind)


def runs_compared(comparison, optimizers: list, learning_rates=None, num_epoch=None) -> None:
    """``mxlearn.compare`` was given runs trained with these optimizers, in any order (with
    these learning rates, in the order of ``optimizers``, each for ``num_epoch`` epochs with
    validation, when given)."""
    runs = getattr(comparison, "runs", None)
    if runs is None:
        raise NotAComparison(kind=type(comparison).__name__)
    for number, run in enumerate(runs, 1):
        if run.settings is None:
            raise OptimizerNotKnown(number=number)
    used = [(run.settings or {}).get("optimizer") for run in runs]
    names = [_lower(o) for o in optimizers]
    if sorted(map(str, map(_lower, used))) != sorted(names):  # MXNet reads any case
        raise OtherRunsCompared(used=used, expected=list(optimizers))
    rates = dict(zip(names, learning_rates or [None] * len(names)))
    for number, (run, name) in enumerate(zip(runs, used), 1):
        problem = _other_setting(run, rates[_lower(name)], num_epoch)
        if problem:
            raise OtherRunSettings(number=number, optimizer=name, problem=problem)
    _ok(N_("{count} runs compared: {used}."), count=len(runs), used=", ".join(used))


def _lower(name):
    return name.lower() if isinstance(name, str) else name


def _other_setting(run, rate, num_epoch) -> str | None:
    """What in a compared run differs from what was asked (None: nothing)."""
    given = ((run.settings or {}).get("params") or {}).get("learning_rate")
    if rate is not None and (given is None or not np.isclose(given, rate)):
        return say("was trained at learning rate {given}, not {rate}", given=given, rate=rate)
    trained = sorted({r.epoch for r in run.history.records if r.phase == "train"})
    if num_epoch is not None and len(trained) != num_epoch:
        return say(
            "trained {count} epochs, not {num_epoch}", count=len(trained), num_epoch=num_epoch
        )
    if not any(r.phase == "validation" for r in run.history.records):
        return say("has no validation values: fit ran without eval_data")
    return None


def trained_as(mod, num_epoch: int, rows: int) -> None:
    """The module's fit trained ``num_epoch`` epochs from epoch 0, of ``rows`` rows each."""
    records = history_of(mod).records
    ends = {r.epoch: r.samples for r in records if (r.phase, r.kind) == ("train", "epoch")}
    first = ends.get(0, 0)  # samples are counted from the run's start: epoch 0's are its rows
    if len(ends) != num_epoch or first != rows:
        facts = dict(epochs=len(ends), rows=first, num_epoch=num_epoch, want_rows=rows)
        raise OtherTraining(**facts)
    _ok(N_("{num_epoch} epochs of {rows} rows."), num_epoch=num_epoch, rows=rows)


def loss_ends_below(mod, metric: str, value: float) -> None:
    """The validation loss ``metric`` (e.g. 'ce') of the run's last epoch is below ``value``."""
    try:
        epochs, values = history_of(mod).series(metric, "validation", "epoch")
    except NotInHistory:  # the run measured no such metric
        values = []
    if not values:
        raise NoValidationLoss(metric=metric)
    if not values[-1] < value:
        lowest = int(np.nanargmin(values))
        facts = dict(metric=metric, last=values[-1], epoch=epochs[-1], value=value)
        raise LossEndsHigher(**facts, lowest=values[lowest], lowest_epoch=epochs[lowest])
    _ok(
        N_("validation {metric} ended at {last:.3f}, below {value}."),
        metric=metric,
        last=values[-1],
        value=value,
    )


def no_finding(mod, kind: str) -> None:
    """``mod.history.diagnose()`` reports no finding of this kind (e.g. 'overfitting')."""
    if kind not in KINDS:  # a misspelt kind would never be found: the check would pass
        raise NoSuchFindingKind(kind=kind, fix=did_you_mean(kind, KINDS))
    found = [f for f in history_of(mod).diagnose() if f.kind == kind]
    if found:
        raise FindingShown(finding=found[0].text)
    _ok(N_("no {kind} in the curves."), kind=kind_title(kind))
