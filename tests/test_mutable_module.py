"""MutableModule: each shape computes what a Module bound at it computes, training on mixed
shapes equals the same updates shape by shape, memory is shared, and limits are explained."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import seed_all

import mxlearn
from mxlearn import mx
from mxlearn.errors import MXLearnError
from mxlearn.module.mutable import LargerThanMax, UnknownMaxShapeName
from mxlearn.shaped_data import GroupsDifferInDimensions, ShapeVaryingIter, striped_images

SIZES = (12, 20, 32)


def _batches(sizes=SIZES, batch_size=8, seed=0):
    groups = striped_images(sizes=sizes, per_size=batch_size, seed=seed)
    return list(ShapeVaryingIter(groups, batch_size))


def _mutable(net=None, **kwargs):
    seed_all(0)
    mod = mxlearn.MutableModule(net or mxlearn.models.conv_net(), **kwargs)
    mod.bind([("data", (8, 1, 32, 32))], [("softmax_label", (8,))])
    mod.init_params(mx.init.Xavier())
    return mod


def _module_at(batch, arg_params, aux_params):
    """A plain MXNet Module bound at this batch's shape, holding the same parameters."""
    ref = mx.mod.Module(mxlearn.models.conv_net())
    ref.bind(batch.provide_data, batch.provide_label)
    ref.set_params(arg_params, aux_params)
    return ref


def _grads(mod):
    group = mod._exec_group
    return {n: g[0].asnumpy() for n, g in zip(group.param_names, group.grad_arrays)}


def test_each_shape_computes_what_a_module_bound_at_it_computes():
    mod = _mutable()
    for batch in _batches():
        args, auxs = mod.get_params()
        ref = _module_at(batch, args, auxs)
        for module in (mod, ref):
            module.forward(batch, is_train=True)
            module.backward()
        assert mod.get_outputs()[0].shape == (8, 3)
        np.testing.assert_array_equal(
            mod.get_outputs()[0].asnumpy(), ref.get_outputs()[0].asnumpy()
        )
        expected = _grads(ref)
        for name, grad in _grads(mod).items():
            np.testing.assert_array_equal(grad, expected[name], err_msg=name)
    assert mod.inspector.misses == 2 and len(mod.inspector.shapes_seen) == 3


def test_training_on_mixed_shapes_equals_the_same_updates_shape_by_shape():
    batches = _batches() * 3  # 12 -> 20 -> 32 -> 12 ...: every step changes shape

    def optimizer():  # momentum: state that must carry across shapes
        return mx.optimizer.SGD(learning_rate=0.05, momentum=0.9, wd=1e-4, rescale_grad=1 / 8)

    mod = _mutable()
    start_args, start_auxs = (
        {k: v.copy() for k, v in params.items()} for params in mod.get_params()
    )
    mod.init_optimizer(optimizer=optimizer())
    for batch in batches:
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
    # Reference: for each batch a fresh MXNet Module bound at its shape, and one updater
    updater = mx.optimizer.get_updater(optimizer())
    args, auxs = start_args, start_auxs
    for batch in batches:
        ref = _module_at(batch, args, auxs)
        ref.forward(batch, is_train=True)
        ref.backward()
        group = ref._exec_group
        for index, (weight, grad) in enumerate(zip(group.param_arrays, group.grad_arrays)):
            updater(index, grad[0], weight[0])
        ref._params_dirty = True  # updated behind the module's back: read from the device
        mx.nd.waitall()  # plain MXNet: BatchNorm's statistics may be unwritten yet (apache/mxnet#18610)
        args, auxs = ref.get_params()
    got_args, got_auxs = mod.get_params()
    for name in args:
        np.testing.assert_array_equal(got_args[name].asnumpy(), args[name].asnumpy(), err_msg=name)
    for name in auxs:  # BatchNorm's running statistics, shared across shapes too
        np.testing.assert_array_equal(got_auxs[name].asnumpy(), auxs[name].asnumpy(), err_msg=name)


