"""FitFeed: connects MXNet's fit callback slots to a recorder (and so to a LivePlot).

fit gets its metrics wrapped in DeferredMetric (no device sync per batch; the values MXNet logs
are unchanged) and three callbacks: after each batch (names the batch; lets the plot draw when
its throttle allows), after each epoch (MXNet's train values) and after each validation (the
validation values).
"""

from __future__ import annotations

from ._compat import mx
from .metric_tracking import DeferredMetric
from .recorder import TrainingRecorder


def _batches_per_epoch(data_iter) -> int | None:
    # NDArrayIter knows its size; other iterators are counted during the first epoch.
    num_data, batch_size = (
        getattr(data_iter, "num_data", None),
        getattr(data_iter, "batch_size", None),
    )
    if not (num_data and batch_size):
        return None
    if getattr(data_iter, "last_batch_handle", "pad") == "discard":
        return num_data // batch_size
    return -(-num_data // batch_size)


class FitFeed:
    def __init__(
        self, recorder: TrainingRecorder, eval_metric, validation_metric, *, has_validation: bool
    ) -> None:
        self.recorder = recorder
        self.train_metric = DeferredMetric(
            eval_metric, on_batch=self._on_batch, clock=recorder.clock
        )
        self.validation_metric = DeferredMetric(validation_metric, clock=recorder.clock)
        recorder.expects_validation = has_validation
        recorder.flush_sources.append(self.train_metric.flush)

    def begin(self, train_data, begin_epoch: int, num_epoch: int) -> None:
        self.recorder.begin(
            begin_epoch=begin_epoch,
            total_epochs=num_epoch,
            batches_per_epoch=_batches_per_epoch(train_data),
        )
        self.train_metric.epoch = begin_epoch
        self.train_metric.seen = self.recorder.samples
        self.train_metric.copy_labels = type(train_data) is not mx.io.NDArrayIter

    def begin_validation(self, eval_data) -> None:
        self.validation_metric.copy_labels = type(eval_data) is not mx.io.NDArrayIter

    def _on_batch(self, entry, values) -> None:
        self.recorder.record_batch(entry.epoch, entry.batch, entry.seen, values, at=entry.time)

    # ---------------------------------------------------------------- fit's callback slots
    def batch_end(self, param) -> None:
        self.recorder.advance(param.epoch, param.nbatch, self.train_metric.latest_samples)
        self.recorder.tick()

    def epoch_end(self, epoch, symbol, arg_params, aux_params) -> None:
        self.recorder.record_epoch(epoch, "train", self.train_metric.get_global_name_value())
        self.train_metric.epoch = epoch + 1

    def eval_end(self, param) -> None:
        self.recorder.record_epoch(param.epoch, "validation", param.eval_metric.get_name_value())

    def finish(self) -> None:
        self.train_metric.flush()
        self.recorder.flush_sources.remove(self.train_metric.flush)
        self.recorder.finish()
