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


def _ok(text: str) -> None:
    print(f"OK: {text}")


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
    same = [k for k in trained if np.array_equal(now[k], before[k])]
    if same:
        raise CheckFailed(
            f"These parameters did not change: {same}. An update changes every trained weight "
            "unless the gradients were zero or no update ran.",
            fix="per batch: mod.forward(batch, is_train=True); mod.backward(); mod.update()",
        )
    _ok(f"all {len(trained)} parameter arrays changed in the update.")


def gradients_computed(mod) -> None:
    """After ``backward``: gradients are finite and not all zero."""
    group = mod.executor_group
    grads = {
        name: devices[0].asnumpy()
        for name, devices in zip(group.param_names, group.grad_arrays)
        if devices and devices[0] is not None
    }
    if not grads:
        raise CheckFailed("The module keeps no gradients: it was bound with for_training=False.")
    bad = [n for n, g in grads.items() if not np.isfinite(g).all()]
    if bad:
        raise CheckFailed(
            f"Gradients of {bad} hold NaN or infinite values.",
            fix="check the data for NaN/Inf and lower the learning rate",
        )
    if all(not g.any() for g in grads.values()):
        raise CheckFailed(
            "Every gradient is zero: backward has not run since the last training forward.",
            fix="mod.forward(batch, is_train=True); mod.backward()",
        )
    _ok(f"gradients of {len(grads)} parameter arrays are finite and not all zero.")


def output_shape(mod, expected: tuple) -> None:
    """After ``bind`` (or ``forward``): the first output has the shape you expect."""
    name, shape = mod.output_shapes[0]
    if tuple(shape) != tuple(expected):
        raise CheckFailed(
            f"The output '{name}' is shaped {tuple(shape)}, not {tuple(expected)}: (batch size, "
            "number of classes) comes from the data shapes given to bind and the last layer's "
            "num_hidden.",
        )
    _ok(f"the output '{name}' is shaped {tuple(shape)}.")


def begin_epoch_matches(prefix: str, checkpoint_epoch: int, begin_epoch: int) -> None:
    """Before resuming: ``begin_epoch`` continues right after checkpoint ``checkpoint_epoch``."""
    if checkpoint_epoch not in files.saved_epochs(prefix):
        raise CheckFailed(
            f"There is no checkpoint {checkpoint_epoch} of '{prefix}'; saved: "
            f"{files.saved_epochs(prefix)}."
        )
    if begin_epoch != checkpoint_epoch:
        raise CheckFailed(
            f"Checkpoint {checkpoint_epoch} holds {checkpoint_epoch} completed epochs (0.."
            f"{checkpoint_epoch - 1}), so training goes on with epoch {checkpoint_epoch}: "
            f"begin_epoch={begin_epoch} would "
            + ("repeat epochs." if begin_epoch < checkpoint_epoch else "skip epochs."),
            fix=f"begin_epoch={checkpoint_epoch}",
        )
    _ok(f"begin_epoch={begin_epoch} continues right after checkpoint {checkpoint_epoch}.")


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
    hints = (
        "Common causes: a learning rate too high (the network collapses onto one class) or too "
        "low (it crawls), too few epochs, or labels that do not belong to their rows."
    )
    if accuracy <= guessing:
        raise CheckFailed(
            f"Accuracy {accuracy:.3f} is no better than always guessing the most common class "
            f"({guessing:.3f}): the network has not learned. {hints}",
            fix="train again with optimizer_params={'learning_rate': 0.1} and more epochs",
        )
    if above is not None and accuracy <= above:
        raise CheckFailed(
            f"Accuracy {accuracy:.3f} beats guessing ({guessing:.3f}) but not {above}. {hints}",
            fix="train more epochs (fit again with begin_epoch and a larger num_epoch)",
        )
    goal = f" and above {above}" if above is not None else ""
    _ok(f"accuracy {accuracy:.3f} beats guessing the most common class ({guessing:.3f}){goal}.")


def prediction_shape(predictions, eval_iter, num_classes: int) -> None:
    """After ``predict``: one row per example of ``eval_iter`` (no padding), one column per
    class."""
    rows = len(_labels(eval_iter))
    shape = tuple(predictions.shape)
    if shape != (rows, num_classes):
        raise CheckFailed(
            f"predict gave shape {shape}, not ({rows}, {num_classes}): one row per example "
            f"({rows} in this iterator, without the padding of its last batch) and one column "
            "per class. A different row count means other data was predicted; a different "
            "column count, another network's last layer.",
        )
    _ok(f"{rows} rows (one per example) of {num_classes} class scores.")


def parameters_equal(mod, arg_params: dict, aux_params: dict | None = None) -> None:
    """After ``set_params`` or a load: the module holds exactly these parameters."""
    now = snapshot(mod)
    given = {**arg_params, **(aux_params or {})}
    missing = sorted(set(now) - set(given))
    differ = sorted(k for k in given if k in now and not np.array_equal(now[k], given[k].asnumpy()))
    if missing or differ:
        raise CheckFailed(
            f"The module's parameters are not the given ones: differing {differ}, not given "
            f"{missing}. set_params copies them in; training or init_params afterwards changes "
            "them again.",
            fix="mod.set_params(arg_params, aux_params)",
        )
    _ok(f"the module holds exactly these {len(given)} parameter arrays.")
