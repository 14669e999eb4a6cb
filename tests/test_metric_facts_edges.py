"""The edges a hostile probe found in what a history knows of its metrics and weights: one name
with two meanings, a manual loop, a metric reporting other names, arguments fit would ignore,
hand-edited files, NaN values and the numbering of epochs."""

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
from mxlearn.errors import InputError

QUIET = logging.getLogger("quiet-facts-edges")
QUIET.setLevel(logging.WARNING)


def _error_rate(label, pred):
    return float((pred.argmax(axis=1) != label).mean())


def _data():
    mxlearn.seed(0)
    X, y = mxlearn.datasets.synthetic_classification(num_samples=640)
    train = mx.io.NDArrayIter(X[:512], y[:512], batch_size=32, shuffle=True)
    return train, mx.io.NDArrayIter(X[512:], y[512:], batch_size=64)


def _module():
    return mxlearn.Module(mxlearn.models.mlp(num_classes=4), context=mx.cpu(), logger=QUIET)


def _fit(mod=None, num_epoch=3, rate=0.05, **fit_args):
    train, val = _data()
    mod = mod or _module()
    fit_args.setdefault("eval_data", val)
    mod.fit(train, num_epoch=num_epoch, optimizer_params={"learning_rate": rate}, **fit_args)
    return mod


@pytest.mark.parametrize("train_metric, validation_metric", [("acc", "custom"), ("custom", "acc")])
def test_one_name_with_two_meanings_in_training_and_validation_is_refused(
    train_metric, validation_metric
):
    made = {"acc": "acc", "custom": mx.metric.CustomMetric(_error_rate, name="accuracy")}
    with pytest.raises(InputError, match="both report 'accuracy'") as refused:
        _fit(eval_metric=made[train_metric], validation_metric=made[validation_metric])
    assert "name='accuracy_2'" in refused.value.fix


def test_a_manual_loop_tells_the_live_plot_what_its_metric_is():
    train, _ = _data()
    mod = _module()
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
    history = _fit(eval_metric=TwoValues(), num_epoch=4).history
    assert "accuracy" in history.metrics()
    assert history.facts("accuracy") is None and history.facts("cross-entropy") is None
    assert history.diagnose() == []


def test_arg_params_fit_would_ignore_are_refused_and_force_init_uses_them():
    trained = _fit(num_epoch=2, eval_metric="acc")
    train, _ = _data()
    mod = _module()
    mod.bind(train.provide_data, train.provide_label)
    mod.init_params()
    given = trained.get_params()
    with pytest.raises(InputError, match="MXNet would ignore") as refused:
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
    with pytest.raises(InputError, match="not readable"):
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
    with pytest.raises(InputError, match="not readable"):
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
    with pytest.raises(InputError, match="say True or False"):
        _fit(
            eval_metric=custom,
            early_stopping=mxlearn.EarlyStopping("accuracy", higher_is_better="False"),
        )
    with pytest.raises(InputError, match="say True or False"):
        _fit(
            eval_metric=custom,
            checkpoint=mxlearn.Checkpoint(
                str(tmp_path / "m"), best="accuracy", higher_is_better="lower"
            ),
        )


def test_describe_takes_numpy_booleans_and_refuses_what_would_mislead():
    history = _fit(eval_metric=["acc", mx.metric.CustomMetric(_error_rate, name="err")]).history
    history.describe("err", higher_is_better=np.bool_(False), value_range=np.array([0, 1]))
    assert history.facts("err").higher_is_better is False
    assert history.facts("err").value_range == (0.0, 1.0)
    with pytest.raises(InputError, match="holds no metric") as typo:
        history.describe("eror", higher_is_better=False)
    assert "'err'" in typo.value.fix
    with pytest.raises(InputError, match="a range is two finite numbers"):
        history.describe("err", higher_is_better=False, value_range="01")
    with pytest.raises(InputError, match="the other way is better"):
        history.describe("accuracy", higher_is_better=False)
    with pytest.raises(InputError, match="holds no metric"):
        MetricHistory().describe(3, higher_is_better=True)  # not a name, nothing recorded


def test_the_table_counts_the_epochs_a_loaded_module_trained(tmp_path):
    prefix = str(tmp_path / "m")
    _fit(num_epoch=5, eval_metric="acc", checkpoint=prefix)
    train, val = _data()
    loaded = mxlearn.Module.load(prefix, 5, context=mx.cpu(), logger=QUIET)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded.fit(train, eval_data=val, num_epoch=8, begin_epoch=5, eval_metric="acc")
    row = mxlearn.compare(loaded, show=False).table().iloc[0]
    assert row["epochs"] == 3 and row["final epoch"] == 7
    assert not pd.isna(row["best epoch"]) and 5 <= row["best epoch"] <= 7
