"""Checkpoint prefixes and folders: a prefix works alike for saving, resume, load_checkpoint
and latest, or is refused before the first epoch trains, with the fix."""

from __future__ import annotations

import os

import pytest

import mxlearn
from mxlearn import checkpoint as ckpt
from mxlearn import mx
from mxlearn.checkpoint.files import NoCompleteCheckpoint, NoSymbolFile
from mxlearn.checkpoint.policy import WouldOverwrite
from mxlearn.checkpoint.prefixes import (
    CheckpointsInsideFolder,
    FileOnTheWay,
    FolderNotWritable,
    NoPrefixFolder,
    NulInPrefix,
    PrefixHasNoName,
    PrefixTooLong,
)


class EpochCounter(mxlearn.Callback):
    def __init__(self):
        self.batches = 0

    def on_batch_end(self, run, batch):
        self.batches += 1


@pytest.mark.parametrize("name", ["with space/mlp run", "übung/mlp-模型"])
def test_spaces_and_non_ascii_work_everywhere(small_iter, small_net, tmp_path, name):
    prefix = str(tmp_path / name)
    os.makedirs(os.path.dirname(prefix))
    mod = mxlearn.Module(small_net)
    mod.fit(small_iter, num_epoch=2, checkpoint=prefix)
    assert ckpt.manifested_epochs(prefix) == [1, 2]
    assert ckpt.latest(prefix)[0] == 2
    sym, args, auxs = mxlearn.load_checkpoint(prefix, 2)
    assert sorted(args) == sorted(mod.get_params()[0])
    resumed = mxlearn.resume(prefix)
    resumed.fit(small_iter, num_epoch=3, checkpoint=prefix)
    assert ckpt.manifested_epochs(prefix) == [1, 2, 3]


def test_a_prefix_without_a_name_is_refused_for_saving_before_training(
    small_iter, small_net, tmp_path
):
    # MXNet would write 'runs/-symbol.json', 'runs/-0001.params': files without a name
    folder = tmp_path / "runs"
    folder.mkdir()
    prefix = str(folder) + os.sep
    counter = EpochCounter()
    with pytest.raises(PrefixHasNoName) as info:
        mxlearn.Module(small_net).fit(
            small_iter, num_epoch=2, checkpoint=prefix, callbacks=[counter]
        )
    assert counter.batches == 0  # nothing trained
    assert info.value.fields["prefix"] == prefix
    inside = info.value.fields["inside"]
    assert inside == os.path.join(str(folder), "mlp") and inside in info.value.fix
    assert os.listdir(folder) == []  # nothing written
    with pytest.raises(PrefixHasNoName):
        mxlearn.Checkpoint(prefix)
    # nothing saved under it to read: said as for any prefix, with nothing guessed
    with pytest.raises(NoCompleteCheckpoint):
        mxlearn.resume(prefix)
    with pytest.raises(NoSymbolFile):
        mxlearn.load_checkpoint(prefix, 1)
    # the fix, followed
    mxlearn.Module(small_net).fit(small_iter, num_epoch=2, checkpoint=inside)
    assert ckpt.latest(inside)[0] == 2
    mxlearn.resume(inside).fit(small_iter, num_epoch=3, checkpoint=inside)
    # the folder now holds that checkpoint, and reading the folder's prefix names it
    for call in (lambda: mxlearn.resume(prefix), lambda: mxlearn.load_checkpoint(prefix, 1)):
        with pytest.raises(CheckpointsInsideFolder) as info:
            call()
        assert info.value.fields["inside"] == [inside]


def test_mxnets_own_files_of_a_prefix_without_a_name_load(ready_module, tmp_path):
    prefix = str(tmp_path) + os.sep
    mx.mod.Module.save_checkpoint(ready_module, prefix, 1)  # plain MXNet's save
    assert sorted(os.listdir(tmp_path)) == ["-0001.params", "-symbol.json"]
    sym, args, auxs = mxlearn.load_checkpoint(prefix, 1)
    assert sorted(args) == sorted(mx.model.load_checkpoint(prefix, 1)[1])
    assert sorted(mxlearn.Module.load(prefix, 1).get_params()[0]) == sorted(args)


def test_a_file_where_the_folder_should_be_is_refused_before_training(
    small_iter, small_net, tmp_path
):
    (tmp_path / "runs").write_text("not a folder")
    prefix = str(tmp_path / "runs" / "mlp")
    counter = EpochCounter()
    with pytest.raises(FileOnTheWay) as info:
        mxlearn.Module(small_net).fit(
            small_iter, num_epoch=2, checkpoint=prefix, callbacks=[counter]
        )
    assert counter.batches == 0
    assert info.value.fields["blocking"] == str(tmp_path / "runs")
    assert info.value.fields["prefix"] == prefix
    for call in (lambda: mxlearn.resume(prefix), lambda: ckpt.latest(prefix)):
        with pytest.raises(FileOnTheWay) as info:
            call()
        assert info.value.fields["blocking"] == str(tmp_path / "runs")


