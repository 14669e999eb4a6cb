"""What a run's history knows of its metrics: recorded from the metric objects when fit runs, so
that diagnose, compare and plots never read a direction from a name a user chose."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest

import mxlearn
from mxlearn import MetricHistory, mx
from mxlearn.errors import InputError

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
    with pytest.raises(InputError, match="higher_is_better=True"):
        history.describe("my_error", higher_is_better="lower")
    with pytest.raises(InputError, match="value_range"):
        history.describe("my_score", higher_is_better=True, value_range=(1.0, 0.0))


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
