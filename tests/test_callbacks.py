"""fit(callbacks=[...]): a user's mxlearn.Callback sees every hook of the run, in order."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import seed_all

import mxlearn
import mxlearn.training.callback
from mxlearn import mx
from mxlearn.errors import ArgumentTypeError
from mxlearn.guards.fit_arguments import CallbackClass, NotACallback, SameCallbackTwice
from mxlearn.guards.lifecycle import NestedFit
from mxlearn.metrics.directions import NotMeasuredNear
from mxlearn.training.callback import NotAHook
from mxlearn.training.early_stopping import NoValidationToJudge
from mxlearn.training.mxnet_callbacks import CallbackObjectInSlot

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
    def __init__(self, epoch=1, batch=2):
        self.at = (epoch, batch)

    def on_batch_end(self, run, batch):
        if (run.epoch, batch) == self.at:
            raise KeyboardInterrupt


def test_an_interrupt_is_seen_then_the_end(small_iter, small_net, small_data, tmp_path):
    recorder = Recorder()
    mod = mxlearn.Module(small_net)
    with pytest.raises(mxlearn.TrainingInterrupted, match="Checkpoint 1 .1 epoch done"):
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
    with pytest.raises(ArgumentTypeError) as refused:
        mod.fit(small_iter, num_epoch=1, callbacks=[given])
    if isinstance(given, type):  # the class itself: the fix is to make one
        assert type(refused.value) is CallbackClass and refused.value.fields["what"] == "Recorder"
    else:
        assert type(refused.value) is NotACallback
        assert refused.value.fields["what"] == type(given).__name__
    assert mod.state == "created"  # nothing was bound or trained


class Raise(mxlearn.Callback):
    """Raises ``error`` in ``hook`` at (epoch, batch) (batch None: the first call in the epoch)."""

    def __init__(self, hook, error, epoch=0, batch=None):
        self.hook, self.error, self.at = hook, error, (epoch, batch)
        for name in mxlearn.training.callback.HOOKS:
            if name == hook:
                setattr(self, name, self._maybe_raise)

    def _maybe_raise(self, run, *args):
        batch = args[0] if self.hook == "on_batch_end" else None
        if (run.epoch, batch) == self.at or self.hook in ("on_train_begin", "on_train_end"):
            raise self.error


def _run_hooks(seen):
    return [h for h in seen if h[0] not in ("batch_end",)]


@pytest.mark.parametrize("hook", ["on_batch_end", "on_epoch_end", "on_validation_end"])
def test_stop_training_during_an_epoch_ends_the_run_after_it(
    small_iter, small_net, small_data, tmp_path, hook, capsys
):
    recorder = Recorder()
    batch = 2 if hook == "on_batch_end" else None
    stop = Raise(hook, mxlearn.StopTraining("enough"), epoch=1, batch=batch)
    mod = mxlearn.Module(small_net)
    prefix = str(tmp_path / "m")
    mod.fit(
        small_iter,
        eval_data=_val_iter(small_data),
        num_epoch=4,
        checkpoint=prefix,
        callbacks=[stop, recorder],
    )
    assert _run_hooks(recorder.seen)[-3:] == [
        ("validation_end", 1),
        ("epoch_done", 1),
        ("train_end", "stopped"),
    ]
    assert mxlearn.checkpoint.manifested_epochs(prefix) == [1, 2]  # epoch 1 finished and saved
    assert mod.history.series("accuracy", "validation", "epoch")[0] == [0, 1]
    assert recorder.run.stop_reason == "enough" and "enough" in capsys.readouterr().out
    assert sum(1 for _ in small_iter) == BATCHES  # reset: the next fit starts a full epoch


def test_stop_iteration_from_a_callback_is_not_taken_for_an_empty_iterator(small_iter, small_net):
    broken = Raise("on_batch_end", StopIteration(), epoch=0, batch=1)
    with pytest.raises(RuntimeError) as caught:
        mxlearn.Module(small_net).fit(small_iter, num_epoch=2, callbacks=[broken])
    # the callback's own StopIteration, turned into a RuntimeError (itself, or the cause of
    # the boundary's explanation)
    turned = caught.value
    while turned is not None and turned.__cause__ is not broken.error:
        turned = turned.__cause__
    assert type(turned) is RuntimeError, caught.value
    assert "Raise._maybe_raise" in str(turned)  # names the callback's method


def test_after_a_failed_run_the_next_fit_trains_whole_epochs(small_iter, small_net):
    mod = mxlearn.Module(small_net)
    with pytest.raises(ValueError, match="a bug in my callback"):
        mod.fit(
            small_iter,
            num_epoch=2,
            callbacks=[Raise("on_batch_end", ValueError("a bug in my callback"), 0, 1)],
        )
    mod.fit(small_iter, num_epoch=2, force_init=True)
    assert mod.history.last_record("accuracy", "train", "epoch").batch == BATCHES


def test_a_failing_on_train_end_lets_the_others_end_and_keeps_the_first_error(
    small_iter, small_net, tmp_path
):
    recorder = Recorder()
    live = mxlearn.LivePlot(backend="console", png_path=str(tmp_path / "plot.png"))
    callbacks = [
        Raise("on_batch_end", ValueError("the real bug"), 0, 1),
        Raise("on_train_end", RuntimeError("a second problem")),
        live,
        recorder,
    ]
    with pytest.warns(UserWarning, match="a second problem"):
        with pytest.raises(ValueError, match="the real bug"):
            mxlearn.Module(small_net).fit(small_iter, num_epoch=2, callbacks=callbacks)
    assert recorder.seen[-1] == ("train_end", "failed")
    assert (tmp_path / "plot.png").exists()  # the plot finished


@pytest.mark.parametrize("hook", ["on_train_end", "on_interrupt"])
def test_stop_training_while_the_run_ends_stays_inside_fit(small_iter, small_net, hook):
    callbacks = [Raise(hook, mxlearn.StopTraining("late"))]
    if hook == "on_interrupt":
        callbacks.insert(0, InterruptAt())
        with pytest.raises(mxlearn.TrainingInterrupted):
            mxlearn.Module(small_net).fit(small_iter, num_epoch=3, callbacks=callbacks)
    else:
        mxlearn.Module(small_net).fit(small_iter, num_epoch=1, callbacks=callbacks)


def test_an_interrupt_before_the_first_save_names_the_checkpoint_on_disk(
    small_iter, small_net, tmp_path
):
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=2, checkpoint=prefix)
    mod = mxlearn.resume(prefix)
    with pytest.raises(mxlearn.TrainingInterrupted, match=r"Checkpoint 2 .*resume\('"):
        mod.fit(small_iter, num_epoch=4, checkpoint=prefix, callbacks=[InterruptAt(epoch=2)])


def test_a_wrong_argument_after_resume_keeps_the_checkpoint_pending(
    small_iter, small_net, tmp_path
):
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=2, checkpoint=prefix)
    mod = mxlearn.resume(prefix)
    with pytest.raises(ArgumentTypeError):
        mod.fit(small_iter, num_epoch=4, checkpoint=prefix, callbacks=[Recorder])
    recorder = Recorder()
    mod.fit(small_iter, num_epoch=4, checkpoint=prefix, callbacks=[recorder])
    assert recorder.seen[0] == ("train_begin", 2, 4)
    assert mxlearn.checkpoint.manifested_epochs(prefix) == [1, 2, 3, 4]


def test_a_reused_early_stopping_judges_each_run_afresh(small_iter, small_net, small_data):
    stopper = mxlearn.EarlyStopping("accuracy", patience=1, min_delta=10)
    first = mxlearn.Module(small_net)
    first.fit(small_iter, eval_data=_val_iter(small_data), num_epoch=5, early_stopping=stopper)
    second = mxlearn.Module(small_net)
    second.fit(
        small_iter,
        eval_data=_val_iter(small_data),
        num_epoch=5,
        early_stopping=stopper,
        callbacks=[Raise("on_epoch_done", mxlearn.StopTraining("mine"), epoch=0)],
    )
    assert stopper.best_epoch == 0 and not stopper.stopped  # the second run's own verdict
    for name, value in second.get_params()[0].items():  # not the first module's best weights
        assert not np.array_equal(value.asnumpy(), first.get_params()[0][name].asnumpy())


def test_early_stopping_in_callbacks_needs_eval_data_before_training(small_iter, small_net):
    mod = mxlearn.Module(small_net)
    with pytest.raises(NoValidationToJudge) as refused:
        mod.fit(small_iter, num_epoch=2, callbacks=[mxlearn.EarlyStopping(patience=1)])
    assert refused.value.fields["called"] == "EarlyStopping()"
    assert mod.state == "created"


def test_one_live_plot_over_two_fits_shows_each_fit_its_own_history(small_iter, small_net):
    live = mxlearn.LivePlot(backend="console", png_path=None)
    live.renderer.finish = lambda png, text: None  # keep the test's folder clean
    a, b = mxlearn.Module(small_net), mxlearn.Module(small_net)
    a.fit(small_iter, num_epoch=2, live=live)
    b.fit(small_iter, num_epoch=1, live=live)
    assert a.history is not b.history and b.history is live.history
    assert b.history.series("accuracy", "train", "epoch")[0] == [0]


def test_fit_inside_its_own_callback_is_refused(small_iter, small_net):
    class Refit(mxlearn.Callback):
        def on_epoch_done(self, run, epoch):
            run.module.fit(small_iter, num_epoch=1)

    with pytest.raises(mxlearn.errors.LifecycleError) as refused:
        mxlearn.Module(small_net).fit(small_iter, num_epoch=2, callbacks=[Refit()])
    assert type(refused.value) is NestedFit


def test_misspelled_hooks_and_callbacks_in_mxnets_slots_are_refused(small_iter, small_net):
    class Typo(mxlearn.Callback):
        def on_epoch_ends(self, run, epoch):
            pass

    mod = mxlearn.Module(small_net)
    with pytest.raises(NotAHook) as refused:
        mod.fit(small_iter, num_epoch=1, callbacks=[Typo()])
    assert refused.value.fields["method"] == "Typo.on_epoch_ends"
    assert "'on_epoch_end'" in refused.value.fields["suggestion"]  # the hook meant
    with pytest.raises(CallbackObjectInSlot) as refused:
        mod.fit(small_iter, num_epoch=1, batch_end_callback=Recorder())
    assert refused.value.fields == {"argument": "batch_end_callback", "kind": "Recorder"}
    assert "callbacks=[Recorder(" in refused.value.fix
    assert mod.state == "created"


def test_a_refusal_at_train_begin_after_resume_keeps_the_checkpoint_pending(
    small_iter, small_net, small_data, tmp_path
):
    """Refusals made when the run starts (an unknown metric name for early stopping) lose no
    more than the refusals made while checking fit's arguments."""
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=2, checkpoint=prefix)
    mod = mxlearn.resume(prefix)
    with pytest.raises(NotMeasuredNear) as refused:
        mod.fit(
            small_iter,
            eval_data=_val_iter(small_data),
            num_epoch=4,
            checkpoint=prefix,
            early_stopping=mxlearn.EarlyStopping("acuracy"),
        )
    assert refused.value.fields["spec"] == "acuracy" and refused.value.fields["near"] == "accuracy"
    recorder = Recorder()
    mod.fit(
        small_iter,
        eval_data=_val_iter(small_data),
        num_epoch=4,
        checkpoint=prefix,
        callbacks=[recorder],
    )
    assert recorder.seen[0] == ("train_begin", 2, 4)
    assert mxlearn.checkpoint.manifested_epochs(prefix) == [1, 2, 3, 4]


