"""The callback that turns fit's metrics into ``mod.history``. They are wrapped in DeferredMetric
(no device sync per batch; MXNet logs the same values), whose per-batch values are recorded when
it replays them: when a plot draws, at the latest at the epoch's end.
"""

from __future__ import annotations

import functools

from ..devices import gpu_memory_text
from ..language import say_drawn
from ..metrics.deferred import DeferredMetric
from ..metrics.directions import facts_of
from ..metrics.recorder import TrainingRecorder
from .callback import Callback, RunContext


def batches_per_epoch(data_iter) -> int | None:
    # NDArrayIter knows its size; other iterators are counted during the first epoch.
    num_data = getattr(data_iter, "num_data", None)
    batch_size = getattr(data_iter, "batch_size", None)
    if not (num_data and batch_size):
        return None
    if getattr(data_iter, "last_batch_handle", "pad") == "discard":
        return num_data // batch_size
    return -(-num_data // batch_size)


class MetricRecording(Callback):
    def __init__(
        self, recorder: TrainingRecorder, eval_metric, validation_metric, train_data
    ) -> None:
        self.recorder = recorder
        self.train_data = train_data
        self.train_metric = DeferredMetric(
            eval_metric, on_batch=self._on_batch, clock=recorder.clock
        )
        self.validation_metric = DeferredMetric(validation_metric, clock=recorder.clock)
        recorder.flush_sources.append(self.train_metric.flush)

    def _on_batch(self, entry, values) -> None:
        self.recorder.record_batch(entry.epoch, entry.batch, entry.seen, values, at=entry.time)

    def on_train_begin(self, run: RunContext) -> None:
        self.recorder.begin(
            begin_epoch=run.begin_epoch,
            total_epochs=run.num_epoch,
            batches_per_epoch=batches_per_epoch(self.train_data),
        )
        self.train_metric.epoch = run.begin_epoch
        self.train_metric.seen = self.recorder.samples
        for name, metric in [*run.train_metrics.items(), *run.validation_metrics.items()]:
            # from the metric's class, never its name: a CustomMetric may be called 'accuracy'
            self.recorder.history.know(name, facts_of(metric))
        self.recorder.history.started(run.begin_epoch, run.start_weights)
        if run.given_weights and run.resumed_from is None:
            # diagnose must not judge trained weights against "before training" (batch 0)
            self.recorder.history.mark(
                say_drawn("started from earlier weights"),
                epoch=run.begin_epoch,
                samples=self.recorder.samples,
                kind="given_weights",
            )
        contexts = run.module.contexts
        if any(ctx.device_type == "gpu" for ctx in contexts):
            self.recorder.status = functools.partial(gpu_memory_text, contexts)

    def on_batch_end(self, run: RunContext, batch: int) -> None:
        self.recorder.advance(run.epoch, batch, self.train_metric.latest_samples)

    def on_epoch_end(self, run: RunContext, epoch: int) -> None:
        self.recorder.record_epoch(epoch, "train", self.train_metric.get_global_name_value())
        self.train_metric.epoch = epoch + 1

    def on_validation_end(self, run: RunContext, epoch: int) -> None:
        self.recorder.record_epoch(epoch, "validation", self.validation_metric.get_name_value())

    def on_train_end(self, run: RunContext) -> None:
        self.train_metric.flush()
        self.recorder.flush_sources.remove(self.train_metric.flush)
