"""Figures laid out to be read (issue 28): legends outside the plotting area, with nothing cut
off or overlapping; epoch axes in whole epochs; every layer of LayerStats named in every panel.
Real figures on matplotlib's Agg canvas, measured in window extents after a draw."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import mxlearn
from mxlearn import MetricHistory, mx
from mxlearn.experiments.layer_stats import LayerStats
from mxlearn.experiments.rate_finder_plot import RateFinding, Reading, Smoothed
from mxlearn.live.figure import TrainingFigure

QUIET = logging.getLogger("quiet-layout")
QUIET.setLevel(logging.WARNING)


def _overlap(a, b) -> bool:
    """Two boxes share more than a pixel's edge (matplotlib's overlaps() counts touching)."""
    return min(a.x1, b.x1) - max(a.x0, b.x0) > 1 and min(a.y1, b.y1) - max(a.y0, b.y0) > 1


def _inside(box, outer) -> bool:
    return (
        box.x0 >= outer.x0 - 1
        and box.x1 <= outer.x1 + 1
        and box.y0 >= outer.y0 - 1
        and (box.y1 <= outer.y1 + 1)
    )


def _taken(fig, renderer) -> list:
    """What a legend must not cover: each plotting area, its axes' labels and its title."""
    boxes = []
    for ax in fig.axes:
        boxes.append(ax.get_window_extent(renderer))
        for axis in (ax.xaxis, ax.yaxis):
            boxes.append(axis.get_tightbbox(renderer))
        if ax.get_title():
            boxes.append(ax.title.get_window_extent(renderer))
    return [box for box in boxes if box is not None and box.width > 0]


def _legends(fig) -> list:
    return [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]


def assert_legends_outside(fig) -> None:
    renderer = fig.canvas.get_renderer()
    legends = _legends(fig)
    assert legends, "the figure has a legend"
    for legend in legends:
        box = legend.get_window_extent(renderer)
        assert _inside(box, fig.bbox), f"legend cut off: {box} outside {fig.bbox}"
        for taken in _taken(fig, renderer):
            assert not _overlap(box, taken), f"legend {box} over {taken}"


def assert_whole_epochs(ax, least: int = 2) -> None:
    lo, hi = sorted(ax.get_xlim())
    ticks = [t for t in ax.get_xticks() if lo - 1e-9 <= t <= hi + 1e-9]
    assert len(ticks) >= least and all(float(t).is_integer() for t in ticks), ticks


def _history(epochs: int, batches: int = 20) -> MetricHistory:
    h = MetricHistory()
    for e in range(epochs):
        for b in range(batches):
            for metric, value in (("accuracy", 0.3 + 0.01 * b), ("cross-entropy", 3.0 - 0.1 * b)):
                h.record(metric, "train", "batch", epoch=e, batch=b, samples=0, time=0, value=value)
        for metric, value in (("accuracy", 0.5 + e / 10), ("cross-entropy", 2.0 - e / 10)):
            for phase in ("train", "validation"):
                h.record(
                    metric, phase, "epoch", epoch=e, batch=batches, samples=0, time=0, value=value
                )
    return h


def _live_figure(epochs: int, figsize=None) -> TrainingFigure:
    figure = TrainingFigure(smoothing=0.0, figsize=figsize)
    figure.update(_history(epochs), 20, (0, epochs))
    figure.draw(exact=True)
    return figure


@pytest.mark.parametrize("figsize", [None, (6.0, 3.0)], ids=["default", "small"])
def test_the_live_plots_legend_is_outside_the_curves_and_whole(figsize):
    assert_legends_outside(_live_figure(3, figsize).fig)


@pytest.mark.parametrize("epochs", [1, 2, 3, 7, 40])
def test_the_live_plot_counts_whole_epochs(epochs):
    for ax in _live_figure(epochs).fig.axes:
        assert_whole_epochs(ax)


def test_the_live_plot_redraws_only_its_curves_while_they_fit():
    figure = _live_figure(3)
    draws = figure.full_draws
    figure.draw()  # nothing left the axes: the curves only
    assert figure.full_draws == draws and figure.blits == 1


def _rate_finding(diverged_at=2.0) -> RateFinding:
    """A valley: the loss falls from 3.4 by 2 around lr 0.03 and rises again past lr 0.5."""
    rates = np.geomspace(1e-6, 3.0, 200)
    decades = np.log10(rates)
    fall = 2.0 / (1 + np.exp(-3 * (decades + 1.5)))
    rise = 1.5 * np.clip(decades + 0.3, 0, None) ** 2
    losses = 3.4 - fall + rise + np.random.default_rng(0).normal(0, 0.05, rates.size)
    smoothing = Smoothed(0.9)
    smoothed = [smoothing.add(float(loss))[0] for loss in losses]
    reading = Reading(rates, losses, smoothed, 0.9, 10, diverged=False)
    return RateFinding(rates, losses, smoothed, reading, diverged_at)