def test_the_same_callback_twice_in_callbacks_is_refused_before_training(small_iter, small_net):
    """A callback keeps its own state (a count, samples, a best value): run twice per hook it
    would count double, so the repeat is named, not run."""
    recorder, stats = Recorder(), mxlearn.LayerStats(every=1)
    for given, repeated in (([recorder, recorder], recorder), ([stats, recorder, stats], stats)):
        mod = mxlearn.Module(small_net)
        with pytest.raises(SameCallbackTwice) as refused:
            mod.fit(small_iter, num_epoch=1, callbacks=given)
        assert refused.value.fields["what"] == type(repeated).__name__
        assert not mod.binded and recorder.seen == []  # refused before anything ran
    # the advice followed: each callback once
    mxlearn.Module(small_net).fit(small_iter, num_epoch=1, callbacks=[stats, recorder])
    assert [s[0] for s in recorder.seen].count("epoch_end") == 1


def test_a_callback_given_as_fits_argument_and_in_callbacks_runs_once(
    small_iter, small_net, small_data
):
    counted = []

    class Counting(mxlearn.EarlyStopping):
        def on_epoch_end(self, run, epoch):
            counted.append(epoch)
            super().on_epoch_end(run, epoch)

    stopper = Counting(patience=5)
    mxlearn.Module(small_net).fit(
        small_iter,
        eval_data=_val_iter(small_data),
        num_epoch=3,
        early_stopping=stopper,
        callbacks=[stopper],
    )
    assert counted == [0, 1, 2]
