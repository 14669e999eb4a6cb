"""Students' self-checks pass after a right step and explain a wrong one."""

from __future__ import annotations

import pytest

import mxlearn
from mxlearn import checks, mx
from mxlearn.errors import CheckFailed


def test_checks_of_a_training_step(ready_module, small_iter, capsys):
    small_iter.reset()
    batch = next(iter(small_iter))
    checks.output_shape(ready_module, (32, 4))
    before = checks.snapshot(ready_module)
    with pytest.raises(CheckFailed, match="did not change"):
        checks.parameters_changed(ready_module, before)
    with pytest.raises(CheckFailed, match="backward has not run"):
        checks.gradients_computed(ready_module)
    ready_module.forward(batch, is_train=True)
    ready_module.backward()
    checks.gradients_computed(ready_module)
    ready_module.update()
    checks.parameters_changed(ready_module, before)
    out = capsys.readouterr().out
    assert out.count("OK:") == 3
    with pytest.raises(CheckFailed, match=r"\(32, 4\), not \(32, 26\)"):
        checks.output_shape(ready_module, (32, 26))
    with pytest.raises(AssertionError):  # a failed check is also an AssertionError
        checks.output_shape(ready_module, (1, 1))


def test_begin_epoch_check(tmp_path, small_iter):
    prefix = str(tmp_path / "m")
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    mod.fit(small_iter, num_epoch=3, epoch_end_callback=mx.callback.do_checkpoint(prefix))
    checks.begin_epoch_matches(prefix, 3, 3)
    with pytest.raises(CheckFailed, match="repeat epochs") as info:
        checks.begin_epoch_matches(prefix, 3, 0)
    assert "begin_epoch=3" in str(info.value)
    with pytest.raises(CheckFailed, match="no checkpoint 7"):
        checks.begin_epoch_matches(prefix, 7, 7)
