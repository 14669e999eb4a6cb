"""Self-checks for students: call one after a step to confirm it worked, or learn what did not.

Each check prints one line starting with "OK" when the step did what it should, and raises
:class:`mxlearn.errors.CheckFailed` (an AssertionError) saying what is wrong otherwise.

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

import numpy as np

from . import checkpoint as files
from .errors import CheckFailed
from .exercises import for_exercises
from .language import say
from .run_checks import (  # noqa: F401  (checks of a run's results, re-exported here)
    accepts_batch,
    best_epoch_recorded,
    checkpoints_kept,
    for_prediction_only,
    no_finding,
    on_devices,
    resumed_epochs,
    runs_compared,
    score_matches,
    stopped_early,
    uses_kvstore,
)


def _ok(text: str) -> None:
    print(say("OK: {text}", text=text))


def snapshot(mod) -> dict:
    """Copies of the module's parameters now, to compare with after a step."""
    args, auxs = mod.get_params()
    return {k: v.asnumpy().copy() for k, v in {**args, **auxs}.items()}


@for_exercises
def parameters_changed(mod, before: dict) -> None:
    """After ``update``: every trained parameter moved."""
    now = snapshot(mod)
    # a module loaded but never bound has trained nothing: all its parameters count as trained
    fixed = set(mod.executor_group.fixed_param_names or []) if mod.binded else set()
    trained = [k for k in mod.get_params()[0] if k not in fixed]
    same = [k for k in trained if np.array_equal(now[k], before[k])]
    if same:
        raise CheckFailed(
            say(
                "These parameters did not change: {names}. An update changes every trained "
                "weight unless the gradients were zero or no update ran.",
                names=same,
            ),
            fix=say("per batch: mod.forward(batch, is_train=True); mod.backward(); mod.update()"),
        )
    _ok(say("all {count} parameter arrays changed in the update.", count=len(trained)))


@for_exercises
def gradients_computed(mod) -> None:
    """After ``backward``: gradients are finite and not all zero."""
    group = mod.executor_group
    grads = {
        name: devices[0].asnumpy()
        for name, devices in zip(group.param_names, group.grad_arrays)
        if devices and devices[0] is not None
    }
    if not grads:
        raise CheckFailed(
            say("The module keeps no gradients: it was bound with for_training=False.")
        )
    bad = [n for n, g in grads.items() if not np.isfinite(g).all()]
    if bad:
        raise CheckFailed(
            say("Gradients of {names} hold NaN or infinite values.", names=bad),
            fix=say("check the data for NaN/Inf and lower the learning rate"),
        )
    if all(not g.any() for g in grads.values()):
        if mod.backward_ran:
            raise CheckFailed(
                say(
                    "Every gradient is zero, and backward ran after the training forward: the "
                    "loss passes no gradient back to any parameter."
                ),
                fix=say(
                    "look between the loss and the parameters for a BlockGrad, a loss with "
                    "grad_scale=0 or a constant loss: mx.viz.print_summary(mod.symbol)"
                ),
            )
        raise CheckFailed(
            say("Every gradient is zero: backward has not run since the last training forward."),
            fix="mod.forward(batch, is_train=True); mod.backward()",
        )
    _ok(say("gradients of {count} parameter arrays are finite and not all zero.", count=len(grads)))


@for_exercises
def output_shape(mod, expected: tuple) -> None:
    """After ``bind`` (or ``forward``): the first output has the shape you expect."""
    name, shape = mod.output_shapes[0]
    if tuple(shape) != tuple(expected):
        raise CheckFailed(
            say(
                "The output '{name}' is shaped {shape}, not {expected}: (batch size, number of "
                "classes) comes from the data shapes given to bind and the last layer's "
                "num_hidden.",
                name=name,
                shape=tuple(shape),
                expected=tuple(expected),
            ),
        )
    _ok(say("the output '{name}' is shaped {shape}.", name=name, shape=tuple(shape)))


