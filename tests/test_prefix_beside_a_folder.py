"""A checkpoint prefix is a file-name stem: 'runs/mlp' writes 'runs/mlp-0001.params' beside a
folder 'runs/mlp/', as MXNet does, and mxlearn saves, loads, resumes and cleans there without
touching the folder. Only when nothing is saved under the prefix and the folder holds
checkpoints does mxlearn name the prefixes inside it (seen on disk, never guessed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import mxlearn
from mxlearn import checkpoint as ckpt
from mxlearn import mx
from mxlearn.checkpoint.files import NoCompleteCheckpoint, NoSymbolFile
from mxlearn.checkpoint.names import FILE_NAMES
from mxlearn.checkpoint.prefixes import (
    CheckpointsInsideFolder,
    SeveralCheckpointsInsideFolder,
)


def snapshot(folder: Path) -> dict:
    """Every file under ``folder`` (hidden ones too) with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def dead_pid() -> int:
    """The process id of a process that has ended (and been reaped)."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


def fit(small_net, small_iter, **kwargs):
    mod = mxlearn.Module(small_net)
    mod.fit(small_iter, **kwargs)
    return mod


def test_mxlearn_saves_loads_and_resumes_beside_a_folder_of_the_prefixs_name(
    small_net, small_iter, tmp_path
):
    runs = tmp_path / "runs"
    (runs / "mlp").mkdir(parents=True)  # e.g. a folder for the run's plots
    (runs / "mlp" / "loss.png").write_bytes(b"a plot")
    prefix = str(runs / "mlp")
    mod = fit(small_net, small_iter, num_epoch=2, checkpoint=prefix)
    assert ckpt.manifested_epochs(prefix) == [1, 2]
    assert ckpt.latest(prefix)[0] == 2
    sym, args, auxs = mxlearn.load_checkpoint(prefix, 2)
    mx_sym, mx_args, _ = mx.model.load_checkpoint(prefix, 2)  # MXNet reads the same files
    assert sym.tojson() == mx_sym.tojson() and sorted(args) == sorted(mx_args)
    assert sorted(mxlearn.Module.load(prefix, 2).get_params()[0]) == sorted(mx_args)
    mxlearn.resume(prefix).fit(small_iter, num_epoch=3, checkpoint=prefix)
    assert ckpt.manifested_epochs(prefix) == [1, 2, 3]
    mod.save_checkpoint(prefix, 7, save_optimizer_states=True)  # MXNet's own files
    assert mx.model.load_checkpoint(prefix, 7)[1].keys() == args.keys()
    # every file beside the folder is named from the prefix, as MXNet names its own
    beside = sorted(n for n in os.listdir(runs) if n != "mlp")
    assert beside and all(
        re.fullmatch(r"mlp-(" + FILE_NAMES + r"|0007\.states)", n) for n in beside
    ), beside
    assert snapshot(runs / "mlp") == {"loss.png": b"a plot"}  # the folder untouched


def test_mxnets_checkpoint_beside_a_folder_loads_in_mxlearn(small_net, small_iter, tmp_path):
    (tmp_path / "mlp").mkdir()
    prefix = str(tmp_path / "mlp")
    mod = mx.mod.Module(small_net)
    mod.fit(small_iter, num_epoch=2, epoch_end_callback=mx.callback.do_checkpoint(prefix))
    loaded = mxlearn.Module.load(prefix, 2)
    expected = mod.get_params()[0]
    for name, value in loaded.get_params()[0].items():
        assert (value.asnumpy() == expected[name].asnumpy()).all()
    with pytest.raises(NoCompleteCheckpoint) as caught:  # MXNet's files, no manifest
        mxlearn.resume(prefix)
    assert caught.value.fields["mxnet_only"] == [1, 2]


def test_cleaning_never_touches_a_folder_of_the_prefixs_name(small_net, small_iter, tmp_path):
    runs = tmp_path / "runs"
    folder = runs / "mlp"
    folder.mkdir(parents=True)
    stale = f".mlp-0001.params.{dead_pid()}.abcdefgh.tmp"  # a killed writer's temporary
    # inside the folder: files named as the checkpoint files of 'runs/mlp/mlp' and of a
    # prefix 'runs/mlp/' would be, and a killed writer's temporaries
    for name in ("mlp-0001.params", "mlp-0001.json", "-0001.params", stale, "notes.txt"):
        (folder / name).write_bytes(name.encode())
    (runs / stale).write_bytes(b"left by a killed save")  # beside: the prefix's own
    before = snapshot(folder)
    prefix = str(folder)
    policy = mxlearn.Checkpoint(prefix, keep=1)
    fit(small_net, small_iter, num_epoch=3, checkpoint=policy)
    assert ckpt.manifested_epochs(prefix) == [3]  # epochs 1 and 2 were removed
    assert not (runs / stale).exists()  # the stale temporary beside was cleaned
    assert snapshot(folder) == before  # inside the folder nothing was removed or changed
    mxlearn.resume(prefix).fit(small_iter, num_epoch=4, checkpoint=policy)
    assert ckpt.manifested_epochs(prefix) == [4] and snapshot(folder) == before


def test_a_prefix_naming_a_folder_of_checkpoints_names_the_one_inside(
    small_net, small_iter, tmp_path
):
    folder = tmp_path / "mlp"
    folder.mkdir()
    inner = str(folder / "mlp")
    fit(small_net, small_iter, num_epoch=2, checkpoint=inner)
    prefix = str(folder)  # the folder, not the checkpoint's prefix
    for call in (
        lambda: mxlearn.resume(prefix),
        lambda: ckpt.latest(prefix),
        lambda: mxlearn.load_checkpoint(prefix, 2),
        lambda: mxlearn.Module.load(prefix, 2),
        lambda: fit(small_net, small_iter, num_epoch=3, resume=prefix),
    ):
        with pytest.raises(CheckpointsInsideFolder) as caught:
            call()
        assert type(caught.value) is CheckpointsInsideFolder
        assert caught.value.fields["prefix"] == prefix
        assert caught.value.fields["inside"] == [inner]
        assert inner in caught.value.fix
    # the fix, followed
    assert ckpt.latest(inner)[0] == 2
    assert sorted(mxlearn.Module.load(inner, 2).get_params()[0]) == sorted(
        mxlearn.load_checkpoint(inner, 2)[1]
    )
    mxlearn.resume(inner).fit(small_iter, num_epoch=3, checkpoint=inner)
    assert ckpt.manifested_epochs(inner) == [1, 2, 3]


def test_a_prefix_naming_a_folder_of_several_checkpoints_names_them_all(
    small_net, small_iter, tmp_path
):
    folder = tmp_path / "runs"
    folder.mkdir()
    inner = [str(folder / "a"), str(folder / "b")]
    for each in inner:
        fit(small_net, small_iter, num_epoch=1, checkpoint=each)
    with pytest.raises(SeveralCheckpointsInsideFolder) as caught:
        mxlearn.resume(str(folder))
    assert caught.value.fields["inside"] == inner
    assert all(each in caught.value.fix for each in inner)
    for each in inner:  # either, followed
        assert mxlearn.resume(each) is not None


def test_no_prefix_is_named_when_the_folder_holds_no_checkpoint(small_net, small_iter, tmp_path):
    folder = tmp_path / "mlp"
    folder.mkdir()
    (folder / "notes-symbol.json").mkdir()  # a folder named like a network file is none
    prefix = str(folder)
    with pytest.raises(NoSymbolFile) as caught:
        mxlearn.load_checkpoint(prefix, 1)
    assert not isinstance(caught.value, CheckpointsInsideFolder)
    with pytest.raises(NoCompleteCheckpoint):
        mxlearn.resume(prefix)


def test_a_folder_named_like_a_stale_temporary_is_left_alone(small_net, small_iter, tmp_path):
    stale = tmp_path / f".mlp-0001.params.{dead_pid()}.abcdefgh.tmp"
    stale.mkdir()  # a folder: no save of mxlearn's made it
    (stale / "kept.txt").write_text("mine")
    fit(small_net, small_iter, num_epoch=1, checkpoint=str(tmp_path / "mlp"))
    assert (stale / "kept.txt").read_text() == "mine"
