"""A second bind of a MutableModule to another batch size (fit on a new iterator does it) is a
change of shape like any other: the executors bound at the maximum stay as they are, and the
module trains as mxlearn.Module does after the same bind."""

from __future__ import annotations

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.module.mutable import LargerThanMax

X = np.random.RandomState(0).rand(8, 5).astype("float32")
Y = np.array([0, 1, 2, 1, 2, 0, 0, 1], dtype="float32")


def _net():
    data = mx.sym.Variable("data")
    return mx.sym.SoftmaxOutput(
        mx.sym.FullyConnected(data, num_hidden=3, name="fc"), name="softmax"
    )


def _trained_after_a_second_bind(cls):
    mod = cls(_net())
    mod.bind([("data", (8, 5))], [("softmax_label", (8,))])
    mod.init_params(mx.init.One())
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    assert [tuple(d.shape) for d in mod.data_shapes] == [(4, 5)]
    for rows in (8, 4, 8):
        batch = mx.io.DataBatch([mx.nd.array(X[:rows])], [mx.nd.array(Y[:rows])])
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
    return mod, mod.get_params()[0]["fc_weight"].asnumpy()


def test_a_second_bind_to_fewer_rows_keeps_the_maximum_and_trains_as_a_module():
    mod, weights = _trained_after_a_second_bind(mxlearn.MutableModule)
    assert mod.max_shapes == {"data": (8, 5), "softmax_label": (8,)}
    assert (mod.inspector.misses, mod.inspector.hits) == (1, 3)  # 4 rows bound once
    np.testing.assert_array_equal(weights, _trained_after_a_second_bind(mxlearn.Module)[1])


def test_a_second_bind_beyond_the_maximum_is_refused_and_the_module_stays_as_it_was():
    mod = mxlearn.MutableModule(_net())
    mod.bind([("data", (8, 5))], [("softmax_label", (8,))])
    mod.init_params()
    with pytest.raises(LargerThanMax) as refused:
        mod.bind([("data", (16, 5))], [("softmax_label", (16,))])
    assert refused.value.fields["called"] == "mod.bind()"
    assert [tuple(d.shape) for d in mod.data_shapes] == [(8, 5)]
    assert refused.value.fix == "MutableModule(..., max_data_shapes=[('data', (16, 5))])"
    mod = mxlearn.MutableModule(_net(), max_data_shapes=[("data", (16, 5))])  # followed
    mod.bind([("data", (8, 5))], [("softmax_label", (8,))])
    mod.init_params()
    mod.bind([("data", (16, 5))], [("softmax_label", (16,))])
    assert [tuple(d.shape) for d in mod.data_shapes] == [(16, 5)]
    assert mod.max_shapes == {"data": (16, 5), "softmax_label": (16,)}
