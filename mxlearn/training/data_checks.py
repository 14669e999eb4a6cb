"""Every training batch's values checked, without a wait per batch: an in-memory iterator's rows
before the run (``guards.data_values``), another's as each batch queues them on the device, read
on the watchdog's schedule just before it: bad data is named before the learning rate is blamed.
"""

from __future__ import annotations

from .callback import Callback, RunContext


class DataValueChecks(Callback):
    def __init__(self, facts=None, queued=None, every: int = 100) -> None:
        self.facts = facts  # data_values.DataFacts of the training rows, when all were checked
        self.queued = queued  # batch_values.QueuedValueChecks, for other iterators
        self.every = every

    def on_train_begin(self, run: RunContext) -> None:
        run.data_facts = self.facts

    def on_batch_end(self, run: RunContext, batch: int) -> None:
        if self.queued is not None and batch % self.every == 0:
            self.queued.read()

    def on_epoch_end(self, run: RunContext, epoch: int) -> None:
        if self.queued is not None:
            self.queued.read()
            self.queued.start_pass()


class PrefetchChecks(Callback):
    """After every batch and epoch: a PrefetchingIter whose inner iterator raised ended the pass
    early (``guards.prefetching``); its error is raised before the pass is believed."""

    def __init__(self, watch) -> None:
        self.watch = watch  # a guards.prefetching.PrefetchWatch

    def on_batch_end(self, run: RunContext, batch: int) -> None:
        self.watch.refuse_dead()

    on_epoch_end = on_validation_end = on_batch_end
