"""A damaged newest checkpoint: resume names it when it falls back to an
older one, and training from that one replaces the damaged epoch instead of refusing after an
epoch of work; a clash with a checkpoint that verifies is refused before training."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

import mxlearn
from mxlearn import checkpoint as ckpt
from mxlearn.checkpoint.files import (
    ListedFileDamaged,
    ManifestOfAnotherEpoch,
    NoCompleteCheckpoint,
)
from mxlearn.checkpoint.names import FolderInTheWay
from mxlearn.checkpoint.policy import MXNetFilesInTheWay, WouldOverwriteSeveral
from mxlearn.checkpoint.resume_state import load_resume_state
from mxlearn.errors import CheckpointExistsError


class Counter(mxlearn.Callback):
    def __init__(self):
        self.batches = 0

    def on_batch_end(self, run, batch):
        self.batches += 1


def _damage(path):
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))


def test_resume_names_the_damaged_checkpoint_and_training_replaces_it(
    small_iter, small_net, tmp_path, capsys
):
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=3, checkpoint=prefix)
    _damage(tmp_path / "m-0003.params")
    capsys.readouterr()
    mod = mxlearn.resume(prefix)
    said = capsys.readouterr().out
    assert "Resuming from checkpoint 2" in said
    assert "checkpoint 3 is damaged" in said and "m-0003.params" in said
    mod.fit(small_iter, num_epoch=4, checkpoint=prefix)
    assert ckpt.manifested_epochs(prefix) == [1, 2, 3, 4]
    assert ckpt.latest(prefix)[0] == 4 and ckpt.read_manifest(prefix, 3)["epoch"] == 3


@pytest.mark.parametrize("how", ["copied", "linked", "linked with its files"])
def test_a_checkpoint_put_under_a_newer_epoch_is_passed_over(small_iter, small_net, tmp_path, how):
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=3, checkpoint=prefix)
    suffixes = [".json"] + ([".params", ".optimizer.params"] if "files" in how else [])
    for suffix in suffixes:
        old, new = tmp_path / f"m-0003{suffix}", tmp_path / f"m-0004{suffix}"
        shutil.copy(old, new) if how == "copied" else new.symlink_to(old.name)
    with pytest.raises(ManifestOfAnotherEpoch) as refused:
        ckpt.read_manifest(prefix, 4)
    assert (refused.value.fields["epoch"], refused.value.fields["listed"]) == (4, 3)
    mod = mxlearn.resume(prefix)  # from the 3 epochs done, not "4"
    mod.fit(small_iter, num_epoch=4, checkpoint=prefix)
    assert ckpt.latest(prefix)[0] == 4 and ckpt.read_manifest(prefix, 4)["epoch"] == 4
    assert ckpt.verifies(prefix, 3)  # the files linked to were replaced, not written through


def test_parameter_files_without_a_manifest_are_named_on_resume_and_at_fit(
    small_iter, small_net, tmp_path, capsys
):
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=3, checkpoint=prefix)
    (tmp_path / "m-0003.json").unlink()  # mxlearn's files of epoch 3, without their manifest
    capsys.readouterr()
    mod = mxlearn.resume(prefix)
    assert load_resume_state(prefix).unmanifested == [3]
    assert "Epochs [3] have parameter files without a manifest" in capsys.readouterr().out
    with pytest.raises(MXNetFilesInTheWay) as refused:
        mod.fit(small_iter, num_epoch=4, checkpoint=prefix)
    assert "overwrite=True" in refused.value.fix
    mod.fit(small_iter, num_epoch=4, checkpoint=mxlearn.Checkpoint(prefix, overwrite=True))
    assert ckpt.manifested_epochs(prefix) == [1, 2, 3, 4]


@pytest.mark.parametrize("name", ["m-0002.json", "m-0002.params", "m-symbol.json"])
def test_a_folder_named_like_a_checkpoint_file_is_refused_before_training(
    small_iter, small_net, tmp_path, name
):
    prefix = str(tmp_path / "m")
    (tmp_path / name).mkdir()
    counter = Counter()
    with pytest.raises(FolderInTheWay) as refused:
        mxlearn.Module(small_net).fit(
            small_iter, num_epoch=2, checkpoint=prefix, callbacks=[counter]
        )
    assert refused.value.fields["path"] == str(tmp_path / name) and counter.batches == 0
    (tmp_path / name).rmdir()  # the advice followed
    mxlearn.Module(small_net).fit(small_iter, num_epoch=2, checkpoint=prefix)
    assert ckpt.manifested_epochs(prefix) == [1, 2]


def test_a_folder_in_place_of_a_checkpoints_files_is_named_on_resume(
    small_iter, small_net, tmp_path
):
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=2, checkpoint=prefix)
    (tmp_path / "m-0003.json").mkdir()
    assert not ckpt.verifies(prefix, 3)  # a folder is no manifest
    (tmp_path / "m-symbol.json").unlink()
    (tmp_path / "m-symbol.json").mkdir()
    with pytest.raises(FolderInTheWay):
        mxlearn.resume(prefix)


def test_an_intact_checkpoint_in_the_way_is_refused_before_training(
    small_iter, small_net, tmp_path
):
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=2, checkpoint=prefix)
    counter = Counter()
    with pytest.raises(WouldOverwriteSeveral) as info:
        mxlearn.Module(small_net).fit(
            small_iter, num_epoch=2, checkpoint=prefix, callbacks=[counter]
        )
    assert counter.batches == 0
    assert isinstance(info.value, CheckpointExistsError)
    assert info.value.fields == {"which": "1, 2", "prefix": prefix, "first": 0, "last": 1}
    assert "mxlearn.resume(" in info.value.fix


def test_best_and_keep_carry_on_across_a_resume(tmp_path):
    import json

    import numpy as np

    import mxlearn
    from mxlearn import mx

    X, y = mxlearn.datasets.synthetic_classification(num_samples=256, num_classes=4, seed=2)
    prefix = str(tmp_path / "m")

    def policy():
        return mxlearn.Checkpoint(prefix, keep=1, best="accuracy")

    mxlearn.seed(0)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=16))
    val = mx.io.NDArrayIter(X, y, 32)
    mod.fit(
        mx.io.NDArrayIter(X, y, 32),
        eval_data=val,
        num_epoch=2,
        checkpoint=policy(),
        optimizer_params={"learning_rate": 0.1},
    )
    first = json.loads(open(f"{prefix}-best.json").read())
    assert first["value"] > 0.5
    # validation on shuffled labels: every later epoch is worse than the best so far
    wrong = mx.io.NDArrayIter(X, np.random.RandomState(0).permutation(y), 32)
    mxlearn.resume(prefix).fit(
        mx.io.NDArrayIter(X, y, 32), eval_data=wrong, num_epoch=4, checkpoint=policy()
    )
    assert json.loads(open(f"{prefix}-best.json").read()) == first
    assert mxlearn.checkpoint.manifested_epochs(prefix) == sorted({first["epoch"], 4})


def test_damaged_mxlearn_checkpoints_are_not_called_mxnet_only(tmp_path):
    import mxlearn
    from mxlearn import mx

    X, y = mxlearn.datasets.synthetic_classification(num_samples=64, num_classes=4)
    prefix = str(tmp_path / "m")
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1, checkpoint=prefix)
    with open(f"{prefix}-0001.params", "r+b") as f:  # one flipped byte
        f.seek(40)
        byte = f.read(1)
        f.seek(40)
        f.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(NoCompleteCheckpoint) as caught:
        mxlearn.resume(prefix)
    with pytest.raises(ListedFileDamaged) as damaged:
        ckpt.read_manifest(prefix, 1)
    assert damaged.value.fields["epoch"] == 1
    assert damaged.value.fields["file"] == f"{prefix}-0001.params"
    assert caught.value.fields["skipped"] == [damaged.value.problem]  # named as damaged
    assert caught.value.fields["mxnet_only"] == []  # not called MXNet-only


def test_an_unreadable_best_checkpoint_does_not_undo_an_early_stop(tmp_path, capsys):
    import mxlearn
    from mxlearn import mx

    X, y = mxlearn.datasets.synthetic_classification(num_samples=128, num_classes=4)
    prefix = str(tmp_path / "m")

    def stopper(patience):  # min_delta=10: only the first epoch is ever "best"
        return mxlearn.EarlyStopping("accuracy", patience=patience, min_delta=10)

    data = dict(eval_data=mx.io.NDArrayIter(X, y, 32), checkpoint=prefix)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=2, early_stopping=stopper(5), **data)
    with open(f"{prefix}-0001.params", "r+b") as f:  # the best epoch's checkpoint, damaged
        f.seek(40)
        byte = f.read(1)
        f.seek(40)
        f.write(bytes([byte[0] ^ 0xFF]))
    capsys.readouterr()
    resumed = mxlearn.resume(prefix)
    resumed.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=6, early_stopping=stopper(2), **data)
    out = capsys.readouterr().out
    assert "best was" in out and "its checkpoint cannot be read" in out, out
    assert mxlearn.checkpoint.manifested_epochs(prefix)[-1] == 3  # stopped after epoch 2


def _dead_pid() -> int:
    """The process id of a process that has ended (and been reaped)."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    )
    return int(done.stdout)


