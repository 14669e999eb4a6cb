"""fit reads a plain NDArrayIter through views of its arrays: the batches must be the ones the
iterator itself serves, in every last-batch mode, across shuffled epochs."""

from __future__ import annotations

import numpy as np
import pytest

from mxlearn import mx
from mxlearn.array_batches import ArrayBatches, array_batches


def _epochs(data_iter, epochs: int) -> list:
    served = []
    for _ in range(epochs):
        for batch in data_iter:
            served.append(
                (
                    [a.asnumpy().copy() for a in batch.data],
                    [a.asnumpy().copy() for a in batch.label],
                    batch.pad,
                )
            )
        data_iter.reset()
    return served


def _iterator(last_batch_handle: str, shuffle: bool = True):
    X = np.arange(23 * 3, dtype="float32").reshape(23, 3)
    y = np.arange(23, dtype="float32")
    return mx.io.NDArrayIter(X, y, 5, shuffle=shuffle, last_batch_handle=last_batch_handle)


@pytest.mark.parametrize("last_batch_handle", ["pad", "discard", "roll_over"])
@pytest.mark.parametrize("shuffle", [True, False])
def test_views_serve_the_iterators_own_batches(last_batch_handle, shuffle):
    np.random.seed(3)
    expected = _epochs(_iterator(last_batch_handle, shuffle), 3)
    np.random.seed(3)
    viewed = array_batches(_iterator(last_batch_handle, shuffle))
    assert isinstance(viewed, ArrayBatches)
    served = _epochs(viewed, 3)
    assert len(served) == len(expected)
    for (data, label, pad), (data_0, label_0, pad_0) in zip(served, expected):
        assert pad == pad_0
        assert all(np.array_equal(a, b) for a, b in zip(data + label, data_0 + label_0))


def test_a_view_keeps_its_rows_when_the_next_epoch_shuffles():
    viewed = array_batches(_iterator("pad"))
    batch = viewed.next()
    rows = batch.data[0].asnumpy().copy()
    viewed.reset()  # shuffles: the iterator takes new arrays, the view keeps the old ones
    assert np.array_equal(batch.data[0].asnumpy(), rows)


def test_other_iterators_are_read_their_own_way():
    X = np.ones((10, 3), dtype="float32")
    resized = mx.io.ResizeIter(mx.io.NDArrayIter(X, np.zeros(10), 5), 2)
    assert array_batches(resized) is resized
    sparse = mx.io.NDArrayIter(
        mx.nd.array(X).tostype("csr"), np.zeros(10), 5, last_batch_handle="discard"
    )
    assert array_batches(sparse) is sparse


def test_the_data_checks_read_the_rows_behind_the_view():
    """fit scores its validation data through the view: its rows must still be checked as an
    in-memory iterator's (once, not per batch)."""
    from mxlearn.guards import data_values

    X = np.ones((12, 3), dtype="float32")
    viewed = array_batches(mx.io.NDArrayIter(X, np.zeros(12), 4, last_batch_handle="roll_over"))
    assert data_values.source_arrays(viewed) is not None
    assert data_values.check_source(viewed, "validation", {}).rows == 12
    assert data_values.rolls_over(viewed)
