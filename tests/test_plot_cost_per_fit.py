"""What a live plot costs a fit: one full draw and one image, and none of either when the same
cell runs again; a canvas lent to a later plot is drawn exactly as a new one would be."""

from __future__ import annotations

import io
import json

import matplotlib
import matplotlib.style
import numpy as np
import pytest
from conftest import printed_by, seed_all
from PIL import Image

import mxlearn
from mxlearn import mx
from mxlearn.language import say_in
from mxlearn.live import figure as live_figure
from mxlearn.live import plot, renderers
from mxlearn.live.figure import BLIT_MARGIN, TrainingFigure


@pytest.fixture(autouse=True)
def _no_spare_canvas(monkeypatch):
    """Each test starts with no finished plot's canvas to take (other tests leave some)."""
    monkeypatch.setattr(live_figure, "_spare", {})


@pytest.fixture
def encodings(monkeypatch) -> dict:
    """How many JPEG and PNG images the figures encode."""
    counts = {"jpeg": 0, "png": 0}
    for name in counts:
        original = getattr(TrainingFigure, name)

        def counted(self, _original=original, _name=name):
            counts[_name] += 1
            return _original(self)

        monkeypatch.setattr(TrainingFigure, name, counted)
    return counts


class _Output:
    """A notebook's output area as IPython's display(..., display_id=True) updates it."""

    def __init__(self) -> None:
        self.bundles: list[dict] = []

    def __call__(self, bundle, **kwargs):
        self.bundles.append(bundle)
        return self

    def update(self, bundle, **kwargs) -> None:
        self.bundles.append(bundle)


def _letter_iters(batch_size=128):
    X, y = mxlearn.datasets.letter_recognition()
    train = mx.io.NDArrayIter(X[:3200], y[:3200], batch_size, shuffle=True)
    val = mx.io.NDArrayIter(X[16000:16800], y[16000:16800], batch_size)
    return train, val


def _fit(live, num_epoch=5, metric="acc"):
    seed_all(0)
    train, val = _letter_iters()
    mod = mxlearn.Module(mxlearn.models.mlp())
    mod.fit(
        train,
        eval_data=val,
        eval_metric=metric,
        optimizer_params={"learning_rate": 0.1},
        num_epoch=num_epoch,
        live=live,
    )
    return mod


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def _drawn_by_matplotlib(figure: TrainingFigure) -> np.ndarray:
    """The figure as matplotlib draws it whole, the curves over it."""
    figure.fig.canvas.draw()
    for metric, ax in figure._axes.items():
        for line in figure._lines[metric]:
            ax.draw_artist(line)
    return figure._rgb().copy()


def _fresh_pixels(live) -> np.ndarray:
    """The live plot's curves drawn by matplotlib on a canvas of their own, never lent."""
    fresh = TrainingFigure(smoothing=live.figure.smoothing)
    fresh.ranges = dict(live.figure.ranges)
    fresh.update(live.history, live.recorder.batches_per_epoch, live._x_range())
    fresh.draw()
    return _drawn_by_matplotlib(fresh)


def test_a_short_fit_draws_its_figure_once_and_shows_one_png(monkeypatch, encodings):
    pytest.importorskip("ipywidgets")
    output = _Output()
    monkeypatch.setattr(renderers, "display", output)
    # however busy the machine: a short run, whose first frame waits for its end
    monkeypatch.setattr(plot, "SHORT_RUN", 1e9)
    monkeypatch.setattr(plot, "FIRST_FRAME_BY", 1e9)
    live = mxlearn.LivePlot(backend="widget", min_interval=1e9)
    _fit(live)
    assert live.figure.full_draws == 1 and live.figure.blits == 0
    assert encodings == {"jpeg": 0, "png": 1}
    png = output.bundles[-1]["image/png"]
    # the widget's last frame and the saved notebook's picture are that one PNG
    assert live.renderer.image.format == "png"
    assert live.renderer.image.value == __import__("base64").b64decode(png)


