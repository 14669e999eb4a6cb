"""``python -m mxlearn tour``: the seed tutorial, headless and corrected, step by step, on
``auto_context()``: a Module, the intermediate API and a manual loop, fit, predict and score,
checkpoints, reloading with set_params and resuming with begin_epoch.
"""

from __future__ import annotations

import os
import time

from .. import checkpoint, datasets, models
from .._compat import mx
from ..devices import auto_context
from ..errors import N_, MXLearnError
from ..language import say
from ..module import Module
from ..seeding import seed

MIN_ACCURACY = 0.70  # the seeded tour reaches 0.799 after 8 epochs at lr 0.1 on the CPU
LEARNING_RATE = 0.1


class TourDidNotLearn(MXLearnError, RuntimeError):
    says = N_("the tour's accuracy {accuracy:.4f} did not exceed {minimum}")


def _step(number: int, title: str, **fields) -> None:
    print(f"\n[{number}] {say(title, **fields)}", flush=True)


def _tell(template: str, **fields) -> None:
    print(say(template, **fields), flush=True)


def run_tour(out_dir: str = "runs/tour", epochs: int = 5, batch_size: int = 32) -> dict:
    """Run every step of the tutorial, printing as it goes; returns the figures it measured."""
    started = time.perf_counter()
    seed(42)  # the same numbers on every run of the tour
    os.makedirs(out_dir, exist_ok=True)
    prefix = os.path.join(out_dir, "mx_mlp")

    _step(1, N_("Device and data"))
    ctx = auto_context()
    train_iter, val_iter = datasets.letter_iters(batch_size=batch_size)
    _tell(
        N_("    training batches of {data_shape}, labels {label_shape}; data: {source}"),
        data_shape=train_iter.provide_data[0].shape,
        label_shape=train_iter.provide_label[0].shape,
        source=datasets.letter_attribution(),
    )

    net = models.mlp()
    _intermediate_api(net, ctx, train_iter, epochs)
    mod, y = _high_level_api(net, ctx, train_iter, val_iter, epochs)
    accuracy = _checkpoints(net, ctx, train_iter, val_iter, epochs, prefix)
    seconds = time.perf_counter() - started
    _tell(
        N_("\nValidation accuracy after resuming: {accuracy:.4f} (must exceed {minimum})"),
        accuracy=accuracy,
        minimum=MIN_ACCURACY,
    )
    _tell(
        N_("Tour finished in {seconds:.1f} s on {context}; checkpoints are in {folder}/"),
        seconds=seconds,
        context=ctx,
        folder=out_dir,
    )
    if accuracy <= MIN_ACCURACY:
        raise TourDidNotLearn(accuracy=accuracy, minimum=MIN_ACCURACY)
    return {"accuracy": accuracy, "prediction_shape": y.shape, "seconds": seconds}


def _intermediate_api(net, ctx, train_iter, epochs: int) -> None:
    _step(2, N_("Create a Module: symbol, context, data_names, label_names"))
    mod = Module(symbol=net, context=ctx, data_names=["data"], label_names=["softmax_label"])
    print(f"    mod.state = '{mod.state}'")

    _step(3, N_("Intermediate API: bind, init_params, init_optimizer, metric"))
    mod.bind(data_shapes=train_iter.provide_data, label_shapes=train_iter.provide_label)
    mod.init_params(initializer=mx.init.Uniform(scale=0.1))
    mod.init_optimizer(optimizer="sgd", optimizer_params=(("learning_rate", LEARNING_RATE),))
    metric = mx.metric.create("acc")
    print(f"    mod.state = '{mod.state}'")
    print("    " + repr(mod).replace("\n", "\n    "))

    _step(
        4,
        N_("Manual loop, {epochs} epochs: forward, update_metric, backward, update"),
        epochs=epochs,
    )
    for epoch in range(epochs):
        train_iter.reset()
        metric.reset()
        for batch in train_iter:
            mod.forward(batch, is_train=True)
            mod.update_metric(metric, batch.label)
            mod.backward()
            mod.update()
        name, value = metric.get()
        _tell(
            N_("    Epoch {epoch}, training {name} {value:.4f}"),
            epoch=epoch,
            name=name,
            value=value,
        )


def _high_level_api(net, ctx, train_iter, val_iter, epochs: int):
    _step(5, N_("High-level API: fit a new module for {epochs} epochs"), epochs=epochs)
    train_iter.reset()  # the manual loop left it at its end; fit does not reset it first
    mod = Module(symbol=net, context=ctx, data_names=["data"], label_names=["softmax_label"])
    mod.fit(
        train_iter,
        eval_data=val_iter,
        optimizer="sgd",
        optimizer_params={"learning_rate": LEARNING_RATE},
        eval_metric="acc",
        num_epoch=epochs,
    )

    _step(6, N_("Predict and score"))
    y = mod.predict(val_iter)
    print(f"    mod.predict(val_iter).shape = {y.shape}")
    score = mod.score(val_iter, ["acc"])
    _tell(N_("    Accuracy score is {accuracy:f}"), accuracy=score[0][1])
    return mod, y


def _checkpoints(net, ctx, train_iter, val_iter, epochs: int, prefix: str) -> float:
    """Save every epoch, reload one checkpoint, resume from it; the final accuracy."""
    _step(7, N_("Checkpoint every epoch with mx.callback.do_checkpoint('{prefix}')"), prefix=prefix)
    train_iter.reset()
    mod = Module(symbol=net, context=ctx)
    mod.fit(
        train_iter,
        num_epoch=epochs,
        optimizer_params={"learning_rate": LEARNING_RATE},
        epoch_end_callback=mx.callback.do_checkpoint(prefix),
    )
    _tell(
        N_("    saved epochs: {epochs} (the number counts completed epochs)"),
        epochs=checkpoint.saved_epochs(prefix),
    )

    resume_from = max(1, epochs - 2)
    _step(8, N_("Reload checkpoint {epoch}: load_checkpoint, then set_params"), epoch=resume_from)
    sym, arg_params, aux_params = mx.model.load_checkpoint(prefix, resume_from)
    _tell(
        N_("    the saved network is the one we built: {same}"),
        same=sym.tojson() == net.tojson(),
    )
    mod.set_params(arg_params, aux_params)
    _tell(
        N_("    accuracy of checkpoint {epoch}: {accuracy:f}"),
        epoch=resume_from,
        accuracy=mod.score(val_iter, "acc")[0][1],
    )

    return _resume(sym, arg_params, aux_params, ctx, train_iter, val_iter, epochs, resume_from)


def _resume(sym, arg_params, aux_params, ctx, train_iter, val_iter, epochs, resume_from) -> float:
    """Resume fit from the reloaded checkpoint with begin_epoch; the final accuracy."""
    final_epoch = resume_from + epochs
    _step(
        9,
        N_(
            "Resume fit from checkpoint {epoch}: begin_epoch={epoch}, num_epoch={final} "
            "(trains epochs {epoch}..{last})"
        ),
        epoch=resume_from,
        final=final_epoch,
        last=final_epoch - 1,
    )
    train_iter.reset()
    mod = Module(symbol=sym, context=ctx)
    mod.fit(
        train_iter,
        num_epoch=final_epoch,
        arg_params=arg_params,
        aux_params=aux_params,
        begin_epoch=resume_from,
        optimizer_params={"learning_rate": LEARNING_RATE},
    )
    return mod.score(val_iter, "acc")[0][1]
