"""What a run's history knows of its metrics: recorded from the metric objects when fit runs, so
that diagnose, compare and plots never read a direction from a name a user chose. One name with
two meanings, a metric reporting other names, a direction that is not True or False, weights fit
would ignore and hand-edited files are refused; a manual loop, NaN values and the epochs of a
loaded module are read as they are."""

from __future__ import annotations

import json
import logging
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import mxlearn
from mxlearn import MetricHistory, mx
from mxlearn.guards.fit_arguments import ParamsWouldBeIgnored
from mxlearn.metrics.directions import (
    DirectionAgainstMXNet,
    DirectionNotSaid,
    DirectionNotTrueOrFalse,
    NoSuchRecordedMetric,
    NotARange,
)
from mxlearn.metrics.history import SavedHistoryUnreadable
from mxlearn.training.plan import TwoMeaningsOfOneName

QUIET = logging.getLogger("quiet-facts")
QUIET.setLevel(logging.WARNING)


def _error_rate(label, pred):
    return float((pred.argmax(axis=1) != label).mean())


def error_rate_named_accuracy():
    """A custom metric that measures an error rate (smaller is better) under the name
    'accuracy': nothing but its class tells mxlearn what it measures."""
    return mx.metric.CustomMetric(_error_rate, name="accuracy")


def _fit(eval_metric, num_epoch=8, checkpoint=None, **fit_args):
    mxlearn.seed(0)
    X, y = mxlearn.datasets.synthetic_classification(num_samples=640)
    train = mx.io.NDArrayIter(X[:512], y[:512], batch_size=32, shuffle=True)
    val = mx.io.NDArrayIter(X[512:], y[512:], batch_size=64)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4), context=mx.cpu(), logger=QUIET)
    mod.fit(
        train,
        eval_data=val,
        num_epoch=num_epoch,
        eval_metric=eval_metric,
        optimizer_params={"learning_rate": fit_args.pop("learning_rate", 0.1)},
        checkpoint=checkpoint,
        **fit_args,
    )
    return mod


@pytest.fixture(scope="module")
def custom_run():
    mod = _fit([error_rate_named_accuracy(), "ce"], learning_rate=0.02)
    errors = mod.history.series("accuracy", "validation", "epoch")[1]
    assert errors[-1] < 0.1 < 0.4 < errors[0]  # an error rate that fell: the run learned
    return mod


def test_fit_records_what_it_knows_of_each_metric(custom_run):
    history = custom_run.history
    assert history.facts("accuracy") is None  # a CustomMetric: its direction is not known
    assert history.facts("cross-entropy").higher_is_better is False
    known = _fit(["acc"], num_epoch=1).history
    assert known.facts("accuracy").higher_is_better is True
    assert known.facts("accuracy").value_range == (0.0, 1.0)


def test_a_custom_metric_named_accuracy_is_not_read_as_accuracy(custom_run):
    history = custom_run.history
    # read as an accuracy, the falling error rate was "a learning rate too high"
    assert history.diagnose() == []
    table = mxlearn.compare(custom_run, show=False).table()
    row = table[table.metric == "accuracy"].iloc[0]
    assert pd.isna(row["best validation"]) and pd.isna(row["best epoch"])


def test_what_fit_recorded_survives_saving_and_checkpoints(custom_run, tmp_path):
    again = MetricHistory.from_dict(custom_run.history.to_dict())
    assert again.facts("accuracy") is None
    assert again.facts("cross-entropy") == custom_run.history.facts("cross-entropy")
    _fit([error_rate_named_accuracy(), "ce"], num_epoch=2, checkpoint=str(tmp_path / "mlp"))
    row = mxlearn.compare(str(tmp_path / "mlp"), show=False).table().iloc[0]
    assert row["metric"] == "accuracy" and pd.isna(row["best validation"])


def test_a_direction_the_user_states_is_recorded_and_used(custom_run, tmp_path):
    stopped = _fit(
        [error_rate_named_accuracy()],
        num_epoch=3,
        early_stopping=mxlearn.EarlyStopping("accuracy", higher_is_better=False, patience=5),
    )
    assert stopped.history.facts("accuracy").higher_is_better is False
    kept = _fit(
        [error_rate_named_accuracy()],
        num_epoch=1,
        checkpoint=mxlearn.Checkpoint(str(tmp_path / "m"), best="accuracy", higher_is_better=False),
    )
    assert kept.history.facts("accuracy").higher_is_better is False
    history = MetricHistory.from_dict(custom_run.history.to_dict())
    history.describe("accuracy", higher_is_better=False)
    row = mxlearn.compare(history, show=False).table().iloc[0]
    errors = history.series("accuracy", "validation", "epoch")[1]
    assert row["best validation"] == min(errors)


