"""Metric values per batch without a device sync per batch.

MXNet's metrics call ``asnumpy()`` in every ``update``: Python then waits for each batch to finish
before it can queue the next, and that wait is the whole gap between ``fit`` and a bare
forward/backward/update loop (measured in benchmarks/run.py). ``DeferredMetric`` keeps copies of each batch's outputs
and labels on the device (an asynchronous copy) and replays them into the real MXNet metric only
when someone reads it, when a plot draws, or every ``max_pending`` batches. The replay is the
same ``update`` calls in the same order on the same values, so every value read is exactly
MXNet's; it just happens later.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .._compat import mx
from .argmax_into import ArgmaxInto


def leaf_metrics(metric) -> list:
    """The metrics that hold sums: the children of a composite metric, else the metric itself."""
    if isinstance(metric, mx.metric.CompositeEvalMetric):
        return [leaf for child in metric.metrics for leaf in leaf_metrics(child)]
    return [metric]


def _totals(metric) -> tuple[float, float]:
    if getattr(metric, "_has_global_stats", False):
        return float(metric.global_sum_metric), float(metric.global_num_inst)
    return float(metric.sum_metric), float(metric.num_inst)


class BatchValues:
    """Reads a metric's value over the latest batch from the growth of its running sums."""

    def __init__(self) -> None:
        self._last: dict[int, tuple[float, float]] = {}

    def restart(self) -> None:
        self._last.clear()

    def read(self, metric) -> list[tuple[str, float]]:
        values = []
        for leaf in leaf_metrics(metric):
            total, count = _totals(leaf)
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


def _accuracy_axis(metric) -> int | None:
    """The class axis when every leaf is plain Accuracy (which needs only the argmax)."""
    axes = {
        leaf.axis if type(leaf) is mx.metric.Accuracy else None for leaf in leaf_metrics(metric)
    }
    return axes.pop() if len(axes) == 1 else None


def _shapes_differ(label, pred) -> bool:
    return all(p.shape != t.shape for p, t in zip(pred.values(), label.values()))


@dataclass(slots=True)
class PendingBatch:
    epoch: int
    batch: int  # index within the epoch
    samples: int  # in this batch
    seen: int  # training samples seen up to and including this batch
    time: float
    updates: list = field(default_factory=list)  # (labels, preds) per device


