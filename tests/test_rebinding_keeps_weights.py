"""force_rebind keeps the weights the module computes with, also those only its devices hold:
after update (a manual training loop) and after set_params(allow_missing=True). MXNet's own
rebinding copies its stale host copy instead, and forgets them."""

from __future__ import annotations

import numpy as np
import pytest

import mxlearn
from mxlearn import mx

X = np.random.RandomState(0).rand(4, 5).astype("float32")
Y = np.array([0, 1, 2, 0], "float32")


def _net():
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    return mx.sym.SoftmaxOutput(fc, name="softmax")


def _outputs(mod):
    mod.forward(mx.io.DataBatch([mx.nd.array(X)], [mx.nd.array(Y)]), is_train=False)
    return mod.get_outputs()[0].asnumpy()


def _trained(cls, context):
    mx.random.seed(0)
    mod = cls(_net(), context=context)
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    batch = mx.io.DataBatch([mx.nd.array(X)], [mx.nd.array(Y)])
    for _ in range(5):
        mod.forward(batch)
        mod.backward()
        mod.update()
    return mod


def _set_with_allow_missing(cls, context):
    mx.random.seed(0)
    source = mx.mod.Module(_net())
    source.bind([("data", (4, 5))], [("softmax_label", (4,))])
    source.init_params(mx.init.Xavier())
    mod = cls(_net(), context=context)
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.set_params(*source.get_params(), allow_missing=True)
    return mod


@pytest.mark.parametrize("context", [[mx.cpu()], [mx.cpu(0), mx.cpu(1)]])
@pytest.mark.parametrize("made", [_trained, _set_with_allow_missing])
def test_force_rebind_keeps_the_weights_on_the_devices(made, context):
    forgetting, mod = made(mx.mod.Module, context), made(mxlearn.Module, context)
    before = _outputs(mod)
    np.testing.assert_allclose(_outputs(forgetting), before, rtol=1e-6)
    for m in (forgetting, mod):
        m.bind([("data", (4, 5))], [("softmax_label", (4,))], force_rebind=True)
    np.testing.assert_array_equal(_outputs(mod), before)
    assert not np.allclose(_outputs(forgetting), before)  # MXNet's own