def test_a_longer_fit_ends_with_one_png_and_no_second_full_draw(monkeypatch, encodings):
    pytest.importorskip("ipywidgets")
    monkeypatch.setattr(renderers, "display", _Output())
    monkeypatch.setattr(plot, "SHORT_RUN", 0.0)  # frames while training, whatever the speed
    live = mxlearn.LivePlot(backend="widget")
    _fit(live)
    assert live.figure.full_draws == 1  # accuracy's axis is fixed, and so are the epochs
    assert encodings["png"] == 1 and encodings["jpeg"] == live.throttle.draws
    assert live.renderer.image.format == "png"


def test_the_cell_run_again_draws_on_the_first_runs_canvas(tmp_path):
    first = mxlearn.LivePlot(backend="console", png_path=str(tmp_path / "first.png"))
    _fit(first)
    canvas = first.figure.fig
    again = mxlearn.LivePlot(backend="console", png_path=str(tmp_path / "again.png"))
    _fit(again)
    assert again.figure.fig is canvas
    assert again.figure.full_draws == 0 and again.figure.blits == 1
    assert np.array_equal(again.figure._rgb(), _fresh_pixels(again))


@pytest.mark.parametrize(
    "second, lent",
    [(dict(num_epoch=3), True), (dict(metric="ce"), True), (dict(metric=["acc", "ce"]), False)],
    ids=["other epochs", "another metric", "two metrics"],
)
def test_a_fit_of_other_epochs_or_metrics_is_drawn_as_on_a_new_canvas(tmp_path, second, lent):
    first = mxlearn.LivePlot(backend="console", png_path=str(tmp_path / "first.png"))
    _fit(first)
    canvas = first.figure.fig
    later = mxlearn.LivePlot(backend="console", png_path=str(tmp_path / "later.png"))
    _fit(later, **second)
    assert (later.figure.fig is canvas) == lent  # one subplot either way: the same canvas
    assert later.figure.full_draws == 1
    assert np.array_equal(later.figure._rgb(), _fresh_pixels(later))


def test_a_style_changed_between_fits_gets_a_canvas_of_that_style(tmp_path):
    first = mxlearn.LivePlot(backend="console", png_path=str(tmp_path / "first.png"))
    _fit(first)
    with matplotlib.rc_context({"axes.facecolor": "#dde8f0", "grid.color": "red"}):
        later = mxlearn.LivePlot(backend="console", png_path=str(tmp_path / "later.png"))
        _fit(later)
        assert later.figure.fig is not first.figure.fig
        # where this style's coloured grid lines cross, drawn in the other order: Agg rounds
        # each blend, so a channel may differ by 1 of 255 there (none in the default style)
        drawn, whole = later.figure._rgb().astype(int), _fresh_pixels(later).astype(int)
        assert np.abs(drawn - whole).max() <= 1
    assert not np.array_equal(later.figure._rgb(), first.figure._rgb())


def test_a_plot_whose_canvas_was_lent_draws_its_own_curves_again(tmp_path):
    first = mxlearn.LivePlot(backend="console", png_path=str(tmp_path / "first.png"))
    _fit(first)
    before = _pixels((tmp_path / "first.png").read_bytes())
    later = mxlearn.LivePlot(backend="console", png_path=str(tmp_path / "later.png"))
    mod = _fit(later, num_epoch=3)
    first.save(tmp_path / "first-again.png")
    assert np.array_equal(_pixels((tmp_path / "first-again.png").read_bytes()), before)
    drawn = first.figure.line_data("accuracy")["validation"][1]
    assert list(drawn) == first.history.series("accuracy", "validation", "epoch")[1]
    assert list(drawn) != mod.history.series("accuracy", "validation", "epoch")[1]