class DeferredMetric(mx.metric.EvalMetric):
    """An EvalMetric that updates ``inner`` lazily, from device copies of outputs and labels.

    ``on_batch(pending_batch, [(name, value), ...])`` is called for each replayed batch with the
    metric over that batch alone.
    """

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
        # Labels from an NDArrayIter are views of arrays that never change: no copy needed.
        # Other iterators may refill the same buffers, so their labels are copied.
        self.copy_labels = True
        self._argmax_axis = _accuracy_axis(inner)
        self._use_argmax: bool | None = None
        self._ring = None  # (buffer, rows per batch, context, slots) for argmax results
        self._count_at_once: bool | None = None
        self._single_group = None  # the executor group update_single last decided for
        self._single_fast = False
        self._argmax_into: ArgmaxInto | None = None  # built with the ring, for its slots
        self._next_batch = 0
        super().__init__(inner.name, has_global_stats=True)

    # ---------------------------------------------------------------- feeding
    def begin_batch(self, samples: int) -> None:
        """Called once per batch, before the per-device ``update_dict`` calls."""
        # argmax results are a few bytes a batch; copies of whole outputs are kept fewer
        limit = self.max_pending * (10 if self._use_argmax else 1)
        if len(self.pending) >= limit:
            self.flush()
        self.seen += samples
        self.latest_samples = samples
        self.pending.append(
            PendingBatch(self.epoch, self._next_batch, samples, self.seen, self.clock())
        )
        self._next_batch += 1

    def update_dict(self, label, pred):
        if not self.pending:  # fed without begin_batch (not through Module.update_metric)
            self.begin_batch(0)
        # One device operation per batch at most: each costs ~10% of a small network's batch
        # here. Outputs live in executor buffers that the next forward overwrites, so they are
        # kept as what the metric needs of them: Accuracy needs only the argmax (and computes
        # exactly the same counts from it); any other metric gets a copy.
        if self._use_argmax is None:  # decided once: shapes keep their relation across batches
            self._use_argmax = self._argmax_axis is not None and _shapes_differ(label, pred)
        if self._use_argmax:
            axis = self._argmax_axis
            slot = self._ring_slot(pred)
            if slot is not None:
                preds = {k: mx.nd.argmax(v, axis=axis, out=slot) for k, v in pred.items()}
            else:
                preds = {k: mx.nd.argmax(v, axis=axis) for k, v in pred.items()}
        else:
            preds = {k: v.copy() for k, v in pred.items()}
        if self.copy_labels:
            label = {k: v.copy() for k, v in label.items()}
        self.pending[-1].updates.append((label, preds))

    def update_single(self, group, labels) -> None:
        """One batch of a module bound to one device (``group`` its executor group).

        The common case, one output and one label measured by Accuracy, costs one device
        operation (the argmax into the ring) and a few attribute reads: this runs every batch,
        and at batch 32 Python's time is what a batch costs."""
        outputs = group.execs[0].outputs
        if group is not self._single_group:  # decided once per binding
            self._single_group, ring = group, self._ring
            self._single_fast = len(labels) == len(outputs) == 1 and (
                ring is None or (ring[1], ring[2]) == (group.batch_size, outputs[0].context)
            )
        slots = self._ring[3] if self._ring is not None else ()
        index = len(self.pending)
        if index == len(slots) and slots:
            self.flush()
            index = 0
        if not (self._single_fast and self._use_argmax and slots):
            self.begin_batch(group.batch_size)
            self.update_dict(
                dict(zip(group.label_names, labels)), dict(zip(group.output_names, outputs))
            )
            return
        samples = group.batch_size
        self.seen += samples
        self.latest_samples = samples
        entry = PendingBatch(self.epoch, self._next_batch, samples, self.seen, self.clock())
        self._next_batch += 1
        if self._argmax_into is None:
            self._argmax_into = ArgmaxInto(self._argmax_axis, slots)
        slot = self._argmax_into(outputs[0], index)
        label = labels[0].copy() if self.copy_labels else labels[0]
        entry.updates.append(({group.label_names[0]: label}, {group.output_names[0]: slot}))
        self.pending.append(entry)

    def _ring_slot(self, pred):
        """A reused slice of one preallocated buffer for this batch's argmax, if it fits.

        Allocating and freeing a small array per batch costs more than the argmax itself;
        consecutive slots also let a flush read all pending results as one array.
        """
        entry = self.pending[-1]
        if len(pred) != 1 or entry.updates:  # several outputs or devices: no ring
            return None
        array = next(iter(pred.values()))
        rows, limit = array.shape[0], self.max_pending * 10
        if self._ring is None:
            buffer = mx.nd.zeros((limit * rows,), ctx=array.context)
            self._ring = (
                buffer,
                rows,
                array.context,
                [buffer[i * rows : (i + 1) * rows] for i in range(limit)],
            )
        buffer, ring_rows, context, slots = self._ring
        index = len(self.pending) - 1
        if rows != ring_rows or array.context != context or index >= limit:
            return None
        return slots[index]

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
            p.shape[0] == t.shape[0]
            for labels, preds in updates
            for t, p in zip(labels.values(), preds.values())
        )

    def _flush_counts(self, pending) -> None:
        updates = [u for entry in pending for u in entry.updates]
        label_name, pred_name = next(iter(updates[0][0])), next(iter(updates[0][1]))
        labels = mx.nd.concat(*[next(iter(t.values())) for t, _ in updates], dim=0)
        ring = self._ring[3] if self._ring is not None else ()
        if len(updates) <= len(ring) and all(
            p[pred_name] is slot for (_, p), slot in zip(updates, ring)
        ):  # the results sit one after another in the ring's buffer
            preds = self._ring[0][: len(updates) * self._ring[1]]
        else:
            preds = mx.nd.concat(*[next(iter(p.values())) for _, p in updates], dim=0)
        self.inner.update_dict({label_name: labels}, {pred_name: preds})
        if self.on_batch is None:
            return
        correct = (
            preds.asnumpy().astype("int32").ravel() == labels.asnumpy().astype("int32").ravel()
        )
        sizes = np.array(
            [
                sum(p[pred_name].shape[0] for _, p in e.updates) if not e.samples else e.samples
                for e in pending
            ]
        )
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.add.reduceat(correct, starts) / sizes if len(correct) else sizes * np.nan
        names = [leaf.name for leaf in leaf_metrics(self.inner)]
        for entry, value in zip(pending, values.tolist()):
            self.on_batch(entry, [(name, value) for name in names])

    # ---------------------------------------------------------------- reading
    def reset(self):
        if hasattr(self, "inner"):  # EvalMetric.__init__ calls reset before inner exists
            self.flush()
            self.inner.reset()
            self._batch_values.restart()
            self._next_batch = 0
        self.num_inst = self.global_num_inst = 0
        self.sum_metric = self.global_sum_metric = 0.0

    def reset_local(self):
        self.flush()
        self.inner.reset_local()

    def get(self):
        self.flush()
        return self.inner.get()

    def get_global(self):
        self.flush()
        return self.inner.get_global()

    def get_name_value(self):
        self.flush()
        return self.inner.get_name_value()

    def get_global_name_value(self):
        self.flush()
        return self.inner.get_global_name_value()

    def get_config(self):
        return self.inner.get_config()

    def __str__(self):
        return f"DeferredMetric({self.inner})"
