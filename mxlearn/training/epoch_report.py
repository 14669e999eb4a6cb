"""What a callback sees once an epoch is done, validation included: MXNet's ``epoch_end_callback``
runs before validation. ``fit(epoch_report_callback=fn)`` calls ``fn(report)`` then; raising
:class:`StopTraining` inside ``fn`` ends ``fit`` cleanly after that epoch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import N_, InputError
from ..language import say
from ..metrics.catalogue import metric_title
from .callback import Callback, RunContext, StopTraining

__all__ = [
    "EpochLines",
    "EpochReport",
    "EpochReporting",
    "StopTraining",
    "live_setting",
    "shown_without_plot",
    "without_plot",
]


class NotTheLiveWord(InputError):
    says = N_(
        "mod.fit(live={spec!r}): the word live= knows is 'lines' (one line an epoch), "
        "in small letters."
    )
    fix_code = "mod.fit(..., live='lines')"


class NoPlotBesideAPlot(InputError):
    says = N_(
        "mod.fit(live={live!r}) asks for no plot, but callbacks= holds a LivePlot, which draws "
        "(and in a terminal prints a line an epoch too)."
    )
    fix_code = "mod.fit(..., live=plot)   # the LivePlot, not in callbacks="


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
        # the metric as the language names it: 'accuracy' in English, 准确率 in Chinese
        parts = [
            say("train {name}={value:.4f}", name=metric_title(k), value=v)
            for k, v in self.train.items()
        ]
        parts += [
            say("validation {name}={value:.4f}", name=metric_title(k), value=v)
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


def live_setting(live):
    """``fit(live=...)`` as its readers take it: a NumPy bool is the bool it holds; the word
    in another form ('LINES', 'line') is refused with the word, not taken for a plot."""
    if isinstance(live, np.bool_):
        return bool(live)
    if isinstance(live, str) and live != "lines" and live.strip().lower() in ("lines", "line"):
        raise NotTheLiveWord(spec=live)
    return live


def shown_without_plot(live, callbacks=()) -> list[Callback]:
    """What ``fit(live=...)`` shows when it draws no plot: 'lines' or False; else nothing here
    (None keeps MXNet's own log; True and a LivePlot are the plot's). ``callbacks``, the
    user's, may hold no LivePlot then."""
    live = live_setting(live)
    no_plot = live is False or (isinstance(live, str) and live == "lines")
    if no_plot and any(c.shows_epoch_values for c in callbacks):
        raise NoPlotBesideAPlot(live=live)
    if live is False:
        return [NoEpochLines()]
    if isinstance(live, str) and live == "lines":
        return [EpochLines()]
    return []


def without_plot(live) -> bool:
    """``live`` asks for no plot: MXNet's own log (None), or one of :func:`shown_without_plot`'s."""
    return live is None or bool(shown_without_plot(live))
