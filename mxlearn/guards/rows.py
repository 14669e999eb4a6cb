"""The rows of a batch: shapes MXNet can slice over the devices, and the labels a batch
without them gets at the data's rows."""

from __future__ import annotations

import itertools
import math

import numpy as np

from .._compat import mx
from ..batch_axes import at_rows, batch_rows
from ..errors import N_, InputError
from ..language import say


class BatchSmallerThanDevices(InputError):
    says = N_(
        "{called}: a batch of {rows} rows ('{name}' {shape}) cannot be split over {devices} "
        "devices: each device computes a slice of the batch, at least one row."
    )
    fix_says = N_("{sizes}, or fewer devices in context=[...]")


class WorkLoadLeavesADeviceNoRow(BatchSmallerThanDevices):
    says = N_(
        "{called}: a batch of {rows} rows ('{name}' {shape}) split by work_load_list={work_load} "
        "leaves a device without a row: MXNet gives each device a share of the batch in "
        "proportion to its work load, rounded to whole rows, and here the devices get {slices} "
        "rows."
    )
    fix_says = N_("{sizes}, or work_load_list={fitted} (shares that split {rows} rows exactly)")


class EvenSplitLeavesADeviceNoRow(WorkLoadLeavesADeviceNoRow):
    says = N_(
        "{called}: a batch of {rows} rows ('{name}' {shape}) split evenly over {devices} devices "
        "leaves a device without a row: MXNet rounds each device's share, {share} rows, to whole "
        "rows, and here the devices get {slices} rows."
    )


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


def example_shape(desc) -> tuple:
    """A shape without its batch axis: what every batch of a binding shares."""
    axis = mx.io.DataDesc.get_batch_axis(desc.layout)
    shape = tuple(desc.shape)
    return shape[:axis] + shape[axis + 1 :] if 0 <= axis < len(shape) else shape


def labels_at_rows(data_descs, label_descs) -> list | None:
    """The label shapes with the first input's rows, each on its own batch axis: the labels
    of a batch given (or bound) without them."""
    rows = batch_rows(data_descs[0])
    if not label_descs or rows is None:
        return label_descs or None
    return [mx.io.DataDesc(d.name, at_rows(d, rows), d.dtype, d.layout) for d in label_descs]


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
        rows, first_rows = batch_rows(desc), batch_rows(first)
        if None not in (rows, first_rows) and rows != first_rows:
            facts = dict(name=desc.name, shape=tuple(desc.shape), rows=rows)
            firsts = dict(first=first.name, first_shape=tuple(first.shape), first_rows=first_rows)
            raise RowsDiffer(called=called, **facts, **firsts)
    for desc in data_descs:
        rows = batch_rows(desc)
        if rows is not None and not _splits(rows, work_load):
            _refuse_split(desc, rows, list(work_load), called)


# A batch beyond this many rows is no batch anyone trains with: the split is looked for in
# batches up to it (a work load that splits none of them is refused by Module()).
LARGEST_BATCH = 2**20


def _refuse_split(desc, rows: int, work_load: list, called: str):
    needed = first_split(work_load, rows)
    facts = dict(
        called=called,
        name=desc.name,
        shape=tuple(desc.shape),
        rows=rows,
        needed=needed,
        devices=len(work_load),
        sizes=_sizes_text(work_load, rows, needed),
    )
    if rows < len(work_load):  # not one row each, whatever the work loads
        raise BatchSmallerThanDevices(**facts)
    # enough rows for one each: MXNet's rounding of the shares is the cause
    facts.update(work_load=work_load, fitted=fitted_work_load(work_load, rows))
    facts.update(slices=slice_rows(rows, work_load))
    if len(set(work_load)) == 1:
        raise EvenSplitLeavesADeviceNoRow(share=f"{rows / len(work_load):g}", **facts)
    raise WorkLoadLeavesADeviceNoRow(**facts)


