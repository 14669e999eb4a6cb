"""The checks of how an exercise was done pass right answers written in other styles and fail
shortcuts that reach the same numbers: a loop by hand against fit, a run continued from a
checkpoint's weights against fresh ones, Dropout layers where they were asked for, a callback
replayed on histories the check makes, a counting function called on the check's own arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mxlearn
from mxlearn import checks, mx
from mxlearn.errors import CheckFailed
from mxlearn.run_checks import NoHistory, NotAnMxlearnModule, OtherTraining
from mxlearn.work_checks import (
    FunctionFailed,
    FunctionMiscounts,
    FunctionUsesAMetric,
    NoRunFromEpoch,
    OtherLayers,
    ReplayFailed,
    ReplayMissesBest,
    StartedFromGivenWeights,
    StartedFromOtherWeights,
    TooFewUpdates,
    TrainedByFit,
)

X, Y = mxlearn.datasets.synthetic_classification(num_samples=128, num_classes=4, seed=2)


def _iter(batch=32):
    return mx.io.NDArrayIter(X, Y, batch_size=batch)


def _module():
    mxlearn.seed(0)
    return mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=16))


def _by_hand(mod, data, epochs, reset=True, step="update"):
    mod.bind(data.provide_data, data.provide_label)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1})
    for _ in range(epochs):
        if reset:
            data.reset()
        for batch in data:
            if step == "forward_backward":  # MXNet's own idiom for the two calls
                mod.forward_backward(batch)
            else:
                mod.forward(batch, is_train=True)
                mod.backward()
            mod.update()


@pytest.mark.parametrize("step", ["update", "forward_backward"])
def test_a_loop_by_hand_passes_in_either_idiom(step, capsys):
    mod, data = _module(), _iter()
    _by_hand(mod, data, 3, step=step)
    checks.trained_by_hand(mod, data, epochs=3)
    assert "OK: 12 updates by hand" in capsys.readouterr().out


def test_fit_and_a_loop_without_reset_fail_the_loop_by_hand():
    fitted, data = _module(), _iter()
    fitted.fit(data, num_epoch=3, optimizer_params={"learning_rate": 0.1})
    with pytest.raises(TrainedByFit):
        checks.trained_by_hand(fitted, data, epochs=3)
    unreset, data = _module(), _iter()
    _by_hand(unreset, data, 3, reset=False)  # the iterator gives one epoch, then nothing
    with pytest.raises(TooFewUpdates) as refused:
        checks.trained_by_hand(unreset, data, epochs=3)
    assert refused.value.fields["updates"] == 4 and refused.value.fields["expected"] == 12


@pytest.fixture
def checkpointed(tmp_path):
    prefix = str(tmp_path / "run")
    _module().fit(_iter(), num_epoch=5, checkpoint=prefix, optimizer_params={"learning_rate": 0.1})
    return prefix


def _resumed_ways(prefix):
    sym, args, auxs = mx.model.load_checkpoint(prefix, 5)
    given = mxlearn.Module(sym)
    given.fit(_iter(), num_epoch=8, arg_params=args, aux_params=auxs, begin_epoch=5)
    loaded = mxlearn.Module.load(prefix, 5)
    loaded.fit(_iter(), num_epoch=8, begin_epoch=5)
    set_first = mxlearn.Module(sym)
    set_first.bind(_iter().provide_data, _iter().provide_label)
    set_first.set_params(args, auxs)
    set_first.fit(_iter(), num_epoch=8, begin_epoch=5)
    return given, loaded, set_first


def test_a_run_continued_from_the_checkpoint_in_any_style_passes(checkpointed):
    for mod in _resumed_ways(checkpointed):
        checks.started_from_checkpoint(mod, checkpointed, epoch=5)
    resumed = mxlearn.resume(checkpointed)
    resumed.fit(_iter(), num_epoch=8, checkpoint=checkpointed)
    checks.started_from_checkpoint(resumed, checkpointed, epoch=5)


def test_fresh_or_other_weights_fail_the_resume_check(checkpointed):
    fresh = _module()
    fresh.fit(_iter(), num_epoch=8, begin_epoch=5)  # the shortcut: fresh weights learn too
    with pytest.raises(StartedFromOtherWeights) as refused:
        checks.started_from_checkpoint(fresh, checkpointed, epoch=5)
    assert refused.value.fields["start"] == "fresh weights (the initializer's)"
    sym, args, auxs = mx.model.load_checkpoint(checkpointed, 3)  # another checkpoint
    other = mxlearn.Module(sym)
    other.fit(_iter(), num_epoch=8, arg_params=args, aux_params=auxs, begin_epoch=5)
    with pytest.raises(StartedFromOtherWeights):
        checks.started_from_checkpoint(other, checkpointed, epoch=5)
    from_zero = mxlearn.Module(sym)
    from_zero.fit(_iter(), num_epoch=3, arg_params=args, aux_params=auxs)
    with pytest.raises(NoRunFromEpoch):
        checks.started_from_checkpoint(from_zero, checkpointed, epoch=5)


def _big(dropout_after=("relu1", "relu2"), p=0.5):
    x = mx.sym.Variable("data")
    for i in (1, 2):
        x = mx.sym.FullyConnected(x, name=f"fc{i}", num_hidden=8)
        x = mx.sym.Activation(x, name=f"relu{i}", act_type="relu")
        if f"relu{i}" in dropout_after:
            x = mx.sym.Dropout(x, name=f"drop{i}", p=p)
    x = mx.sym.FullyConnected(x, name="fc3", num_hidden=4)
    return mx.sym.SoftmaxOutput(x, name="softmax")


def _relu_style():  # mx.sym.relu and keyword order of another hand
    x = mx.sym.Variable("data")
    for _ in (1, 2):
        x = mx.sym.Dropout(p=0.5, data=mx.sym.relu(mx.sym.FullyConnected(x, num_hidden=8)))
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(x, num_hidden=4), name="softmax")


@pytest.mark.parametrize("symbol", [_big(), _relu_style()])
def test_dropout_after_each_hidden_activation_passes(symbol):
    checks.holds_layers(mxlearn.Module(symbol), "Dropout", count=2, p=0.5)


@pytest.mark.parametrize(
    "symbol",
    [_big(()), _big(("relu1",)), _big(p=0.2)],
    ids=["none", "one", "p=0.2"],
)
def test_missing_or_other_dropout_fails(symbol):
    with pytest.raises(OtherLayers):
        checks.holds_layers(mxlearn.Module(symbol), "Dropout", count=2, p=0.5)


class Greater(mxlearn.Callback):
    def __init__(self):
        self.best_epoch, self.best_accuracy = None, None

    def on_validation_end(self, run, epoch):
        accuracy = run.history.last("acc", "val")
        if self.best_accuracy is None or accuracy > self.best_accuracy:
            self.best_epoch, self.best_accuracy = epoch, accuracy


class FromTheSeries(mxlearn.Callback):  # the whole curve at the end, NaN left out
    best_epoch = best_accuracy = None

    def on_train_end(self, run):
        epochs, values = run.history.series("accuracy", "validation", "epoch")
        best = int(np.nanargmax(values))
        self.best_epoch, self.best_accuracy = epochs[best], values[best]


class InEpochDone(mxlearn.Callback):
    def __init__(self):
        self.best_epoch, self.best_accuracy = None, -math.inf

    def on_epoch_done(self, run, epoch):
        accuracy = run.history.last_record("accuracy", "validation").value
        if accuracy >= self.best_accuracy:  # a tie keeps the later epoch: also the best
            self.best_epoch, self.best_accuracy = epoch, accuracy


class KeepsTheLast(mxlearn.Callback):
    best_epoch = best_accuracy = None

    def on_validation_end(self, run, epoch):
        self.best_epoch, self.best_accuracy = epoch, run.history.last("accuracy", "validation")


class ReadsTraining(Greater):
    def on_validation_end(self, run, epoch):
        accuracy = run.history.last("accuracy")  # the training curve, by default
        if self.best_accuracy is None or accuracy > self.best_accuracy:
            self.best_epoch, self.best_accuracy = epoch, accuracy


class ArgmaxWithNaN(FromTheSeries):
    def on_train_end(self, run):
        epochs, values = run.history.series("accuracy", "validation", "epoch")
        self.best_epoch = epochs[int(np.argmax(values))]  # NaN is np.argmax's maximum
        self.best_accuracy = values[self.best_epoch]


@pytest.mark.parametrize("kind", [Greater, FromTheSeries, InEpochDone])
def test_a_right_callback_in_any_style_passes_its_replay(kind):
    checks.callback_replayed(kind())


@pytest.mark.parametrize("kind", [KeepsTheLast, ReadsTraining, ArgmaxWithNaN])
def test_a_callback_that_is_right_by_luck_fails_its_replay(kind):
    with pytest.raises(ReplayMissesBest):
        checks.callback_replayed(kind())


def test_a_tracker_filled_by_hand_after_fit_fails_its_replay():
    class Tracker(mxlearn.Callback):
        best_epoch = best_accuracy = None

        def on_train_begin(self, run):
            pass

    tracker = Tracker()
    tracker.best_epoch, tracker.best_accuracy = 3, 0.81  # set after fit, from its history
    with pytest.raises(ReplayMissesBest):
        checks.callback_replayed(tracker)


def _numpy_style(outputs, labels):
    return float(np.mean(outputs.asnumpy().argmax(axis=1) == labels))


def _nd_style(outputs, labels):
    return (mx.nd.argmax(outputs, axis=1) == mx.nd.array(labels)).mean().asscalar()


def _loop_style(outputs, labels):
    scores = outputs.asnumpy()
    right = sum(1 for row, label in zip(scores, labels) if row.argmax() == label)
    return right / len(labels)


@pytest.mark.parametrize("function", [_numpy_style, _nd_style, _loop_style])
def test_counting_by_hand_in_any_style_passes(function):
    checks.counts_by_hand(function)


def test_counting_that_ignores_its_arrays_fails():
    trained = _module()
    trained.fit(_iter(), num_epoch=2, optimizer_params={"learning_rate": 0.1})

    def by_score(outputs, labels):  # the shortcut: the module's score, whatever it is given
        return trained.score(_iter(), "acc")[0][1]

    def smallest(outputs, labels):  # the smallest score taken for the prediction
        return float(np.mean(outputs.asnumpy().argmin(axis=1) == labels))

    with pytest.raises(FunctionUsesAMetric):
        checks.counts_by_hand(by_score)
    with pytest.raises(FunctionMiscounts):
        checks.counts_by_hand(smallest)


def _by_mxnets_metric(outputs, labels):  # right numbers, MXNet counting
    metric = mx.metric.Accuracy()
    metric.update([mx.nd.array(labels)], [outputs])
    return metric.get()[1]


def _through_a_helper(outputs, labels):
    return _by_mxnets_metric(outputs, labels)


@pytest.mark.parametrize("function", [_by_mxnets_metric, _through_a_helper])
def test_counting_with_mxnets_metric_fails_though_its_numbers_are_right(function):
    with pytest.raises(FunctionUsesAMetric) as refused:
        checks.counts_by_hand(function)
    assert refused.value.fields["found"] == "Accuracy, metric"


def test_names_that_only_look_like_a_metric_pass():
    def honest(outputs, labels):
        score = outputs.asnumpy()  # a local named like a metric is no metric
        metric = np.mean(score.argmax(axis=1) == labels)
        return float(metric)

    checks.counts_by_hand(honest)


def test_a_check_given_an_exercise_speaks_about_it():
    with pytest.raises(CheckFailed) as refused:
        checks.callback_replayed(KeepsTheLast(), exercise="02.3")
    assert str(refused.value).startswith("Exercise 02.3 (a callback class): Replayed by the check")


def test_the_cache_a_mutable_module_keeps_is_read_from_it():
    net = mxlearn.models.mlp(num_classes=4)
    checks.cache_kept(mxlearn.MutableModule(net, cache_size=2), cache_size=2)
    from mxlearn.work_checks import NotAMutableModule, OtherCacheSize

    with pytest.raises(OtherCacheSize):
        checks.cache_kept(mxlearn.MutableModule(net), cache_size=2)  # the default keeps 32
    with pytest.raises(NotAMutableModule):
        checks.cache_kept(mxlearn.Module(net), cache_size=2)


def test_work_done_by_fit_or_by_another_module_fails_the_loop_by_hand():
    fitted, data = _module(), _iter()
    fitted.fit(data, num_epoch=3, optimizer_params={"learning_rate": 0.1})
    fitted.history = None  # a fit's updates are not the loop's, whatever its history says
    with pytest.raises(TrainedByFit):
        checks.trained_by_hand(fitted, data, epochs=3)
    helper = _module()
    helper.fit(_iter(), num_epoch=3, optimizer_params={"learning_rate": 0.1})
    borrowed = _module()
    borrowed.bind(data.provide_data, data.provide_label)
    borrowed.set_params(*helper.get_params())
    borrowed.borrow_optimizer(helper)  # the helper's updates counted by the shared optimizer
    with pytest.raises(StartedFromGivenWeights):
        checks.trained_by_hand(borrowed, data, epochs=3)
    _by_hand(borrowed, data, 3)  # its own loop, but from the helper's weights
    borrowed.set_params(*helper.get_params())
    for batch in [next(iter(_iter()))] * 12:  # 12 updates on one batch of given weights
        borrowed.forward(batch, is_train=True)
        borrowed.backward()
        borrowed.update()
    with pytest.raises(StartedFromGivenWeights):
        checks.trained_by_hand(borrowed, data, epochs=3)


@pytest.mark.parametrize("mixed", [False, True])
def test_weights_loaded_through_an_initializer_are_given_not_made(mixed):
    """The hostile pass: fit's weights put in through init_params(initializer=mx.init.Load(...))
    counted as fresh, and a loop at learning rate 0 passed as training by hand."""
    helper, data = _module(), _iter()
    helper.fit(data, num_epoch=3, optimizer_params={"learning_rate": 0.1})
    trained = {f"arg:{k}": v for k, v in helper.get_params()[0].items()}
    load = mx.init.Load(trained)
    initializer = mx.init.Mixed(["fc1.*", ".*"], [load, mx.init.Xavier()]) if mixed else load
    mod = _module()
    mod.bind(data.provide_data, data.provide_label)
    mod.init_params(initializer=initializer)
    mod.init_optimizer(optimizer_params={"learning_rate": 0.0})
    for _ in range(3):
        data.reset()
        for batch in data:
            mod.forward(batch, is_train=True)
            mod.backward()
            mod.update()
    with pytest.raises(StartedFromGivenWeights):
        checks.trained_by_hand(mod, data, epochs=3)


def test_a_plain_mxnet_module_is_named_as_one_by_the_checks_that_read_mxlearns_records():
    plain = mx.mod.Module(mxlearn.models.mlp(num_classes=4, num_hidden=16))
    for check in (
        lambda: checks.trained_by_hand(plain, _iter(), epochs=3),
        lambda: checks.started_from_checkpoint(plain, "runs/none", epoch=5),
        lambda: checks.stopped_early(plain, patience=2, num_epoch=30),
        lambda: checks.resumed_epochs(plain, begin_epoch=5, num_epoch=8),
    ):
        with pytest.raises(NotAnMxlearnModule):
            check()
    unfitted = _module()
    with pytest.raises(NoHistory):
        checks.stopped_early(unfitted, patience=2, num_epoch=30)
    with pytest.raises(NoHistory):
        checks.loss_ends_below(unfitted, "ce", 1.0)


def test_a_resume_through_the_load_initializer_starts_from_the_checkpoint(checkpointed):
    sym, _, _ = mx.model.load_checkpoint(checkpointed, 5)
    loaded = mxlearn.Module(sym)
    loaded.fit(
        _iter(), num_epoch=8, begin_epoch=5, initializer=mx.init.Load(f"{checkpointed}-0005.params")
    )
    checks.started_from_checkpoint(loaded, checkpointed, epoch=5)


class OnItsClass(mxlearn.Callback):  # right on every fit: its class keeps the values
    best_epoch = best_accuracy = None

    def on_train_begin(self, run):
        OnItsClass.best_epoch = OnItsClass.best_accuracy = None

    def on_validation_end(self, run, epoch):
        accuracy = run.history.last("accuracy", "validation")
        if OnItsClass.best_accuracy is None or accuracy > OnItsClass.best_accuracy:
            OnItsClass.best_epoch, OnItsClass.best_accuracy = epoch, accuracy


def test_02_3s_check_reads_the_tracker_before_its_replay_changes_it():
    tracker, data = OnItsClass(), _iter()
    mod = _module()
    val = mx.io.NDArrayIter(X[:64], Y[:64], batch_size=32)
    mod.fit(data, eval_data=val, num_epoch=3, callbacks=[tracker],
            optimizer_params={"learning_rate": 0.1})  # fmt: skip
    checks.best_epoch_recorded(tracker, mod)  # in 02.3's check cell, before the replay
    checks.callback_replayed(tracker)


def test_a_callback_that_reads_more_than_the_history_is_told_what_the_replay_gives():
    class ScoresItself(Greater):
        def on_validation_end(self, run, epoch):
            run.module.score(None, "acc")

    with pytest.raises(ReplayFailed) as refused:
        checks.callback_replayed(ScoresItself())
    assert "AttributeError" in refused.value.fields["error"]


def test_a_counting_function_that_fails_or_gives_no_number_is_told_so():
    with pytest.raises(FunctionFailed) as refused:
        checks.counts_by_hand(lambda outputs: 0.5)  # one argument
    assert "TypeError" in refused.value.fields["error"]
    with pytest.raises(FunctionMiscounts):
        checks.counts_by_hand(lambda outputs, labels: "0.5")
    one_element = lambda outputs, labels: (  # noqa: E731  an NDArray of one value is a number
        mx.nd.argmax(outputs, axis=1) == mx.nd.array(labels)
    ).mean()
    checks.counts_by_hand(one_element)


def test_the_layers_of_a_network_are_named_in_the_language_mxlearn_speaks():
    mxlearn.set_language("zh")
    try:
        with pytest.raises(OtherLayers) as refused:
            checks.holds_layers(mxlearn.Module(_big(("relu1",))), "Dropout", count=2, p=0.5)
        assert " after " not in refused.value.fields["where"]
    finally:
        mxlearn.set_language("en")


def _sham_dropout():  # Dropouts whose output is multiplied by 0: the network does not use them
    x = mx.sym.Variable("data")
    for i in (1, 2):
        x = mx.sym.Activation(
            mx.sym.FullyConnected(x, num_hidden=8, name=f"fc{i}"), act_type="relu"
        )
        x = x + 0 * mx.sym.Dropout(x, p=0.5)
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(x, num_hidden=4), name="softmax")


def test_dropouts_the_next_layer_never_reads_fail():
    with pytest.raises(OtherLayers):
        checks.holds_layers(mxlearn.Module(_sham_dropout()), "Dropout", count=2, p=0.5)


def test_a_run_is_checked_for_the_epochs_and_rows_it_was_asked_for():
    def run(rows, epochs):
        mod = _module()
        mod.fit(mx.io.NDArrayIter(X[:rows], Y[:rows], batch_size=32), num_epoch=epochs)
        return mod

    checks.trained_as(run(96, 4), num_epoch=4, rows=96)
    for rows, epochs in ((96, 2), (128, 4)):  # half the epochs, more rows than asked
        with pytest.raises(OtherTraining):
            checks.trained_as(run(rows, epochs), num_epoch=4, rows=96)
