"""Metric values per batch without a device sync per batch.

MXNet's metrics call ``asnumpy()`` in every ``update``, so Python waits for each batch before
queuing the next: the whole gap between ``fit`` and a bare loop (benchmarks/run.py).
``DeferredMetric`` keeps device copies of each batch's outputs and labels and replays them, the
same ``update`` calls in the same order, when the metric is read: every value is MXNet's, later.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .._compat import mx
from .prepared_call import PreparedCall


def leaf_metrics(metric) -> list:
    """The metrics that hold sums: the children of a composite metric, else the metric itself."""
    if isinstance(metric, mx.metric.CompositeEvalMetric):
        return [leaf for child in metric.metrics for leaf in leaf_metrics(child)]
    return [metric]


class BatchValues:
    """Reads a metric's value over the latest batch from the growth of its running sums."""

    def __init__(self) -> None:
        self._last: dict[int, tuple[float, float]] = {}

    def restart(self) -> None:
        self._last.clear()

    def read(self, metric) -> list[tuple[str, float]]:
        values = []
        for leaf in leaf_metrics(metric):
            if getattr(leaf, "_has_global_stats", False):
                total, count = float(leaf.global_sum_metric), float(leaf.global_num_inst)
            else:
                total, count = float(leaf.sum_metric), float(leaf.num_inst)
            last_total, last_count = self._last.get(id(leaf), (0.0, 0.0))
            if count < last_count:  # reset since the last read: a new epoch
                last_total, last_count = 0.0, 0.0
            self._last[id(leaf)] = (total, count)
            grew = count - last_count
            if not grew:
                values.append((leaf.name, math.nan))
            elif hasattr(leaf, "value_of"):  # e.g. RMSE: the root of the batch's mean
                values.append((leaf.name, leaf.value_of(total - last_total, grew)))
            else:
                values.append((leaf.name, (total - last_total) / grew))
        return values


def _new_ring(rows: int, dtype, context, count: int) -> tuple:
    """(buffer, rows, context, slots): ``count`` consecutive slots of ``rows`` values in one
    buffer, one per pending batch (a small array per batch costs more than what goes in it)."""
    buffer = mx.nd.zeros((count * rows,), ctx=context, dtype=dtype)
    return buffer, rows, context, [buffer[i * rows : (i + 1) * rows] for i in range(count)]


def _ring_fits(ring, array) -> bool:
    buffer, rows, context, _ = ring
    return (array.shape[0], array.context, array.dtype) == (rows, context, buffer.dtype)


def _joined(ring, arrays: list):
    """``arrays`` as one array: a slice of ``ring``'s buffer when they are its first slots."""
    slots = ring[3] if ring is not None else ()
    if len(arrays) <= len(slots) and all(a is slot for a, slot in zip(arrays, slots)):
        return ring[0][: len(arrays) * ring[1]]
    return mx.nd.concat(*arrays, dim=0)


def _flushed(method: str):
    """The inner metric's ``method``, once every pending batch is replayed into it."""

    def read(self):
        self.flush()
        return getattr(self.inner, method)()

    return read


@dataclass(slots=True)
class PendingBatch:
    epoch: int
    batch: int  # index within the epoch
    samples: int  # in this batch
    seen: int  # training samples seen up to and including this batch
    time: float
    updates: list = field(default_factory=list)  # (labels, preds) per device