def _as_a_kill_leaves_it(prefix: str, epoch: int, pid: int) -> None:
    """Checkpoint ``epoch`` as a kill in its save leaves it: marked, its parameter file in
    place (renamed), its manifest's temporary written and never renamed."""
    folder, base = os.path.split(prefix)
    shutil.copy(ckpt.params_file(prefix, epoch - 1), ckpt.params_file(prefix, epoch))
    with open(f"{prefix}-{epoch:04d}.partial", "w") as f:
        json.dump({"pid": pid}, f)
    with open(os.path.join(folder, f".{base}-{epoch:04d}.json.{pid}.ab12cd_x.tmp"), "wb") as f:
        f.write(b'{"format": "mxlearn.checkp')


def test_a_save_a_kill_cut_short_counts_as_unwritten_and_the_next_save_removes_it(
    small_iter, small_net, tmp_path
):
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=2, checkpoint=prefix)
    _as_a_kill_leaves_it(prefix, 3, _dead_pid())
    assert load_resume_state(prefix).partial == [3]
    assert ckpt.latest(prefix)[0] == 2
    mod = mxlearn.resume(prefix)
    mod.fit(small_iter, num_epoch=4, checkpoint=prefix)  # before #26: WouldOverwrite
    assert ckpt.manifested_epochs(prefix) == [1, 2, 3, 4] and ckpt.verifies(prefix, 3)
    left = [n for n in os.listdir(tmp_path) if n.endswith((".tmp", ".partial"))]
    assert left == []


