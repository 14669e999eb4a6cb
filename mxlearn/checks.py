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
from .errors import CheckFailed, MXLearnError
from .exercises import for_exercises
from .language import say


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


@for_exercises
def score_matches(value, mod, eval_iter, metric) -> None:
    """A number (or ``score``'s list of pairs) you computed equals ``mod.score(eval_iter,
    metric)``: the check scores again and compares."""
    expected = mod.score(eval_iter, metric)
    if isinstance(value, list):
        value = dict(value).get(expected[0][0])
    if value is None or not np.isclose(float(value), expected[0][1], rtol=0, atol=1e-6):
        raise CheckFailed(
            say(
                "You got {value}, but scoring '{name}' on these examples gives {expected:.4f}. "
                "A different number comes from other examples (the padding of the last batch "
                "counted, or another iterator), another metric, or a module trained since.",
                value=value,
                name=expected[0][0],
                expected=expected[0][1],
            ),
        )
    _ok(say("{name} = {value:.4f}, as score gives it.", name=expected[0][0], value=expected[0][1]))


@for_exercises
def checkpoints_kept(prefix: str, epochs: list) -> None:
    """The checkpoints left on disk under ``prefix`` are exactly those of ``epochs``."""
    saved = files.saved_epochs(prefix)
    if saved != sorted(epochs):
        raise CheckFailed(
            say(
                "The checkpoints of '{prefix}' on disk are {saved}, not {expected}. period says "
                "after how many epochs one is saved, keep how many of the newest stay.",
                prefix=prefix,
                saved=saved,
                expected=sorted(epochs),
            ),
        )
    _ok(say("checkpoints {saved} of '{prefix}' are on disk.", saved=saved, prefix=prefix))


@for_exercises
def accepts_batch(mod, batch, num_classes: int) -> None:
    """The module takes ``batch`` in a prediction forward and gives one row per example."""
    rows = batch.data[0].shape[0]
    try:
        mod.forward(batch, is_train=False)
    except MXLearnError as refused:
        raise CheckFailed(
            say("The module refuses this batch: {reason}", reason=refused.problem),
            fix=refused.fix,
        ) from None
    shape = tuple(mod.get_outputs()[0].shape)
    if shape != (rows, num_classes):
        raise CheckFailed(
            say(
                "The module takes the batch but gives shape {shape}, not ({rows}, {classes}).",
                shape=shape,
                rows=rows,
                classes=num_classes,
            ),
        )
    _ok(
        say(
            "a batch shaped {shape} goes through: {rows} rows of {classes} class scores.",
            shape=tuple(batch.data[0].shape),
            rows=rows,
            classes=num_classes,
        )
    )


@for_exercises
def on_devices(mod, contexts: list) -> None:
    """The module is bound on exactly these devices (it splits each batch across them)."""
    bound = list(mod.executor_group.contexts) if mod.binded else []
    if bound != list(contexts):
        raise CheckFailed(
            say(
                "The module is bound on {bound}, not on {expected}: the devices come from "
                "Module(..., context=[...]), and a module not yet bound has none.",
                bound=bound,
                expected=list(contexts),
            ),
        )
    _ok(say("bound on {count} devices: {bound}.", count=len(bound), bound=bound))


@for_exercises
def best_epoch_recorded(tracker, mod) -> None:
    """A callback's ``best_epoch`` and ``best_accuracy`` are the run's best validation epoch."""
    epochs, values = mod.history.series("accuracy", "validation", "epoch")
    if not values:
        raise CheckFailed(
            say("The module's history holds no validation accuracy: fit ran without eval_data."),
            fix="fit(train_iter, eval_data=val_iter, ..., callbacks=[tracker])",
        )
    best = max(values)
    got_epoch = getattr(tracker, "best_epoch", None)
    got = getattr(tracker, "best_accuracy", None)
    right = [e for e, v in zip(epochs, values) if v == best]
    if got_epoch not in right or got is None or not np.isclose(float(got), best):
        raise CheckFailed(
            say(
                "The callback holds best_epoch={epoch} and best_accuracy={accuracy}, but the "
                "run's best validation accuracy was {best:.4f}, in epoch {right}. The hook that "
                "runs after each epoch's validation, with the value in run.history, must keep "
                "the larger one and its epoch; fit must get the callback (callbacks=[...]).",
                epoch=got_epoch,
                accuracy=got,
                best=best,
                right=right[0],
            ),
        )
    _ok(say("the callback found the best epoch, {epoch} ({best:.4f}).", epoch=got_epoch, best=best))
