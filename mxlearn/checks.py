"""Self-checks for students: each prints a line starting with "OK" when the step did what it
should, else raises :class:`mxlearn.errors.CheckFailed` (an AssertionError) saying what is wrong.

Examples
--------
>>> import mxlearn
>>> from mxlearn import checks, mx
>>> X, y = mxlearn.datasets.synthetic_classification(num_samples=64)
>>> train_iter = mx.io.NDArrayIter(X, y, batch_size=32)
>>> mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4))
>>> mod.bind(train_iter.provide_data, train_iter.provide_label)
>>> mod.init_params(mx.init.Uniform(0.1)); mod.init_optimizer()
>>> batch = next(iter(train_iter))
>>> before = checks.snapshot(mod)
>>> mod.forward(batch, is_train=True); mod.backward(); mod.update()
>>> checks.parameters_changed(mod, before)
OK: all 4 parameter arrays changed in the update.
"""

from __future__ import annotations

import inspect

import numpy as np

from . import checkpoint as files
from . import network, rules
from ._compat import mx
from .answer_checks import (  # noqa: F401  (checks of answers to questions, re-exported here)
    epochs_kept,
    faster_learner,
    rebinds_counted,
)
from .boundary import public
from .errors import N_, CheckFailed, InputError
from .exercises import for_exercises
from .language import say
from .run_checks import (  # noqa: F401  (checks of a run's results, re-exported here)
    _ok,
    accepts_batch,
    best_epoch_recorded,
    checkpoints_kept,
    for_prediction_only,
    loss_ends_below,
    no_finding,
    on_devices,
    resumed_epochs,
    runs_compared,
    score_matches,
    stopped_early,
    trained_as,
    uses_kvstore,
)
from .work_checks import (  # noqa: F401  (checks of how the work was done, re-exported here)
    buckets_bound,
    cache_kept,
    callback_replayed,
    counts_by_hand,
    holds_layers,
    started_from_checkpoint,
    trained_by_hand,
)


class NotASnapshot(InputError):
    says = N_(
        "checks.parameters_changed(mod, before): before holds no copy of {names}, so it is "
        "not a snapshot of this module."
    )
    fix_code = "before = mxlearn.checks.snapshot(mod)   # before the step"


class ParametersUnchanged(CheckFailed):
    says = N_(
        "These parameters did not change: {names}. An update changes every trained "
        "weight unless the gradients were zero or no update ran."
    )
    fix_says = N_("per batch: mod.forward(batch, is_train=True); mod.backward(); mod.update()")


class NoGradientsKept(CheckFailed):
    says = N_("The module keeps no gradients: it was bound with for_training=False.")


class GradientsNotFinite(CheckFailed):
    says = N_("Gradients of {names} hold NaN or infinite values.")
    fix_says = N_("check the data for NaN/Inf and lower the learning rate")


class GradientsCutOff(CheckFailed):
    says = N_(
        "Every gradient is zero, and backward ran after the training forward: the "
        "loss passes no gradient back to any parameter."
    )
    fix_says = N_(
        "look between the loss and the parameters for a BlockGrad, a loss with "
        "grad_scale=0 or a constant loss: mx.viz.print_summary(mod.symbol)"
    )


class NoBackwardYet(CheckFailed):
    says = N_("Every gradient is zero: backward has not run since the last training forward.")
    fix_code = "mod.forward(batch, is_train=True); mod.backward()"


class WrongOutputShape(CheckFailed):
    says = N_(
        "The output '{name}' is shaped {shape}, not {expected}: (batch size, number of "
        "classes) comes from the data shapes given to bind and the last layer's "
        "num_hidden."
    )


class NoSuchCheckpoint(CheckFailed):
    says = N_("There is no checkpoint {epoch} of '{prefix}'; saved: {saved}.")