def test_a_save_still_running_in_another_process_is_left_alone(small_iter, small_net, tmp_path):
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=1, checkpoint=prefix)
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        _as_a_kill_leaves_it(prefix, 2, writer.pid)
        stale = tmp_path / f".m-0001.params.{_dead_pid()}.zz99zz_z.tmp"
        stale.write_bytes(b"\0" * 64)
        ckpt.save(mxlearn.resume(prefix), prefix, 5)
        left = sorted(n for n in os.listdir(tmp_path) if n.endswith((".tmp", ".partial")))
        assert left == [f".m-0002.json.{writer.pid}.ab12cd_x.tmp", "m-0002.partial"]
        assert (tmp_path / "m-0002.params").exists()
    finally:
        writer.kill()
        writer.wait()


def test_a_first_save_cut_short_is_named_and_not_taken_for_mxnets_files(
    small_iter, small_net, tmp_path
):
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=1, checkpoint=prefix)
    os.unlink(ckpt.manifest_file(prefix, 1))  # killed before checkpoint 1's manifest
    with open(f"{prefix}-0001.partial", "w") as f:
        json.dump({"pid": _dead_pid()}, f)
    with pytest.raises(NoCompleteCheckpoint) as refused:
        mxlearn.resume(prefix)
    assert refused.value.fields["partial"] == [1] and refused.value.fields["mxnet_only"] == []
    mxlearn.Module(small_net).fit(small_iter, num_epoch=1, checkpoint=prefix)  # starts afresh
    assert ckpt.manifested_epochs(prefix) == [1]
    assert not (tmp_path / "m-0001.partial").exists()


def test_pruning_cut_short_leaves_no_checkpoint_that_looks_like_mxnets(
    small_iter, small_net, tmp_path
):
    """keep= removes old checkpoints: a kill halfway through leaves files that count as
    unwritten (marked), not a parameter file that fit would refuse as MXNet's own."""
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=3, checkpoint=prefix)
    with open(f"{prefix}-0001.partial", "w") as f:  # removal of 1 began: manifest gone
        json.dump({"pid": _dead_pid()}, f)
    os.unlink(ckpt.manifest_file(prefix, 1))
    assert ckpt.partial_epochs(prefix) == [1] and ckpt.mxnet_epochs(prefix) == []
    mod = mxlearn.resume(prefix)
    mod.fit(small_iter, num_epoch=4, checkpoint=mxlearn.Checkpoint(prefix, keep=2))
    assert sorted(os.listdir(tmp_path)) == sorted(
        [f"m-{e:04d}{s}" for e in (3, 4) for s in (".json", ".params", ".optimizer.params")]
        + ["m-symbol.json"]
    )


@pytest.mark.parametrize("given", ["mm", "m-0002.params"])
def test_resume_of_a_mistyped_prefix_or_a_files_name_suggests_the_saved_one(
    small_iter, small_net, tmp_path, given
):
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=2, checkpoint=prefix)
    with pytest.raises(NoCompleteCheckpoint) as refused:
        mxlearn.resume(str(tmp_path / given))
    assert refused.value.fields["near"] == prefix
    mxlearn.resume(refused.value.fields["near"]).fit(small_iter, num_epoch=3, checkpoint=prefix)


def test_resume_names_its_own_call_for_an_unknown_argument(small_iter, small_net, tmp_path):
    from mxlearn.guards.arguments import NoSuchArgument

    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=1, checkpoint=prefix)
    with pytest.raises(NoSuchArgument) as refused:
        mxlearn.resume(prefix, contxt=mxlearn.mx.cpu())
    assert refused.value.fields["called"] == "mxlearn.resume()"
    assert refused.value.fields["nearest"] == "context"


def test_a_long_planned_run_checks_its_way_without_a_look_per_epoch(
    small_iter, small_net, tmp_path, monkeypatch
):
    # early stopping often comes with a large num_epoch: a million planned epochs must not cost
    # five file lookups each before the first batch (it took 34 s), and the far one still counts
    prefix = str(tmp_path / "m")
    (tmp_path / "m-900000.params").mkdir()
    looks, isdir = [], os.path.isdir
    monkeypatch.setattr(os.path, "isdir", lambda path: looks.append(path) or isdir(path))
    with pytest.raises(FolderInTheWay) as refused:
        mxlearn.Module(small_net).fit(small_iter, num_epoch=10**6, checkpoint=prefix)
    assert refused.value.fields["path"] == str(tmp_path / "m-900000.params")
    assert len(looks) < 1000, len(looks)
