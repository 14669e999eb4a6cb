"""The rows of a batch: shapes MXNet can slice over the devices, and the labels a batch
without them gets at the data's rows."""

from __future__ import annotations

import itertools

from .._compat import mx
from ..errors import N_, InputError


class BatchSmallerThanDevices(InputError):
    says = N_(
        "{called}: a batch of {rows} rows ('{name}' {shape}) cannot be split over {devices} "
        "devices: each device computes a slice of the batch, at least one row."
    )
    fix_says = N_("batch_size={needed} or more, or fewer devices in context=[...]")


class WorkLoadLeavesADeviceNoRow(BatchSmallerThanDevices):
    says = N_(
        "{called}: a batch of {rows} rows ('{name}' {shape}) split by work_load_list={work_load} "
        "leaves a device without a row: MXNet gives each device a share of the batch in "
        "proportion to its work load, at least one row."
    )
    fix_says = N_("batch_size={needed} or more, or a work_load_list closer to even")


class EmptyDimension(InputError):
    says = N_(
        "{called}: '{name}' shaped {shape} has a dimension of size 0. A batch needs at least one "
        "row, and each example at least one value; MXNet 1.x reads a 0 in a shape as a size not "
        "known yet."
    )
    fix_says = N_(
        "leave empty batches out, and check the arrays the iterator is made from: X.shape, y.shape"
    )


class RowsDiffer(InputError):
    says = N_(
        "{called}: '{name}' {shape} has {rows} rows, but '{first}' {first_shape} has {first_rows}: "
        "every input and label of a batch needs one row per example."
    )
    fix_says = N_(
        "give '{name}' {first_rows} rows, one per example; from arrays, make sure "
        "len(X) == len(y) before making the iterator"
    )


def _rows(desc) -> int | None:
    axis = mx.io.DataDesc.get_batch_axis(desc.layout)
    return desc.shape[axis] if 0 <= axis < len(desc.shape) else None


def example_shape(desc) -> tuple:
    """A shape without its batch axis: what every batch of a binding shares."""
    axis = mx.io.DataDesc.get_batch_axis(desc.layout)
    shape = tuple(desc.shape)
    return shape[:axis] + shape[axis + 1 :] if 0 <= axis < len(shape) else shape


def labels_at_rows(data_descs, label_descs) -> list | None:
    """The label shapes with the first input's rows, each on its own batch axis: the labels
    of a batch given (or bound) without them."""
    rows = _rows(data_descs[0])
    if not label_descs or rows is None:
        return label_descs or None

    def at_rows(d):
        axis = mx.io.DataDesc.get_batch_axis(d.layout)
        shape = list(d.shape)
        if 0 <= axis < len(shape):
            shape[axis] = rows
        return mx.io.DataDesc(d.name, tuple(shape), d.dtype, d.layout)

    return [at_rows(d) for d in label_descs]


def with_label_shapes(batch, bound_data, bound_labels):
    """A batch without labels in another shape than bound with labels: MXNet's reshape needs
    label shapes too (else "Shape of unspecified arg ... changed", half reshaped)."""
    if getattr(batch, "provide_label", None):
        return batch
    shapes = [tuple(a.shape) for a in batch.data]
    if shapes == [tuple(d.shape) for d in bound_data]:
        return batch
    provide_data = getattr(batch, "provide_data", None) or None
    data = [mx.io.DataDesc(d.name, shapes[0], d.dtype, d.layout) for d in bound_data[:1]]
    labels = labels_at_rows(data, bound_labels)
    return mx.io.DataBatch(
        batch.data,
        None,
        pad=batch.pad,
        index=batch.index,
        provide_data=provide_data,
        provide_label=labels,
    )


def check_slicable(data_descs, label_descs, work_load: list, called: str) -> None:
    """Shapes MXNet can slice over the devices: no dimension of size 0 (MXNet 1.x takes it
    for "unknown", then fails with "Too many slices" or a -1), labels with the data's rows,
    every device a slice of at least one row."""
    for desc in [*data_descs, *(label_descs or [])]:
        if 0 in tuple(desc.shape):
            raise EmptyDimension(called=called, name=desc.name, shape=tuple(desc.shape))
    first = data_descs[0]
    for desc in [*data_descs[1:], *(label_descs or [])]:
        if None not in (_rows(desc), _rows(first)) and _rows(desc) != _rows(first):
            facts = dict(name=desc.name, shape=tuple(desc.shape), rows=_rows(desc))
            firsts = dict(first=first.name, first_shape=tuple(first.shape), first_rows=_rows(first))
            raise RowsDiffer(called=called, **facts, **firsts)
    for desc in data_descs:
        rows = _rows(desc)
        if rows is not None and not _splits(rows, work_load):
            needed = next(n for n in itertools.count(rows) if _splits(n, work_load))
            facts = dict(name=desc.name, shape=tuple(desc.shape), rows=rows, needed=needed)
            if rows >= len(work_load):  # enough rows for one each: the work loads are the cause
                raise WorkLoadLeavesADeviceNoRow(called=called, work_load=work_load, **facts)
            raise BatchSmallerThanDevices(called=called, devices=len(work_load), **facts)


def _splits(rows: int, work_load: list) -> bool:
    """Whether MXNet's split of a batch (executor_manager._split_input_slice, rounding each
    device's share of the work load) gives every device at least one row."""
    counts = [round(w * rows / sum(work_load)) for w in work_load]
    counts[-1] += max(0, rows - sum(counts))
    ends = list(itertools.accumulate(counts))
    return all(min(end, rows) > min(end - n, rows) for end, n in zip(ends, counts))