class BeginEpochRepeats(CheckFailed):
    says = N_(
        "Checkpoint {epoch} holds {epoch} completed epochs (0..{last}), so training "
        "goes on with epoch {epoch}: begin_epoch={begin} would repeat epochs."
    )
    fix_code = "begin_epoch={epoch}"


class BeginEpochSkips(CheckFailed):
    says = N_(
        "Checkpoint {epoch} holds {epoch} completed epochs (0..{last}), so training "
        "goes on with epoch {epoch}: begin_epoch={begin} would skip epochs."
    )
    fix_code = "begin_epoch={epoch}"


class NotLearned(CheckFailed):
    says = N_(
        "Accuracy {accuracy:.3f} is no better than always guessing the most common class "
        "({guessing:.3f}): the network has not learned. {hints}"
    )
    # which cause it is cannot be told from the scores; an experiment tells it
    fix_says = N_(
        "find the cause: train a new module with optimizer_params={{'learning_rate': 0.1}} for 3 "
        "or more epochs; if that too stays at guessing, the labels do not belong to their rows: "
        "shuffle X and y with one permutation, X[p], y[p]"
    )


class NotLearnedEnough(CheckFailed):
    says = N_("Accuracy {accuracy:.3f} beats guessing ({guessing:.3f}) but not {above}. {hints}")
    fix_says = N_("train more epochs (fit again with begin_epoch and a larger num_epoch)")


class NotThePredictions(CheckFailed):
    says = N_(
        "These are not the module's predictions for this iterator: in {rows} of the {total} "
        "rows the scores differ from what mod.predict gives now (row {first}, counting from 0). "
        "They must come from predict, on this module as it is."
    )


class WrongPredictionShape(CheckFailed):
    says = N_(
        "predict gave shape {shape}, not ({rows}, {classes}): one row per example "
        "({rows} in this iterator, without the padding of its last batch) and one "
        "column per class. A different row count means other data was predicted; a "
        "different column count, another network's last layer."
    )


class ParametersNotGiven(CheckFailed):
    says = N_(
        "The module's parameters are not the given ones: differing {differ}, not given "
        "{missing}. set_params copies them in; training or init_params afterwards "
        "changes them again."
    )
    fix_code = "mod.set_params(arg_params, aux_params)"


def snapshot(mod) -> dict:
    """Copies of the module's parameters now, to compare with after a step."""
    args, auxs = mod.get_params()
    return {k: v.asnumpy().copy() for k, v in {**args, **auxs}.items()}


def parameters_changed(mod, before: dict) -> None:
    """After ``update``: every trained parameter moved."""
    now = snapshot(mod)
    # a module loaded but never bound has trained nothing: all its parameters count as trained
    fixed = set(mod.executor_group.fixed_param_names or []) if mod.binded else set()
    trained = [k for k in mod.get_params()[0] if k not in fixed]
    if not set(trained) <= set(before):
        raise NotASnapshot(names=sorted(set(trained) - set(before)))
    same = [k for k in trained if np.array_equal(now[k], before[k])]
    if same:
        raise ParametersUnchanged(names=same)
    _ok(N_("all {count} parameter arrays changed in the update."), count=len(trained))


def gradients_computed(mod) -> None:
    """After ``backward``: gradients are finite and not all zero."""
    group = mod.executor_group
    grads = {
        name: devices[0].asnumpy()
        for name, devices in zip(group.param_names, group.grad_arrays)
        if devices and devices[0] is not None
    }
    if not grads:
        raise NoGradientsKept()
    bad = [n for n, g in grads.items() if not np.isfinite(g).all()]
    if bad:
        raise GradientsNotFinite(names=bad)
    if all(not g.any() for g in grads.values()):
        raise GradientsCutOff() if mod.backward_ran else NoBackwardYet()
    _ok(N_("gradients of {count} parameter arrays are finite and not all zero."), count=len(grads))


