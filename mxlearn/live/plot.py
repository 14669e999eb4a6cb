"""LivePlot: training curves that grow while a Module trains, drawn within a time budget."""

from __future__ import annotations

import time
from collections.abc import Callable

from .. import rules
from ..boundary import public
from ..errors import N_, ArgumentTypeError, LifecycleError
from ..language import say
from ..metrics.catalogue import metric_title
from ..metrics.deferred import BatchValues, leaf_metrics
from ..metrics.directions import facts_of
from ..metrics.recorder import TrainingRecorder
from ..training.callback import Callback, RunContext
from ..training.epoch_report import live_setting, without_plot
from .figure import TrainingFigure
from .renderers import choose_backend, make_renderer
from .throttle import Throttle

PROGRESS_INTERVAL = 0.2  # seconds between progress-line updates (a cheap text change)
# A run predicted to end within SHORT_RUN seconds shows its first frame at the end: an earlier
# one costs a whole figure (~15 ms) for a picture replaced a moment later. If the prediction is
# wrong, the first frame is still drawn after FIRST_FRAME_BY seconds (looked at every RECHECK),
# unless the run is then predicted to end within ALMOST_DONE, and by SHORT_RUN whatever it says.
# The first epoch of a kernel's first fit predicts long (1.3 s for a run of 0.8 s, measured): its
# validation pass warms up too. A frame drawn while MXNet trains competes with its threads for
# the cores: at 20 epochs of 1.05 s, frames at 0.75 s cost the plot 35-39 ms against 24-30 without
# them, for a picture that the end's replaced within 0.3 s (benchmarks/README.md).
SHORT_RUN = 2.0
FIRST_FRAME_BY = 0.75
FIRST_FRAME_RECHECK = 0.05
ALMOST_DONE = 0.5
PHASE_SAID = {
    "train": N_("train {metric} {value:.4f}"),
    "validation": N_("validation {metric} {value:.4f}"),
}


class PlotFinished(LifecycleError):
    says = N_(
        "{called} after the plot was finished (by live.close() or by the end of the "
        "fit that drew it): its figure and history are final."
    )
    fix_says = N_("live = mxlearn.LivePlot() for a new plot")


class NotALivePlot(ArgumentTypeError):
    says = N_(
        "mod.fit(live={spec!r}): live is True (a live plot), 'lines' (one line an epoch), "
        "False (no line an epoch) or a LivePlot."
    )
    fix_says = N_("mod.fit(..., live=True) or mod.fit(..., live=mxlearn.LivePlot(log_scale=True))")


