"""fit(callbacks=[...]): a user's mxlearn.Callback sees every hook of the run, in order."""

from __future__ import annotations

import pytest
from conftest import seed_all

import mxlearn
from mxlearn import mx
from mxlearn.errors import ArgumentTypeError

BATCHES = 8  # small_iter: 256 rows in batches of 32


class Recorder(mxlearn.Callback):
    """Writes down every hook it gets, with what the run context says at that moment."""

    def __init__(self):
        self.seen = []

    def on_train_begin(self, run):
        assert run.epoch == run.begin_epoch
        self.seen.append(("train_begin", run.begin_epoch, run.num_epoch))

    def on_batch_end(self, run, batch):
        self.seen.append(("batch_end", run.epoch, batch))

    def on_epoch_end(self, run, epoch):
        self.seen.append(("epoch_end", epoch))

    def on_validation_end(self, run, epoch):
        # the validation values are in the history when this hook runs
        assert run.history.last_record("accuracy", "validation").epoch == epoch
        self.seen.append(("validation_end", epoch))

    def on_epoch_done(self, run, epoch):
        self.seen.append(("epoch_done", epoch))

    def on_interrupt(self, run):
        self.seen.append(("interrupt",))

    def on_train_end(self, run):
        self.run = run
        self.seen.append(("train_end", run.outcome))


def _epoch(epoch, validation):
    hooks = [("batch_end", epoch, b) for b in range(BATCHES)] + [("epoch_end", epoch)]
    if validation:
        hooks.append(("validation_end", epoch))
    return hooks + [("epoch_done", epoch)]


def _val_iter(small_data):
    X, y = small_data
    return mx.io.NDArrayIter(X[:64], y[:64], batch_size=32)


def test_every_hook_in_order_without_validation(small_iter, small_net):
    recorder = Recorder()
    mod = mxlearn.Module(small_net)
    mod.fit(small_iter, num_epoch=2, callbacks=[recorder])
    assert recorder.seen == [
        ("train_begin", 0, 2),
        *_epoch(0, validation=False),
        *_epoch(1, validation=False),
        ("train_end", "completed"),
    ]
    assert recorder.run.module is mod and recorder.run.history is mod.history


def test_every_hook_in_order_with_validation(small_iter, small_net, small_data):
    recorder = Recorder()
    mxlearn.Module(small_net).fit(
        small_iter, eval_data=_val_iter(small_data), num_epoch=2, callbacks=[recorder]
    )
    assert recorder.seen == [
        ("train_begin", 0, 2),
        *_epoch(0, validation=True),
        *_epoch(1, validation=True),
        ("train_end", "completed"),
    ]


def test_early_stopping_ends_the_run_after_every_callback_saw_the_epoch(
    small_iter, small_net, small_data
):
    # min_delta=10: no accuracy can improve by that much, so patience 1 stops after epoch 1
    stopper = mxlearn.EarlyStopping("accuracy", patience=1, min_delta=10)
    recorder = Recorder()
    mod = mxlearn.Module(small_net)
    mod.fit(
        small_iter,
        eval_data=_val_iter(small_data),
        num_epoch=5,
        early_stopping=stopper,
        callbacks=[recorder],
    )
    assert recorder.seen == [
        ("train_begin", 0, 5),
        *_epoch(0, validation=True),
        *_epoch(1, validation=True),
        ("train_end", "stopped"),
    ]
    assert stopper.stopped and stopper.best_epoch == 0


class InterruptAt(mxlearn.Callback):
    def on_batch_end(self, run, batch):
        if (run.epoch, batch) == (1, 2):
            raise KeyboardInterrupt


def test_an_interrupt_is_seen_then_the_end(small_iter, small_net, small_data, tmp_path):
    recorder = Recorder()
    mod = mxlearn.Module(small_net)
    with pytest.raises(mxlearn.TrainingInterrupted, match="Checkpoint 1 .1 epochs done"):
        mod.fit(
            small_iter,
            eval_data=_val_iter(small_data),
            num_epoch=3,
            checkpoint=str(tmp_path / "m"),
            callbacks=[recorder, InterruptAt()],
        )
    assert recorder.seen == [
        ("train_begin", 0, 3),
        *_epoch(0, validation=True),
        *[("batch_end", 1, b) for b in range(3)],
        ("interrupt",),
        ("train_end", "interrupted"),
    ]


def test_a_user_callback_can_stop_training(small_iter, small_net, capsys):
    class StopAfterFirstEpoch(mxlearn.Callback):
        def on_epoch_done(self, run, epoch):
            raise mxlearn.StopTraining(f"enough after epoch {epoch}")

    seed_all(0)
    mod = mxlearn.Module(small_net)
    mod.fit(small_iter, num_epoch=4, callbacks=[StopAfterFirstEpoch()])
    assert "enough after epoch 0" in capsys.readouterr().out
    assert mod.history.series("accuracy", "train", "epoch")[0] == [0]


@pytest.mark.parametrize("given", [Recorder, print, "Recorder"])
def test_what_is_not_a_callback_object_is_refused_before_training(small_iter, small_net, given):
    mod = mxlearn.Module(small_net)
    with pytest.raises(ArgumentTypeError, match="mxlearn.Callback objects"):
        mod.fit(small_iter, num_epoch=1, callbacks=[given])
    assert mod.state == "created"  # nothing was bound or trained
