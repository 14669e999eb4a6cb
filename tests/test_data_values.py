"""Data checks on every batch, not only the first: in-memory iterators have every row checked
before fit or score starts; other iterators have each batch's checks queued on the device and
read where a read happens anyway."""

from __future__ import annotations

import re

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.errors import DivergenceError, NonFiniteError
from mxlearn.guards.batch_values import (
    BatchLabelsOutsideClasses,
    NonFiniteBatch,
    NonFiniteBatchLabels,
)
from mxlearn.guards.batches import FractionalFirstLabel
from mxlearn.guards.data_values import (
    DataFacts,
    LabelsOutsideClasses,
    NonFiniteData,
    NonFiniteLabels,
    what_words,
)


class ListIter(mx.io.DataIter):
    """An iterator mxlearn cannot see into: batches made on the fly from arrays."""

    def __init__(self, X, y, batch_size):
        super().__init__(batch_size)
        self.X, self.y, self.position = X, y, 0
        self.provide_data = [mx.io.DataDesc("data", (batch_size, X.shape[1]))]
        self.provide_label = [mx.io.DataDesc("softmax_label", (batch_size,))]

    def reset(self):
        self.position = 0

    def next(self):
        if self.position + self.batch_size > len(self.X):
            raise StopIteration
        rows = slice(self.position, self.position + self.batch_size)
        self.position += self.batch_size
        return mx.io.DataBatch([mx.nd.array(self.X[rows])], [mx.nd.array(self.y[rows])], pad=0)


@pytest.fixture
def data():
    return mxlearn.datasets.synthetic_classification(num_samples=320, num_classes=4, seed=1)


def _fields(caught, kind) -> dict:
    """The fields of the refusal caught, which must be exactly ``kind`` (the per-batch kinds
    subclass the whole-array ones: which one says which check found it)."""
    assert type(caught.value) is kind, f"{type(caught.value).__name__}: {caught.value}"
    return caught.value.fields


def _numbers(text: str) -> list[int]:
    """The whole numbers a field said in words holds (rows counted, the first row found)."""
    return [int(n) for n in re.findall(r"\d+", text)]


def _module(num_classes=4, **softmax):
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=num_classes)
    return mxlearn.Module(mx.sym.SoftmaxOutput(net, name="softmax", **softmax))


def test_nan_in_a_later_validation_batch_is_refused_before_training(data):
    X, y = data
    Xv = X[:96].copy()
    Xv[80, 2] = np.nan  # the third validation batch
    mod = _module()
    with pytest.raises(NonFiniteData) as caught:
        mod.fit(
            mx.io.NDArrayIter(X, y, 32),
            eval_data=mx.io.NDArrayIter(Xv, y[:96], 32),
            num_epoch=1,
        )
    fields = _fields(caught, NonFiniteData)
    assert fields["what"] == what_words("validation") and fields["name"] == "data"
    assert (fields["nan"], fields["inf"], fields["huge"]) == (1, 0, 0)
    assert _numbers(fields["where"]) == [1, 96, 80, 0]  # 1 of 96 rows, the first is row 80
    assert not mod.params_initialized  # refused before any training


def test_classes_counted_from_1_are_refused_even_when_the_first_batch_lacks_the_top_one(data):
    X, y = data
    y = y + 1  # 1..4 for 4 outputs
    order = np.argsort(y == 4, kind="stable")  # every 4 in the last batches
    with pytest.raises(LabelsOutsideClasses) as caught:
        _module().fit(mx.io.NDArrayIter(X[order], y[order], 32), num_epoch=1)
    fields = _fields(caught, LabelsOutsideClasses)
    assert (fields["last"], fields["label"], fields["classes"]) == (3, "4", 4)
    assert fields["name"] == "softmax_label"


