"""Padded rows of the last batch never count in a metric, and a last batch that is simply
shorter (no padding) is measured as MXNet's own fit measures it."""

from __future__ import annotations

import numpy as np
from conftest import seed_all

import mxlearn
from mxlearn import mx
from mxlearn.datasets import synthetic_classification


def _trained(context=None):
    seed_all(2)
    X, y = mxlearn.datasets.letter_recognition()
    mod = mxlearn.Module(mxlearn.models.mlp(), context=context or mx.cpu())
    mod.fit(
        mx.io.NDArrayIter(X[:3200], y[:3200], 32, shuffle=True),
        optimizer_params={"learning_rate": 0.1},
        num_epoch=3,
    )
    return mod, X[16000:16100], y[16000:16100]


def _numpy_accuracy(mod, X, y):
    probabilities = mod.predict(mx.io.NDArrayIter(X, y, 32)).asnumpy()
    assert probabilities.shape == (100, 26)
    return float((probabilities.argmax(axis=1) == y).mean())


def test_score_leaves_out_the_padding():
    mod, X, y = _trained()
    it = mx.io.NDArrayIter(X, y, 32)  # 100 rows: the 4th batch has 28 padded rows
    ours = mod.score(it, "acc")[0][1]
    assert ours == _numpy_accuracy(mod, X, y)
    raw = mx.mod.Module(mod.symbol)  # MXNet itself counts the padded rows
    raw.bind(it.provide_data, it.provide_label, for_training=False)
    raw.set_params(*mod.get_params())
    assert raw.score(it, "acc")[0][1] != ours


def test_manual_loop_and_several_devices_leave_out_the_padding():
    mod, X, y = _trained(context=[mx.cpu(0), mx.cpu(1)])
    expected = _numpy_accuracy(mod, X, y)
    metric = mx.metric.create("acc")
    for batch in mx.io.NDArrayIter(X, y, 32):
        mod.forward(batch, is_train=False)
        mod.update_metric(metric, batch.label)
    assert metric.num_inst == 100
    assert metric.get()[1] == expected
    assert np.isclose(mod.score(mx.io.NDArrayIter(X, y, 32), "acc")[0][1], expected)


class ShortLast(mx.io.DataIter):
    """An iterator whose last batch simply has fewer rows (no padding): MXNet reshapes."""

    def __init__(self, X, y, batch_size):
        super().__init__(batch_size)
        self.X, self.y, self.at = mx.nd.array(X), mx.nd.array(y), 0

    @property
    def provide_data(self):
        return [mx.io.DataDesc("data", (self.batch_size, self.X.shape[1]))]

    @property
    def provide_label(self):
        return [mx.io.DataDesc("softmax_label", (self.batch_size,))]

    def reset(self):
        self.at = 0

    def next(self):
        if self.at >= self.X.shape[0]:
            raise StopIteration
        start, self.at = self.at, min(self.at + self.batch_size, self.X.shape[0])
        return mx.io.DataBatch([self.X[start : self.at]], [self.y[start : self.at]], pad=0)


def _data(rows=100):
    return synthetic_classification(num_samples=rows, num_features=16, num_classes=4, seed=1)


def _net():
    return mxlearn.models.mlp(num_classes=4, num_hidden=8)


def test_a_short_last_batch_without_padding_is_measured_like_mxnet():
    X, y = _data()
    mxlearn.seed(0)
    mod = mxlearn.Module(_net())
    mod.fit(
        mx.io.NDArrayIter(X, y, 32),
        eval_data=ShortLast(X[:70], y[:70], 32),
        optimizer_params={"learning_rate": 0.1},
        num_epoch=2,
    )
    outputs = mod.predict(mx.io.NDArrayIter(X[:70], y[:70], 70)).asnumpy()
    expected = float((outputs.argmax(axis=1) == y[:70]).mean())
    assert mod.history.last("accuracy", "validation") == expected
