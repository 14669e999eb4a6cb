"""LivePlot: backend choice, curves after updates (Agg), fit integration, exact metrics; a bad
budget, the display backend outside a kernel and updates after the plot finished refused."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import printed_by, seed_all

import mxlearn
from mxlearn import MetricHistory, mx
from mxlearn.live import plot, renderers
from mxlearn.live.figure import TrainingFigure
from mxlearn.live.plot import PROGRESS_INTERVAL, NotALivePlot, PlotFinished
from mxlearn.live.renderers import NoSuchBackend, NotInAKernel, WidgetRenderer
from mxlearn.rules import OutOfRange, WrongKind


# ---------------------------------------------------------------- backend choice
def test_backend_outside_a_kernel_is_the_console(monkeypatch):
    monkeypatch.delenv(renderers.ENV_VARIABLE, raising=False)
    assert renderers.choose_backend() == "console"


def test_backend_in_a_kernel_depends_on_widgets(monkeypatch):
    monkeypatch.delenv(renderers.ENV_VARIABLE, raising=False)
    monkeypatch.setattr(renderers, "_kernel_shell", lambda: object())
    assert renderers.choose_backend() == "widget"
    monkeypatch.setattr(renderers, "widgets_available", lambda: False)
    assert renderers.choose_backend() == "display"


def test_backend_requested_or_from_the_environment(monkeypatch):
    monkeypatch.setenv(renderers.ENV_VARIABLE, "display")
    assert renderers.choose_backend() == "display"
    assert renderers.choose_backend("console") == "console"
    with pytest.raises(NoSuchBackend) as refused:
        renderers.choose_backend("widgett")
    assert refused.value.fields["choice"] == "widgett"
    assert "'widget'" in refused.value.fields["suggestion"]  # the closest backend's name


def _imports_ipywidgets(in_kernel: bool) -> bool:
    return (
        printed_by("import sys, mxlearn; print('ipywidgets' in sys.modules)", in_kernel) == "True"
    )


@pytest.mark.slow
def test_a_kernel_imports_ipywidgets_with_mxlearn_and_a_script_does_not():
    """In a notebook the import cell pays for ipywidgets, not the first training cell."""
    pytest.importorskip("ipywidgets")
    assert _imports_ipywidgets(in_kernel=True)
    assert not _imports_ipywidgets(in_kernel=False)


# ---------------------------------------------------------------- the figure
def _fed_history(epochs=2, batches=4):
    h = MetricHistory()
    for e in range(epochs):
        for b in range(batches):
            h.record(
                "accuracy",
                "train",
                "batch",
                epoch=e,
                batch=b,
                samples=0,
                time=0,
                value=0.1 * (b + 1),
            )
            h.record(
                "cross-entropy",
                "train",
                "batch",
                epoch=e,
                batch=b,
                samples=0,
                time=0,
                value=3.0 - b,
            )
        h.record(
            "accuracy",
            "train",
            "epoch",
            epoch=e,
            batch=batches,
            samples=0,
            time=0,
            value=0.5 + e / 10,
        )
        h.record(
            "accuracy",
            "validation",
            "epoch",
            epoch=e,
            batch=batches,
            samples=0,
            time=0,
            value=0.4 + e / 10,
        )
    return h


def test_figure_curves_hold_the_history_values():
    fig = TrainingFigure(smoothing=0.0)
    fig.update(_fed_history(), batches_per_epoch=4, x_range=(0, 2))
    fig.draw()
    data = fig.line_data("accuracy")
    assert np.allclose(data["train (batch)"][0], [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0])
    assert np.allclose(data["train (batch)"][1], [0.1, 0.2, 0.3, 0.4] * 2)
    assert np.allclose(data["train (epoch)"][0], [1, 2]) and np.allclose(
        data["train (epoch)"][1], [0.5, 0.6]
    )
    assert np.allclose(data["validation"][1], [0.4, 0.5])
    assert fig.metrics == ["accuracy", "cross-entropy"]
    assert len(fig.fig.axes) == 2  # one subplot per metric


def test_figure_is_created_once_and_updated_in_place():
    fig = TrainingFigure(smoothing=0.0)
    history = _fed_history(epochs=1)
    fig.update(history, 4, (0, 3))
    fig.draw()
    first_figure, first_line = fig.fig, fig._lines["accuracy"][0]
    history.record("accuracy", "train", "batch", epoch=1, batch=0, samples=0, time=0, value=0.3)
    fig.update(history, 4, (0, 3))
    fig.draw()
    assert fig.fig is first_figure and fig._lines["accuracy"][0] is first_line
    assert fig.line_data("accuracy")["train (batch)"][1][-1] == pytest.approx(0.3)
    assert fig.blits == 1 and fig.full_draws == 1  # the limits held: only the curves redrawn


def test_figure_smoothing_and_log_scale():
    fig = TrainingFigure(smoothing=0.5, log_scale=True)
    fig.update(_fed_history(epochs=1), 4, None)
    fig.draw()
    smoothed = fig.line_data("cross-entropy")["train (batch)"][1]
    assert smoothed[0] == pytest.approx(3.0) and smoothed[1] < 3.0 and smoothed[1] > 2.0
    assert fig._axes["cross-entropy"].get_yscale() == "log"
    assert fig._axes["accuracy"].get_yscale() == "linear"  # bounded metrics stay linear
    png = fig.png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------- fit and the manual loop
def _letters():
    return mxlearn.datasets.letter_recognition()


def _small_letter_iters(batch_size=32):
    X, y = _letters()
    train = mx.io.NDArrayIter(X[:3200], y[:3200], batch_size, shuffle=True)
    val = mx.io.NDArrayIter(X[16000:16800], y[16000:16800], batch_size)
    return train, val


def test_fit_with_console_live_plot(tmp_path, capsys):
    seed_all(0)
    train, val = _small_letter_iters()
    live = mxlearn.LivePlot(backend="console", png_path=str(tmp_path / "curves.png"))
    mod = mxlearn.Module(mxlearn.models.mlp())
    mod.fit(train, eval_data=val, optimizer_params={"learning_rate": 0.1}, num_epoch=3, live=live)
    out = capsys.readouterr().out
    epoch_lines = [
        line for line in out.splitlines() if line.startswith("Epoch[") and "samples/s" in line
    ]
    assert len(epoch_lines) == 3 and "validation accuracy" in epoch_lines[-1]
    assert f"Training plot saved to {tmp_path / 'curves.png'}" in out
    assert (tmp_path / "curves.png").read_bytes()[:4] == b"\x89PNG"
    h = mod.history
    assert h is live.history
    assert len(h.series("accuracy", "train", "batch")[1]) == 3 * 100
    assert h.series("accuracy", "validation", "epoch")[0] == [0, 1, 2]
    assert h.records[-1].samples == 3 * 3200


def test_the_console_prints_what_the_curves_show_when_training_ends(tmp_path, capsys):
    seed_all(0)
    train, val = _small_letter_iters()
    live = mxlearn.LivePlot(backend="console", png_path=str(tmp_path / "curves.png"))
    mod = mxlearn.Module(mxlearn.models.mlp())
    mod.fit(train, eval_data=val, optimizer_params={"learning_rate": 1e-6}, num_epoch=3, live=live)
    out = capsys.readouterr().out
    assert [f.kind for f in live.findings] == ["not_learning"]
    assert "What the curves show:" in out and str(live.findings[0]) in out
    assert out.index("Training plot saved") < out.index("What the curves show:")
    healthy = mxlearn.LivePlot(backend="console", png_path=str(tmp_path / "healthy.png"))
    train.reset()
    mxlearn.Module(mxlearn.models.mlp()).fit(
        train, eval_data=val, optimizer_params={"learning_rate": 0.1}, num_epoch=3, live=healthy
    )
    assert healthy.findings == [] and "What the curves show:" not in capsys.readouterr().out


def test_fit_without_live_still_records_history():
    seed_all(0)
    train, _ = _small_letter_iters()
    mod = mxlearn.Module(mxlearn.models.mlp())
    mod.fit(train, optimizer_params={"learning_rate": 0.1}, num_epoch=2)
    assert isinstance(mod.history, MetricHistory)
    assert len(mod.history.series("accuracy", "train", "epoch")[1]) == 2


def test_fit_refuses_a_bad_live_argument(small_net, small_iter):
    with pytest.raises(NotALivePlot) as refused:
        mxlearn.Module(small_net).fit(small_iter, num_epoch=1, live="yes")
    assert refused.value.fields == {"spec": "yes"}


class _Recording(list):
    def __call__(self, epoch, symbol, arg_params, aux_params):
        self.append(epoch)


@pytest.mark.parametrize("metric", ["acc", "ce", ["acc", "ce"], "nll_loss", "top_k_accuracy"])
def test_epoch_metrics_are_exactly_mxnets(metric):
    """Deferred reading gives the very numbers MXNet's own per-batch updates give."""
    kwargs = {"top_k": 3} if metric == "top_k_accuracy" else {}

    def logged(module_class):
        seed_all(5)
        train, val = _small_letter_iters()
        values = []

        def on_epoch(epoch, *_):
            values.append(("train", epoch, train_metric.get_global_name_value()))

        def on_eval(param):
            values.append(("validation", param.epoch, param.eval_metric.get_name_value()))

        train_metric = mx.metric.create(metric, **kwargs)
        mod = module_class(mxlearn.models.mlp())
        mod.fit(
            train,
            eval_data=val,
            eval_metric=train_metric,
            validation_metric=mx.metric.create(metric, **kwargs),
            optimizer_params={"learning_rate": 0.1},
            num_epoch=2,
            epoch_end_callback=on_epoch,
            eval_end_callback=on_eval,
        )
        return values

    ours, theirs = logged(mxlearn.Module), logged(mx.mod.Module)
    assert ours == theirs and len(ours) == 4


