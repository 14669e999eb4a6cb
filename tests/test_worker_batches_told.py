"""What a dist_sync worker tells the others of its epochs: the batches its iterator says it has,
and nothing where the count changes from epoch to epoch (rows rolled over)."""

from __future__ import annotations

import numpy as np
import pytest

from mxlearn import mx
from mxlearn.guards.worker_batches import told_batches


@pytest.mark.parametrize("handle, told", [("pad", 6), ("discard", 5), ("roll_over", None)])
def test_the_batches_told_are_those_of_every_epoch(handle, told):
    rows = np.zeros((501, 4), dtype="float32")
    data = mx.io.NDArrayIter(rows, np.zeros(501), 100, last_batch_handle=handle)
    assert told_batches(data) == told
    if told is not None:  # what the iterator gives, epoch after epoch
        for _ in range(3):
            data.reset()
            assert sum(1 for _ in data) == told
