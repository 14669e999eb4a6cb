"""Module(net, label_names=None), MXNet's predictor idiom: the loss layer's label becomes a
parameter holding each device's slice of the bound batch. It runs wherever MXNet's does, with
its numbers, and is refused (naming the batch sizes) only where MXNet cannot reshape it."""

from __future__ import annotations

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.guards.binding import LabelParamKeepsItsRows

X = np.random.RandomState(0).rand(10, 5).astype("float32")
TWO = [mx.cpu(0), mx.cpu(1)]


def _net():
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    return mx.sym.SoftmaxOutput(fc, name="softmax")


@pytest.fixture
def params():
    mx.random.seed(0)
    mod = mx.mod.Module(_net())
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.init_params(mx.init.Xavier())
    return mod.get_params()


def _predictor(cls, params, context):
    mod = cls(_net(), label_names=None, context=context)
    mod.bind([("data", (4, 5))], for_training=False)
    mod.set_params(*params, allow_missing=True)
    return mod


@pytest.mark.parametrize("again", ["reshape", "bind"])
def test_two_devices_take_the_bound_batch_size_again_as_mxnet_does(params, again):
    """Each device's label parameter is (2,), the batch 4: the same batch size is no change."""
    outputs = []
    for cls in (mx.mod.Module, mxlearn.Module):
        mod = _predictor(cls, params, TWO)
        if again == "reshape":
            mod.reshape([("data", (4, 5))])
        else:
            mod.bind([("data", (4, 5))], for_training=False, force_rebind=True)
        outputs.append(mod.predict(mx.io.NDArrayIter(X[:8], batch_size=4)).asnumpy())
    np.testing.assert_array_equal(outputs[1], outputs[0])


def test_another_batch_size_on_two_devices_names_both_batch_sizes(params):
    mod = _predictor(mxlearn.Module, params, TWO)
    with pytest.raises(LabelParamKeepsItsRows) as refused:
        mod.forward(mx.io.DataBatch([mx.nd.array(X[:6])]), is_train=False)
    assert (refused.value.fields["bound"], refused.value.fields["rows"]) == (4, 6)
    with pytest.raises(LabelParamKeepsItsRows) as refused:
        mod.reshape([("data", (2, 5))])
    assert (refused.value.fields["bound"], refused.value.fields["rows"]) == (4, 2)
