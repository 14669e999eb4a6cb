"""A damaged newest checkpoint: resume names it when it falls back to an
older one, and training from that one replaces the damaged epoch instead of refusing after an
epoch of work; a clash with a checkpoint that verifies is refused before training."""

from __future__ import annotations

import pytest

import mxlearn
from mxlearn import checkpoint as ckpt
from mxlearn.checkpoint.files import ListedFileDamaged, NoCompleteCheckpoint
from mxlearn.checkpoint.policy import WouldOverwriteSeveral
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
