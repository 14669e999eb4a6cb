"""No guessed directions or names: best checkpoints, early stopping and the plot axes take every
name the metric factory takes, know the direction of MXNet's metrics from a table, ask the user
for a custom metric's (and refuse one that contradicts the metric), and judge the validation
metric."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mxlearn
from mxlearn import checkpoint as ckpt
from mxlearn import mx
from mxlearn.live.figure import TrainingFigure
from mxlearn.metrics.directions import (
    AgainstSmallerIsBetter,
    DirectionUnknown,
    NotAMetricName,
    NotMeasuredNear,
    direction,
)


def _iters(small_data):
    X, y = small_data
    return mx.io.NDArrayIter(X, y, 32), mx.io.NDArrayIter(X[:64], y[:64], 32)


class Counter(mxlearn.Callback):
    batches = 0

    def on_batch_end(self, run, batch):
        Counter.batches += 1


@pytest.mark.parametrize("name", ["acc", "ACC", "accuracy", "Accuracy"])
def test_best_takes_the_factory_names_and_keeps_the_best_epoch(
    small_data, small_net, tmp_path, name
):
    train, val = _iters(small_data)
    prefix = str(tmp_path / "m")
    policy = mxlearn.Checkpoint(prefix, keep=1, best=name)
    mod = mxlearn.Module(small_net)
    mod.fit(
        train,
        eval_data=val,
        num_epoch=4,
        checkpoint=policy,
        optimizer_params={"learning_rate": 0.5},
    )
    epochs, values = mod.history.series("accuracy", "validation", "epoch")
    best = epochs[int(np.argmax(values))] + 1  # the first epoch with the highest value
    pointer = json.loads((tmp_path / "m-best.json").read_text())
    assert pointer["metric"] == "accuracy" and pointer["epoch"] == best
    assert best in ckpt.manifested_epochs(prefix) and 4 in ckpt.manifested_epochs(prefix)


@pytest.mark.parametrize(
    "make",
    [lambda p: mxlearn.Checkpoint(p, best="acuracy"), lambda p: mxlearn.EarlyStopping("acuracy")],
)
def test_an_unknown_name_is_refused_before_training_with_the_closest(
    small_data, small_net, tmp_path, make
):
    train, val = _iters(small_data)
    judge = make(str(tmp_path / "m"))
    arguments = (
        {"checkpoint": judge}
        if isinstance(judge, mxlearn.Checkpoint)
        else {"early_stopping": judge}
    )
    Counter.batches = 0
    with pytest.raises(NotMeasuredNear) as refused:
        mxlearn.Module(small_net).fit(
            train, eval_data=val, num_epoch=2, callbacks=[Counter()], **arguments
        )
    assert type(refused.value) is NotMeasuredNear
    assert refused.value.fields["spec"] == "acuracy"
    assert refused.value.fields["near"] == "accuracy"
    assert Counter.batches == 0


def _rising_score():
    """A custom metric that rises with training: accuracy under another name and class."""

    def score(label, pred):
        return float((pred.argmax(axis=1) == label).mean())

    return mx.metric.CustomMetric(score, name="my_score")


def test_a_custom_metric_needs_its_direction_said(small_data, small_net, tmp_path):
    train, val = _iters(small_data)
    Counter.batches = 0
    with pytest.raises(DirectionUnknown) as refused:
        mxlearn.Module(small_net).fit(
            train,
            eval_data=val,
            eval_metric=_rising_score(),
            num_epoch=2,
            early_stopping=mxlearn.EarlyStopping("my_score"),
            callbacks=[Counter()],
        )
    fields = refused.value.fields
    assert (fields["name"], fields["kind"], fields["maker"]) == (
        "my_score",
        "CustomMetric",
        "EarlyStopping",
    )
    with pytest.raises(DirectionUnknown) as refused:
        mxlearn.Module(small_net).fit(
            train,
            eval_data=val,
            eval_metric=_rising_score(),
            num_epoch=2,
            checkpoint=mxlearn.Checkpoint(str(tmp_path / "m"), best="my_score"),
            callbacks=[Counter()],
        )
    fields = refused.value.fields
    assert (fields["name"], fields["kind"], fields["maker"]) == (
        "my_score",
        "CustomMetric",
        "Checkpoint",
    )
    assert Counter.batches == 0


def test_early_stopping_on_a_rising_custom_score_keeps_the_best_epoch(small_data, small_net):
    train, val = _iters(small_data)
    stopper = mxlearn.EarlyStopping("my_score", patience=2, higher_is_better=True)
    mod = mxlearn.Module(small_net)
    mod.fit(
        train,
        eval_data=val,
        eval_metric=_rising_score(),
        num_epoch=8,
        optimizer_params={"learning_rate": 0.5},
        early_stopping=stopper,
    )
    epochs, values = mod.history.series("my_score", "validation", "epoch")
    assert stopper.best_value == max(values)  # the highest, not the lowest
    assert stopper.best_epoch == epochs[int(np.argmax(values))]


def test_early_stopping_judges_the_validation_metric(small_data, small_net):
    """eval_metric='acc' for training, validation_metric='ce': the default is the validation
    metric, and cross-entropy is better when smaller."""
    train, val = _iters(small_data)
    stopper = mxlearn.EarlyStopping(patience=10)
    mod = mxlearn.Module(small_net)
    mod.fit(
        train,
        eval_data=val,
        eval_metric="acc",
        validation_metric="ce",
        num_epoch=4,
        optimizer_params={"learning_rate": 0.5},
        early_stopping=stopper,
    )
    assert stopper.judged == "cross-entropy" and stopper.is_higher is False
    values = mod.history.series("cross-entropy", "validation", "epoch")[1]
    assert stopper.best_value == min(values)


def test_axes_are_fixed_only_where_the_metric_class_says_so(small_data, small_net):
    """A custom metric named like MXNet's accuracy is drawn on its own scale; top-k accuracy,
    from the factory's 'top_k_acc', on [0, 1]."""
    train, _ = _iters(small_data)
    named_accuracy = mx.metric.CustomMetric(lambda label, pred: 3.0, name="accuracy")
    live = mxlearn.LivePlot(backend="console", png_path=None)
    live.renderer.finish = lambda png, text: None
    mxlearn.Module(small_net).fit(
        train,
        eval_metric=[named_accuracy, mxlearn.create_metric("top_k_acc", top_k=2)],
        num_epoch=1,
        live=live,
    )
    assert live.figure.value_range("accuracy") is None  # 3.0 would lie off a [0, 1] axis
    assert live.figure.value_range("top_2_accuracy") == (0.0, 1.0)
    figure = TrainingFigure()  # a bare history: MXNet's own names only
    assert figure.value_range("accuracy") == (0.0, 1.0)
    assert figure.value_range("my_score") is None