def test_a_folder_that_does_not_exist_is_refused_before_training(small_iter, small_net, tmp_path):
    prefix = str(tmp_path / "not" / "yet" / "mlp")
    counter = EpochCounter()
    with pytest.raises(NoPrefixFolder) as info:
        mxlearn.Module(small_net).fit(
            small_iter, num_epoch=2, checkpoint=prefix, callbacks=[counter]
        )
    assert info.value.fields["folder"] == str(tmp_path / "not" / "yet")
    assert info.value.fields["prefix"] == prefix
    assert counter.batches == 0 and "os.makedirs(" in info.value.fix


# A folder that takes no new file, for root as well: Linux's sysfs root (a chmod'ed folder would
# not do, since root may write there anyway).
READ_ONLY_FOLDER = "/sys"


def test_a_read_only_folder_is_refused_before_training(small_iter, small_net, ready_module):
    assert os.path.isdir(READ_ONLY_FOLDER), "the test needs Linux's /sys"
    prefix = os.path.join(READ_ONLY_FOLDER, "mlp")
    counter = EpochCounter()
    with pytest.raises(FolderNotWritable) as info:
        mxlearn.Module(small_net).fit(
            small_iter, num_epoch=2, checkpoint=prefix, callbacks=[counter]
        )
    assert counter.batches == 0 and info.value.fields["folder"] == READ_ONLY_FOLDER
    with pytest.raises(FolderNotWritable) as info:
        ready_module.save_checkpoint(prefix, 1)
    assert info.value.fields["folder"] == READ_ONLY_FOLDER


def test_save_checkpoint_and_plain_mxnet_files_take_the_same_checks(ready_module, tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    with pytest.raises(PrefixHasNoName) as info:
        ready_module.save_checkpoint(str(folder) + os.sep, 1)
    assert info.value.fields["prefix"] == str(folder) + os.sep
    assert info.value.fields["called"] == "mod.save_checkpoint()"
    ready_module.save_checkpoint(str(folder / "mx mlp"), 1)  # MXNet's own files, with a space
    sym, args, auxs = mxlearn.load_checkpoint(str(folder / "mx mlp"), 1)
    assert sorted(args) == sorted(ready_module.get_params()[0])
    assert mx.model.load_checkpoint(str(folder / "mx mlp"), 1)[0].tojson() == sym.tojson()


def test_prefix_gaps_found_by_probing(tmp_path, monkeypatch):
    import os

    import mxlearn
    from mxlearn import mx

    X, y = mxlearn.datasets.synthetic_classification(num_samples=64, num_classes=4)

    def fit(checkpoint):
        mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
        mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1, checkpoint=checkpoint)
        return mod

    with pytest.raises(NulInPrefix) as caught:
        fit(str(tmp_path / "a\0b"))
    assert caught.value.fields["prefix"] == str(tmp_path / "a\0b")
    with pytest.raises(PrefixTooLong) as caught:
        fit(str(tmp_path / ("x" * 250)))
    assert caught.value.fields["name"] == "x" * 250
    assert len(os.fsencode(caught.value.fields["longest"])) > caught.value.fields["limit"]
    # '~' is the home folder, as in a shell
    monkeypatch.setenv("HOME", str(tmp_path))
    fit("~/home_run")
    assert (tmp_path / "home_run-0001.json").is_file()
    assert mxlearn.checkpoint.latest("~/home_run")[0] == 1
    # an apostrophe in the name: the printed call to go on is valid Python
    fit(str(tmp_path / "bob's"))
    with pytest.raises(WouldOverwrite) as caught:
        fit(str(tmp_path / "bob's"))  # checkpoint 1 exists already
    bobs = str(tmp_path / "bob's")
    assert caught.value.fields["prefix"] == bobs
    assert f"mxlearn.resume({bobs!r})" in caught.value.fix  # the code to copy
    # a folder named like a manifest is not a checkpoint
    (tmp_path / "odd-0003.json").mkdir()
    assert mxlearn.checkpoint.manifested_epochs(str(tmp_path / "odd")) == []
    # the working folder changed after the Checkpoint was made: refused before training
    (tmp_path / "runs").mkdir()
    monkeypatch.chdir(tmp_path)
    policy = mxlearn.Checkpoint("runs/mlp")
    os.chdir(tmp_path / "runs")
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    with pytest.raises(NoPrefixFolder) as caught:
        mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1, checkpoint=policy)
    assert caught.value.fields["folder"] == str(tmp_path / "runs" / "runs")
    assert not mod.params_initialized


def test_checkpoints_past_epoch_9999_are_found(tmp_path):
    import mxlearn
    from mxlearn import mx

    X, y = mxlearn.datasets.synthetic_classification(num_samples=64, num_classes=4)
    prefix = str(tmp_path / "long")
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    mod.fit(mx.io.NDArrayIter(X, y, 32), begin_epoch=9998, num_epoch=10001, checkpoint=prefix)
    assert mxlearn.checkpoint.manifested_epochs(prefix) == [9999, 10000, 10001]
    assert mxlearn.checkpoint.latest(prefix)[0] == 10001