def test_fit_score_predict_and_checkpoints_on_varying_shapes(tmp_path):
    seed_all(0)
    train = ShapeVaryingIter(striped_images(per_size=48), 16, shuffle=True)
    val = ShapeVaryingIter(striped_images(per_size=24, seed=7), 16)
    mod = mxlearn.MutableModule(mxlearn.models.conv_net())
    prefix = str(tmp_path / "conv")
    mod.fit(
        train,
        eval_data=val,
        optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
        num_epoch=4,
        checkpoint=prefix,
        live=mxlearn.LivePlot(backend="console"),
    )
    accuracy = dict(mod.score(val, "acc"))["accuracy"]
    assert accuracy > 0.9  # chance is 1/3
    assert mod.history.last("accuracy", "validation") == pytest.approx(accuracy)
    # predict: one row per example, all sizes through the same module (padding dropped)
    assert mod.predict(val).shape == (6 * 24, 3)
    assert mod.max_shapes["data"] == (16, 1, 32, 32)
    assert "6 shapes in" in repr(mod) and "rebinds" in repr(mod)
    resumed = mxlearn.MutableModule(mxlearn.models.conv_net())
    resumed.fit(train, eval_data=val, num_epoch=5, resume=prefix)
    assert resumed.history.series("accuracy", "validation", "epoch")[0] == [0, 1, 2, 3, 4]


def test_a_batch_larger_than_the_maximum_names_the_dimension():
    mod = _mutable()
    (big,) = _batches(sizes=(40,))
    with pytest.raises(LargerThanMax) as info:
        mod.forward(big, is_train=True)
    fields = info.value.fields
    assert (fields["name"], fields["shape"]) == ("data", (8, 1, 40, 40))
    assert (fields["dimension"], fields["size"], fields["limit"]) == (2, 40, 32)
    assert info.value.fix == "MutableModule(..., max_data_shapes=[('data', (8, 1, 40, 40))])"
    (small,) = _batches(sizes=(16,))
    mod.forward(small, is_train=True)  # nothing lost: the module still works


def test_max_shapes_must_name_the_inputs():
    with pytest.raises(UnknownMaxShapeName) as refused:
        mxlearn.MutableModule(mxlearn.models.conv_net(), max_data_shapes=[("image", (8, 1, 9, 9))])
    fields = refused.value.fields
    assert (fields["kind"], fields["unknown"], fields["names"]) == ("data", ["image"], ["data"])


def test_the_lru_cache_keeps_at_most_cache_size_shapes():
    mod = _mutable(cache_size=2)
    batches = _batches(sizes=(10, 12, 14, 16))
    for batch in batches * 2:
        mod.forward(batch, is_train=False)
    assert len(mod._groups) == 3  # two cached shapes plus the maximum, which always stays
    assert mod.inspector.misses == 8 and mod.inspector.evictions == 6
    for batch in batches[-2:]:  # the two most recent are hits
        mod.forward(batch, is_train=False)
    assert mod.inspector.hits == 2


def test_fixed_param_prefix_keeps_those_parameters():
    mod = _mutable(fixed_param_prefix=["conv1"])
    before = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1})
    for batch in _batches():
        mod.forward_backward(batch)
        mod.update()
    after = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    assert np.array_equal(before["conv1_weight"], after["conv1_weight"])
    assert not np.array_equal(before["conv2_weight"], after["conv2_weight"])