def test_describe_refuses_what_is_not_a_direction():
    history = MetricHistory()
    with pytest.raises(DirectionNotSaid) as refused:
        history.describe("my_error", higher_is_better="lower")
    assert refused.value.fields == {"metric": "my_error", "value": "lower"}
    with pytest.raises(NotARange) as refused:
        history.describe("my_score", higher_is_better=True, value_range=(1.0, 0.0))
    assert refused.value.fields == {"metric": "my_score", "value": (1.0, 0.0)}


def test_a_hand_made_history_reads_mxnets_own_names():
    history = MetricHistory()
    assert history.facts("accuracy").higher_is_better is True
    assert history.facts("top_3_accuracy").value_range == (0.0, 1.0)
    assert history.facts("my_score") is None
    assert np.isclose(history.facts("mse").higher_is_better, False)


def _letters(seed: int):
    X, y = mxlearn.datasets.letter_recognition()
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    mxlearn.seed(seed)
    return mx.io.NDArrayIter(X[:4000], y[:4000], batch_size=100, shuffle=True)


def _mlp() -> mxlearn.Module:
    return mxlearn.Module(mxlearn.models.mlp(), context=mx.cpu(), logger=QUIET)


FINE = {"learning_rate": 0.01}


@pytest.fixture(scope="module")
def trained_letters():
    mod = _mlp()
    mod.fit(
        _letters(0),
        num_epoch=10,
        eval_metric=["acc", "ce"],
        optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
    )
    return mod


@pytest.mark.parametrize("how", ["again", "set_params", "arg_params"])
def test_fine_tuning_from_trained_weights_is_not_called_not_learning(trained_letters, how):
    # three more epochs at a tenth of the rate: the loss falls by less than 5% from where the
    # trained weights began, which read against "before training" was "not learning"
    train, extra = _letters(1), {}
    params = trained_letters.get_params()
    if how == "again":
        mod = trained_letters
        mod.init_optimizer(optimizer_params=FINE, force_init=True)
    else:
        mod = _mlp()
        if how == "set_params":
            mod.bind(train.provide_data, train.provide_label)
            mod.set_params(*params)
        else:
            extra = dict(zip(("arg_params", "aux_params"), params))
    mod.fit(train, num_epoch=3, eval_metric=["acc", "ce"], optimizer_params=FINE, **extra)
    losses = mod.history.series("cross-entropy", "train", "epoch")[1]
    assert 0.3 < losses[-1] < losses[0] < 0.5
    assert mod.history.events[0].kind == "given_weights"
    assert mod.history.diagnose() == []


def test_a_module_initialised_by_hand_before_fit_is_judged_from_its_first_batch():
    mxlearn.seed(0)
    X, y = mxlearn.datasets.synthetic_classification(num_samples=640)
    train = mx.io.NDArrayIter(X[:512], y[:512], batch_size=32, shuffle=True)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4), context=mx.cpu(), logger=QUIET)
    mod.bind(train.provide_data, train.provide_label)
    mod.init_params(mx.init.Uniform(0.01))
    mod.fit(train, num_epoch=3, eval_metric=["acc", "ce"], optimizer_params={"learning_rate": 1e-6})
    assert mod.history.events == []
    assert [f.kind for f in mod.history.diagnose()] == ["not_learning"]


def _train_and_validation():
    mxlearn.seed(0)
    X, y = mxlearn.datasets.synthetic_classification(num_samples=640)
    train = mx.io.NDArrayIter(X[:512], y[:512], batch_size=32, shuffle=True)
    return train, mx.io.NDArrayIter(X[512:], y[512:], batch_size=64)


def _quiet_module():
    return mxlearn.Module(mxlearn.models.mlp(num_classes=4), context=mx.cpu(), logger=QUIET)