def test_absurd_magnitudes_are_refused(data):
    X, y = data
    X = X.copy()
    X[200, 0] = 3e20
    with pytest.raises(NonFiniteData) as caught:
        _module().fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1)
    fields = _fields(caught, NonFiniteData)
    assert (fields["nan"], fields["inf"], fields["huge"]) == (0, 0, 1)
    assert 200 in _numbers(fields["where"])  # the row


def test_a_custom_iterator_has_every_training_batch_checked(data):
    X, y = data
    X = X.copy()
    X[5 * 32 + 7, 1] = np.inf  # batch 5
    with pytest.raises(NonFiniteBatch) as caught:
        _module().fit(ListIter(X, y, 32), num_epoch=1)
    fields = _fields(caught, NonFiniteBatch)
    assert fields == {"what": what_words("training"), "name": "data", "batch": 5}


def test_a_custom_iterator_has_every_scoring_batch_checked(data):
    X, y = data
    mod = _module()
    mod.fit(ListIter(X, y, 32), num_epoch=1)
    y = y.copy()
    y[4 * 32 + 3] = 7  # batch 4: not a class of 4
    with pytest.raises(BatchLabelsOutsideClasses) as caught:
        mod.score(ListIter(X, y, 32), "acc")
    fields = _fields(caught, BatchLabelsOutsideClasses)
    assert fields["what"] == what_words("evaluation") and fields["name"] == "softmax_label"
    assert (fields["batch"], fields["high"], fields["last"]) == (4, "7", 3)
    y[3] = 2.5  # fractional labels: checked on the first batch of each pass
    with pytest.raises(FractionalFirstLabel) as caught:
        mod.score(ListIter(X, y, 32), "acc")
    fields = _fields(caught, FractionalFirstLabel)
    assert fields["label"] == "2.5" and fields["what"] == what_words("evaluation")
    assert 0 <= mod.score(ListIter(X, data[1], 32), "acc")[0][1] <= 1  # clean data scores


def test_a_custom_validation_iterator_is_checked_before_the_epoch_is_recorded(data, tmp_path):
    X, y = data
    yv = y.copy()
    yv[3 * 32] = -3
    mod = _module()
    with pytest.raises(BatchLabelsOutsideClasses) as caught:
        mod.fit(
            ListIter(X, y, 32),
            eval_data=ListIter(X, yv, 32),
            num_epoch=2,
            checkpoint=str(tmp_path / "m"),
        )
    fields = _fields(caught, BatchLabelsOutsideClasses)
    assert fields["what"] == what_words("validation") and fields["name"] == "softmax_label"
    assert (fields["batch"], fields["low"]) == (3, "-3")
    assert mxlearn.checkpoint.manifested_epochs(str(tmp_path / "m")) == []


def test_ignored_labels_are_accepted_with_use_ignore(data):
    X, y = data
    y = y.copy()
    y[::5] = -1  # rows left out of the loss
    mod = _module(use_ignore=True, ignore_label=-1)
    mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1)
    mod.fit(ListIter(X, y, 32), num_epoch=1, force_init=True)
    with pytest.raises(LabelsOutsideClasses) as caught:
        y[3] = -2  # not the ignored label
        _module(use_ignore=True, ignore_label=-1).fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1)
    fields = _fields(caught, LabelsOutsideClasses)
    assert fields["label"] == "-2" and _numbers(fields["where"])[0] == 1  # only that one row


def test_divergence_says_the_data_was_checked_before_blaming_the_rate(data):
    X, y = data
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4))
    with pytest.raises((NonFiniteError, DivergenceError)) as caught:
        mod.fit(
            mx.io.NDArrayIter(X * 1000, y, 32),
            num_epoch=5,
            optimizer_params={"learning_rate": 10.0},
        )
    cause = caught.value.fields["cause"]
    # what the data check found (every row, clean), said before the rate is blamed
    checked = DataFacts(rows=320, largest=float(np.abs(X * 1000).max())).text()
    assert cause.startswith(checked), cause
    assert "((X - mean) / std)" in cause  # values this large: standardise the data


