"""What a callback sees once an epoch is done, validation included: MXNet's ``epoch_end_callback``
runs before validation. ``fit(epoch_report_callback=fn)`` calls ``fn(report)`` then; raising
:class:`StopTraining` inside ``fn`` ends ``fit`` cleanly after that epoch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..language import say
from .callback import Callback, RunContext, StopTraining

__all__ = [
    "EpochLines",
    "EpochReport",
    "EpochReporting",
    "StopTraining",
    "shown_without_plot",
    "without_plot",
]


@dataclass(frozen=True)
class EpochReport:
    epoch: int  # the epoch that just ended (counted from 0, like MXNet's log)
    train: dict[str, float]  # metric name -> value over the epoch's training batches
    validation: dict[str, float]  # the same over eval_data (empty without eval_data)
    module: object  # the module, e.g. to save or inspect its parameters
    history: object  # every value so far (a MetricHistory)

    @classmethod
    def of(cls, module, epoch: int, history) -> EpochReport:
        def values(phase: str) -> dict[str, float]:
            records = {name: history.last_record(name, phase) for name in history.metrics()}
            return {n: r.value for n, r in records.items() if r is not None and r.epoch == epoch}

        return cls(epoch, values("train"), values("validation"), module, history)

    def __str__(self) -> str:
        parts = [say("train {name}={value:.4f}", name=k, value=v) for k, v in self.train.items()]
        parts += [
            say("validation {name}={value:.4f}", name=k, value=v)
            for k, v in self.validation.items()
        ]
        return say("Epoch[{epoch}] {values}", epoch=self.epoch, values=say(", ").join(parts))


class EpochReporting(Callback):
    """Calls each ``fit(epoch_report_callback=...)`` function with the epoch's report."""

    def __init__(self, functions: list[Callable[[EpochReport], None]]) -> None:
        self.functions = functions

    def on_epoch_done(self, run: RunContext, epoch: int) -> None:
        report = EpochReport.of(run.module, epoch, run.history)
        for function in self.functions:
            function(report)


class EpochLines(Callback):
    """``fit(live='lines')``: one line an epoch, once its validation is in, instead of MXNet's
    three (``Train-``, ``Time cost``, ``Validation-``)."""

    shows_epoch_values = True

    def on_epoch_done(self, run: RunContext, epoch: int) -> None:
        print(EpochReport.of(run.module, epoch, run.history), flush=True)


class NoEpochLines(Callback):
    """``fit(live=False)``: no line an epoch; warnings and the reason a run stopped still show."""

    shows_epoch_values = True  # nothing shown, so MXNet's lines are left out too


def shown_without_plot(live) -> list[Callback]:
    """What ``fit(live=...)`` shows when it draws no plot: 'lines' or False; else nothing here
    (None keeps MXNet's own log; True and a LivePlot are the plot's)."""
    if live is False:
        return [NoEpochLines()]
    if isinstance(live, str) and live == "lines":
        return [EpochLines()]
    return []


def without_plot(live) -> bool:
    """``live`` asks for no plot: MXNet's own log (None), or one of :func:`shown_without_plot`'s."""
    return live is None or bool(shown_without_plot(live))