def test_manual_loop_and_fit_draw_the_same_curves():
    def manual():
        seed_all(3)
        train, _ = _small_letter_iters()
        mod = mxlearn.Module(mxlearn.models.mlp())
        mod.bind(train.provide_data, train.provide_label)
        mod.init_params(initializer=mx.init.Uniform(0.01))
        mod.init_optimizer(optimizer_params={"learning_rate": 0.1})
        metric = mx.metric.create("acc")
        live = mxlearn.LivePlot(backend="console", png_path=None, epochs=2)
        live.renderer.finish = lambda png, text: None  # keep the test's folder clean
        for epoch in range(2):
            metric.reset()
            for batch in train:
                mod.forward(batch, is_train=True)
                mod.update_metric(metric, batch.label)
                mod.backward()
                mod.update()
                live.update(epoch, metric, batch)
            train.reset()  # at the end, as fit does: the same shuffled order in both runs
        live.close()
        return live.history

    def fitted():
        seed_all(3)
        train, _ = _small_letter_iters()
        live = mxlearn.LivePlot(backend="console", png_path=None)
        live.renderer.finish = lambda png, text: None
        mxlearn.Module(mxlearn.models.mlp()).fit(
            train, optimizer_params={"learning_rate": 0.1}, num_epoch=2, live=live
        )
        return live.history

    a, b = manual(), fitted()
    for kind in ("batch", "epoch"):
        xs_a, ys_a = a.series("accuracy", "train", kind, x="samples")
        xs_b, ys_b = b.series("accuracy", "train", kind, x="samples")
        assert xs_a == xs_b and ys_a == ys_b and len(ys_a) > 0


