"""The ETA goes by the pace after the first batch: that batch's time holds the run's setup
(MXNet allocates and prepares its operators there), 60 ms of a 40 ms epoch in a new kernel."""

from __future__ import annotations

import pytest

from mxlearn.metrics.recorder import TrainingRecorder


def _run(first_batch: float, per_batch: float, batches: int) -> TrainingRecorder:
    now = [0.0]
    recorder = TrainingRecorder(clock=lambda: now[0])
    recorder.begin(total_epochs=20, batches_per_epoch=100)
    recorder.samples_per_epoch = 100 * 32
    for batch in range(batches):
        now[0] += first_batch if batch == 0 else per_batch
        recorder.advance(0, batch, 32)
    return recorder


def test_the_eta_leaves_out_the_first_batchs_setup():
    recorder = _run(first_batch=0.06, per_batch=0.0003, batches=100)
    left = 19 * 100  # batches still to run
    assert recorder.eta_seconds() == pytest.approx(left * 0.0003, rel=1e-6)
    # the rate the progress line shows is still the run's own: its samples over its time
    assert recorder.samples_per_second() == pytest.approx(3200 / (0.06 + 99 * 0.0003))


def test_after_one_batch_the_eta_is_that_batchs_pace():
    recorder = _run(first_batch=0.06, per_batch=0.0003, batches=1)
    assert recorder.eta_seconds() == pytest.approx((20 * 100 - 1) * 0.06)
