"""The padding of a last batch is left out along each array's own batch axis: a 'TN' label's
axis 1, and the axis of the output that follows the data's rows (measured from the network).
Checked against accuracy computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

import mxlearn
from mxlearn import mx

T, N, C, K = 5, 4, 2, 3


def _time_major():
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=K, flatten=False, name="fc")
    return mx.sym.SoftmaxOutput(fc, name="softmax", preserve_shape=True)


def _multi_output():
    conv = mx.sym.Convolution(mx.sym.var("data"), num_filter=K, kernel=(1,), name="conv")
    return mx.sym.SoftmaxOutput(conv, name="softmax", multi_output=True)


def _bound(net, data, label, context):
    mod = mxlearn.Module(net, context=context)
    mod.bind([data], [label], for_training=False)
    mod.init_params(mx.init.Xavier())
    return mod


def _measured(mod, x, wrong_last, label_axis, class_axis):
    """Accuracy over a batch whose last sequence (the padding) is made all wrong, and the
    same by hand over the real sequences."""
    mod.forward(mx.io.DataBatch([mx.nd.array(x)]), is_train=False)
    pred = mod.get_outputs()[0].asnumpy().argmax(axis=class_axis)
    y = pred.astype("float32")
    wrong_last(y)
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)], pad=1)
    mod.forward(batch, is_train=False)
    metric = mx.metric.Accuracy(axis=class_axis)
    mod.update_metric(metric, batch.label)
    real = np.take(y, range(N - 1), axis=label_axis)
    hand = np.take(pred, range(N - 1), axis=label_axis)
    return (metric.get()[1], metric.num_inst), (float((real == hand).mean()), real.size)


def test_a_time_major_batch_leaves_out_its_padded_sequence():
    data = mx.io.DataDesc("data", (T, N, C), layout="TNC")
    label = mx.io.DataDesc("softmax_label", (T, N), layout="TN")
    mod = _bound(_time_major(), data, label, [mx.cpu()])
    x = np.random.RandomState(0).rand(T, N, C).astype("float32")

    def wrong_last(y):
        y[:, N - 1] = (y[:, N - 1] + 1) % K

    ours, hand = _measured(mod, x, wrong_last, label_axis=1, class_axis=2)
    assert ours == hand == (1.0, T * (N - 1))


def test_a_time_major_batch_on_two_devices_leaves_out_its_padded_sequence():
    data = mx.io.DataDesc("data", (T, N, C), layout="TNC")
    label = mx.io.DataDesc("softmax_label", (T, N), layout="TN")
    mod = _bound(_time_major(), data, label, [mx.cpu(0), mx.cpu(1)])
    x = np.random.RandomState(0).rand(T, N, C).astype("float32")
    # MXNet joins the devices' (T, 2, K) outputs on axis 0: the predictions are read from one
    one = _bound(_time_major(), data, label, [mx.cpu()])
    one.set_params(*mod.get_params())
    one.forward(mx.io.DataBatch([mx.nd.array(x)]), is_train=False)
    pred = one.get_outputs()[0].asnumpy().argmax(axis=2)  # (T, N)
    y = pred.astype("float32")
    y[:, N - 1] = (y[:, N - 1] + 1) % K
    y[0, 0] = (y[0, 0] + 1) % K  # one real item wrong, on the first device
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)], pad=1)
    mod.forward(batch, is_train=False)
    metric = mx.metric.Accuracy(axis=2)
    mod.update_metric(metric, batch.label)
    assert (metric.get()[1], metric.num_inst) == (pytest.approx(14 / 15), 15)


def test_a_multi_output_batch_leaves_out_its_padded_example():
    """SoftmaxOutput(multi_output=True): (N, K, T) outputs, (N, T) labels, batch axis 0."""
    data = mx.io.DataDesc("data", (N, C, T))
    mod = _bound(_multi_output(), data, mx.io.DataDesc("softmax_label", (N, T)), [mx.cpu()])
    x = np.random.RandomState(1).rand(N, C, T).astype("float32")

    def wrong_last(y):
        y[N - 1] = (y[N - 1] + 1) % K

    ours, hand = _measured(mod, x, wrong_last, label_axis=0, class_axis=1)
    assert ours == hand == (1.0, (N - 1) * T)