def test_widget_renderer_updates_in_place_and_finishes():
    pytest.importorskip("ipywidgets")
    renderer = WidgetRenderer()
    renderer.progress("Epoch[0] · batch 3", 0.25)
    renderer.figure(b"\xff\xd8-first")
    image = renderer.image
    renderer.figure(b"\xff\xd8-second")
    renderer.finish(b"\x89PNG-final", "done")
    assert renderer.image is image and image.value == b"\x89PNG-final" and image.format == "png"
    assert renderer.bar.value == 1.0 and renderer.bar.bar_style == "success"
    assert renderer.text.value == "done"


def test_a_spare_widget_closed_since_the_import_is_not_taken(monkeypatch):
    widgets = pytest.importorskip("ipywidgets")
    spare = renderers._widget_parts()
    monkeypatch.setattr(renderers, "_spare_widget", [spare])
    widgets.Widget.close_all()  # as a notebook tidying up its widgets does
    renderer = WidgetRenderer()
    assert renderer.box is not spare[3] and renderer.box.comm is not None
    assert "application/vnd.jupyter.widget-view+json" in renderer._bundle(None)


def test_a_spare_widget_with_a_closed_layout_is_not_taken(monkeypatch):
    pytest.importorskip("ipywidgets")
    for closed in (lambda bar, text: bar.layout, lambda bar, text: text.layout):
        spare = renderers._widget_parts()
        monkeypatch.setattr(renderers, "_spare_widget", [spare])
        closed(*spare[:2]).close()  # a part's layout (the plain one is shared) closed
        renderer = WidgetRenderer()
        assert renderer.bar is not spare[0] and renderer.bar.layout.comm is not None
        assert renderer.bar.get_state()["layout"]


