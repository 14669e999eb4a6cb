"""Data parallelism on a context list: the same training as one device up to float rounding,
with the batch split and the gradient scale explained."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import seed_all

import mxlearn
from mxlearn import checkpoint as ckpt
from mxlearn import mx
from mxlearn.errors import TrainingWarning
from mxlearn.guards.arguments import WorkLoadNotPositive, WorkLoadShareTooSmall
from mxlearn.guards.rows import (
    BatchSmallerThanDevices,
    EvenSplitLeavesADeviceNoRow,
    WorkLoadLeavesADeviceNoRow,
)

TWO_CPUS = [mx.cpu(0), mx.cpu(1)]


def _letters():
    X, y = mxlearn.datasets.letter_recognition()
    return mx.io.NDArrayIter(X[:2048], y[:2048], 32), mx.io.NDArrayIter(X[-512:], y[-512:], 32)


def _train(context, kvstore="local", **fit_args):
    seed_all(0)
    train, val = _letters()
    mod = mxlearn.Module(mxlearn.models.mlp(), context=context)
    mod.fit(
        train,
        eval_data=val,
        kvstore=kvstore,
        num_epoch=3,
        optimizer_params={"learning_rate": 0.1, "momentum": 0.5},
        **fit_args,
    )
    return mod


@pytest.mark.parametrize("kvstore", ["local", "device"])
def test_two_devices_train_like_one(kvstore, tmp_path):
    one = _train(mx.cpu())
    two = _train(
        TWO_CPUS,
        kvstore,
        live=mxlearn.LivePlot(backend="console"),
        checkpoint=str(tmp_path / "two"),
    )
    # Each device sums its half of the batch, and the halves are added: the same sum in another
    # order, so equal up to float rounding (measured: at most 5.4e-7 apart after 3 epochs, with
    # weights up to 0.94; validation accuracy 0.441 on both).
    expected = one.get_params()[0]
    for name, value in two.get_params()[0].items():
        np.testing.assert_allclose(
            value.asnumpy(), expected[name].asnumpy(), rtol=1e-4, atol=1e-5, err_msg=name
        )
    for phase in ("train", "validation"):
        assert two.history.last("accuracy", phase) == pytest.approx(
            one.history.last("accuracy", phase), abs=2 / 512
        )
    assert ckpt.manifested_epochs(str(tmp_path / "two")) == [1, 2, 3]
    text = repr(two)
    assert "rows 0-15 on cpu(0), rows 16-31 on cpu(1)" in text
    assert "rescale_grad=0.03125 = 1/32 (1 / (batch 32))" in text


def test_kvstore_device_and_local_train_the_same_bits_on_two_cpus():
    # the teacher's guide's answer to 06.1: only where the sum is computed differs
    local, device = _train(TWO_CPUS, "local"), _train(TWO_CPUS, "device")
    for name, value in local.get_params()[0].items():
        np.testing.assert_array_equal(value.asnumpy(), device.get_params()[0][name].asnumpy())
    assert local.history.last("acc", "val") == device.history.last("acc", "val")


def test_a_hand_made_optimizer_with_the_wrong_gradient_scale_is_explained():
    train, _ = _letters()
    mod = mxlearn.Module(mxlearn.models.mlp(), context=TWO_CPUS)
    mod.bind(train.provide_data, train.provide_label)
    mod.init_params()
    with pytest.warns(TrainingWarning, match=r"rescale_grad=1\. .* 1/32 .* 32 times") as caught:
        mod.init_optimizer(optimizer=mx.optimizer.SGD(learning_rate=0.1))
    assert "rescale_grad=0.03125" in str(caught[0].message)
    assert len(caught) == 1  # MXNet's own "Is this intended?" is not shown besides
    assert "(set by hand)" in repr(mod)
    right = mxlearn.Module(mxlearn.models.mlp(), context=TWO_CPUS)
    right.bind(train.provide_data, train.provide_label)
    right.init_params()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        right.init_optimizer(optimizer=mx.optimizer.SGD(learning_rate=0.1, rescale_grad=1 / 32))


@pytest.mark.parametrize("rows, devices", [(2, 3), (1, 2), (3, 4)])
def test_a_batch_smaller_than_the_devices_is_refused_and_the_advice_works(rows, devices):
    X = np.random.RandomState(0).rand(12, 16).astype("float32")
    y = (X[:, 0] > 0.5).astype("float32")
    contexts = [mx.cpu(i) for i in range(devices)]
    small = mx.io.NDArrayIter(X[:rows], y[:rows], rows)
    with pytest.raises(BatchSmallerThanDevices) as refused:
        mxlearn.Module(mxlearn.models.mlp(num_classes=2), context=contexts).fit(small, num_epoch=1)
    assert refused.value.fields["rows"] == rows and refused.value.fields["devices"] == devices
    # the advice followed, both ways: a batch of one row per device, or one device per row
    enough = mx.io.NDArrayIter(X, y, devices)
    mxlearn.Module(mxlearn.models.mlp(num_classes=2), context=contexts).fit(enough, num_epoch=1)
    fewer = mxlearn.Module(mxlearn.models.mlp(num_classes=2), context=contexts[:rows])
    fewer.fit(small, num_epoch=1)
    assert fewer.score(small, "acc")[0][1] >= 0


def test_uneven_work_loads_ask_for_the_rows_mxnet_needs_to_give_each_device_one():
    X = np.random.RandomState(0).rand(24, 16).astype("float32")
    y = (X[:, 0] > 0.5).astype("float32")
    uneven = dict(context=[mx.cpu(0), mx.cpu(1)], work_load_list=[1, 9])
    with pytest.raises(WorkLoadLeavesADeviceNoRow) as refused:
        mxlearn.Module(mxlearn.models.mlp(num_classes=2), **uneven).fit(
            mx.io.NDArrayIter(X, y, 4), num_epoch=1
        )
    assert refused.value.fields["work_load"] == [1, 9]
    needed = refused.value.fields["needed"]
    assert needed > 4
    # the advice followed: batch_size=needed trains on both devices
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=2), **uneven)
    mod.fit(mx.io.NDArrayIter(X, y, needed), num_epoch=1)
    assert min(len(range(*s.indices(needed))) for s in mod._exec_group.slices) >= 1
    # or the other advice: the same batch, a work_load_list closer to even
    for closer in ([1, 3], [1, 1]):
        mod = mxlearn.Module(
            mxlearn.models.mlp(num_classes=2), context=uneven["context"], work_load_list=closer
        )
        mod.fit(mx.io.NDArrayIter(X, y, 4), num_epoch=1)
        assert min(len(range(*s.indices(4))) for s in mod._exec_group.slices) >= 1


def test_the_rows_each_device_needs_are_counted_as_mxnet_splits_a_batch():
    from mxlearn.guards.rows import _splits

    pick = np.random.RandomState(0)
    for _ in range(2000):
        work_load = list(pick.choice([0.5, 1, 2, 3, 9, 10], size=pick.randint(1, 6)))
        rows = int(pick.randint(1, 41))
        try:
            mx.executor_manager._split_input_slice(rows, work_load)
            mxnet_splits = True
        except ValueError:
            mxnet_splits = False
        assert _splits(rows, work_load) == mxnet_splits, (rows, work_load)


def _mxnet_splits(rows, work_load) -> bool:
    try:
        mx.executor_manager._split_input_slice(rows, work_load)
    except ValueError:
        return False
    return True


def _bound_rows(work_load, rows, devices=None):
    """The rows each device gets from a module bound for a batch of ``rows``."""
    contexts = [mx.cpu(i) for i in range(devices or len(work_load))]
    mod = mxlearn.Module(fc_net(), context=contexts, work_load_list=work_load)
    mod.bind([("data", (rows, 5))], [("softmax_label", (rows,))])
    return [e.arg_dict["data"].shape[0] for e in mod._exec_group.execs]


def fc_net():
    data = mx.sym.var("data")
    return mx.sym.SoftmaxOutput(
        mx.sym.FullyConnected(data, num_hidden=3, name="fc"), name="softmax"
    )


@pytest.mark.parametrize(
    "work_load, device",
    [
        ([1, 0], "cpu(1)"),  # MXNet: "Too many slices" at every bind (mxlearn used to hang)
        ([0, 0], "cpu(0)"),  # MXNet: a ZeroDivisionError
        ([1, -1], "cpu(1)"),
        ([-2, 1], "cpu(0)"),
        ([1, float("inf")], "cpu(1)"),
        ([float("nan"), 1], "cpu(0)"),
    ],
)
def test_a_work_load_that_splits_no_batch_is_refused_by_module_and_the_fix_binds(work_load, device):
    with pytest.raises(WorkLoadNotPositive) as refused:
        mxlearn.Module(fc_net(), context=TWO_CPUS, work_load_list=work_load)
    assert refused.value.fields["device"] == device
    assert not any(_mxnet_splits(rows, work_load) for rows in (2, 4, 32) if sum(work_load))
    # the advice followed, both ways: a work load above 0 for each, or without the device
    assert _bound_rows(refused.value.fields["example"], 4) == [2, 2]
    rest = [w for i, w in enumerate(work_load) if f"cpu({i})" != device]
    if rest[0] > 0:
        mod = mxlearn.Module(fc_net(), context=[c for c in TWO_CPUS if str(c) != device])
        mod.bind([("data", (4, 5))], [("softmax_label", (4,))])


def test_work_loads_all_below_0_split_as_mxnet_splits_them():
    assert _mxnet_splits(4, [-1, -3])
    assert _bound_rows([-1, -3], 4) == [1, 3]


@pytest.mark.parametrize("work_load", [[1, 1e-9], [1e-8, 1], [2, 1e-9, 2]])
def test_a_share_too_small_for_a_row_in_any_likely_batch_is_refused_by_module(work_load):
    with pytest.raises(WorkLoadShareTooSmall) as refused:
        contexts = [mx.cpu(i) for i in range(len(work_load))]
        mxlearn.Module(fc_net(), context=contexts, work_load_list=work_load)
    assert refused.value.fields["largest"] == 2**20
    # true: MXNet splits none of the batches up to that size
    from mxlearn.guards.rows import _split_mask

    assert not _split_mask(work_load, 1, 2**20 + 1).any()
    assert not any(_mxnet_splits(rows, work_load) for rows in (4, 32, 1024, 2**20))
    assert _bound_rows(refused.value.fields["example"], 4)  # the advice followed


def test_the_batch_sizes_advised_for_uneven_work_loads_are_true():
    # MXNet's rounding: [4, 4, 1] splits 3, 5 and 7 rows, not 4, 6 or 8, and every size from 9
    with pytest.raises(BatchSmallerThanDevices) as refused:
        _bound_rows([4, 4, 1], 2)
    fix = refused.value.fix
    assert refused.value.fields["needed"] == 3 and "batch_size=3, or 9 or more" in fix
    assert "3 or more" not in fix
    for rows in (3, 9, 10, 32):  # the advice followed
        assert min(_bound_rows([4, 4, 1], rows)) >= 1
    with pytest.raises(WorkLoadLeavesADeviceNoRow) as refused:
        _bound_rows([4, 4, 1], 4)
    assert refused.value.fields["slices"] == [2, 2, 0]  # as MXNet would slice them
    assert refused.value.fields["needed"] == 5 and "batch_size=5, or 9 or more" in refused.value.fix
    fitted = refused.value.fields["fitted"]  # or work loads that split these 4 rows
    assert _bound_rows(fitted, 4) == fitted == [1, 2, 1]
    for rows in (5, 9):
        assert min(_bound_rows([4, 4, 1], rows)) >= 1


def test_an_even_split_that_leaves_a_device_without_a_row_says_so():
    # four devices, six rows: MXNet rounds each share of 1.5 rows to 2, and the last gets none
    assert not _mxnet_splits(6, [1, 1, 1, 1])
    with pytest.raises(EvenSplitLeavesADeviceNoRow) as refused:
        _bound_rows(None, 6, devices=4)
    fields = refused.value.fields
    assert fields["share"] == "1.5" and fields["slices"] == [2, 2, 2, 0]
    assert fields["needed"] == 7 and "batch_size=7 or more" in refused.value.fix
    assert _bound_rows(None, 7, devices=4) == [2, 2, 2, 1]
    assert sorted(_bound_rows(fields["fitted"], 6)) == [1, 1, 2, 2]
    # eight devices, three rows: 8 splits, 12 does not, every multiple of 8 and all from 29 do
    with pytest.raises(BatchSmallerThanDevices) as refused:
        _bound_rows(None, 3, devices=8)
    assert "batch_size=8 or another multiple of 8, or 29 or more" in refused.value.fix
    assert not _mxnet_splits(12, [1] * 8) and not _mxnet_splits(28, [1] * 8)


def _work_loads(pick, count):
    """Work loads as students write them: whole numbers or not, Python's or NumPy's types."""
    for _ in range(count):
        devices = int(pick.randint(2, 6))
        if pick.rand() < 0.5:
            values = [int(v) for v in pick.randint(1, 10, size=devices)]
            kind = [int, float, np.int64, np.float32][pick.randint(4)]
        else:
            values = list(pick.choice([0.25, 0.5, 1, 1.5, 2, 3, 7.3, 9, 10, 0.1], size=devices))
            kind = [float, np.float32, np.float64][pick.randint(3)]
        yield [kind(v) for v in values]


def test_the_batch_sizes_that_split_are_found_as_mxnet_splits_them_exhaustively():
    from mxlearn.guards.rows import _split_mask, all_split_from, first_split

    pick = np.random.RandomState(1)
    for work_load in _work_loads(pick, 120):
        shares = [float(w) / float(sum(work_load)) for w in work_load]
        beyond = int((len(work_load) - 1) / (2 * min(shares))) + 2
        last = 3 * beyond + 64
        mxnet = [_mxnet_splits(n, work_load) for n in range(1, last)]
        assert list(_split_mask(work_load, 1, last)) == mxnet, work_load
        for rows in range(1, min(beyond, 300) + 2):
            needed = first_split(work_load, rows)
            assert needed is not None and mxnet[needed - 1], (work_load, rows)
            assert not any(mxnet[rows - 1 : needed - 1]), (work_load, rows)  # the smallest
            start = all_split_from(work_load, needed)
            assert start is not None and all(mxnet[start - 1 :]), (work_load, needed)
            assert start == needed or not mxnet[start - 2], (work_load, needed)  # the smallest
        if all(float(w).is_integer() for w in work_load):  # every multiple of the sum splits
            total = int(sum(work_load))
            assert all(mxnet[m - 1] for m in range(total, last, total)), work_load


def test_the_batch_sizes_advised_split_for_every_refused_batch():
    from mxlearn.guards.rows import check_slicable

    pick = np.random.RandomState(2)
    for work_load in _work_loads(pick, 80):
        for rows in range(1, 40):
            desc = mx.io.DataDesc("data", (rows, 5))
            try:
                check_slicable([desc], None, work_load, "mod.bind()")
            except BatchSmallerThanDevices as refused:
                assert not _mxnet_splits(rows, work_load)
                fields = refused.fields
                needed = fields["needed"]
                assert needed > rows and _mxnet_splits(needed, work_load)
                if f"batch_size={needed} or more" in refused.fix:  # only when it is so
                    assert all(_mxnet_splits(n, work_load) for n in range(needed, 4 * needed + 64))
                if rows >= len(work_load):
                    fitted = fields["fitted"]
                    assert _mxnet_splits(rows, fitted), (work_load, rows, fitted)
                    sliced = [
                        len(range(*s.indices(rows)))
                        for s in mx.executor_manager._split_input_slice(rows, fitted)
                    ]
                    assert sliced == [f * rows // sum(fitted) for f in fitted]
            else:
                assert _mxnet_splits(rows, work_load)


def test_a_tiny_last_share_that_the_remainder_saves_is_not_refused():
    # MXNet gives the last device the rows the rounding leaves: [2, 2, 1e-9] splits 3 rows
    assert _mxnet_splits(3, [2, 2, 1e-9]) and not _mxnet_splits(4, [2, 2, 1e-9])
    assert _bound_rows([2, 2, 1e-9], 3) == [1, 1, 1]
    with pytest.raises(WorkLoadLeavesADeviceNoRow) as refused:
        _bound_rows([2, 2, 1e-9], 4)
    assert refused.value.fields["needed"] == 5 and "or more" not in refused.value.fix
    assert min(_bound_rows([2, 2, 1e-9], 5)) == 1
