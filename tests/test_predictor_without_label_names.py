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
    """Each device's label parameter is (2,), the batch 4: the same batch size is no change.
    (MXNet's force_rebind loses weights set_params(allow_missing=True) left on the devices
    only: its predictions are then 1/3 each.)"""
    outputs = []
    for cls in (mx.mod.Module, mxlearn.Module):
        mod = _predictor(cls, params, TWO)
        outputs.append(mod.predict(mx.io.NDArrayIter(X[:8], batch_size=4)).asnumpy())
        if again == "reshape":
            mod.reshape([("data", (4, 5))])
        else:
            mod.bind([("data", (4, 5))], for_training=False, force_rebind=True)
        outputs.append(mod.predict(mx.io.NDArrayIter(X[:8], batch_size=4)).asnumpy())
    np.testing.assert_array_equal(outputs[2], outputs[0])
    np.testing.assert_array_equal(outputs[3], outputs[0])
    if again == "bind":
        np.testing.assert_allclose(outputs[1], 1 / 3)


def test_another_batch_size_on_two_devices_names_both_batch_sizes(params):
    mod = _predictor(mxlearn.Module, params, TWO)
    with pytest.raises(LabelParamKeepsItsRows) as refused:
        mod.forward(mx.io.DataBatch([mx.nd.array(X[:6])]), is_train=False)
    assert (refused.value.fields["bound"], refused.value.fields["rows"]) == (4, 6)
    with pytest.raises(LabelParamKeepsItsRows) as refused:
        mod.reshape([("data", (2, 5))])
    assert (refused.value.fields["bound"], refused.value.fields["rows"]) == (4, 2)


SAVERS = {  # a checkpoint without the label; and with it, saved by MXNet's own predictor
    "trained": lambda: mx.mod.Module(_net()),
    "predictor": lambda: mx.mod.Module(_net(), label_names=None),
}


def _saved(tmp_path, params, saver="trained"):
    mod = SAVERS[saver]()
    mod.bind([("data", (5, 5))], for_training=False)
    mod.set_params(*params, allow_missing=True)
    prefix = str(tmp_path / saver)
    mod.save_checkpoint(prefix, 1)
    assert ("arg:softmax_label" in mx.nd.load(f"{prefix}-0001.params")) == (saver != "trained")
    return prefix


@pytest.mark.parametrize("saver", list(SAVERS))
def test_a_checkpoint_loads_without_label_names_as_in_mxnet(tmp_path, params, saver):
    prefix = _saved(tmp_path, params, saver)
    outputs = []
    for cls in (mx.mod.Module, mxlearn.Module):
        mod = cls.load(prefix, 1, label_names=None)
        mod.bind([("data", (5, 5))], for_training=False)
        outputs.append(mod.predict(mx.io.NDArrayIter(X, batch_size=5)).asnumpy())
    np.testing.assert_array_equal(outputs[1], outputs[0])
    arg_params, _ = mod.get_params()  # MXNet's fails here on a file without the label
    np.testing.assert_array_equal(
        arg_params["fc_weight"].asnumpy(), params[0]["fc_weight"].asnumpy()
    )


def test_a_loaded_predictor_at_another_batch_size_is_told_the_module_that_takes_any(
    tmp_path, params
):
    mod = mxlearn.Module.load(_saved(tmp_path, params), 1, label_names=None)
    mod.bind([("data", (5, 5))], for_training=False)
    expected = mod.predict(mx.io.NDArrayIter(X, batch_size=5)).asnumpy()
    with pytest.raises(LabelParamKeepsItsRows) as refused:
        mod.predict(mx.io.NDArrayIter(X, batch_size=4))
    assert "mxlearn.Module(net)" in refused.value.fix
    fixed = mxlearn.Module(mod.symbol)  # the advice followed, with the loaded weights
    fixed.bind(data_shapes=[("data", (4, 5))], for_training=False)
    fixed.set_params(*mod.get_params())
    got = fixed.predict(mx.io.NDArrayIter(X, batch_size=4)).asnumpy()
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_a_new_binding_at_another_batch_size_makes_the_label_anew(tmp_path, params):
    """The label parameter holds a batch's labels, not weights: a new binding gives it the new
    batch's rows (MXNet copies the old (2,) into (3,) and fails, or, after its own load, which
    holds no label, binds); the weights are carried over."""
    expected = mx.mod.Module.load(_saved(tmp_path, params), 1, label_names=None)
    expected.bind([("data", (6, 5))], for_training=False)
    expected = expected.predict(mx.io.NDArrayIter(X[:6], batch_size=6)).asnumpy()
    loaded = mxlearn.Module.load(_saved(tmp_path, params), 1, label_names=None, context=TWO)
    for mod in (_predictor(mxlearn.Module, params, TWO), loaded):
        mod.bind([("data", (4, 5))], for_training=False, force_rebind=True)
        mod.bind([("data", (6, 5))], for_training=False, force_rebind=True)
        got = mod.predict(mx.io.NDArrayIter(X[:6], batch_size=6)).asnumpy()
        np.testing.assert_allclose(got, expected, rtol=1e-6)
        assert mod.get_params()[0]["softmax_label"].shape == (3,)  # a device's slice


@pytest.mark.parametrize("rows", [5, 7])
def test_an_uneven_split_gives_its_weights_and_checkpoints_them(tmp_path, params, rows):
    """Batch 5 on two devices slices the label parameter 2 and 3: MXNet's get_params averages
    the slices and fails (shapes [2] and [3]); the weights are the ones set, and a checkpoint
    of them predicts as MXNet's own module on one device."""
    mod = mxlearn.Module(_net(), label_names=None, context=TWO)
    mod.bind([("data", (rows, 5))], for_training=False)
    mod.set_params(*params, allow_missing=True)
    arg_params, _ = mod.get_params()
    for name in ("fc_weight", "fc_bias"):
        np.testing.assert_array_equal(arg_params[name].asnumpy(), params[0][name].asnumpy())
    prefix = str(tmp_path / "uneven")
    mod.save_checkpoint(prefix, 1)
    expected = mx.mod.Module(_net())
    expected.bind([("data", (rows, 5))], for_training=False)
    expected.set_params(*params)
    again = mxlearn.Module.load(prefix, 1, label_names=None)
    again.bind([("data", (rows, 5))], for_training=False)
    batches = mx.io.NDArrayIter(X, batch_size=rows)
    np.testing.assert_allclose(
        again.predict(batches).asnumpy(), expected.predict(batches).asnumpy(), rtol=1e-6
    )
