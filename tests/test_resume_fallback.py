"""A damaged newest checkpoint (issue 13, family 2): resume names it when it falls back to an
older one, and training from that one replaces the damaged epoch instead of refusing after an
epoch of work; a clash with a checkpoint that verifies is refused before training."""

from __future__ import annotations

import pytest

import mxlearn
from mxlearn import checkpoint as ckpt
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
    with pytest.raises(CheckpointExistsError, match="already and verif") as info:
        mxlearn.Module(small_net).fit(
            small_iter, num_epoch=2, checkpoint=prefix, callbacks=[counter]
        )
    assert counter.batches == 0
    assert "mxlearn.resume(" in info.value.fix