def _sizes_text(work_load: list, rows: int, needed: int | None) -> str:
    """The batch sizes to advise, each one true: the smallest from ``rows`` that MXNet splits,
    "or more" only when every larger one splits too, else the sizes from which all do (and
    the multiples of an integer work loads' sum, which always split)."""
    if needed is None:
        return say(
            "a batch_size MXNet can split (none from {rows} to {largest} rows gives every "
            "device one)",
            rows=rows,
            largest=LARGEST_BATCH,
        )
    start = all_split_from(work_load, needed)
    if start == needed:
        return say("batch_size={needed} or more", needed=needed)
    integral = all(float(w).is_integer() for w in work_load)
    total = abs(int(sum(work_load))) if integral else None  # all below 0: as their opposites
    facts = dict(needed=needed, total=total, start=start)
    if not integral or (start is not None and total >= start):  # no multiple to add
        if start is None:
            return say("batch_size={needed}", **facts)
        return say("batch_size={needed}, or {start} or more", **facts)
    if start is None:
        if needed % total:
            return say("batch_size={needed} or a multiple of {total}", **facts)
        return say("batch_size={needed} or another multiple of {total}", **facts)
    if needed % total:
        return say("batch_size={needed}, a multiple of {total}, or {start} or more", **facts)
    return say("batch_size={needed} or another multiple of {total}, or {start} or more", **facts)


def _splits(rows: int, work_load: list) -> bool:
    """Whether MXNet's split of a batch (executor_manager._split_input_slice, rounding each
    device's share of the work load) gives every device at least one row."""
    return all(slice_rows(rows, work_load))


def slice_rows(rows: int, work_load: list) -> list[int]:
    """The rows MXNet's split gives each device (0 for a device it leaves without)."""
    counts = [round(w * rows / sum(work_load)) for w in work_load]
    counts[-1] += max(0, rows - sum(counts))
    ends = [min(end, rows) for end in itertools.accumulate(counts)]
    return [int(max(0, end - begin)) for begin, end in zip([0, *ends[:-1]], ends)]


def _split_mask(work_load: list, first: int, last: int) -> np.ndarray:
    """_splits for every batch size from ``first`` up to (not including) ``last`` at once: the
    same float arithmetic (w * rows / total, rounded half to even) on whole arrays."""
    total = np.float64(sum(work_load))
    sizes = np.arange(first, last, dtype=np.float64)
    shares = np.array([float(w) for w in work_load])
    counts = np.rint(sizes[:, None] * shares[None, :] / total)
    counts[:, -1] += np.maximum(0, sizes - counts.sum(axis=1))
    # a device gets no row when its count is 0 or the devices before it took the whole batch
    return (counts > 0).all(axis=1) & (counts[:, :-1].sum(axis=1) < sizes)


CHUNK = 4096  # batch sizes checked at once


def first_split(work_load: list, rows: int, largest: int = LARGEST_BATCH) -> int | None:
    """The smallest batch of at least ``rows`` rows (at most ``largest``) that MXNet splits
    over the work loads, or None."""
    total = sum(work_load)
    # a device before the last gets no row while its share rounds to 0: below half a row
    below = max((int(0.49 * total / w) for w in work_load[:-1]), default=0)
    for first in range(max(rows, below, 1), largest + 1, CHUNK):
        found = np.flatnonzero(_split_mask(work_load, first, min(first + CHUNK, largest + 1)))
        if found.size:
            return first + int(found[0])
    return None


def all_split_from(work_load: list, needed: int, largest: int = LARGEST_BATCH) -> int | None:
    """The smallest size from ``needed`` on from which every larger batch splits too, or None
    when that is beyond ``largest``. Beyond (devices - 1) / (2 * the smallest share) rows each
    device's share rounds to a row and the rounding of all before the last cannot take the
    whole batch: every larger batch splits."""
    if len(work_load) == 1:
        return needed
    shares = [float(w) / float(sum(work_load)) for w in work_load]
    beyond = int((len(work_load) - 1) / (2 * min(shares)) * (1 + 1e-9)) + 2
    if beyond > largest:
        return None
    start = needed
    for first in range(needed, beyond, CHUNK):
        failed = np.flatnonzero(~_split_mask(work_load, first, min(first + CHUNK, beyond)))
        if failed.size:
            start = first + int(failed[-1]) + 1
    return start


def fitted_work_load(work_load: list, rows: int) -> list[int]:
    """A work_load_list that splits ``rows`` rows as close to ``work_load``'s shares as whole
    rows allow, at least one each (``rows`` at least the devices): the rows themselves, which
    MXNet's rounding keeps exactly, in their lowest terms."""
    total = sum(work_load)
    wanted = [float(w) * rows / float(total) for w in work_load]
    counts = [max(1, round(x)) for x in wanted]
    while sum(counts) > rows:  # the device most over its share, that can give a row
        i = max((i for i, c in enumerate(counts) if c > 1), key=lambda i: counts[i] - wanted[i])
        counts[i] -= 1
    while sum(counts) < rows:  # the device most under its share
        i = max(range(len(counts)), key=lambda i: wanted[i] - counts[i])
        counts[i] += 1
    common = math.gcd(*counts)
    return [c // common for c in counts]