def test_the_canvas_prepared_at_import_serves_the_first_plot_of_one_metric(tmp_path):
    live_figure.prepare_canvas()
    (prepared,) = live_figure._spare.values()
    canvas = prepared.fig
    live = mxlearn.LivePlot(backend="console", png_path=str(tmp_path / "first.png"))
    _fit(live, num_epoch=8)
    assert live.figure.fig is canvas and live.figure.full_draws == 1
    # accuracy's y axis is the prepared one's: only the x axis and the title are drawn
    assert live.figure.base_draws == 0
    assert np.array_equal(live.figure._rgb(), _fresh_pixels(live))


@pytest.mark.slow
def test_a_kernel_that_draws_widgets_prepares_a_canvas_and_a_widget_at_import():
    pytest.importorskip("ipywidgets")
    code = (
        "import json, mxlearn; from mxlearn.live import figure, renderers\n"
        "made = renderers._spare_widget[0]\n"
        "mxlearn.set_language('zh')\n"  # after the import: the spare's words were English
        "first, second = mxlearn.LivePlot(), mxlearn.LivePlot()\n"
        "print(json.dumps([len(figure._spare), first.renderer.box is made[3],\n"
        "    second.renderer.box is made[3], first.renderer.bar.description,\n"
        "    first.renderer.text.value, len(renderers._spare_widget)]))"
    )
    prepared, taken, again, description, text, left = json.loads(printed_by(code, in_kernel=True))
    assert (prepared, taken, again, left) == (1, True, False, 0)
    assert (description, text) == (say_in("zh", "training"), say_in("zh", "starting..."))
    assert description != "training"
    code = "import mxlearn; from mxlearn.live import figure, renderers\n"
    code += "print(len(figure._spare), len(renderers._spare_widget))"
    assert printed_by(code, in_kernel=False) == "0 0"  # a script draws no widgets: none prepared


def test_the_images_are_encoded_from_the_canvas_as_they_were_from_its_array(tmp_path):
    live = mxlearn.LivePlot(backend="console", png_path=str(tmp_path / "plot.png"))
    _fit(live)
    rgb = live.figure._rgb()
    # read from the canvas's buffer in C now: the same bytes as through a NumPy copy
    from_array = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(rgb)).quantize(64, method=Image.Quantize.FASTOCTREE).save(
        from_array, format="png", compress_level=1
    )
    assert live.figure.png() == from_array.getvalue()
    shown = np.asarray(Image.open(io.BytesIO(live.figure.jpeg())).convert("RGB"), dtype=int)
    assert shown.shape == rgb.shape and np.abs(shown - rgb).mean() < 2


def _marked_figure(mark: str | None, shared: bool = True) -> TrainingFigure:
    history = mxlearn.MetricHistory()
    for epoch in range(5):
        for phase in ("train", "validation"):
            value = 0.3 + 0.1 * epoch + (0.05 if phase == "validation" else 0.0)
            history.record(
                "accuracy", phase, "epoch", epoch=epoch, batch=9, samples=32, time=0, value=value
            )
    if mark:
        history.mark(mark, epoch=3)
    figure = TrainingFigure(shared_canvas=shared)
    figure.ranges["accuracy"] = (0.0, 1.0)
    figure.update(history, 10, (0.0, 5.0))
    figure.draw()
    return figure


@pytest.mark.parametrize(
    "first, then",
    [(None, "resumed at epoch 3"), ("resumed at epoch 3", None), (None, "从第 3 个迭代周期恢复")],
)
def test_a_lent_canvas_shows_the_new_runs_marks_and_no_other(first, then):
    _marked_figure(first).release()
    later = _marked_figure(then)
    assert later.full_draws == 1  # the marks changed: drawn again
    assert np.array_equal(later._rgb(), _drawn_by_matplotlib(_marked_figure(then, shared=False)))