def output_shape(mod, expected: tuple) -> None:
    """After ``bind`` (or ``forward``): the first output has the shape you expect."""
    name, shape = mod.output_shapes[0]
    if tuple(shape) != tuple(expected):
        raise WrongOutputShape(name=name, shape=tuple(shape), expected=tuple(expected))
    _ok(N_("the output '{name}' is shaped {shape}."), name=name, shape=tuple(shape))


def begin_epoch_matches(prefix: str, checkpoint_epoch: int, begin_epoch: int) -> None:
    """Before resuming: ``begin_epoch`` continues right after checkpoint ``checkpoint_epoch``."""
    saved = files.saved_epochs(prefix)
    if checkpoint_epoch not in saved:
        raise NoSuchCheckpoint(epoch=checkpoint_epoch, prefix=prefix, saved=saved)
    if begin_epoch != checkpoint_epoch:
        kind = BeginEpochRepeats if begin_epoch < checkpoint_epoch else BeginEpochSkips
        raise kind(epoch=checkpoint_epoch, last=checkpoint_epoch - 1, begin=begin_epoch)
    _ok(
        N_("begin_epoch={begin} continues right after checkpoint {epoch}."),
        begin=begin_epoch,
        epoch=checkpoint_epoch,
    )


def _labels(eval_iter) -> np.ndarray:
    """Every label of an iterator, without the padding of its last batch."""
    eval_iter.reset()
    found = []
    for batch in eval_iter:
        labels = batch.label[0].asnumpy()
        found.append(labels[: len(labels) - (batch.pad or 0)])
    eval_iter.reset()
    return np.concatenate(found)


def learned(mod, eval_iter, above: float | None = None) -> None:
    """After training: accuracy on ``eval_iter`` beats always guessing the most common class
    (and is above ``above`` when given)."""
    labels = _labels(eval_iter)
    guessing = np.bincount(labels.astype(np.int64)).max() / len(labels)
    accuracy = dict(mod.score(eval_iter, "acc"))["accuracy"]
    hints = say(
        "Common causes: a learning rate too high (the network collapses onto one class) or too "
        "low (it crawls), too few epochs, or labels that do not belong to their rows."
    )
    if accuracy <= guessing:
        raise NotLearned(accuracy=accuracy, guessing=guessing, hints=hints)
    if above is not None and accuracy <= above:
        raise NotLearnedEnough(accuracy=accuracy, guessing=guessing, above=above, hints=hints)
    said = N_("accuracy {accuracy:.3f} beats guessing the most common class ({guessing:.3f}).")
    if above is not None:
        said = N_(
            "accuracy {accuracy:.3f} beats guessing the most common class ({guessing:.3f}) and is "
            "above {above}."
        )
    _ok(said, accuracy=accuracy, guessing=guessing, above=above)


def prediction_shape(predictions, eval_iter, num_classes: int) -> None:
    """After ``predict``: one row per example of ``eval_iter`` (no padding), one column per
    class."""
    rows = len(_labels(eval_iter))
    shape = tuple(predictions.shape)
    if shape != (rows, num_classes):
        raise WrongPredictionShape(shape=shape, rows=rows, classes=num_classes)
    _ok(
        N_("{rows} rows (one per example) of {classes} class scores."),
        rows=rows,
        classes=num_classes,
    )


def predictions_of(predictions, mod, eval_iter) -> None:
    """``predictions`` are what ``mod.predict(eval_iter)`` gives (to float32 rounding)."""
    expected = mod.predict(eval_iter).asnumpy()
    got = predictions.asnumpy() if isinstance(predictions, mx.nd.NDArray) else predictions
    got = np.asarray(got, dtype=np.float64)
    if got.shape != expected.shape:
        rows = len(_labels(eval_iter))
        raise WrongPredictionShape(shape=got.shape, rows=rows, classes=expected.shape[1])
    wrong = ~np.isclose(got, expected, rtol=1e-4, atol=1e-6).all(axis=1)
    if wrong.any():
        facts = dict(rows=int(wrong.sum()), total=len(wrong), first=int(np.argmax(wrong)))
        raise NotThePredictions(**facts)
    _ok(N_("they are the module's predictions for every row."))


