"""An NDArrayIter's full batches as views of its arrays: the same rows, one device copy fewer.

``NDArrayIter.next`` cuts each batch out of its arrays with ``slice_axis``, a device operation
per array and batch, and the module then copies the batch into its executor: two copies. At
batch 32 on a small network Python's time per operation is what a batch costs (the device
keeps up), so fit hands MXNet this view of its training and validation iterators: a full batch is
``array[start:stop]``, a view that shares the iterator's memory and costs no device operation.
The values are the very same; every other batch (the padded or rolled-over last one) is the
iterator's own. Shuffling replaces the iterator's arrays with new ones at ``reset``, so a
view never changes under a batch that uses it.
"""

from __future__ import annotations

from ._compat import mx


def _views_possible(data_iter) -> bool:
    if type(data_iter) is not mx.io.NDArrayIter or data_iter.layout.find("N") != 0:
        return False
    arrays = [array for _, array in (*data_iter.data, *data_iter.label)]
    # HDF5 datasets and sparse arrays are read the iterator's own way
    return all(isinstance(a, mx.nd.NDArray) and a.stype == "default" for a in arrays)


def array_batches(data_iter):
    """``data_iter`` as fit should read it: a view-making twin of a plain NDArrayIter, else
    the iterator itself."""
    return ArrayBatches(data_iter) if _views_possible(data_iter) else data_iter


class ArrayBatches(mx.io.DataIter):
    """Serves ``source``'s batches; ``source`` keeps its cursor, order and state."""

    def __init__(self, source) -> None:
        super().__init__(source.batch_size)
        self.source = source

    @property
    def data_iter(self):
        """The NDArrayIter whose arrays these batches view (a ResizeIter's attribute name)."""
        return self.source

    @property
    def provide_data(self):
        return self.source.provide_data

    @property
    def provide_label(self):
        return self.source.provide_label

    def reset(self) -> None:
        self.source.reset()

    def next(self):
        source, size = self.source, self.batch_size
        start = source.cursor + size
        if not 0 <= start <= source.num_data - size:
            return source.next()  # the end of the epoch, or a batch rolled over: its own way
        source.cursor = start
        stop = start + size
        return mx.io.DataBatch(
            data=[array[start:stop] for _, array in source.data],
            label=[array[start:stop] for _, array in source.label],
            pad=0,
        )