class _DisplayHandle:
    """What IPython's display(..., display_id=True) returns in a kernel."""

    def update(self, *args, **kwargs) -> None:
        pass


def test_live_plot_draws_within_budget_during_fit(tmp_path, monkeypatch):
    from mxlearn.live import renderers

    seed_all(0)
    train, val = _small_letter_iters()
    # outside a kernel IPython displays nothing: stand in for the notebook's output area
    monkeypatch.setattr(renderers, "display", lambda *args, **kwargs: _DisplayHandle())
    live = mxlearn.LivePlot(backend="display", budget=0.03)
    # this run is short: without this its first frame would wait for the end (tested below)
    monkeypatch.setattr(plot, "SHORT_RUN", 0.0)
    shown = []
    live.renderer.figure = shown.append
    live.renderer.progress = lambda text, fraction: None
    live.renderer.finish = lambda png, text: shown.append(png)
    mxlearn.Module(mxlearn.models.mlp()).fit(
        train, eval_data=val, optimizer_params={"learning_rate": 0.1}, num_epoch=3, live=live
    )
    # the first epoch's frame at once, the others as the throttle allows, the last at the end
    assert len(shown) >= 2
    assert all(frame[:2] == b"\xff\xd8" for frame in shown[:-1])  # JPEG frames while training
    assert shown[-1][:4] == b"\x89PNG"  # a PNG at the end
    assert live.throttle.draws == len(shown) - 1


def test_correlations_are_drawn_on_their_whole_range():
    """MCC and Pearson correlation go down to -1: the fixed axis is [-1, 1], not [0, 1]."""
    history = MetricHistory()
    for epoch, (mcc, acc) in enumerate([(-0.6, 0.2), (0.1, 0.4), (0.7, 0.8)]):
        for name, value in (("mcc", mcc), ("accuracy", acc)):
            history.record(
                name, "train", "epoch", epoch=epoch, batch=4, samples=0, time=0, value=value
            )
    fig = TrainingFigure(smoothing=0.0, log_scale=True)
    fig.update(history, 4, (0, 3))
    fig.draw()
    low, high = fig._axes["mcc"].get_ylim()
    assert low == -1.0 and high >= 1.0
    assert fig._axes["mcc"].get_yscale() == "linear"
    assert fig._axes["accuracy"].get_ylim()[0] == 0.0