def _history(metric: str, epochs: int, values) -> mxlearn.MetricHistory:
    history = mxlearn.MetricHistory()
    for epoch in range(epochs):
        for batch in range(10):
            value = values(epoch + batch / 10)
            history.record(
                metric, "train", "batch", epoch=epoch, batch=batch, samples=32, time=0, value=value
            )
        for phase in ("train", "validation"):
            value = values(epoch + 1)
            history.record(
                metric, phase, "epoch", epoch=epoch, batch=9, samples=32, time=0, value=value
            )
    return history


@pytest.mark.parametrize(
    "metrics, log_scale, mark",
    [
        (["accuracy"], False, None),
        (["cross-entropy"], True, None),
        (["accuracy", "cross-entropy"], False, None),
        (["accuracy"], False, "resumed at epoch 2"),
        (["accuracy"], False, "从第 2 个迭代周期恢复"),
    ],
    ids=["a fixed axis", "a log axis", "two subplots", "a mark", "a Chinese mark"],
)
def test_a_figure_drawn_in_layers_is_matplotlibs_own_drawing(metrics, log_scale, mark):
    """The x axes, spines and titles drawn over a kept base give the pixels of matplotlib's
    whole figure, run after run on the same canvas: other epochs, other values."""
    figure = TrainingFigure(log_scale=log_scale)
    for run, (epochs, scale) in enumerate([(5, 1.0), (8, 1.0), (3, 1.0), (8, 30.0)]):
        history = mxlearn.MetricHistory()
        for metric in metrics:
            one = _history(metric, epochs, lambda x, s=scale: s * (0.2 + 0.7 * x / (x + 1)))
            history.records += one.records
        if mark:
            history.mark(mark, epoch=2)
        figure.ranges["accuracy"] = (0.0, 1.0)
        figure._consumed, figure._curves, figure.metrics = 0, {}, []
        figure.update(history, 10, (0.0, float(epochs)))
        figure.draw(exact=True)
        assert np.array_equal(figure._rgb(), _drawn_by_matplotlib(figure)), f"run {run}"
    if metrics == ["accuracy"] and not mark:
        assert figure.base_draws == 1  # the y axis held: only the x axis was drawn again


def _rising(x: float) -> float:
    return 0.3 + 0.06 * x


def _falling(x: float) -> float:
    return 2 / (1 + x)


def _two_metric_history(epochs: int, metrics=("accuracy", "cross-entropy")):
    history = mxlearn.MetricHistory()
    for metric in metrics:
        values = _rising if metric == "accuracy" else _falling
        history.records += _history(metric, epochs, values).records
    return history


@pytest.mark.parametrize("style", ["default", *sorted(matplotlib.style.available)])
@pytest.mark.parametrize("subplots", [1, 2, 3])
def test_every_style_is_drawn_in_layers_as_matplotlib_draws_it(style, subplots):
    """Where x and y lines cross or touch, the two are blended in the other order: Agg rounds
    each blend, so a channel may differ by a few levels there (inside or on an axes' frame), and
    nowhere else; where a style's large texts bring the x axis' label onto the legend, the whole
    figure is drawn."""
    metrics = ("accuracy", "cross-entropy", "mse")[:subplots]
    with matplotlib.style.context(style):
        figure = TrainingFigure()
        figure.ranges["accuracy"] = (0.0, 1.0)
        for epochs in (6, 9):  # the second on the kept base
            figure._consumed, figure._curves, figure.metrics = 0, {}, []
            figure.update(_two_metric_history(epochs, metrics), 10, (0.0, float(epochs)))
            figure.draw()
            drawn = figure._rgb().astype(int)
            whole = _drawn_by_matplotlib(figure).astype(int)
            assert np.abs(drawn - whole).max() <= 5, style
            height = drawn.shape[0]
            frames = [ax.bbox.padded(BLIT_MARGIN) for ax in figure._axes.values()]
            for y, x in np.argwhere(np.abs(drawn - whole).max(axis=2) > 0):
                assert any(f.contains(x + 0.5, height - y - 0.5) for f in frames), (style, x, y)


