"""Breaks a hostile probe found in the issue-13 work; each a test before its fix."""

from __future__ import annotations

import pytest

import mxlearn
from mxlearn import mx
from mxlearn.errors import CheckpointExistsError, InputError


def test_predict_after_another_feature_shape_leaves_the_module_usable(small_data, small_net):
    X, y = small_data
    mod = mxlearn.Module(small_net)
    mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1)
    assert mod.predict(X[:4].reshape(4, 4, 4)).shape == (4, 4)
    assert mod.predict(X[:4]).shape == (4, 4)
    assert mod.predict(mx.io.NDArrayIter(X, y, 32)).shape == (len(X), 4)


def test_predict_and_score_without_rows_or_labels_are_explained(ready_module, small_data):
    X, _ = small_data
    with pytest.raises(InputError, match="no rows"):
        ready_module.predict(X[:0])
    with pytest.raises(InputError, match="no labels"):
        ready_module.score(mx.io.NDArrayIter(X, None, 32), "acc")


def test_a_resume_with_another_optimizer_is_refused_before_touching_the_module(
    small_iter, small_net, tmp_path
):
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=1, checkpoint=prefix)
    mod = mxlearn.resume(prefix)
    with pytest.raises(InputError, match="for 'sgd'"):
        mod.fit(small_iter, num_epoch=2, checkpoint=prefix, optimizer="adam")
    assert not mod.optimizer_initialized
    mod.fit(small_iter, num_epoch=2, checkpoint=prefix)  # the corrected call continues
    assert mxlearn.checkpoint.manifested_epochs(prefix) == [1, 2]


def test_a_resume_of_an_optimizer_object_says_how_to_go_on(small_iter, small_net, tmp_path):
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(
        small_iter, num_epoch=1, checkpoint=prefix, optimizer=mx.optimizer.Adam(learning_rate=0.05)
    )
    manifest = mxlearn.checkpoint.read_manifest(prefix, 1)
    assert any("settings" in item for item in manifest["optimizer"]["not_saved"])
    with pytest.raises(InputError, match="optimizer object") as info:
        mxlearn.resume(prefix).fit(small_iter, num_epoch=2, checkpoint=prefix)
    assert "optimizer='adam'" in info.value.fix


def test_mxnet_checkpoint_files_in_the_way_are_refused_before_training(
    small_iter, small_net, ready_module, tmp_path
):
    prefix = str(tmp_path / "mx")
    ready_module.save_checkpoint(prefix, 1)  # MXNet's own files, no manifest
    before = (tmp_path / "mx-0001.params").read_bytes()
    with pytest.raises(CheckpointExistsError, match="already"):
        mxlearn.Module(small_net).fit(small_iter, num_epoch=1, checkpoint=prefix)
    assert (tmp_path / "mx-0001.params").read_bytes() == before
    ours = str(tmp_path / "ours")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=1, checkpoint=ours)
    with pytest.raises(CheckpointExistsError, match="already"):
        ready_module.save_checkpoint(ours, 1)  # would break checkpoint 1's manifest
    assert mxlearn.checkpoint.verifies(ours, 1)


def test_a_stated_direction_that_contradicts_the_metric_and_metric_objects_are_refused():
    with pytest.raises(InputError, match="smaller is better"):
        from mxlearn.metrics.directions import direction

        direction("cross-entropy", mx.metric.CrossEntropy(), True, "EarlyStopping('ce')")
    with pytest.raises(InputError, match="a metric's name"):
        mxlearn.EarlyStopping(mx.metric.Accuracy())
    with pytest.raises(InputError, match="a metric's name"):
        mxlearn.Checkpoint("m", best=mx.metric.Accuracy())


def test_an_unknown_kvstore_name_is_refused_with_the_closest(tmp_path):
    import mxlearn
    from mxlearn import mx
    from mxlearn.errors import InputError

    X, y = mxlearn.datasets.synthetic_classification(num_samples=64, num_classes=4)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    with pytest.raises(InputError, match=r"kvstore='locall' is not a kvstore type.*'local'"):
        mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1, kvstore="locall")
    assert not mod.params_initialized


@pytest.mark.parametrize(
    "make",
    [
        lambda m, p: m.Checkpoint(p, period=1.5),
        lambda m, p: m.Checkpoint(p, keep=True),
        lambda m, p: m.EarlyStopping("accuracy", patience=2.5),
    ],
)
def test_epoch_counts_must_be_whole_numbers(tmp_path, make):
    import mxlearn
    from mxlearn.errors import InputError

    with pytest.raises(InputError, match="a whole number, at least 1"):
        make(mxlearn, str(tmp_path / "m"))


@pytest.mark.parametrize("epoch", ["1", 1.0, True, -1])
def test_a_checkpoint_number_that_is_not_a_whole_number_is_explained(tmp_path, epoch):
    import mxlearn
    from mxlearn import mx
    from mxlearn.errors import InputError

    X, y = mxlearn.datasets.synthetic_classification(num_samples=64, num_classes=4)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1, checkpoint=str(tmp_path / "m"))
    for load in (mxlearn.Module.load, mxlearn.load_checkpoint):
        with pytest.raises(InputError, match="a whole number of completed epochs") as refused:
            load(str(tmp_path / "m"), epoch)
        assert "-1" not in refused.value.fix  # the example is a number that works


def test_features_of_a_module_bound_for_images_are_counted_flat():
    import numpy as np

    import mxlearn
    from mxlearn import mx
    from mxlearn.errors import InputError

    y = np.arange(64) % 4
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    mod.fit(mx.io.NDArrayIter(np.random.rand(64, 16, 3).astype("float32"), y, 32), num_epoch=1)
    flat = mx.io.NDArrayIter(np.random.rand(64, 16).astype("float32"), y, 32)
    with pytest.raises(InputError, match="input has 16 features; the module was bound for 48 "):
        mod.fit(flat, num_epoch=1, force_rebind=True)


def test_a_resume_that_is_not_a_prefix_is_explained():
    import numpy as np

    import mxlearn
    from mxlearn import mx
    from mxlearn.errors import ArgumentTypeError

    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    data = mx.io.NDArrayIter(np.zeros((64, 16), "float32"), np.arange(64) % 4, 32)
    with pytest.raises(ArgumentTypeError, match=r"a path such as 'runs/mlp'"):
        mod.fit(data, num_epoch=1, resume=True)


@pytest.mark.parametrize("budget", ["x", None, float("nan")])
def test_a_live_plot_budget_that_is_not_a_number_is_explained(budget):
    import mxlearn
    from mxlearn.errors import InputError

    with pytest.raises(InputError, match=r"budget=0.03"):
        mxlearn.LivePlot(budget=budget)


def test_the_display_backend_outside_a_notebook_is_refused_before_training():
    import numpy as np

    import mxlearn
    from mxlearn import mx
    from mxlearn.errors import InputError

    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    data = mx.io.NDArrayIter(np.zeros((64, 16), "float32"), np.arange(64) % 4, 32)
    with pytest.raises(InputError, match="not running in a Jupyter kernel") as refused:
        mod.fit(data, num_epoch=1, live=mxlearn.LivePlot(backend="display"))
    assert "backend='console'" in refused.value.fix
    assert mod.history is None  # refused before the run began: nothing trained