def test_first_epoch_batches_are_drawn_from_zero_while_its_length_is_unknown():
    """Before the first epoch ends nobody knows how many batches it has; its points must still
    start near x=0 and stretch as it goes on, not pile up at x=1 (a vertical drop)."""
    from mxlearn.live.figure import TrainingFigure
    from mxlearn.metrics.history import MetricHistory

    history, figure = MetricHistory(), TrainingFigure()
    for batch in range(10):
        history.record(
            "accuracy", "train", "batch", epoch=0, batch=batch, samples=32, time=0.0, value=0.1
        )
        if batch in (4, 9):
            figure.update(history, None, None)  # drawn mid-epoch, length still unknown
    xs = figure._batch_x(figure._curves["accuracy"])
    assert xs[0] == pytest.approx(0.1) and xs[-1] == pytest.approx(1.0)
    assert list(xs) == sorted(xs)  # no point drawn back at the start of the axis


def test_epoch_ends_of_short_epochs_draw_within_the_throttle(monkeypatch):
    """Forty epochs of 10 ms each: a frame per epoch would cost more than the training (a draw
    takes a few ms); the epoch ends draw when the throttle allows, the first at once, the last
    at the end, and the progress line changes every PROGRESS_INTERVAL, not every epoch (each
    change is a message to the notebook)."""
    from mxlearn.live import renderers

    monkeypatch.setattr(renderers, "display", lambda *args, **kwargs: _DisplayHandle())
    now = [0.0]
    live = mxlearn.LivePlot(backend="display", budget=0.02, clock=lambda: now[0], epochs=40)
    frames, lines = [], []
    live.renderer.figure = frames.append
    live.renderer.progress = lambda text, fraction: lines.append((now[0], text))
    live.renderer.finish = lambda png, text: frames.append(png)
    metric = mx.metric.create("acc")
    labels = [mx.nd.array([0, 1])]
    for epoch in range(40):
        metric.reset()
        metric.update(labels, [mx.nd.array([[0.9, 0.1], [0.2, 0.8]])])
        live.update(epoch, metric)
        now[0] += 0.010
        live.validation(epoch, [("accuracy", 1.0)])
    live.close()
    # 0.4 s in all: min_interval (0.25 s) allows one draw after the first epoch's
    assert 2 <= len(frames) - 1 <= 3, len(frames)
    assert frames[0][:2] == b"\xff\xd8"  # the first epoch's frame, at once
    assert frames[-1][:4] == b"\x89PNG"
    assert len(live.history.series("accuracy", "validation", "epoch")[1]) == 40
    # 0.4 s: a change every PROGRESS_INTERVAL, and one with each frame, not one per epoch
    assert 2 <= len(lines) <= 0.4 / PROGRESS_INTERVAL + len(frames), lines
    assert lines[-1][0] >= 0.4 - PROGRESS_INTERVAL  # still told while the last epochs ran


def test_a_run_over_within_a_second_shows_its_first_frame_at_the_end(monkeypatch):
    """Twenty epochs of 10 ms: a frame at the first epoch's end would cost a whole figure
    (~30 ms, 15% of the run) and be replaced 0.2 s later by the final one."""
    from mxlearn.live import renderers

    monkeypatch.setattr(renderers, "display", lambda *args, **kwargs: _DisplayHandle())
    now = [0.0]
    live = mxlearn.LivePlot(backend="display", clock=lambda: now[0], epochs=20)
    frames = []
    live.renderer.figure = frames.append
    live.renderer.finish = lambda png, text: frames.append(png)
    metric = mx.metric.create("acc")
    batch = mx.io.DataBatch([mx.nd.zeros((2, 3))], [mx.nd.array([0, 1])])
    for epoch in range(20):
        metric.reset()
        metric.update(batch.label, [mx.nd.array([[0.9, 0.1], [0.2, 0.8]])])
        live.update(epoch, metric, batch)
        now[0] += 0.010
        live.validation(epoch, [("accuracy", 1.0)])
    live.close()
    assert len(frames) == 1 and frames[0][:4] == b"\x89PNG"  # the first frame is the last
    assert now[0] < 1.0  # shown within a second of the first batch