def parameters_equal(mod, arg_params: dict, aux_params: dict | None = None) -> None:
    """After ``set_params`` or a load: the module holds exactly these parameters."""
    now = snapshot(mod)
    given = {**arg_params, **(aux_params or {})}
    # Module(label_names=None), MXNet's predictor idiom, holds the label as a parameter
    labels = {li.name for li in network.label_inputs(mod.symbol)}
    missing = sorted(set(now) - set(given) - labels)
    differ = sorted(k for k in given if k in now and not np.array_equal(now[k], given[k].asnumpy()))
    if missing or differ:
        raise ParametersNotGiven(differ=differ, missing=missing)
    _ok(N_("the module holds exactly these {count} parameter arrays."), count=len(given))


# Every check is a public call, its arguments declared once by name for all the checks of
# this file. The checks of a run's results (run_checks) read what they are given by its
# attributes, so they have the boundary only. Rules inside for_exercises: a wrong value given
# for an exercise fails its check (a verdict the student reads) instead of stopping the cell.
ARGUMENTS = dict(
    mod=rules.instance(mx.mod.BaseModule, N_("a module"), "mod = mxlearn.Module(net)"),
    eval_iter=rules.data_iter("eval_iter=val_iter"),
    before=rules.mapping("before = mxlearn.checks.snapshot(mod)"),
    expected=rules.instance((tuple, list), N_("a shape such as (32, 26)"), "expected=(32, 26)"),
    predictions=rules.instance(
        (mx.nd.NDArray, np.ndarray), N_("an array"), "predictions = mod.predict(val_iter)"
    ),
    num_classes=rules.whole(1, "num_classes=26"),
    above=rules.number("above=0.5", minimum=0, maximum=1, optional=True),
    prefix=rules.path("prefix='runs/mlp'"),
    checkpoint_epoch=rules.whole(0, "checkpoint_epoch=5"),
    begin_epoch=rules.whole(0, "begin_epoch=5"),
    arg_params=rules.arrays("arg_params, aux_params = mod.get_params()"),
    aux_params=rules.arrays("arg_params, aux_params = mod.get_params()", optional=True),
    train_iter=rules.data_iter("train_iter=my_train"),
    epochs=rules.whole(1, "epochs=3"),
    epoch=rules.whole(0, "epoch=5"),
    op=rules.text("op='Dropout'"),
    count=rules.whole(1, "count=2"),
    cache_size=rules.whole(0, "cache_size=2"),
    function=rules.function("function=accuracy_by_hand"),
    bmod=rules.instance(
        mx.mod.BaseModule,
        N_("a module"),
        "bmod = mx.mod.BucketingModule(sym_gen, default_bucket_key=train_iter.default_bucket_key)",
    ),
    data=rules.having(
        ("default_bucket_key", "provide_data", "reset"),
        N_("an iterator of buckets that has a default_bucket_key, such as ShapeVaryingIter"),
        "data=train_iter",
    ),
    network=rules.instance(
        mx.sym.Symbol, N_("a network (a Symbol)"), "network=mxlearn.models.conv_net(num_classes=4)"
    ),
)
CHECK_FILES = (
    "mxlearn.checks",
    "mxlearn.run_checks",
    "mxlearn.work_checks",
    "mxlearn.answer_checks",
)
for _name, _check in list(globals().items()):
    if callable(_check) and not _name.startswith("_") and not isinstance(_check, type):
        if _check.__module__ in CHECK_FILES:
            _declared = {}
            if _check.__module__ in ("mxlearn.checks", "mxlearn.work_checks"):
                _names = inspect.signature(_check).parameters
                _declared = {p: ARGUMENTS[p] for p in _names if p in ARGUMENTS}
            _guarded = public(f"checks.{_name}()", **_declared)(_check)
            globals()[_name] = _guarded if _name == "snapshot" else for_exercises(_guarded)