class DeferredMetric(mx.metric.EvalMetric):
    """An EvalMetric that updates ``inner`` lazily; ``on_batch(pending_batch, [(name, value),
    ...])`` gets each replayed batch's own values."""

    def __init__(
        self,
        inner,
        on_batch: Callable | None = None,
        max_pending: int = 50,
        clock: Callable[[], float] = time.perf_counter,
    ):
        self.inner = inner
        self.on_batch = on_batch
        self.max_pending = max_pending
        self.clock = clock
        self.pending: list[PendingBatch] = []
        self._batch_values = BatchValues()
        self.epoch = 0  # set by whoever knows (fit's feed); batches count from 0 after reset()
        self.seen = 0
        self.latest_samples = 0
        # the class axis when every leaf is plain Accuracy (which needs only the argmax)
        axes = {
            leaf.axis if type(leaf) is mx.metric.Accuracy else None for leaf in leaf_metrics(inner)
        }
        self._argmax_axis = axes.pop() if len(axes) == 1 else None
        self._use_argmax: bool | None = None
        self._ring = None  # (buffer, rows per batch, context, slots) for argmax results
        self._label_ring = None  # the same, for the labels update_single copies
        self._count_at_once: bool | None = None
        self._fast_shapes = None  # the executor group's data shapes update_single decided for
        self._fast: tuple | None = None  # update_single's prepared calls and names, or None
        self._next_batch = 0
        super().__init__(inner.name, has_global_stats=True)

    def begin_batch(self, samples: int) -> None:
        # argmax results are a few bytes a batch; copies of whole outputs are kept fewer
        limit = self.max_pending * (10 if self._use_argmax else 1)
        if len(self.pending) >= limit:
            self.flush()
        self._pending_batch(samples)

    def _pending_batch(self, samples: int) -> PendingBatch:
        self.seen += samples
        self.latest_samples = samples
        entry = PendingBatch(self.epoch, self._next_batch, samples, self.seen, self.clock())
        self._next_batch += 1
        self.pending.append(entry)
        return entry

    def update_dict(self, label, pred):
        if not self.pending:  # fed without begin_batch (not through Module.update_metric)
            self.begin_batch(0)
        # One device operation per batch at most: each costs ~10% of a small network's batch
        # here. Outputs live in executor buffers that the next forward overwrites, so they are
        # kept as what the metric needs of them: Accuracy needs only the argmax (and computes
        # exactly the same counts from it); any other metric gets a copy.
        if self._use_argmax is None:  # decided once: shapes keep their relation across batches
            self._use_argmax = self._argmax_axis is not None and all(
                p.shape != t.shape for p, t in zip(pred.values(), label.values())
            )
        if self._use_argmax:
            axis = self._argmax_axis
            slot = self._ring_slot(pred)  # None: a new array
            preds = {k: mx.nd.argmax(v, axis=axis, out=slot) for k, v in pred.items()}
        else:
            preds = {k: v.copy() for k, v in pred.items()}
        # Labels are copied as they are when their batch runs: iterators refill their buffers,
        # and fit's batches are views of the iterator's arrays (array_batches.py).
        label = {k: v.copy() for k, v in label.items()}
        self.pending[-1].updates.append((label, preds))

    def update_single(self, group, labels) -> bool:
        """One batch of a module bound to one device, taken the fast way (False: not taken): one
        output and one label measured by Accuracy cost two prepared device operations, the
        argmax and a copy of the labels (at batch 32 Python's time is what a batch costs)."""
        outputs = group.execs[0].outputs
        if group.data_shapes is not self._fast_shapes:  # bound or reshaped: decide again
            self._fast_shapes = group.data_shapes
            self._fast = self._fast_path(group, labels, outputs)
        if self._fast is None:
            return False
        argmax, copy_label, label_name, output_name = self._fast
        index = len(self.pending)
        if index == len(self._ring[3]):
            self.flush()
            index = 0
        label, pred = copy_label(labels[0], index), argmax(outputs[0], index)
        self._pending_batch(group.batch_size).updates.append(
            ({label_name: label}, {output_name: pred})
        )
        return True

    def _fast_path(self, group, labels, outputs) -> tuple | None:
        """update_single's prepared calls for this binding, or None where they do not apply."""
        if len(labels) != 1 or len(outputs) != 1 or self._argmax_axis not in (1, -1):
            return None
        output, label, rows = outputs[0], labels[0], group.batch_size
        if output.ndim != 2 or output.shape[0] != rows or label.shape != (rows,):
            return None
        if self._use_argmax is False:
            return None
        self._use_argmax = True
        count = self.max_pending * 10
        self._ring = self._ring or _new_ring(rows, output.dtype, output.context, count)
        if not _ring_fits(self._ring, output):
            return None
        if self._label_ring is None or not _ring_fits(self._label_ring, label):
            self._label_ring = _new_ring(rows, label.dtype, label.context, count)
        return (
            PreparedCall("argmax", {"axis": self._argmax_axis}, self._ring[3]),
            PreparedCall("_copyto", {}, self._label_ring[3]),
            group.label_names[0],
            group.output_names[0],
        )

    def _ring_slot(self, pred):
        """A slot of the argmax ring for this batch, if it fits."""
        entry = self.pending[-1]
        if len(pred) != 1 or entry.updates:  # several outputs or devices: no ring
            return None
        array = next(iter(pred.values()))
        if array.ndim != 2 or self._argmax_axis not in (1, -1):
            return None  # the argmax is not one class per row (e.g. one per position)
        limit = self.max_pending * 10
        self._ring = self._ring or _new_ring(array.shape[0], array.dtype, array.context, limit)
        index = len(self.pending) - 1
        if not _ring_fits(self._ring, array) or index >= limit:
            return None
        return self._ring[3][index]

    def update(self, labels, preds):
        self.flush()
        self.inner.update(labels, preds)

    def flush(self) -> None:
        """Replay every pending batch into the inner metric (this waits for the device)."""
        pending, self.pending = self.pending, []
        if not pending:
            return
        if self._count_at_once is None:
            self._count_at_once = self._can_count_at_once(pending)
        if self._count_at_once:
            self._flush_counts(pending)
            return
        for entry in pending:
            for labels, preds in entry.updates:
                self.inner.update_dict(labels, preds)
            values = self._batch_values.read(self.inner)
            if self.on_batch is not None:
                self.on_batch(entry, values)

    def _can_count_at_once(self, pending) -> bool:
        # Accuracy only adds whole counts, so one update over all pending batches gives it the
        # very same sums as one update per batch; that saves a device round trip per batch.
        if self._argmax_axis is None:
            return False
        updates = [u for entry in pending for u in entry.updates]
        if not all(len(labels) == 1 and len(preds) == 1 for labels, preds in updates):
            return False
        arrays = [a for labels, preds in updates for a in (*labels.values(), *preds.values())]
        return len({a.context for a in arrays}) == 1 and all(
            p.ndim == 1 and p.shape[0] == t.shape[0]  # one class per row: per-batch sizes
            for labels, preds in updates
            for t, p in zip(labels.values(), preds.values())
        )

    def _flush_counts(self, pending) -> None:
        updates = [u for entry in pending for u in entry.updates]
        label_name, pred_name = next(iter(updates[0][0])), next(iter(updates[0][1]))
        labels = _joined(self._label_ring, [next(iter(t.values())) for t, _ in updates])
        preds = _joined(self._ring, [next(iter(p.values())) for _, p in updates])
        self.inner.update_dict({label_name: labels}, {pred_name: preds})
        if self.on_batch is None:
            return
        correct = (
            preds.asnumpy().astype("int32").ravel() == labels.asnumpy().astype("int32").ravel()
        )
        sizes = np.array(
            [e.samples or sum(p[pred_name].shape[0] for _, p in e.updates) for e in pending]
        )
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.add.reduceat(correct, starts) / sizes if len(correct) else sizes * np.nan
        names = [leaf.name for leaf in leaf_metrics(self.inner)]
        for entry, value in zip(pending, values.tolist()):
            self.on_batch(entry, [(name, value) for name in names])

    def reset(self):
        if hasattr(self, "inner"):  # EvalMetric.__init__ calls reset before inner exists
            self.flush()
            self.inner.reset()
            self._batch_values.restart()
            self._next_batch = 0
        self.num_inst = self.global_num_inst = 0
        self.sum_metric = self.global_sum_metric = 0.0

    reset_local, get, get_global = _flushed("reset_local"), _flushed("get"), _flushed("get_global")
    get_name_value = _flushed("get_name_value")
    get_global_name_value = _flushed("get_global_name_value")

    def get_config(self):
        return self.inner.get_config()

    def __str__(self):
        return f"DeferredMetric({self.inner})"
