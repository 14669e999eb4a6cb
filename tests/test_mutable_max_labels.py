"""A MutableModule's labels given no maximum (max_label_shapes) follow the data's maximum
rows, on their own batch axis, so the fix LargerThanMax gives (max_data_shapes alone) is enough;
labels that disagree with the data as given are named as given."""

from __future__ import annotations

import numpy as np
import pytest
from one_step import net as _net
from one_step import plain_step, ready, step

import mxlearn
from mxlearn import mx
from mxlearn.guards.rows import RowsDiffer
from mxlearn.module.mutable import LargerThanMax


def test_the_fix_for_a_batch_larger_than_the_maximum_followed_literally_trains():
    mod = ready(mxlearn.MutableModule(_net()))
    with pytest.raises(LargerThanMax) as refused:
        step(mod, 10)
    assert refused.value.fix == "MutableModule(..., max_data_shapes=[('data', (10, 5))])"
    mod = ready(mxlearn.MutableModule(_net(), max_data_shapes=[("data", (10, 5))]))  # followed
    assert mod.max_shapes == {"data": (10, 5), "softmax_label": (10,)}
    np.testing.assert_array_equal(step(mod, 10), plain_step(10))


def test_labels_follow_the_data_maximum_on_their_batch_axis():
    data = mx.sym.Variable("data")  # time-major: (steps, rows, features)
    net = mx.sym.SoftmaxOutput(
        mx.sym.FullyConnected(mx.sym.mean(data, axis=0), num_hidden=3, name="fc"), name="softmax"
    )
    biggest = mx.io.DataDesc("data", (4, 10, 5), layout="TNC")
    mod = mxlearn.MutableModule(net, max_data_shapes=[biggest])
    mod.bind([mx.io.DataDesc("data", (4, 8, 5), layout="TNC")], [("softmax_label", (8,))])
    assert mod.max_shapes == {"data": (4, 10, 5), "softmax_label": (10,)}


def test_labels_that_disagree_with_the_data_as_given_are_named_as_given():
    mod = mxlearn.MutableModule(_net(), max_data_shapes=[("data", (10, 5))])
    with pytest.raises(RowsDiffer) as refused:
        mod.bind([("data", (8, 5))], [("softmax_label", (7,))])
    fields = refused.value.fields
    assert (fields["shape"], fields["first_shape"]) == ((7,), (8, 5))
    ready(mod)  # the advice: the labels with the data's 8 rows
    assert mod.max_shapes == {"data": (10, 5), "softmax_label": (10,)}


def test_a_given_label_maximum_is_kept():
    mod = mxlearn.MutableModule(
        _net(), max_data_shapes=[("data", (10, 5))], max_label_shapes=[("softmax_label", (10,))]
    )
    ready(mod)
    assert mod.max_shapes == {"data": (10, 5), "softmax_label": (10,)}
    np.testing.assert_array_equal(step(mod, 10), plain_step(10))


def _per_step_net():
    """One class per time step: the labels' shape (rows, steps) follows the data's steps."""
    data = mx.sym.Variable("data")  # (rows, 2, steps)
    scores = mx.sym.Convolution(data, kernel=(1,), num_filter=3, name="conv")
    return mx.sym.SoftmaxOutput(scores, multi_output=True, name="softmax")


def test_labels_per_time_step_follow_the_data_maximum_steps():
    values = np.random.RandomState(1).rand(8, 2, 12).astype("float32")
    labels = np.random.RandomState(2).randint(0, 3, (8, 12)).astype("float32")
    batch = mx.io.DataBatch([mx.nd.array(values)], [mx.nd.array(labels)])

    def ready(mod, steps=10):
        mod.bind([("data", (8, 2, steps))], [("softmax_label", (8, steps))])
        mod.init_params(mx.init.One())
        mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
        return mod

    def trained(mod):
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
        return mod.get_params()[0]["conv_weight"].asnumpy()

    with pytest.raises(LargerThanMax) as refused:
        trained(ready(mxlearn.MutableModule(_per_step_net())))
    assert refused.value.fix == "MutableModule(..., max_data_shapes=[('data', (8, 2, 12))])"
    mod = mxlearn.MutableModule(_per_step_net(), max_data_shapes=[("data", (8, 2, 12))])
    ready(mod)  # the advice followed
    assert mod.max_shapes == {"data": (8, 2, 12), "softmax_label": (8, 12)}
    np.testing.assert_array_equal(trained(mod), trained(ready(mx.mod.Module(_per_step_net()), 12)))
