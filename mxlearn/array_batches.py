"""While fit runs, an NDArrayIter's full batches are views of its arrays (``array[a:b]``):
``NDArrayIter.next`` cuts each with a device operation (~12 us of Python per array and batch),
which at batch 32 is what a batch costs. The values are the same, any other batch (padded,
rolled over) is the iterator's own, and it gets its own ``next`` back when fit ends. Shuffling
replaces the arrays at ``reset``, so a view never changes under a batch; but MXNet's fit fetches
the next batch before the batch callbacks, so a callback that changes the arrays in place
mid-epoch reaches that fetched batch too (a view is read when copied, a slice when cut).
"""

from __future__ import annotations

import contextlib
import functools

from ._compat import mx


def _views_possible(data_iter) -> bool:
    if type(data_iter) is not mx.io.NDArrayIter or data_iter.layout.find("N") != 0:
        return False
    if "next" in vars(data_iter):  # someone replaced its next already: leave it alone
        return False
    arrays = [array for _, array in (*data_iter.data, *data_iter.label)]
    # HDF5 datasets and sparse arrays are read the iterator's own way
    return all(isinstance(a, mx.nd.NDArray) and a.stype == "default" for a in arrays)


def view_next(source):
    """``source.next()``, with a full batch served as views of ``source``'s arrays."""
    size = source.batch_size
    start = source.cursor + size
    if not 0 <= start <= source.num_data - size:
        # the end of the epoch, or a batch padded or rolled over: the iterator's own way
        return mx.io.NDArrayIter.next(source)
    source.cursor = start
    stop = start + size
    return mx.io.DataBatch(
        data=[array[start:stop] for _, array in source.data],
        label=[array[start:stop] for _, array in source.label],
        pad=0,
    )


@contextlib.contextmanager
def views_while_fitting(*iterators):
    """Inside: every plain NDArrayIter among ``iterators`` serves its batches by ``view_next``."""
    changed = []
    for data_iter in iterators:
        if data_iter is not None and _views_possible(data_iter):
            data_iter.next = functools.partial(view_next, data_iter)
            changed.append(data_iter)
    try:
        yield
    finally:
        for data_iter in changed:
            del data_iter.next  # its class's next again