def _short_fit(mod=None, num_epoch=3, rate=0.05, **fit_args):
    train, val = _train_and_validation()
    mod = mod or _quiet_module()
    fit_args.setdefault("eval_data", val)
    mod.fit(train, num_epoch=num_epoch, optimizer_params={"learning_rate": rate}, **fit_args)
    return mod


@pytest.mark.parametrize("train_metric, validation_metric", [("acc", "custom"), ("custom", "acc")])
def test_one_name_with_two_meanings_in_training_and_validation_is_refused(
    train_metric, validation_metric
):
    made = {"acc": "acc", "custom": mx.metric.CustomMetric(_error_rate, name="accuracy")}
    with pytest.raises(TwoMeaningsOfOneName) as refused:
        _short_fit(eval_metric=made[train_metric], validation_metric=made[validation_metric])
    kinds = {"acc": "Accuracy", "custom": "CustomMetric"}
    assert refused.value.fields == {
        "name": "accuracy",
        "train_kind": kinds[train_metric],
        "validation_kind": kinds[validation_metric],
    }
    assert "name='accuracy_2'" in refused.value.fix


def test_a_manual_loop_tells_the_live_plot_what_its_metric_is():
    train, _ = _train_and_validation()
    mod = _quiet_module()
    mod.bind(train.provide_data, train.provide_label)
    mod.init_params()
    mod.init_optimizer(optimizer_params={"learning_rate": 0.05})
    metric = mx.metric.CustomMetric(_error_rate, name="accuracy")  # an error rate
    live = mxlearn.LivePlot(backend="console")
    for epoch in range(6):
        train.reset()
        metric.reset()
        for batch in train:
            mod.forward(batch, is_train=True)
            mod.update_metric(metric, batch.label)
            mod.backward()
            mod.update()
            live.update(epoch, metric, batch)
    live.close()
    errors = live.history.series("accuracy", "train", "epoch")[1]
    assert errors[-1] < errors[0] / 2  # it learned; read as an accuracy it got worse
    assert live.history.facts("accuracy") is None
    assert live.findings == [] and live.history.diagnose() == []


class TwoValues(mx.metric.EvalMetric):
    """One metric object whose get() reports two values under MXNet's names."""

    def __init__(self):
        super().__init__("two")

    def update(self, labels, preds):
        for label, pred in zip(labels, preds):
            wrong = float((pred.asnumpy().argmax(1) != label.asnumpy()).sum())
            self.sum_metric += wrong
            self.global_sum_metric += wrong
            self.num_inst += len(label)
            self.global_num_inst += len(label)

    def get(self):
        error = self.sum_metric / self.num_inst if self.num_inst else math.nan
        return ["accuracy", "cross-entropy"], [error, 1 - error]

    def get_global(self):
        return self.get()


def test_names_a_metric_reports_beside_its_own_are_of_unknown_meaning():
    history = _short_fit(eval_metric=TwoValues(), num_epoch=4).history
    assert "accuracy" in history.metrics()
    assert history.facts("accuracy") is None and history.facts("cross-entropy") is None
    assert history.diagnose() == []


def test_arg_params_fit_would_ignore_are_refused_and_force_init_uses_them():
    trained = _short_fit(num_epoch=2, eval_metric="acc")
    train, _ = _train_and_validation()
    mod = _quiet_module()
    mod.bind(train.provide_data, train.provide_label)
    mod.init_params()
    given = trained.get_params()
    with pytest.raises(ParamsWouldBeIgnored) as refused:
        mod.fit(train, num_epoch=1, arg_params=given[0], aux_params=given[1])
    assert "force_init=True" in refused.value.fix
    mod.fit(train, num_epoch=1, arg_params=given[0], aux_params=given[1], force_init=True)
    assert mod.history.events[0].kind == "given_weights"
    assert mod.weights_from == "trained"  # fit's own set_params each epoch are not "given"


@pytest.mark.parametrize(
    "saved",
    [
        {"accuracy": {}},
        {"accuracy": 0},
        {"accuracy": {"higher_is_better": "false", "value_range": None}},
        {"accuracy": {"higher_is_better": None, "value_range": None}},
        {"accuracy": {"higher_is_better": True, "value_range": [1, 0]}},
        {"accuracy": {"higher_is_better": True, "value_range": ["0", "1"]}},
        {"accuracy": {"higher_is_better": True, "value_range": [0, 1, 2]}},
        [],
    ],
)
def test_hand_edited_metric_facts_are_refused_when_loaded(saved):
    history = MetricHistory()
    history.record("accuracy", "train", "epoch", epoch=0, batch=1, samples=1, time=0.0, value=0.5)
    data = json.loads(json.dumps(history.to_dict()))
    data["metrics"] = saved
    with pytest.raises(SavedHistoryUnreadable):
        MetricHistory.from_dict(data)


