"""A MutableModule bound with labels keeps them in every shape: executors made for a batch
without labels (a prediction, a reshape of the data only) have labels at its rows too, so a
labelled batch of that shape later trains on its own labels, as plain MXNet's Module bound at
that shape does."""

from __future__ import annotations

import numpy as np
import pytest
from one_step import X, plain_step, ready, step
from one_step import net as _net

import mxlearn
from mxlearn import mx
from mxlearn.guards.batches import UnlabelledTrainingBatch

UNLABELLED = {
    "forward": lambda mod: mod.forward(mx.io.DataBatch([mx.nd.array(X[:5])]), is_train=False),
    "predict an array": lambda mod: mod.predict(X[:5]),
    "predict an iterator": lambda mod: mod.predict(mx.io.NDArrayIter(X[:5], batch_size=5)),
    "reshape the data": lambda mod: mod.reshape([("data", (5, 5))]),
}


@pytest.mark.parametrize("unlabelled", UNLABELLED.values(), ids=list(UNLABELLED))
def test_a_labelled_batch_after_an_unlabelled_one_of_its_shape_trains_on_its_labels(unlabelled):
    mod = ready(mxlearn.MutableModule(_net(), max_data_shapes=[("data", (8, 5))]))
    unlabelled(mod)
    assert [tuple(d.shape) for d in mod.label_shapes] == [(5,)]
    np.testing.assert_array_equal(step(mod, 5), plain_step(5))


def test_an_unlabelled_training_batch_is_refused_after_an_unlabelled_inference_one():
    mod = ready(mxlearn.MutableModule(_net()))
    mod.predict(X[:5])
    with pytest.raises(UnlabelledTrainingBatch):
        mod.forward(mx.io.DataBatch([mx.nd.array(X[:5])]), is_train=True)
    np.testing.assert_array_equal(step(mod, 5), plain_step(5))


def _per_step_net():
    """One class per time step: the labels' shape (rows, steps) follows the data's steps."""
    data = mx.sym.Variable("data")  # (rows, 2, steps)
    scores = mx.sym.Convolution(data, kernel=(1,), num_filter=3, name="conv")
    return mx.sym.SoftmaxOutput(scores, multi_output=True, name="softmax")


def test_labels_of_an_unlabelled_batch_take_the_shape_the_network_gives_them():
    values = np.random.RandomState(1).rand(5, 2, 6).astype("float32")
    labels = np.random.RandomState(2).randint(0, 3, (5, 6)).astype("float32")
    batch = mx.io.DataBatch([mx.nd.array(values)], [mx.nd.array(labels)])
    mod = mxlearn.MutableModule(_per_step_net(), max_data_shapes=[("data", (8, 2, 10))])
    plain = mx.mod.Module(_per_step_net())
    mod.bind([("data", (8, 2, 10))], [("softmax_label", (8, 10))])
    plain.bind([("data", (5, 2, 6))], [("softmax_label", (5, 6))])
    for module in (mod, plain):
        module.init_params(mx.init.One())
        module.init_optimizer(optimizer_params={"learning_rate": 1.0})
    mod.forward(mx.io.DataBatch([mx.nd.array(values)]), is_train=False)  # 6 steps, no labels
    assert [tuple(d.shape) for d in mod.label_shapes] == [(5, 6)]
    for module in (mod, plain):
        module.forward(batch, is_train=True)
        module.backward()
        module.update()
    np.testing.assert_array_equal(
        mod.get_params()[0]["conv_weight"].asnumpy(), plain.get_params()[0]["conv_weight"].asnumpy()
    )
