"""``python -m mxlearn tour``: the seed tutorial, headless and corrected, step by step.

Create a Module; the intermediate API (bind, init_params, init_optimizer, a metric, and a manual
loop of forward / update_metric / backward / update); the high-level fit; predict and score;
checkpoints every epoch; reloading with load_checkpoint + set_params; resuming fit with
begin_epoch. Runs on ``auto_context()``: the GPU when MXNet sees one, else the CPU.
"""

from __future__ import annotations

import os
import time

from .. import checkpoint, datasets, models
from .._compat import mx
from ..devices import auto_context
from ..module import Module
from ..seeding import seed

MIN_ACCURACY = 0.70  # the seeded tour reaches 0.799 after 8 epochs at lr 0.1 on the CPU
LEARNING_RATE = 0.1


def _step(number: int, title: str) -> None:
    print(f"\n[{number}] {title}", flush=True)


def run_tour(out_dir: str = "runs/tour", epochs: int = 5, batch_size: int = 32) -> dict:
    """Run every step of the tutorial, printing as it goes; returns the figures it measured."""
    started = time.perf_counter()
    seed(42)  # the same numbers on every run of the tour
    os.makedirs(out_dir, exist_ok=True)
    prefix = os.path.join(out_dir, "mx_mlp")

    _step(1, "Device and data")
    ctx = auto_context()
    train_iter, val_iter = datasets.letter_iters(batch_size=batch_size)
    print(
        f"    training batches of {train_iter.provide_data[0].shape}, labels "
        f"{train_iter.provide_label[0].shape}; data: {datasets.LETTER_ATTRIBUTION}"
    )

    net = models.mlp()
    _intermediate_api(net, ctx, train_iter, epochs)
    mod, y = _high_level_api(net, ctx, train_iter, val_iter, epochs)
    accuracy = _checkpoints(net, ctx, train_iter, val_iter, epochs, prefix)
    seconds = time.perf_counter() - started
    print(f"\nValidation accuracy after resuming: {accuracy:.4f} (must exceed {MIN_ACCURACY})")
    print(f"Tour finished in {seconds:.1f} s on {ctx}; checkpoints are in {out_dir}/")
    if accuracy <= MIN_ACCURACY:
        raise RuntimeError(f"the tour's accuracy {accuracy:.4f} did not exceed {MIN_ACCURACY}")
    return {"accuracy": accuracy, "prediction_shape": y.shape, "seconds": seconds}


def _intermediate_api(net, ctx, train_iter, epochs: int) -> None:
    _step(2, "Create a Module: symbol, context, data_names, label_names")
    mod = Module(symbol=net, context=ctx, data_names=["data"], label_names=["softmax_label"])
    print(f"    mod.state = '{mod.state}'")

    _step(3, "Intermediate API: bind, init_params, init_optimizer, metric")
    mod.bind(data_shapes=train_iter.provide_data, label_shapes=train_iter.provide_label)
    mod.init_params(initializer=mx.init.Uniform(scale=0.1))
    mod.init_optimizer(optimizer="sgd", optimizer_params=(("learning_rate", LEARNING_RATE),))
    metric = mx.metric.create("acc")
    print(f"    mod.state = '{mod.state}'")
    print("    " + repr(mod).replace("\n", "\n    "))

    _step(4, f"Manual loop, {epochs} epochs: forward, update_metric, backward, update")
    for epoch in range(epochs):
        train_iter.reset()
        metric.reset()
        for batch in train_iter:
            mod.forward(batch, is_train=True)
            mod.update_metric(metric, batch.label)
            mod.backward()
            mod.update()
        name, value = metric.get()
        print(f"    Epoch {epoch}, training {name} {value:.4f}")


def _high_level_api(net, ctx, train_iter, val_iter, epochs: int):
    _step(5, f"High-level API: fit a new module for {epochs} epochs")
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

    _step(6, "Predict and score")
    y = mod.predict(val_iter)
    print(f"    mod.predict(val_iter).shape = {y.shape}")
    score = mod.score(val_iter, ["acc"])
    print(f"    Accuracy score is {score[0][1]:f}")
    return mod, y


def _checkpoints(net, ctx, train_iter, val_iter, epochs: int, prefix: str) -> float:
    """Save every epoch, reload one checkpoint, resume from it; the final accuracy."""
    _step(7, f"Checkpoint every epoch with mx.callback.do_checkpoint('{prefix}')")
    train_iter.reset()
    mod = Module(symbol=net, context=ctx)
    mod.fit(
        train_iter,
        num_epoch=epochs,
        optimizer_params={"learning_rate": LEARNING_RATE},
        epoch_end_callback=mx.callback.do_checkpoint(prefix),
    )
    print(
        f"    saved epochs: {checkpoint.saved_epochs(prefix)} (the number counts completed epochs)"
    )

    resume_from = max(1, epochs - 2)
    _step(8, f"Reload checkpoint {resume_from}: load_checkpoint, then set_params")
    sym, arg_params, aux_params = mx.model.load_checkpoint(prefix, resume_from)
    print(f"    the saved network is the one we built: {sym.tojson() == net.tojson()}")
    mod.set_params(arg_params, aux_params)
    print(f"    accuracy of checkpoint {resume_from}: {mod.score(val_iter, 'acc')[0][1]:f}")

    final_epoch = resume_from + epochs
    _step(
        9,
        f"Resume fit from checkpoint {resume_from}: begin_epoch={resume_from}, "
        f"num_epoch={final_epoch} (trains epochs {resume_from}..{final_epoch - 1})",
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