def test_a_run_that_lasts_longer_than_predicted_shows_a_frame_in_time(monkeypatch):
    """The first epoch predicts 0.2 s in all; the later ones are slow (2 s in all): the first
    frame comes as the prediction grows, by FIRST_FRAME_BY at the latest, not at the end."""
    from mxlearn.live import renderers

    monkeypatch.setattr(renderers, "display", lambda *args, **kwargs: _DisplayHandle())
    now = [0.0]
    live = mxlearn.LivePlot(backend="display", clock=lambda: now[0], epochs=20)
    frames = []
    live.renderer.figure = lambda frame: frames.append(now[0])
    live.renderer.finish = lambda png, text: None
    metric = mx.metric.create("acc")
    batch = mx.io.DataBatch([mx.nd.zeros((2, 3))], [mx.nd.array([0, 1])])
    for epoch in range(20):
        metric.reset()
        for _ in range(10):
            metric.update(batch.label, [mx.nd.array([[0.9, 0.1], [0.2, 0.8]])])
            live.update(epoch, metric, batch)
            now[0] += 0.001 if epoch == 0 else 0.01
        live.validation(epoch, [("accuracy", 1.0)])
    live.close()
    assert frames and frames[0] <= plot.FIRST_FRAME_BY + 0.01


def test_the_first_frame_waits_no_longer_than_first_frame_by(monkeypatch):
    """A run still going at FIRST_FRAME_BY shows a frame, unless it is then about to end (the
    frame would be replaced by the end's at once); one still going at SHORT_RUN, whatever its
    prediction says."""
    live = mxlearn.LivePlot(backend="console")
    eta, elapsed = [0.8], [0.5]
    monkeypatch.setattr(live.recorder, "eta_seconds", lambda: eta[0])
    monkeypatch.setattr(live.recorder, "elapsed", lambda at=None: elapsed[0])
    assert live._first_frame_waits()
    elapsed[0] = plot.FIRST_FRAME_BY
    assert not live._first_frame_waits()  # a run of 1.55 s shows a frame at 0.75 s
    eta[0] = 0.3
    assert live._first_frame_waits()  # a 20-epoch fit of 1.05 s: its frame is the end's
    eta[0] = plot.ALMOST_DONE / 2
    assert live._first_frame_waits()
    elapsed[0] = plot.SHORT_RUN
    assert not live._first_frame_waits()


def test_a_longer_run_shows_its_first_epoch_at_once(monkeypatch):
    from mxlearn.live import renderers

    monkeypatch.setattr(renderers, "display", lambda *args, **kwargs: _DisplayHandle())
    now = [0.0]
    live = mxlearn.LivePlot(backend="display", clock=lambda: now[0], epochs=20)
    frames = []
    live.renderer.figure = frames.append
    metric = mx.metric.create("acc")
    batch = mx.io.DataBatch([mx.nd.zeros((2, 3))], [mx.nd.array([0, 1])])
    metric.update(batch.label, [mx.nd.array([[0.9, 0.1], [0.2, 0.8]])])
    live.update(0, metric, batch)
    now[0] += 0.1  # 20 epochs of 0.1 s: 2 s in all
    live.validation(0, [("accuracy", 1.0)])
    assert len(frames) == 1 and frames[0][:2] == b"\xff\xd8"


