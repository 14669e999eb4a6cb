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
from mxlearn.guards.rows import BatchSmallerThanDevices, WorkLoadLeavesADeviceNoRow

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