@for_exercises
def begin_epoch_matches(prefix: str, checkpoint_epoch: int, begin_epoch: int) -> None:
    """Before resuming: ``begin_epoch`` continues right after checkpoint ``checkpoint_epoch``."""
    if checkpoint_epoch not in files.saved_epochs(prefix):
        raise CheckFailed(
            say(
                "There is no checkpoint {epoch} of '{prefix}'; saved: {saved}.",
                epoch=checkpoint_epoch,
                prefix=prefix,
                saved=files.saved_epochs(prefix),
            )
        )
    if begin_epoch != checkpoint_epoch:
        values = dict(epoch=checkpoint_epoch, last=checkpoint_epoch - 1, begin=begin_epoch)
        if begin_epoch < checkpoint_epoch:
            problem = say(
                "Checkpoint {epoch} holds {epoch} completed epochs (0..{last}), so training "
                "goes on with epoch {epoch}: begin_epoch={begin} would repeat epochs.",
                **values,
            )
        else:
            problem = say(
                "Checkpoint {epoch} holds {epoch} completed epochs (0..{last}), so training "
                "goes on with epoch {epoch}: begin_epoch={begin} would skip epochs.",
                **values,
            )
        raise CheckFailed(
            problem,
            fix=f"begin_epoch={checkpoint_epoch}",
        )
    _ok(
        say(
            "begin_epoch={begin} continues right after checkpoint {epoch}.",
            begin=begin_epoch,
            epoch=checkpoint_epoch,
        )
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


@for_exercises
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
        raise CheckFailed(
            say(
                "Accuracy {accuracy:.3f} is no better than always guessing the most common class "
                "({guessing:.3f}): the network has not learned. {hints}",
                accuracy=accuracy,
                guessing=guessing,
                hints=hints,
            ),
            fix=say("train again with optimizer_params={{'learning_rate': 0.1}} and more epochs"),
        )
    if above is not None and accuracy <= above:
        raise CheckFailed(
            say(
                "Accuracy {accuracy:.3f} beats guessing ({guessing:.3f}) but not {above}. {hints}",
                accuracy=accuracy,
                guessing=guessing,
                above=above,
                hints=hints,
            ),
            fix=say("train more epochs (fit again with begin_epoch and a larger num_epoch)"),
        )
    if above is None:
        _ok(
            say(
                "accuracy {accuracy:.3f} beats guessing the most common class ({guessing:.3f}).",
                accuracy=accuracy,
                guessing=guessing,
            )
        )
        return
    _ok(
        say(
            "accuracy {accuracy:.3f} beats guessing the most common class ({guessing:.3f}) and is "
            "above {above}.",
            accuracy=accuracy,
            guessing=guessing,
            above=above,
        )
    )


@for_exercises
def prediction_shape(predictions, eval_iter, num_classes: int) -> None:
    """After ``predict``: one row per example of ``eval_iter`` (no padding), one column per
    class."""
    rows = len(_labels(eval_iter))
    shape = tuple(predictions.shape)
    if shape != (rows, num_classes):
        raise CheckFailed(
            say(
                "predict gave shape {shape}, not ({rows}, {classes}): one row per example "
                "({rows} in this iterator, without the padding of its last batch) and one "
                "column per class. A different row count means other data was predicted; a "
                "different column count, another network's last layer.",
                shape=shape,
                rows=rows,
                classes=num_classes,
            ),
        )
    _ok(
        say(
            "{rows} rows (one per example) of {classes} class scores.",
            rows=rows,
            classes=num_classes,
        )
    )


@for_exercises
def parameters_equal(mod, arg_params: dict, aux_params: dict | None = None) -> None:
    """After ``set_params`` or a load: the module holds exactly these parameters."""
    now = snapshot(mod)
    given = {**arg_params, **(aux_params or {})}
    missing = sorted(set(now) - set(given))
    differ = sorted(k for k in given if k in now and not np.array_equal(now[k], given[k].asnumpy()))
    if missing or differ:
        raise CheckFailed(
            say(
                "The module's parameters are not the given ones: differing {differ}, not given "
                "{missing}. set_params copies them in; training or init_params afterwards "
                "changes them again.",
                differ=differ,
                missing=missing,
            ),
            fix="mod.set_params(arg_params, aux_params)",
        )
    _ok(say("the module holds exactly these {count} parameter arrays.", count=len(given)))