@pytest.mark.parametrize("style", ["default", "seaborn-v0_8-poster", "ggplot"])
def test_an_x_label_kept_in_place_is_where_matplotlib_places_it_for_other_epochs(style):
    """The x label is placed by the canvas's first draw and kept: other epochs' tick labels
    (here one digit, then four) are one line of one height, so matplotlib would place it there
    too, as it does on a canvas drawn first with those epochs."""
    with matplotlib.style.context(style):
        first = TrainingFigure(shared_canvas=True)
        first.update(_history("accuracy", 1, lambda x: 0.5), 10, (0.0, 1.0))
        first.draw()
        first.release()
        canvas = first.fig
        kept = TrainingFigure(shared_canvas=True)  # takes the first one's canvas
        kept.update(_history("accuracy", 1, lambda x: 0.5), 10, (0.0, 1000.0))
        kept.draw()
        fresh = TrainingFigure()
        fresh.update(_history("accuracy", 1, lambda x: 0.5), 10, (0.0, 1000.0))
        fresh.draw()
        assert kept.fig is canvas and kept.base_draws == 0
        label = kept._axes["accuracy"].xaxis.label
        assert label.get_position() == fresh._axes["accuracy"].xaxis.label.get_position()
        assert np.array_equal(kept._rgb(), fresh._rgb())


def test_an_x_label_kept_in_place_moves_with_the_dpi_of_a_saved_picture():
    """fig.savefig(dpi=192) (or a PDF) draws the figure at another dpi: the kept label is where
    matplotlib places it on a figure first drawn at that dpi, not at its 96-dpi pixels."""
    history = _history("accuracy", 3, lambda x: 0.5)
    kept, fresh = TrainingFigure(), TrainingFigure()
    kept.update(history, 10, (0.0, 3.0))
    kept.draw()  # its label placed at 96 dpi
    fresh.update(history, 10, (0.0, 3.0))
    fresh._build()
    fresh.fig.set_dpi(192)
    fresh.draw()  # placed at 192 dpi by matplotlib
    kept.fig.set_dpi(192)
    for figure in (kept, fresh):
        figure.fig.canvas.draw()
    assert np.array_equal(kept._rgb(), fresh._rgb())


def test_a_mark_running_into_the_next_subplot_is_drawn_as_matplotlib_draws_it():
    history = _two_metric_history(10)
    history.mark("resumed at epoch 9", epoch=9)
    figure = TrainingFigure()
    figure.ranges["accuracy"] = (0.0, 1.0)
    figure.update(history, 10, (0.0, 10.0))
    figure.draw()
    assert np.array_equal(figure._rgb(), _drawn_by_matplotlib(figure))


def test_a_setting_changed_after_the_run_is_in_the_saved_picture(tmp_path):
    """Matplotlib reads some settings when it draws (here the minus sign): a kept base drawn
    under the old ones is not used."""
    history = _history("loss", 5, lambda x: -1.0 + 0.1 * x)
    figure = TrainingFigure()
    figure.update(history, 10, (0.0, 5.0))
    figure.draw()
    with matplotlib.rc_context({"axes.unicode_minus": False}):
        figure.save(tmp_path / "plot.png")  # what it saves is this canvas, in 64 colours
        assert np.array_equal(figure._rgb(), _drawn_by_matplotlib(figure))


def test_a_plot_drawn_before_its_first_value_shows_nothing_of_the_lent_canvas():
    _marked_figure("resumed at epoch 3").release()
    empty = TrainingFigure(shared_canvas=True)
    empty.update(mxlearn.MetricHistory(), None, None)
    empty.draw()
    assert all(len(line.get_xdata()) == 0 for line in empty._lines["metric"])
    new = TrainingFigure()
    new.update(mxlearn.MetricHistory(), None, None)
    new.draw()
    assert empty._limits() == new._limits()
    assert np.array_equal(empty._rgb(), _drawn_by_matplotlib(new))
