"""Correct or refused, never quietly different (issue 13, family 6)."""

from __future__ import annotations

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.errors import InputError, LifecycleError


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


def test_a_checkpoint_missing_layers_is_refused_instead_of_loading_zeros(small_net, tmp_path):
    """A symbol file and a parameter file of two different networks: missing layers would be
    zeros, every prediction 1/num_classes."""
    other = mx.sym.FullyConnected(mx.sym.Variable("data"), name="fc1", num_hidden=8)
    other = mx.sym.SoftmaxOutput(other, name="softmax")
    donor = mxlearn.Module(other)
    donor.bind([("data", (32, 16))], [("softmax_label", (32,))])
    donor.init_params()
    prefix = str(tmp_path / "m")
    donor.save_checkpoint(prefix, 1)
    small_net.save(f"{prefix}-symbol.json")  # now the symbol needs fc2 and fc3 as well
    with pytest.raises(InputError, match="fc2_weight") as info:
        mxlearn.Module.load(prefix, 1)
    assert "would start as zeros" in str(info.value)


def test_set_params_with_allow_missing_initializes_what_is_missing(ready_module):
    args, auxs = ready_module.get_params()
    partial = {k: v for k, v in args.items() if k != "fc2_weight"}
    with pytest.raises(InputError, match="is missing") as info:
        ready_module.set_params(partial, auxs)
    assert "mod.init_params(" in info.value.fix
    assert "force_init=True" in info.value.fix  # a call that fills the missing, not zeros
    ready_module.set_params(partial, auxs, allow_missing=True)  # keeps its own fc2_weight
    assert ready_module.get_params()[0]["fc2_weight"].asnumpy().any()
    fresh = mxlearn.Module(ready_module.symbol)
    fresh.bind(ready_module.data_shapes, ready_module.label_shapes)
    with pytest.raises(InputError, match="would stay zeros"):
        fresh.set_params(partial, auxs, allow_missing=True)


def test_live_plot_update_after_close_is_refused(small_iter, small_net):
    live = mxlearn.LivePlot(backend="console", png_path=None)
    live.renderer.finish = lambda frame, png, text: None
    metric = mx.metric.create("acc")
    mod = mxlearn.Module(small_net)
    mod.bind(small_iter.provide_data, small_iter.provide_label)
    mod.init_params()
    batch = next(iter(small_iter))
    mod.forward(batch, is_train=False)
    mod.update_metric(metric, batch.label)
    live.update(0, metric, batch)
    live.close()
    with pytest.raises(LifecycleError, match="after the plot was finished"):
        live.update(0, metric, batch)
    with pytest.raises(LifecycleError, match="after the plot was finished"):
        live.validation(0, [("accuracy", 0.5)])


def test_live_plot_of_a_finished_fit_takes_no_manual_values(small_iter, small_net):
    live = mxlearn.LivePlot(backend="console", png_path=None)
    mod = mxlearn.Module(small_net)
    mod.fit(small_iter, num_epoch=1, live=live)
    records = len(mod.history)
    metric = mx.metric.create("acc")
    batch = next(iter(small_iter))
    mod.forward(batch, is_train=False)
    mod.update_metric(metric, batch.label)
    with pytest.raises(LifecycleError, match="after the plot was finished"):
        live.update(0, metric, batch)
    assert len(mod.history) == records  # the fit's history is untouched


def test_two_metrics_of_one_name_are_refused_before_training(small_iter, small_net):
    mod = mxlearn.Module(small_net)
    with pytest.raises(InputError, match="two metrics are named \\['accuracy'\\]") as info:
        mod.fit(small_iter, num_epoch=1, eval_metric=["acc", mx.metric.Accuracy()])
    assert "name=" in info.value.fix and mod.state == "created"
    mod.fit(small_iter, num_epoch=1, eval_metric=["acc", mx.metric.Accuracy(name="acc_again")])
    assert {"accuracy", "acc_again"} <= set(mod.history.metrics())


def test_parameters_of_a_network_with_other_layer_sizes_are_named_not_the_data(tmp_path):
    import shutil

    X, y = mxlearn.datasets.synthetic_classification(num_samples=64, num_classes=4)
    for name, hidden in (("small", 8), ("large", 16)):
        mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=hidden))
        mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1)
        mod.save_checkpoint(str(tmp_path / name), 1)
    shutil.copy(tmp_path / "large-0001.params", tmp_path / "small-0001.params")
    mod = mxlearn.Module.load(str(tmp_path / "small"), 1)
    with pytest.raises(InputError) as caught:
        mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=2, begin_epoch=1)
    text = str(caught.value)
    assert "'fc1_weight' is (16, 16) where this network needs (8, 16)" in text
    assert "features" not in text  # the data is not the problem
