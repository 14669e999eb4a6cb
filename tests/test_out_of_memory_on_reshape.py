"""A batch too large for memory is explained on a reshape as on a fresh bind (MXNet: a raw
"Failed to allocate CPU Memory"), and the module is left as it was: the advice followed, a
smaller batch, works, and so does the batch size it had."""

from __future__ import annotations

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.guards.arguments import OutOfMemory

HUGE = 10**9  # rows of 1000 features: 4 TB, refused by the allocator at once
X = np.random.RandomState(0).rand(8, 1000).astype("float32")
Y = np.arange(8, dtype="float32") % 2


def _module(context):
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    mod = mxlearn.Module(mx.sym.SoftmaxOutput(fc, name="softmax"), context=context)
    mod.bind([("data", (4, 1000))], [("softmax_label", (4,))])
    mod.init_params(mx.init.Xavier())
    return mod


def _outputs(mod, rows):
    mod.forward(mx.io.DataBatch([mx.nd.array(X[:rows])], [mx.nd.array(Y[:rows])]), False)
    return mod.get_outputs()[0].asnumpy()


@pytest.mark.parametrize("context", [[mx.cpu()], [mx.cpu(0), mx.cpu(1)]])
@pytest.mark.parametrize("how", ["reshape", "bind"])
def test_a_batch_too_large_for_memory_is_explained_and_changes_nothing(context, how):
    mod = _module(context)
    before = _outputs(mod, 4)
    huge = ([("data", (HUGE, 1000))], [("softmax_label", (HUGE,))])
    with pytest.raises(OutOfMemory) as refused:
        mod.reshape(*huge) if how == "reshape" else mod.bind(*huge)  # bind: MXNet's reshape
    assert "smaller batch_size" in refused.value.fix
    assert refused.value.problem.startswith(f"mod.{how}(): ")  # the call the student made
    assert mod.data_shapes[0].shape == (4, 1000)
    np.testing.assert_array_equal(_outputs(mod, 4), before)  # the batch size it had
    metric = mx.metric.Accuracy()
    mod.update_metric(metric, [mx.nd.array(Y[:4])])
    assert metric.num_inst == 4
    mod.reshape([("data", (8, 1000))], [("softmax_label", (8,))])  # the advice followed
    np.testing.assert_allclose(_outputs(mod, 8)[:4], before, rtol=1e-6)