def test_the_throttle_says_until_when_it_stays_quiet():
    """tick asks only once the throttle's quiet time is over: that time must be exactly when
    a draw becomes due, never later."""
    from mxlearn.live.throttle import Throttle

    now = [0.0]
    throttle = Throttle(budget=0.02, min_interval=0.1, clock=lambda: now[0])
    assert not throttle.due()  # opens the account at 0
    assert throttle.quiet_until() == pytest.approx(0.1)
    now[0] = 0.1
    assert throttle.due()
    throttle.drew(cost=0.01)  # 2% of the time allows the next draw at 1.0 s
    assert throttle.quiet_until() == pytest.approx(1.0)
    now[0] = 0.999
    assert not throttle.due()
    now[0] = 1.0
    assert throttle.due()


def test_a_plot_given_to_a_second_fit_draws_that_fits_curves(tmp_path):
    seed_all(0)
    train, val = _small_letter_iters()
    live = mxlearn.LivePlot(backend="console", png_path=str(tmp_path / "plot.png"))
    for rate in (0.1, 0.001):
        mod = mxlearn.Module(mxlearn.models.mlp())
        mod.fit(
            train, eval_data=val, optimizer_params={"learning_rate": rate}, num_epoch=2, live=live
        )
        drawn = live.figure.line_data("accuracy")["validation"][1]
        assert list(drawn) == mod.history.series("accuracy", "validation", "epoch")[1]


@pytest.mark.parametrize(
    "budget, kind", [("x", WrongKind), (None, WrongKind), (float("nan"), OutOfRange)]
)
def test_a_live_plot_budget_that_is_not_a_number_is_explained(budget, kind):
    import mxlearn

    with pytest.raises(kind) as refused:
        mxlearn.LivePlot(budget=budget)
    assert type(refused.value) is kind
    assert refused.value.fields["name"] == "budget"
    assert refused.value.fields["shown"] == repr(budget)
    assert "LivePlot(budget=" in refused.value.fix


def test_the_display_backend_outside_a_notebook_is_refused_before_training():
    import numpy as np

    import mxlearn
    from mxlearn import mx

    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    data = mx.io.NDArrayIter(np.zeros((64, 16), "float32"), np.arange(64) % 4, 32)
    with pytest.raises(NotInAKernel) as refused:
        mod.fit(data, num_epoch=1, live=mxlearn.LivePlot(backend="display"))
    assert "backend='console'" in refused.value.fix
    assert mod.history is None  # refused before the run began: nothing trained


def test_live_plot_update_after_close_is_refused(small_iter, small_net):
    live = mxlearn.LivePlot(backend="console", png_path=None)
    live.renderer.finish = lambda png, text: None
    metric = mx.metric.create("acc")
    mod = mxlearn.Module(small_net)
    mod.bind(small_iter.provide_data, small_iter.provide_label)
    mod.init_params()
    batch = next(iter(small_iter))
    mod.forward(batch, is_train=False)
    mod.update_metric(metric, batch.label)
    live.update(0, metric, batch)
    live.close()
    with pytest.raises(PlotFinished) as refused:
        live.update(0, metric, batch)
    assert refused.value.fields == {"called": "LivePlot.update()"}
    with pytest.raises(PlotFinished) as refused:
        live.validation(0, [("accuracy", 0.5)])
    assert refused.value.fields == {"called": "LivePlot.validation()"}


def test_live_plot_of_a_finished_fit_takes_no_manual_values(small_iter, small_net):
    live = mxlearn.LivePlot(backend="console", png_path=None)
    mod = mxlearn.Module(small_net)
    mod.fit(small_iter, num_epoch=1, live=live)
    records = len(mod.history)
    metric = mx.metric.create("acc")
    batch = next(iter(small_iter))
    mod.forward(batch, is_train=False)
    mod.update_metric(metric, batch.label)
    with pytest.raises(PlotFinished) as refused:
        live.update(0, metric, batch)
    assert refused.value.fields == {"called": "LivePlot.update()"}
    assert len(mod.history) == records  # the fit's history is untouched