class LivePlot(Callback):
    """Live training curves: one subplot per metric, train and validation on the same axes.

    It draws what a :class:`~mxlearn.metrics.TrainingRecorder` holds (``live.history``), and
    takes part in ``fit`` as a callback::

        mod.fit(train_iter, eval_data=val_iter, num_epoch=5, live=True)   # or live=LivePlot()

    or is fed by a manual loop: ``live.update(epoch, metric, batch)`` after each
    ``mod.update_metric``, ``live.validation(epoch, ...)``, and ``live.close()`` at the end.

    Parameters
    ----------
    backend : 'widget', 'display' or 'console'
        Default: chosen from where the code runs ($MXLEARN_LIVE_BACKEND overrides).
    budget : float
        Largest share of training time spent drawing (default 0.02; benchmarks/README.md).
    log_scale : bool
        Logarithmic y axis for unbounded metrics (losses).
    smoothing : float
        Moving-average weight for the per-batch curve, 0 (none) to <1.
    epochs : int, optional
        Epoch to stop before, for the x axis and the ETA of a manual loop (fit knows it).
    png_path : str, optional
        Where the console backend saves the final figure (default runs/plots/...).
    """

    shows_epoch_values = True  # fit leaves out MXNet's per-epoch log lines

    @public(
        "mxlearn.LivePlot()",
        backend=rules.text("LivePlot(backend='console')", optional=True),
        budget=rules.number("LivePlot(budget=0.02)", minimum=0),
        min_interval=rules.number("LivePlot(min_interval=0.25)", minimum=0),
        log_scale=rules.flag("LivePlot(log_scale=True)"),
        smoothing=rules.number("LivePlot(smoothing=0.6)", minimum=0, below=1),
        epochs=rules.whole(1, "LivePlot(epochs=10)", optional=True),
        png_path=rules.path("LivePlot(png_path='runs/curves.png')", optional=True),
        figsize=rules.size("LivePlot(figsize=(8, 3))", optional=True),
        clock=rules.function("clock=time.perf_counter"),
    )
    def __init__(
        self,
        backend: str | None = None,
        *,
        budget: float = 0.02,
        min_interval: float = 0.25,
        log_scale: bool = False,
        smoothing: float = 0.6,
        epochs: int | None = None,
        png_path: str | None = None,
        figsize: tuple[float, float] | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ):
        self.clock = clock
        self.recorder = TrainingRecorder(clock=clock)
        self.recorder.total_epochs = epochs
        self.backend = choose_backend(backend)
        self.renderer = make_renderer(self.backend, png_path)
        self._figure_settings = dict(
            log_scale=log_scale, smoothing=smoothing, figsize=figsize, shared_canvas=True
        )
        self.figure = TrainingFigure(**self._figure_settings)
        self.throttle = Throttle(budget=budget, min_interval=min_interval, clock=clock)
        self.saved_path: str | None = None
        self.findings: list = []  # what history.diagnose() read in the curves when training ended
        self._frame: bytes | None = None  # the last JPEG frame, and the history it shows
        self._frame_version = -1
        self._shown = self._closed = False
        self._last_progress = self._quiet_until = -1.0  # tick does nothing before _quiet_until
        # manual-loop state
        self._batch_values = BatchValues()
        self._manual_epoch: int | None = None
        self._manual_epoch_values = None
        if self.backend != "console":
            # Shown at once: a notebook's widget manager only starts while the kernel is idle,
            # so a plot shown before the training cell runs updates live from its first batch.
            self._show()

    def _show(self) -> None:
        if not self._shown:
            self.renderer.start()
            self._shown = True

    def update(self, epoch: int, metric, batch=None) -> None:
        """Record a training batch of a manual loop, after ``mod.update_metric(metric, ...)``
        (``metric`` reset at each epoch's start; ``batch`` tells the samples, padding left out)."""
        self._require_open("LivePlot.update()")
        recorder = self.recorder
        if self._manual_epoch is None:
            recorder.begin(begin_epoch=epoch, total_epochs=recorder.total_epochs)
            self._know_ranges(leaf_metrics(metric))
            self._start()
        elif epoch != self._manual_epoch:
            self._end_manual_epoch()
            self._batch_values.restart()
            recorder.batch = -1
        self._manual_epoch = epoch
        values = self._batch_values.read(metric)
        samples = 0
        if getattr(batch, "data", None):
            samples = int(batch.data[0].shape[0]) - int(getattr(batch, "pad", 0) or 0)
        seen = recorder.advance(epoch, recorder.batch + 1, samples)
        recorder.record_batch(epoch, recorder.batch, seen, values)
        self._manual_epoch_values = metric.get_global_name_value()
        self.tick()

    def validation(self, epoch: int, name_values) -> None:
        """Record validation values, e.g. ``live.validation(epoch, mod.score(val_iter, 'acc'))``."""
        self._require_open("LivePlot.validation()")
        if hasattr(name_values, "get_name_value"):  # a metric object: its class is known
            self._know_ranges(leaf_metrics(name_values))
            name_values = name_values.get_name_value()
        if self._manual_epoch == epoch:
            self._end_manual_epoch(draw=False)
        self.recorder.record_epoch(epoch, "validation", name_values)
        self.epoch_done()

    def _require_open(self, called: str) -> None:
        # new values would go into a final figure and into a finished run's history
        if self._closed:
            raise PlotFinished(called=called)

    def _end_manual_epoch(self, draw: bool = True) -> None:
        if self._manual_epoch_values is not None:
            self.recorder.record_epoch(self._manual_epoch, "train", self._manual_epoch_values)
            self._manual_epoch_values = None
            if draw:
                self.epoch_done()

    def close(self) -> None:
        """End of training: the last values, a final exact figure, and (console) the PNG path."""
        self._end_manual_epoch()
        self.finish()

    def __enter__(self) -> LivePlot:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @classmethod
    def of(cls, spec) -> LivePlot | None:
        """What ``fit(live=spec)`` draws with: True a new LivePlot, False or None nothing."""
        spec = live_setting(spec)
        if without_plot(spec):
            return None  # MXNet's own log, or what fit shows without a plot
        if spec is True:
            return cls()
        if isinstance(spec, LivePlot):
            return spec
        raise NotALivePlot(spec=spec)

    def on_train_begin(self, run: RunContext) -> None:
        if run.recorder is not self.recorder and len(self.history):
            # a plot given to a second fit: that run's curves get a figure (and texts) of their own
            self.figure = TrainingFigure(**self._figure_settings)
            self._frame, self._frame_version = None, -1
        self.recorder = run.recorder
        self._know_ranges([*run.train_metrics.values(), *run.validation_metrics.values()])
        self._start()

    def _know_ranges(self, metrics) -> None:
        """Fixed axes only for metrics whose range their class tells (a custom metric named
        'accuracy' may go anywhere); the history learns the same (a manual loop has only this)."""
        for metric in metrics:
            facts = facts_of(metric)
            self.figure.ranges[metric.name] = facts.value_range if facts else None
            self.recorder.history.know(metric.name, facts)

    def on_batch_end(self, run: RunContext, batch: int) -> None:
        self.tick()

    def on_epoch_done(self, run: RunContext, epoch: int) -> None:
        self.epoch_done()

    def on_train_end(self, run: RunContext) -> None:
        self.finish()

    @property
    def history(self):
        """The values drawn: the recorder's MetricHistory (``mod.history`` after fit)."""
        return self.recorder.history

    def _start(self) -> None:
        self.throttle.restart()
        self._quiet_until = -1.0
        self._closed = False
        self._show()

    def tick(self) -> None:
        if not self.renderer.wants_figure:
            return  # the console shows only epoch lines and the final figure
        now = self.clock()
        if now < self._quiet_until:
            return  # after most batches: neither the progress line nor a frame is due
        self._progress_when_due(now)
        next_frame = None
        if self.throttle.due():
            if self._first_frame_waits():
                next_frame = now + FIRST_FRAME_RECHECK
            else:
                self.draw()
        if next_frame is None:
            next_frame = self.throttle.quiet_until()
        self._quiet_until = min(self._last_progress + PROGRESS_INTERVAL, next_frame)

    def _progress_when_due(self, now: float) -> None:
        # every message to a notebook's widget costs ~0.2 ms: a few a second are enough
        if now - self._last_progress >= PROGRESS_INTERVAL:
            self._last_progress = now
            self.renderer.progress(self.recorder.progress_text(), self._fraction())

    def _first_frame_waits(self) -> bool:
        if self.throttle.draws:
            return False
        elapsed, eta = self.recorder.elapsed(), self.recorder.eta_seconds()
        if eta is None or elapsed + eta >= SHORT_RUN:
            return False
        return elapsed < FIRST_FRAME_BY or eta < ALMOST_DONE

    def epoch_done(self) -> None:
        """An epoch's values are complete: its line, and a figure when the throttle allows (or
        for the first epoch, unless the whole run is short): epochs of a few ms would otherwise
        spend more time drawing than training."""
        if self.renderer.shows_epoch_lines:  # the text costs ~0.2 ms: only for who prints it
            self.renderer.epoch(self._epoch_text())
        if not self.renderer.wants_figure:
            return
        if (self.throttle.draws == 0 or self.throttle.due()) and not self._first_frame_waits():
            self.draw()
        else:
            self._progress_when_due(self.clock())

    def draw(self) -> None:
        """Draw now (the throttle decides when this is called during training)."""
        started = self.clock()
        self.recorder.flush()
        if self.renderer.wants_figure:
            self.renderer.figure(self._current_frame())
        self.renderer.progress(self.recorder.progress_text(), self._fraction())
        self._last_progress = self.clock()
        self.throttle.drew(self._last_progress - started)

    def _current_frame(self) -> bytes:
        """The figure as a JPEG frame, drawn again only if something is new."""
        if self._frame is None or self._frame_version != self.history.version:
            self._draw_figure()
            self._frame, self._frame_version = self.figure.jpeg(), self.history.version
        return self._frame

    def _draw_figure(self) -> None:
        self.figure.update(self.history, self.recorder.batches_per_epoch, self._x_range())
        self.figure.draw()

    def finish(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.recorder.flush()
        png = None
        if len(self.history):
            # one picture for the end: the widget's last frame and the saved notebook's image
            # are the same PNG (a JPEG beside it cost another encoding and message)
            if self.figure.fig is None or self._frame_version != self.history.version:
                self._draw_figure()
            png = self.figure.png()
            self.figure.release()  # the next plot of this layout may draw on this canvas
        self.saved_path = self.renderer.finish(png, self.recorder.progress_text(done=True))
        self.findings = self.history.diagnose() if len(self.history) else []
        if self.findings:
            heading = say("What the curves show:")
            self.renderer.findings("\n\n".join([heading, *(str(f) for f in self.findings)]))

    def save(self, path) -> None:
        """Write the current figure, exactly drawn, as a PNG file."""
        self.figure.update(self.history, self.recorder.batches_per_epoch, self._x_range())
        self.figure.save(path)

    def _x_range(self):
        r = self.recorder
        if r.total_epochs:
            # a resumed run shows the epochs before it too
            first = self.history.records[0].epoch if self.history.records else r.begin_epoch
            return (float(min(first, r.begin_epoch)), float(r.total_epochs))
        return None

    def _fraction(self) -> float | None:
        r = self.recorder
        if not (r.total_epochs and r.samples_per_epoch):
            return None
        total = (r.total_epochs - r.begin_epoch) * r.samples_per_epoch
        done = (r.epoch - r.begin_epoch) * r.samples_per_epoch + r.epoch_samples
        return done / total if total else None

    def _epoch_text(self) -> str:
        epoch = self.recorder.epoch
        parts = [say("Epoch[{epoch}]", epoch=epoch)]
        for metric in self.history.metrics():
            for phase in ("train", "validation"):
                r = self.history.last_record(metric, phase)
                if r is not None and r.epoch == epoch:
                    parts.append(say(PHASE_SAID[phase], metric=metric_title(metric), value=r.value))
        parts.append(say("{rate:,.0f} samples/s", rate=self.recorder.samples_per_second()))
        eta = self.recorder.eta_seconds()
        if eta is not None:
            minutes, seconds = divmod(int(eta), 60)
            parts.append(say("ETA {minutes}:{seconds:02d}", minutes=minutes, seconds=seconds))
        return "  ".join(parts)

    def __repr__(self) -> str:
        return f"LivePlot(backend={self.backend!r}, {self.history!r})"
