"""mod.predict and mod.score: an array is predicted in inference mode at any number of rows, a
module stays usable after data of another shape, and no rows or no labels are explained."""

from __future__ import annotations

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.guards.arguments import NoLabelsToScore, NoRows


def _dropout_net(num_classes=4):
    net = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(net, name="fc1", num_hidden=32)
    net = mx.sym.Activation(net, act_type="relu")
    net = mx.sym.Dropout(net, p=0.5)
    net = mx.sym.FullyConnected(net, name="fc2", num_hidden=num_classes)
    return mx.sym.SoftmaxOutput(net, name="softmax")


def test_predict_on_an_array_runs_in_inference_mode_at_any_number_of_rows(small_data):
    X, y = small_data
    mod = mxlearn.Module(_dropout_net())
    mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1, optimizer_params={"learning_rate": 0.1})
    first = mod.predict(X[:50]).asnumpy()  # 50 rows after training at batch 32
    again = mod.predict(mx.nd.array(X[:50])).asnumpy()
    assert first.shape == (50, 4)
    np.testing.assert_array_equal(first, again)  # no Dropout: the same answer twice
    by_iter = mod.predict(mx.io.NDArrayIter(X[:50], batch_size=10)).asnumpy()
    np.testing.assert_allclose(first, by_iter, rtol=1e-5, atol=1e-7)


def test_predict_after_another_feature_shape_leaves_the_module_usable(small_data, small_net):
    X, y = small_data
    mod = mxlearn.Module(small_net)
    mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1)
    assert mod.predict(X[:4].reshape(4, 4, 4)).shape == (4, 4)
    assert mod.predict(X[:4]).shape == (4, 4)
    assert mod.predict(mx.io.NDArrayIter(X, y, 32)).shape == (len(X), 4)


def test_predict_and_score_without_rows_or_labels_are_explained(ready_module, small_data):
    X, _ = small_data
    with pytest.raises(NoRows) as refused:
        ready_module.predict(X[:0])
    assert refused.value.fields == {"called": "mod.predict()", "shape": (0, X.shape[1])}
    with pytest.raises(NoLabelsToScore):
        ready_module.score(mx.io.NDArrayIter(X, None, 32), "acc")
