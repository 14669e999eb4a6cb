"""While fit runs, a plain NDArrayIter serves its full batches as views of its arrays: the
batches must be the ones the iterator itself serves, in every last-batch mode, across shuffled
epochs, the iterator gets its own next back afterwards, and callbacks that read fit's locals
see the user's own iterator where MXNet's fit shows it."""

from __future__ import annotations

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.array_batches import views_while_fitting
from mxlearn.datasets import synthetic_classification


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


def _data(rows=100):
    return synthetic_classification(num_samples=rows, num_features=16, num_classes=4, seed=1)


def _net():
    return mxlearn.models.mlp(num_classes=4, num_hidden=8)


def _iterator_positions(module_class) -> list:
    X, y = _data()
    train = mx.io.NDArrayIter(X, y, 32, shuffle=True)
    seen = []

    def progress(param):
        iterator = param.locals["train_data"]
        seen.append((iterator is train, iterator.cursor, iterator.getpad()))

    module_class(_net()).fit(
        train, num_epoch=1, batch_end_callback=progress, optimizer_params={"learning_rate": 0.1}
    )
    return seen


def test_callbacks_see_the_users_own_iterator():
    seen = _iterator_positions(mxlearn.Module)
    assert seen == _iterator_positions(mx.mod.Module)
    assert len(seen) == 4 and all(is_it for is_it, _, _ in seen)