@pytest.mark.parametrize(
    "event",
    [
        {"epoch": "2", "samples": 0, "time": 0.0, "text": "x", "kind": "restored"},
        {"epoch": 2, "samples": 0, "time": 0.0, "text": "x", "kind": 7},
        {"epoch": 2, "samples": 0, "time": "soon", "text": "x", "kind": "note"},
    ],
)
def test_hand_edited_events_are_refused_when_loaded(event):
    data = MetricHistory().to_dict()
    data["events"] = [event]
    with pytest.raises(SavedHistoryUnreadable):
        MetricHistory.from_dict(data)


def test_a_nan_validation_value_is_not_the_best():
    history = MetricHistory()
    for epoch, value in enumerate([math.nan, 0.9, 0.5]):
        history.record(
            "accuracy",
            "validation",
            "epoch",
            epoch=epoch,
            batch=1,
            samples=1,
            time=0.0,
            value=value,
        )
    row = mxlearn.compare(history, show=False).table().iloc[0]
    assert row["best validation"] == 0.9 and row["best epoch"] == 1


def test_a_direction_must_be_true_or_false_wherever_it_is_said(tmp_path):
    custom = mx.metric.CustomMetric(_error_rate, name="accuracy")
    with pytest.raises(DirectionNotTrueOrFalse) as refused:
        _short_fit(
            eval_metric=custom,
            early_stopping=mxlearn.EarlyStopping("accuracy", higher_is_better="False"),
        )
    assert refused.value.fields["stated"] == "False"
    assert refused.value.fields["maker"] == "EarlyStopping"
    with pytest.raises(DirectionNotTrueOrFalse) as refused:
        _short_fit(
            eval_metric=custom,
            checkpoint=mxlearn.Checkpoint(
                str(tmp_path / "m"), best="accuracy", higher_is_better="lower"
            ),
        )
    assert refused.value.fields["stated"] == "lower"
    assert refused.value.fields["maker"] == "Checkpoint"


def test_describe_takes_numpy_booleans_and_refuses_what_would_mislead():
    error_rate = mx.metric.CustomMetric(_error_rate, name="err")
    history = _short_fit(eval_metric=["acc", error_rate]).history
    history.describe("err", higher_is_better=np.bool_(False), value_range=np.array([0, 1]))
    assert history.facts("err").higher_is_better is False
    assert history.facts("err").value_range == (0.0, 1.0)
    with pytest.raises(NoSuchRecordedMetric) as typo:
        history.describe("eror", higher_is_better=False)
    assert typo.value.fields["metric"] == "eror" and typo.value.fields["suggested"] == "err"
    assert "'err'" in typo.value.fix
    with pytest.raises(NotARange) as refused:
        history.describe("err", higher_is_better=False, value_range="01")
    assert refused.value.fields == {"metric": "err", "value": "01"}
    with pytest.raises(DirectionAgainstMXNet) as refused:
        history.describe("accuracy", higher_is_better=False)
    assert refused.value.fields == {"metric": "accuracy", "value": False}
    with pytest.raises(NoSuchRecordedMetric) as refused:
        MetricHistory().describe(3, higher_is_better=True)  # not a name, nothing recorded
    assert refused.value.fields["metric"] == 3 and refused.value.fields["recorded"] == []


def test_the_table_counts_the_epochs_a_loaded_module_trained(tmp_path):
    prefix = str(tmp_path / "m")
    _short_fit(num_epoch=5, eval_metric="acc", checkpoint=prefix)
    train, val = _train_and_validation()
    loaded = mxlearn.Module.load(prefix, 5, context=mx.cpu(), logger=QUIET)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded.fit(train, eval_data=val, num_epoch=8, begin_epoch=5, eval_metric="acc")
    row = mxlearn.compare(loaded, show=False).table().iloc[0]
    assert row["epochs"] == 3 and row["final epoch"] == 7
    assert not pd.isna(row["best epoch"]) and 5 <= row["best epoch"] <= 7
