"""While fit runs, a plain NDArrayIter serves its full batches as views of its arrays: the
batches must be the ones the iterator itself serves, in every last-batch mode, across shuffled
epochs, and the iterator gets its own next back afterwards."""

from __future__ import annotations

import numpy as np
import pytest

from mxlearn import mx
from mxlearn.array_batches import views_while_fitting


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
    viewed = _iterator(last_batch_handle, shuffle)
    with views_while_fitting(viewed):
        assert "next" in vars(viewed)
        served = _epochs(viewed, 3)
    assert "next" not in vars(viewed)  # its class's next again
    assert len(served) == len(expected)
    for (data, label, pad), (data_0, label_0, pad_0) in zip(served, expected):
        assert pad == pad_0
        assert all(np.array_equal(a, b) for a, b in zip(data + label, data_0 + label_0))


def test_a_view_keeps_its_rows_when_the_next_epoch_shuffles():
    viewed = _iterator("pad")
    with views_while_fitting(viewed):
        batch = viewed.next()
        rows = batch.data[0].asnumpy().copy()
        viewed.reset()  # shuffles: the iterator takes new arrays, the view keeps the old ones
        assert np.array_equal(batch.data[0].asnumpy(), rows)


def test_other_iterators_are_read_their_own_way():
    X = np.ones((10, 3), dtype="float32")
    resized = mx.io.ResizeIter(mx.io.NDArrayIter(X, np.zeros(10), 5), 2)
    sparse = mx.io.NDArrayIter(
        mx.nd.array(X).tostype("csr"), np.zeros(10), 5, last_batch_handle="discard"
    )
    with views_while_fitting(resized, sparse, None):
        assert "next" not in vars(resized) and "next" not in vars(sparse)


def test_the_iterator_gets_its_next_back_when_fit_fails():
    X, y = np.ones((10, 3), dtype="float32"), np.zeros(10)
    train = mx.io.NDArrayIter(X, y, 5)
    with pytest.raises(RuntimeError), views_while_fitting(train):
        raise RuntimeError("fit failed")
    assert "next" not in vars(train)
