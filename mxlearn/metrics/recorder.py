"""TrainingRecorder: metric readings from fit (the MetricRecording callback) or a manual loop (a
LivePlot's ``update``) as MetricHistory rows, with the counters a progress line needs."""

from __future__ import annotations

import time
from collections.abc import Callable

from ..language import say
from .history import MetricHistory


class TrainingRecorder:
    def __init__(
        self, clock: Callable[[], float] = time.perf_counter, history: MetricHistory | None = None
    ):
        self.clock = clock
        self.history = history if history is not None else MetricHistory()
        self.started_at: float | None = None
        self.total_epochs: int | None = None  # the epoch to stop before (fit's num_epoch)
        self.begin_epoch = 0
        self.batches_per_epoch: int | None = None
        self.epoch = 0
        self.batch = -1  # index of the latest batch in the current epoch
        self.samples = 0  # training samples seen since training started
        self.epoch_samples = 0
        self.samples_per_epoch: int | None = None
        # (time, samples) at the first batch's end: the ETA's pace is taken from there, as that
        # batch's time holds the run's setup (60 ms of a 40 ms epoch, in a new kernel)
        self._paced_from: tuple[float, int] | None = None
        self.flush_sources: list[Callable[[], None]] = []  # called before values are read
        # more for the progress line, read when it is drawn (fit on a GPU: its memory in use)
        self.status: Callable[[], str] | None = None

    def begin(
        self,
        *,
        begin_epoch: int = 0,
        total_epochs: int | None = None,
        batches_per_epoch: int | None = None,
    ) -> None:
        if self.started_at is None:
            self.started_at = self.clock()
        self.begin_epoch = self.epoch = begin_epoch
        self.total_epochs = total_epochs
        self.batches_per_epoch = batches_per_epoch or self.batches_per_epoch
        self.batch = -1
        self.epoch_samples = 0

    def elapsed(self, at: float | None = None) -> float:
        if self.started_at is None:
            return 0.0
        return (self.clock() if at is None else at) - self.started_at

    def advance(self, epoch: int, batch: int, samples: int) -> int:
        """Training reached batch ``batch`` of ``epoch``; returns the samples seen."""
        if epoch != self.epoch:
            self.epoch, self.epoch_samples = epoch, 0
        self.batch = batch
        self.samples += samples
        self.epoch_samples += samples
        if self._paced_from is None:
            self._paced_from = self.clock(), self.samples
        return self.samples

    def record_batch(
        self, epoch: int, batch: int, samples_seen: int, values, at: float | None = None
    ) -> None:
        when = self.elapsed(at)
        for name, value in values:
            self._record(name, "train", "batch", epoch, batch, samples_seen, when, value)

    def record_epoch(self, epoch: int, phase: str, name_values) -> None:
        if phase == "train" and self.batch >= 0:
            self.batches_per_epoch = self.batches_per_epoch or self.batch + 1
            self.samples_per_epoch = self.samples_per_epoch or self.epoch_samples
        for name, value in name_values:
            when = self.elapsed()
            self._record(name, phase, "epoch", epoch, self.batch + 1, self.samples, when, value)

    def _record(self, name, phase, kind, epoch, batch, samples, when, value) -> None:
        # A name no metric object was known by (an EvalMetric whose get() reports other names, a
        # list handed to a LivePlot) is of unknown meaning: a name does not say what it measures
        self.history.know(name, None)  # keeps what is known of it
        self.history.record(
            name, phase, kind, epoch=epoch, batch=batch, samples=samples, time=when, value=value
        )

    def flush(self) -> None:
        """Bring in every value recorded later than its batch ran."""
        for flush in self.flush_sources:
            flush()

    def samples_per_second(self) -> float:
        elapsed = self.elapsed()
        return self.samples / elapsed if elapsed > 0 else 0.0

    def eta_seconds(self) -> float | None:
        if not (self.total_epochs and self.samples_per_epoch and self.samples):
            return None
        remaining = (self.total_epochs - self.epoch) * self.samples_per_epoch - self.epoch_samples
        rate = self.samples_per_second()
        if self._paced_from is not None:
            since, before = self._paced_from
            if self.samples > before and self.clock() > since:
                rate = (self.samples - before) / (self.clock() - since)
        return max(remaining, 0) / rate if rate else None

    def progress_text(self, done: bool = False) -> str:
        rate = say("{rate} samples/s", rate=f"{self.samples_per_second():,.0f}")
        if done:
            return say(
                "done: {epochs} epochs, {samples} samples in {seconds} s, {rate}",
                epochs=self.epoch + 1 - self.begin_epoch,
                samples=f"{self.samples:,}",
                seconds=f"{self.elapsed():.1f}",
                rate=rate,
            )
        eta, extra = self.eta_seconds(), self.status() if self.status is not None else ""
        if eta is not None:
            minutes, seconds = int(eta) // 60, f"{int(eta) % 60:02d}"
            eta = say(" · ETA {minutes}:{seconds}", minutes=minutes, seconds=seconds)
        fields = dict(
            epoch=self.epoch,
            batch=self.batch + 1,
            batches=f"/{self.batches_per_epoch}" if self.batches_per_epoch else "",
            rate=rate,
            eta=eta or "",
            extra=f" · {extra}" if extra else "",
        )
        if not self.total_epochs:
            return say("Epoch[{epoch}] · batch {batch}{batches} · {rate}{eta}{extra}", **fields)
        # MXNet counts epochs from 0 (its log says Epoch[0]); say the range so that reads right
        return say(
            "Epoch[{epoch}] of {first}..{last} · batch {batch}{batches} · {rate}{eta}{extra}",
            first=self.begin_epoch,
            last=self.total_epochs - 1,
            **fields,
        )
