"""Labels of more than one axis: each refusal states the shape the network infers for the
label, its advice followed binds and trains, and shapes MXNet itself reads are taken."""

from __future__ import annotations

import re

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.guards.binding import LabelLayoutDiffers, LabelShapeDiffers, LabelsOneColumnTooMany

N, K, T, C = 4, 3, 5, 2


def _multi_output():  # (N, C, T) data, (N, K, T) outputs, (N, T) labels
    conv = mx.sym.Convolution(mx.sym.var("data"), num_filter=K, kernel=(1,), name="conv")
    return mx.sym.SoftmaxOutput(conv, name="softmax", multi_output=True)


def _time_major():  # (T, N, C) data, (T, N, K) outputs, (T, N) labels
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=K, flatten=False, name="fc")
    return mx.sym.SoftmaxOutput(fc, name="softmax", preserve_shape=True)


def _trains(net, data, label, context=None):
    """One training step on a module bound with these descs: the updated weights."""
    mx.random.seed(0)
    mod = mxlearn.Module(net, context=context or [mx.cpu()])
    mod.bind([data], [label])
    mod.init_params(mx.init.One())
    mod.init_optimizer()
    x = np.random.RandomState(0).rand(*data.shape).astype("float32")
    y = np.random.RandomState(1).randint(0, K, label.shape).astype("float32")
    mod.forward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]))
    mod.backward()
    mod.update()
    return {k: v.asnumpy() for k, v in mod.get_params()[0].items()}


def _refused(kind, net, data, label, context=None):
    with pytest.raises(kind) as refused:
        mxlearn.Module(net, context=context or [mx.cpu()]).bind([data], [label])
    return refused.value


def test_a_trailing_axis_of_one_is_dropped_to_the_shape_the_network_infers():
    data = mx.io.DataDesc("data", (N, C, T))
    refused = _refused(LabelsOneColumnTooMany, _multi_output(), data, ("softmax_label", (N, T, 1)))
    assert refused.fields["want"] == (N, T) and str((N, T)) in refused.fix
    y = np.zeros((N, T, 1))
    y = eval(re.search(r"y = (y\.\w+\(.*\))", refused.fix).group(1))  # the advice followed
    assert y.shape == (N, T)
    _trains(_multi_output(), data, mx.io.DataDesc("softmax_label", y.shape))


@pytest.mark.parametrize("given", [(N,), (N * T,)])
def test_labels_of_another_shape_are_told_the_shape_the_network_infers(given):
    data = mx.io.DataDesc("data", (N, C, T))
    refused = _refused(LabelShapeDiffers, _multi_output(), data, ("softmax_label", given))
    assert refused.fields["want"] == (N, T) and str((N, T)) in refused.fix
    _trains(_multi_output(), data, mx.io.DataDesc("softmax_label", refused.fields["want"]))


def test_mxnets_other_label_shapes_for_multi_output_are_taken():
    """SoftmaxOutput(multi_output=True) also reads (N, 1, T) labels: the same step as (N, T)."""
    data = mx.io.DataDesc("data", (N, C, T))
    flat = _trains(_multi_output(), data, mx.io.DataDesc("softmax_label", (N, T)))
    kept = _trains(_multi_output(), data, mx.io.DataDesc("softmax_label", (N, 1, T)))
    for name, value in flat.items():
        np.testing.assert_allclose(kept[name], value, rtol=1e-6)


@pytest.mark.parametrize(
    "shape, context",
    [((T, N, C), [mx.cpu()]), ((6, 6, C), [mx.cpu(0), mx.cpu(1)])],
    ids=["T!=N", "T=N on two devices"],
)
def test_a_time_major_label_without_its_layout_is_told_its_layout(shape, context):
    data = mx.io.DataDesc("data", shape, layout="TNC")
    label = ("softmax_label", shape[:2])
    refused = _refused(LabelLayoutDiffers, _time_major(), data, label, context)
    assert (refused.fields["axis"], refused.fields["layout"]) == (1, "TN")
    call = re.search(r"mx\.io\.DataDesc\('\w+', \([\d, ]+\), layout='\w+'\)", refused.fix)
    fixed = eval(call.group(0), {"mx": mx})  # the advice followed
    ours = _trains(_time_major(), data, fixed, context)
    theirs = mx.mod.Module(_time_major(), context=context)  # MXNet, given the layout
    theirs.bind([data], [mx.io.DataDesc("softmax_label", shape[:2], layout="TN")])
    theirs.init_params(mx.init.One())
    theirs.init_optimizer()
    x = np.random.RandomState(0).rand(*shape).astype("float32")
    y = np.random.RandomState(1).randint(0, K, shape[:2]).astype("float32")
    theirs.forward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]))
    theirs.backward()
    theirs.update()
    for name, value in theirs.get_params()[0].items():
        np.testing.assert_allclose(ours[name], value.asnumpy(), rtol=1e-6)
