"""Padded rows of the last batch never count in a metric."""

from __future__ import annotations

import numpy as np
from conftest import seed_all

import mxlearn
from mxlearn import mx


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