def test_roll_over_never_counts_real_rows_as_padding(data):
    X, y = data
    X, y = X[:100], y[:100]
    mod = _module()
    mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1)
    rolling = mx.io.NDArrayIter(X, y, 32, last_batch_handle="roll_over")
    for _ in rolling:  # three batches; the last 4 rows are carried into the next pass
        pass
    metric = mx.metric.Accuracy()
    mod.score(rolling, metric)
    # 4 carried + 28, 32, 32: every row real; MXNet's pad=4 on the first batch counts carried rows
    assert metric.num_inst == 96


def test_a_nan_label_in_a_late_batch_of_a_custom_iterator_is_refused(data):
    X, y = data
    y = y.copy()
    y[8 * 32 + 3] = np.nan  # batch 8 of 10
    with pytest.raises(NonFiniteBatchLabels) as caught:
        _module().fit(ListIter(X, y, 32), num_epoch=1)
    fields = _fields(caught, NonFiniteBatchLabels)
    assert fields == {"what": what_words("training"), "name": "softmax_label", "batch": 8}


def _regression():
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=1)
    return mxlearn.Module(mx.sym.LinearRegressionOutput(net, name="lro"), label_names=["lro_label"])


@pytest.mark.parametrize("bad", [np.nan, np.inf, 1e30])
def test_regression_targets_are_checked_like_the_data(data, bad):
    X, _ = data
    target = X[:, 0].copy()
    target[200] = bad
    with pytest.raises(NonFiniteLabels) as caught:
        _regression().fit(
            mx.io.NDArrayIter(X, target, 32, label_name="lro_label"), num_epoch=1, eval_metric="mse"
        )
    fields = _fields(caught, NonFiniteLabels)
    assert fields["what"] == what_words("training") and fields["name"] == "lro_label"
    counted = {"nan": int(np.isnan(bad)), "inf": int(np.isinf(bad)), "huge": int(bad == 1e30)}
    assert {k: fields[k] for k in counted} == counted
    assert 200 in _numbers(fields["where"])  # the row


def test_regression_targets_of_a_custom_iterator_are_checked_per_batch(data):
    X, _ = data
    target = X[:, 0].copy()
    target[6 * 32] = np.inf

    class Targets(ListIter):
        def __init__(self, X, y, batch_size):
            super().__init__(X, y, batch_size)
            self.provide_label = [mx.io.DataDesc("lro_label", (batch_size,))]

    with pytest.raises(NonFiniteBatchLabels) as caught:
        _regression().fit(Targets(X, target, 32), num_epoch=1, eval_metric="mse")
    fields = _fields(caught, NonFiniteBatchLabels)
    assert fields == {"what": what_words("training"), "name": "lro_label", "batch": 6}


def test_each_fit_checks_its_first_batch_again(data):
    X, y = data
    mod = _module()
    mod.fit(ListIter(X, y, 32), num_epoch=1)
    with pytest.raises(FractionalFirstLabel) as caught:
        mod.fit(ListIter(X, y + 0.5, 32), num_epoch=1)  # every label fractional
    fields = _fields(caught, FractionalFirstLabel)
    assert fields["label"] == f"{y[0] + 0.5:g}" and fields["what"] == what_words("training")


@pytest.mark.parametrize("dtype", ["uint8", "float16"])
def test_a_custom_iterator_with_other_dtypes_is_checked(data, dtype):
    X, y = data
    X = (np.abs(X) * 10).astype(dtype)

    class Typed(ListIter):
        def next(self):
            batch = super().next()
            return mx.io.DataBatch([batch.data[0].astype(dtype)], batch.label, pad=0)

    data_in = mx.sym.Cast(mx.sym.Variable("data"), dtype="float32")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data_in, num_hidden=4), name="softmax")
    mod = mxlearn.Module(net)
    mod.fit(Typed(X, y, 32), num_epoch=1)  # no raw "Non-uniform data type in Concat"
    assert mod.score(Typed(X, y, 32), "acc")[0][0] == "accuracy"