def test_ce_and_top_k_acc_name_the_runs_metrics_of_their_class(small_data, small_net, tmp_path):
    """'ce' is the run's cross-entropy; 'top_k_acc' the run's top-k accuracy, whatever its k."""
    train, val = _iters(small_data)
    stopper = mxlearn.EarlyStopping("ce", patience=10)
    policy = mxlearn.Checkpoint(str(tmp_path / "m"), best="top_k_acc")
    top2 = mxlearn.create_metric("top_k_acc", top_k=2)
    mxlearn.Module(small_net).fit(
        train,
        eval_data=val,
        eval_metric=["acc", "ce", top2],
        num_epoch=2,
        early_stopping=stopper,
        checkpoint=policy,
    )
    assert (stopper.judged, stopper.is_higher) == ("cross-entropy", False)
    assert (policy.best_metric, policy.best_is_higher) == ("top_2_accuracy", True)


def test_a_stated_direction_that_contradicts_the_metric_and_metric_objects_are_refused():
    with pytest.raises(AgainstSmallerIsBetter) as refused:
        direction("cross-entropy", mx.metric.CrossEntropy(), True, "EarlyStopping('ce')")
    assert refused.value.fields["name"] == "cross-entropy"
    assert refused.value.fields["stated"] is True
    with pytest.raises(NotAMetricName) as refused:
        mxlearn.EarlyStopping(mx.metric.Accuracy())
    assert refused.value.fields == {"called": "EarlyStopping()", "kind": "Accuracy"}
    with pytest.raises(NotAMetricName) as refused:
        mxlearn.Checkpoint("m", best=mx.metric.Accuracy())
    assert refused.value.fields == {"called": "Checkpoint(best=...)", "kind": "Accuracy"}
