"""Shapes MXNet 1.x cannot run are refused before the module changes, naming the input: a
dimension of size 0 (MXNet reads a 0 as "size not known yet", then fails with "Too many
slices" or "dim size must be known ... -1"), and a batch whose labels have other rows than
its data. The same checks hold wherever new shapes come in: bind, a second bind, reshape, and
forward of a Module or a MutableModule; afterwards the module computes as before."""

from __future__ import annotations

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.guards import arguments
from mxlearn.guards.arguments import (
    OutOfMemory,
    ParametersOutOfMemory,
    engine_errors_explained,
    machine_memory,
)
from mxlearn.guards.binding import OneHotLabels
from mxlearn.guards.rows import EmptyDimension, RowsDiffer
from mxlearn.network_view import memory_text

ROWS = np.random.RandomState(0).rand(16, 5).astype("float32")
LABELS = np.arange(16, dtype="float32") % 4


def _net():
    data = mx.sym.Variable("data")
    return mx.sym.SoftmaxOutput(
        mx.sym.FullyConnected(data, num_hidden=4, name="fc"), name="softmax"
    )


def _ready(cls=mxlearn.Module):
    mxlearn.seed(0)
    mod = cls(_net(), context=mx.cpu())
    mod.bind([("data", (8, 5))], [("softmax_label", (8,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer()
    return mod


def _batch(rows, features=5, label_rows=None):
    label_rows = rows if label_rows is None else label_rows
    data = mx.nd.array(np.ones((rows, features)))
    return mx.io.DataBatch([data], [mx.nd.array(np.zeros(label_rows))])


def _outputs_of_a_right_batch(mod):
    mod.forward(mx.io.DataBatch([mx.nd.array(ROWS[:8])], [mx.nd.array(LABELS[:8])]), False)
    return mod.get_outputs()[0].asnumpy()


@pytest.mark.parametrize("cls", [mxlearn.Module, mxlearn.MutableModule])
@pytest.mark.parametrize(
    ("rows", "features", "label_rows", "kind", "name"),
    [
        (0, 5, None, EmptyDimension, "data"),
        (8, 0, None, EmptyDimension, "data"),
        (8, 5, 0, EmptyDimension, "softmax_label"),
        (8, 5, 6, RowsDiffer, "softmax_label"),
        (4, 5, 8, RowsDiffer, "softmax_label"),
    ],
)
def test_forward_refuses_the_batch_and_the_module_stays_as_it_was(
    cls, rows, features, label_rows, kind, name
):
    mod = _ready(cls)
    before = _outputs_of_a_right_batch(mod)
    with pytest.raises(kind) as refused:
        mod.forward(_batch(rows, features, label_rows), is_train=True)
    assert refused.value.fields["name"] == name
    assert refused.value.fields["called"] == "mod.forward()"
    assert [tuple(d.shape) for d in mod.data_shapes] == [(8, 5)]
    np.testing.assert_array_equal(_outputs_of_a_right_batch(mod), before)


@pytest.mark.parametrize("cls", [mxlearn.Module, mxlearn.MutableModule])
def test_bind_and_reshape_refuse_a_zero_sized_shape(cls):
    with pytest.raises(EmptyDimension) as refused:
        cls(_net()).bind([("data", (0, 5))], [("softmax_label", (0,))])
    assert refused.value.fields["shape"] == (0, 5)
    mod = _ready(cls)
    with pytest.raises(EmptyDimension) as refused:
        mod.reshape([("data", (4, 0))], [("softmax_label", (4,))])
    assert refused.value.fields["called"] == "mod.reshape()"


def test_bind_refuses_labels_with_other_rows_than_the_data():
    with pytest.raises(RowsDiffer) as refused:
        mxlearn.Module(_net()).bind([("data", (8, 5))], [("softmax_label", (6,))])
    assert refused.value.fields["first_rows"] == 8
    assert refused.value.fields["rows"] == 6
    assert "'softmax_label' 8 rows" in refused.value.fix
    mod = mxlearn.Module(_net())
    mod.bind([("data", (8, 5))], [("softmax_label", (8,))])  # the advice followed
    assert [tuple(d.shape) for d in mod.label_shapes] == [(8,)]


def test_training_on_arrays_of_other_lengths_is_refused_and_equal_lengths_train():
    X, y = np.random.RandomState(0).rand(16, 5).astype("float32"), LABELS[:12]
    with pytest.raises(RowsDiffer) as refused:  # NDArrayIter's second batch: 8 rows, 4 labels
        mxlearn.Module(_net()).fit(mx.io.NDArrayIter(X, y, 8), num_epoch=1)
    assert "len(X) == len(y)" in refused.value.fix
    X = X[: len(y)]  # the advice followed
    mod = mxlearn.Module(_net())
    mod.fit(mx.io.NDArrayIter(X, y, 8), num_epoch=1)
    assert mod.score(mx.io.NDArrayIter(X, y, 8), "acc")[0][1] >= 0


def test_a_second_bind_to_another_batch_size_checks_the_shapes_as_the_first():
    mod = _ready()
    with pytest.raises(RowsDiffer):
        mod.bind([("data", (16, 5))], [("softmax_label", (12,))])
    with pytest.raises(OneHotLabels):
        mod.bind([("data", (16, 5))], [("softmax_label", (16, 3))], force_rebind=True)
    assert [tuple(d.shape) for d in mod.data_shapes] == [(8, 5)]


def test_a_smaller_last_batch_still_computes_as_a_module_bound_for_it():
    mod = _ready()
    mod.forward(mx.io.DataBatch([mx.nd.array(ROWS[:3])], [mx.nd.array(LABELS[:3])]), False)
    small = mxlearn.Module(_net(), context=mx.cpu())
    small.bind([("data", (3, 5))], [("softmax_label", (3,))], for_training=False)
    small.set_params(*mod.get_params())
    small.forward(mx.io.DataBatch([mx.nd.array(ROWS[:3])], [mx.nd.array(LABELS[:3])]), False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), small.get_outputs()[0].asnumpy())


def test_a_batch_too_large_for_memory_says_so_and_a_smaller_one_binds():
    mod = mxlearn.Module(_net())
    with pytest.raises(OutOfMemory) as refused:  # 16 TiB of data in one batch
        mod.bind([("data", (2**30, 2**12))], [("softmax_label", (2**30,))])
    assert refused.value.fields["params"] == "64.0 KiB"  # fc: 4 x 4,096 weights, 4 biases
    assert "batch_size" in refused.value.fix and "num_hidden" not in refused.value.fix
    mod.bind([("data", (32, 2**12))], [("softmax_label", (32,))])  # the advice: a smaller batch
    assert [tuple(d.shape) for d in mod.data_shapes] == [(32, 2**12)]


def test_a_second_bind_names_itself_and_keeps_the_labels_at_the_new_rows():
    mod = _ready()
    with pytest.raises(EmptyDimension) as refused:
        mod.bind([("data", (0, 5))], [("softmax_label", (0,))])
    assert refused.value.fields["called"] == "mod.bind()"
    mod.bind([("data", (16, 5))])  # the data only: the labels follow its rows
    assert [tuple(d.shape) for d in mod.label_shapes] == [(16,)]


def _wide(num_hidden):
    data = mx.sym.Variable("data")
    return mx.sym.SoftmaxOutput(
        mx.sym.FullyConnected(data, num_hidden=num_hidden, name="fc"), name="softmax"
    )


def test_layers_too_large_for_memory_ask_for_smaller_layers_and_smaller_ones_bind():
    batch = ([("data", (8, 2**12))], [("softmax_label", (8,))])
    with pytest.raises(OutOfMemory) as refused:  # fc: 2**30 x 4,096 weights, 16 TiB
        mxlearn.Module(_wide(2**30)).bind(*batch)
    assert refused.value.fields["params"] == "16.0 TiB"  # and 4 GiB of biases
    assert "num_hidden" in refused.value.fix and "batch_size" not in refused.value.fix
    mod = mxlearn.Module(_wide(64))  # the advice: smaller layers, the same batch
    mod.bind(*batch)
    assert [tuple(d.shape) for d in mod.data_shapes] == [(8, 2**12)]


def test_labels_follow_the_rows_on_the_data_layouts_batch_axis():
    data = mx.sym.Variable("data")  # time-major: (steps, rows, features)
    net = mx.sym.SoftmaxOutput(
        mx.sym.FullyConnected(mx.sym.mean(data, axis=0), num_hidden=4, name="fc"), name="softmax"
    )
    mod = mxlearn.Module(net)
    mod.bind([mx.io.DataDesc("data", (5, 8, 3), layout="TNC")], [("softmax_label", (8,))])
    mod.init_params()
    mod.bind([mx.io.DataDesc("data", (5, 16, 3), layout="TNC")])  # the data only
    assert [tuple(d.shape) for d in mod.label_shapes] == [(16,)]
    mod.forward(mx.io.DataBatch([mx.nd.ones((5, 4, 3))]), is_train=False)  # no labels either
    assert mod.get_outputs()[0].shape == (4, 4)


@pytest.mark.parametrize(
    "data",
    [
        [("data", (8, 5), np.float32)],  # MXNet reads a tuple as DataDesc(*tuple)
        [("data", (8, 5), "float32", "NC")],
        [mx.io.DataDesc("data", (8, 5))],
    ],
)
def test_bind_takes_the_tuples_mxnet_reads_as_data_descs(data):
    mod = mxlearn.Module(_net())
    mod.bind(data, [("softmax_label", (8,), np.float32)])
    mod.init_params()
    assert [tuple(d.shape) for d in mod.data_shapes] == [(8, 5)]
    plain = mx.mod.Module(_net())
    plain.bind(data, [("softmax_label", (8,), np.float32)])  # as MXNet itself takes them
    mod.reshape([(*data[0][:1], (4, 5), *tuple(data[0])[2:])])
    assert [tuple(d.shape) for d in mod.data_shapes] == [(4, 5)]
    mutable = mxlearn.MutableModule(_net(), max_data_shapes=data)
    mutable.bind(data, [("softmax_label", (8,))])
    assert mxlearn.show_network(_net(), data).layers[0].shape == (8, 5)


def test_parameters_larger_than_the_machine_ask_for_smaller_layers_though_outputs_are_larger():
    # fc: 2**30 x 4,096 weights, 16 TiB, more than any machine's memory; its outputs for this
    # batch take 32 TiB: a smaller batch would still leave the parameters, which cannot fit.
    # Every allocation here is of terabytes, refused at once: nothing is held.
    batch = ([("data", (2**12, 2**12))], [("softmax_label", (2**12,))])
    with pytest.raises(ParametersOutOfMemory) as refused:
        mxlearn.Module(_wide(2**30)).bind(*batch)
    assert refused.value.fields["params"] == "16.0 TiB"
    assert refused.value.fields["outputs"] == "32.0 TiB"
    assert memory_text(machine_memory()) in refused.value.fields["memory"]
    assert "num_hidden" in refused.value.fix and "batch_size" not in refused.value.fix
    mod = mxlearn.Module(_wide(64))  # the advice: smaller layers, the same batch
    mod.bind(*batch)
    assert [tuple(d.shape) for d in mod.data_shapes] == [(2**12, 2**12)]


def _failed_allocation(reason, contexts, num_hidden=2**20, rows=2**14):
    """The explanation of a failed allocation for an fc layer of 2**20 x 4,096 weights (16 GiB)
    whose outputs take more (2**14 rows: 128 GiB), on ``contexts``: nothing is allocated."""
    descs = [mx.io.DataDesc("data", (rows, 2**12))], [mx.io.DataDesc("softmax_label", (rows,))]
    with pytest.raises(OutOfMemory) as refused:
        with engine_errors_explained(_wide(num_hidden), *descs, contexts=contexts):
            raise mx.base.MXNetError(reason)
    return refused.value


def test_a_gpu_smaller_than_the_parameters_asks_for_smaller_layers(monkeypatch):
    monkeypatch.setattr(mx.context, "gpu_memory_info", lambda device_id: (2**30, 8 * 2**30))
    refused = _failed_allocation("Failed to allocate 16 GiB", [mx.gpu(0)])
    assert isinstance(refused, ParametersOutOfMemory) and "gpu(0)" in refused.fields["memory"]
    assert "8.0 GiB" in refused.fields["memory"] and "num_hidden" in refused.fix
    # a GPU larger than the parameters: the batch's outputs take the most
    monkeypatch.setattr(mx.context, "gpu_memory_info", lambda device_id: (2**30, 40 * 2**30))
    refused = _failed_allocation("Failed to allocate 16 GiB", [mx.gpu(0)])
    assert not isinstance(refused, ParametersOutOfMemory) and "batch_size" in refused.fix


def test_a_gpu_whose_memory_is_not_known_is_not_guessed(monkeypatch):
    def unknown(device_id):
        raise mx.base.MXNetError("no GPU")

    monkeypatch.setattr(mx.context, "gpu_memory_info", unknown)
    refused = _failed_allocation("Failed to allocate 16 GiB", [mx.gpu(0)])
    assert not isinstance(refused, ParametersOutOfMemory) and "batch_size" in refused.fix
    # nor a device not named, unless MXNet says it was the CPU's memory
    refused = _failed_allocation("Failed to allocate 16 GiB", None)
    assert not isinstance(refused, ParametersOutOfMemory)


def test_cpu_contexts_each_hold_the_parameters_in_the_machines_memory(monkeypatch):
    monkeypatch.setattr(arguments, "machine_memory", lambda: 24 * 2**30)  # 16 GiB fits once
    refused = _failed_allocation("Failed to allocate CPU Memory", [mx.cpu(0)])
    assert not isinstance(refused, ParametersOutOfMemory)
    refused = _failed_allocation("Failed to allocate CPU Memory", [mx.cpu(0), mx.cpu(1)])
    assert isinstance(refused, ParametersOutOfMemory)  # twice 16 GiB does not
    assert "24.0 GiB" in refused.fields["memory"]
    assert refused.fields["params"].startswith("32.0 GiB (2 copies of 16.0 GiB")


def _trained(cls, data_shapes, label_shapes, reshaped=None):
    mxlearn.seed(0)
    mod = cls(_net(), context=mx.cpu())
    mod.bind(data_shapes, label_shapes)
    mod.init_params(mx.init.One())
    mod.init_optimizer(optimizer_params={"learning_rate": 0.5})
    for first in (0, 4):
        batch = mx.io.DataBatch([mx.nd.array(ROWS[first : first + 4])], [mx.nd.array(LABELS[:4])])
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
    # a smaller last batch too (the step of a smaller one is mxlearn's own: not compared)
    mod.forward(mx.io.DataBatch([mx.nd.array(ROWS[:3])], [mx.nd.array(LABELS[:3])]), False)
    outputs = mod.get_outputs()[0].asnumpy()
    if reshaped:
        mod.reshape(*reshaped)
    return mod, outputs


@pytest.mark.parametrize(
    "data_shapes, label_shapes",
    [
        ([("data", [4, 5])], [("softmax_label", [4])]),
        ([["data", [4, 5]]], [["softmax_label", [4]]]),
        ([mx.io.DataDesc("data", [4, 5])], [mx.io.DataDesc("softmax_label", [4])]),
        ([("data", [np.int64(4), 5])], [("softmax_label", (4,))]),
    ],
)
def test_shapes_given_as_lists_bind_reshape_and_train_as_in_mxnet(data_shapes, label_shapes):
    reshaped = [("data", [6, 5])], [("softmax_label", [6])]
    ours, our_outputs = _trained(mxlearn.Module, data_shapes, label_shapes, reshaped)
    theirs, their_outputs = _trained(mx.mod.Module, data_shapes, label_shapes, reshaped)
    for name, value in theirs.get_params()[0].items():
        np.testing.assert_allclose(ours.get_params()[0][name].asnumpy(), value.asnumpy())
    assert our_outputs.shape == (3, 4)
    np.testing.assert_allclose(our_outputs, their_outputs)
    # read as tuples: compared as shapes everywhere later
    assert [d.shape for d in ours.data_shapes] == [(6, 5)]
    assert [d.shape for d in ours.label_shapes] == [(6,)]


def test_a_mutable_module_takes_its_largest_shapes_as_lists():
    mod = mxlearn.MutableModule(
        _net(), max_data_shapes=[("data", [8, 5])], max_label_shapes=[("softmax_label", [8])]
    )
    mod.bind([("data", [4, 5])], [("softmax_label", [4])])
    mod.init_params()
    mod.forward(mx.io.DataBatch([mx.nd.array(ROWS[:6])], [mx.nd.array(LABELS[:6])]), False)
    assert mod.get_outputs()[0].shape == (6, 4)


def test_show_network_takes_shapes_as_lists():
    shown = mxlearn.show_network(_net(), data_shapes=[("data", [4, 5])])
    assert [layer.shapes for layer in shown.layers][:2] == [((4, 5),), ((4, 4),)]


def test_a_mutable_module_reshapes_to_shapes_given_as_lists():
    mod = mxlearn.MutableModule(_net())
    mod.bind([("data", (8, 5))], [("softmax_label", (8,))])
    mod.init_params()
    mod.reshape([("data", [6, 5])], [("softmax_label", [6])])
    assert [d.shape for d in mod.data_shapes] == [(6, 5)]