def test_the_rate_finders_legend_is_outside_the_curve_and_whole():
    finding = _rate_finding()
    assert finding.suggested is not None  # four entries: loss, smoothed, two rates
    figure = finding.figure()
    figure.canvas.draw()
    assert_legends_outside(figure)


def _deep(layers=6):
    """07's network: six sigmoid layers of 64 and the output layer."""
    x = mx.sym.Variable("data")
    for i in range(1, layers + 1):
        x = mx.sym.FullyConnected(x, name=f"fc{i}", num_hidden=64)
        x = mx.sym.Activation(x, name=f"sigmoid{i}", act_type="sigmoid")
    x = mx.sym.FullyConnected(x, name="out", num_hidden=4)
    return mx.sym.SoftmaxOutput(x, name="softmax")


@pytest.fixture(scope="module")
def deep_stats():
    mxlearn.seed(0)
    X, y = mxlearn.datasets.synthetic_classification(num_samples=256)
    it = mx.io.NDArrayIter(X, y, batch_size=32, shuffle=True)
    stats = LayerStats(every=2)
    mod = mxlearn.Module(_deep(), logger=QUIET)
    mod.fit(it, num_epoch=3, initializer=mx.init.Xavier(), callbacks=[stats])
    return stats


def _drawn(stats):
    figure = stats.figure()
    figure.canvas.draw()
    return figure


def test_the_layer_statistics_draw_nothing_over_their_curves(deep_stats):
    figure = _drawn(deep_stats)
    renderer = figure.canvas.get_renderer()
    areas = [ax.get_window_extent(renderer) for ax in figure.axes]
    for artist in [*_legends(figure), *(text for ax in figure.axes for text in ax.texts)]:
        box = artist.get_window_extent(renderer)
        assert _inside(box, figure.bbox) and not any(_overlap(box, a) for a in areas)


def test_the_layer_statistics_count_whole_epochs(deep_stats):
    for ax in _drawn(deep_stats).axes[:3]:
        assert_whole_epochs(ax)


def test_one_epoch_of_layer_statistics_is_epoch_1_not_fractions_around_it():
    mxlearn.seed(0)
    X, y = mxlearn.datasets.synthetic_classification(num_samples=64)
    stats = LayerStats(every=1)
    module = mxlearn.Module(mxlearn.models.mlp(num_classes=4), logger=QUIET)
    module.fit(mx.io.NDArrayIter(X, y, batch_size=32), num_epoch=1, callbacks=[stats])
    for ax in _drawn(stats).axes[:3]:  # one point an axis: the limits lie within 0.94 to 1.06
        assert_whole_epochs(ax, least=1)


def _layer_labels(ax):
    """The tick labels naming layers on the axes drawn with ``ax`` (its own, its children's)."""
    labels = []
    for axes in (ax, *ax.child_axes):
        for axis in (axes.xaxis, axes.yaxis):
            labels += [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
    return labels


def test_every_layer_is_named_in_every_panel_without_overlapping(deep_stats):
    figure = _drawn(deep_stats)
    renderer = figure.canvas.get_renderer()
    layers = list(deep_stats.layers)
    assert layers == ["fc1", "fc2", "fc3", "fc4", "fc5", "fc6", "out"]
    areas = [ax.get_window_extent(renderer) for ax in figure.axes[:3]]
    for ax in figure.axes[:3]:
        named = [t for t in _layer_labels(ax) if t.get_text() in layers]
        assert sorted(t.get_text() for t in named) == sorted(layers), ax.get_title()
        boxes = [t.get_window_extent(renderer) for t in named]
        for i, box in enumerate(boxes):
            assert _inside(box, figure.bbox), named[i].get_text()
            assert not any(_overlap(box, area) for area in areas), named[i].get_text()
            assert not any(_overlap(box, other) for other in boxes[i + 1 :]), named[i].get_text()


def test_each_layers_name_has_its_lines_colour(deep_stats):
    figure = _drawn(deep_stats)
    for ax in figure.axes[:3]:
        colours = {line.get_label(): line.get_color() for line in ax.lines}
        named = {t.get_text(): t.get_color() for t in _layer_labels(ax) if t.get_text() in colours}
        assert named == colours, ax.get_title()


@pytest.mark.parametrize("epochs", [1, 3, 7])
def test_the_comparison_counts_whole_epochs(epochs):
    runs = _history(epochs, batches=2), _history(epochs, batches=2)
    comparison = mxlearn.compare(*runs, labels=["a", "b"], show=False)
    comparison.fig.canvas.draw()
    for ax in comparison.fig.axes:
        assert_whole_epochs(ax, least=1)