@pytest.mark.slow
def test_memory_stays_flat_over_200_changes_among_20_shapes():
    # The benchmark's own measurement, in a fresh process (figures: benchmarks/README.md).
    import json
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "shape_memory.py"
    out = subprocess.run(
        [sys.executable, str(script), "--variant", "mutable"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["growth_mb"] < 30  # measured here: 0.3 MB (the warm-up itself: 39 MB)


def test_two_devices_and_load_from_a_checkpoint(tmp_path):
    seed_all(0)
    data = ShapeVaryingIter(striped_images(per_size=32), 16)
    mod = mxlearn.MutableModule(mxlearn.models.conv_net(), context=[mx.cpu(0), mx.cpu(1)])
    mod.fit(
        data,
        num_epoch=2,
        kvstore="device",
        optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
    )
    assert mod.inspector.misses == 5  # six sizes: the maximum plus five binds, on both devices
    mod.save_checkpoint(str(tmp_path / "m"), 2)
    loaded = mxlearn.MutableModule.load(str(tmp_path / "m"), 2)
    assert isinstance(loaded, mxlearn.MutableModule)
    # one device against two (8 rows each): the same up to float rounding
    np.testing.assert_allclose(
        loaded.predict(data).asnumpy(), mod.predict(data).asnumpy(), rtol=1e-6, atol=1e-7
    )


def test_groups_must_share_their_number_of_dimensions():
    flat = (np.zeros((4, 1, 8, 8), np.float32), np.zeros(4, np.float32))
    odd = (np.zeros((4, 8, 8), np.float32), np.zeros(4, np.float32))
    with pytest.raises(GroupsDifferInDimensions) as refused:
        ShapeVaryingIter([flat, odd], 4)
    assert refused.value.fields == {"dimensions": [3, 4]}


@pytest.mark.parametrize(
    "groups, batch_size, problem",
    [
        ((g for g in striped_images(per_size=8)), 4, "groups"),  # a generator: read once
        (striped_images(sizes=(12,), per_size=8)[0], 4, "groups"),  # one (X, y), not a list
        ({12: striped_images(sizes=(12,), per_size=8)[0]}, 4, "groups"),
        ([np.zeros((8, 1, 12, 12))], 4, "groups"),  # images without their labels
        (striped_images(per_size=8), 0, "batch_size"),
        (striped_images(per_size=8), -2, "batch_size"),
        (striped_images(per_size=8), 4.0, "batch_size"),
        (striped_images(per_size=8), "16", "batch_size"),
        (striped_images(per_size=8), None, "batch_size"),
    ],
)
def test_a_wrong_argument_of_the_shape_varying_iterator_is_named(groups, batch_size, problem):
    with pytest.raises(MXLearnError) as refused:
        ShapeVaryingIter(groups, batch_size)
    assert f"{problem}=" in str(refused.value) and "ShapeVaryingIter(" in str(refused.value)


def test_the_constructor_takes_every_argument_of_modules():
    """state_names, group2ctxs and compression_params reach MXNet as in mx.mod.Module."""
    net = mx.sym.Variable("data")
    state = mx.sym.Variable("state")  # an input the module keeps between batches
    net = mx.sym.FullyConnected(net + state, name="fc", num_hidden=3)
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    compression = {"type": "2bit", "threshold": 0.5}
    mod = mxlearn.MutableModule(
        net,
        state_names=["state"],
        group2ctxs={"dev": mx.cpu(0)},
        compression_params=compression,
        max_data_shapes=[("data", (4, 5))],
    )
    plain = mx.mod.Module(
        net, state_names=["state"], group2ctxs={"dev": mx.cpu(0)}, compression_params=compression
    )
    assert mod._state_names == plain._state_names == ["state"]
    assert mod._compression_params == plain._compression_params == compression
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))])
    mod.init_params(mx.init.Uniform(0.1))
    mod.set_states(value=1.0)
    batch = mx.io.DataBatch([mx.nd.ones((2, 5))], [mx.nd.zeros((2,))])  # a smaller shape
    mod.forward(batch, is_train=False)
    assert mod.get_outputs()[0].shape == (2, 3)
    assert mod.get_states(merge_multi_context=False)[0][0].shape == (2, 5)  # this batch's


def test_within_the_maximum_in_every_dimension_no_array_of_the_conv_net_is_larger():
    """What notebook 05 says of mxlearn's rule: for convolutions and pooling, an input no larger
    in any dimension makes no intermediate array larger than at the maximum. For this network a
    smaller total with a longer side (40x16 against 32x32) fits too: the rule is stricter than
    it needs, as the notebook says."""
    internals = mxlearn.models.conv_net(num_classes=4, channels=8).get_internals()

    def sizes(shape):
        _, outputs, _ = internals.infer_shape(data=shape)
        return [int(np.prod(s)) for s in outputs]

    largest = sizes((16, 1, 32, 32))
    for height, width in ((12, 12), (20, 32), (32, 8), (31, 17)):
        assert all(a <= b for a, b in zip(sizes((16, 1, height, width)), largest))
    longer = sizes((16, 1, 40, 16))
    assert all(a <= b for a, b in zip(longer, largest))  # here totals decide, as MXNet's rule
