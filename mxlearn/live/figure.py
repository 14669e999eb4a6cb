"""The training figure: created once on matplotlib's Agg canvas (no pyplot: no global figure
list, no second copy from the inline backend), its curves redrawn over a cached background
(blitting, ~2 ms), everything (~30 ms) only when the curves leave the axes or for a final picture.

A finished plot lends its canvas to the next plot of the same layout (the training cell run
again): a new figure costs ~38 ms to build and draw, a lent one nothing when its limits hold.
A lent canvas is one whose every drawn part the new plot would draw the same: the same subplots,
words, fonts and matplotlib settings (the layout key), then the same limits and marks, checked
before its background is used.

A full draw is itself in two layers: a base of everything but the x axes, spines and titles,
kept while the y limits and matplotlib's settings hold, and those parts drawn over it (~7 ms
against ~16 for matplotlib's whole figure): other epochs or another metric of the same range
redraw only them. The result is matplotlib's own drawing but where x and y lines cross or touch:
blended in the other order there, a channel may differ by a few levels of 255, as Agg rounds each
blend (tested over matplotlib's styles, one to three subplots: tests/test_plot_cost_per_fit.py).
Where the layers could differ more (marks, texts that meet the legend), the whole figure is drawn.
"""

from __future__ import annotations

import io
import math
import re
from functools import partial

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, MaxNLocator
from PIL import Image

from ..cjk_font import cjk_font_name
from ..language import drawn_language, say_drawn
from ..metrics.catalogue import facts_of_name
from ..metrics.history import MetricHistory
from ..metrics.smoothing import SmoothedAverage

CJK = re.compile("[\u4e00-\u9fff]")
MAX_BATCH_POINTS = 600  # about one point a pixel: more cost drawing time and show nothing
# An axis counting epochs: whole ones, spaced as matplotlib's AutoLocator spaces its ticks;
# one whole tick is enough (by default MaxNLocator needs two, else it gives 0.98, 1.0, 1.02)
EPOCH_TICKS = partial(
    MaxNLocator, nbins="auto", steps=[1, 2, 2.5, 5, 10], integer=True, min_n_ticks=1
)
LEGEND_ROW = 0.3  # inches below the x axis' label for the legend's row
BLIT_MARGIN = 6  # pixels: more than a marker's radius (ms=4 at 96 dpi) and its edge
SPARE_CANVASES = 2  # finished plots' canvases kept to lend, the newest first
# layout key -> the finished TrainingFigure whose canvas the next plot of that layout may take
_spare: dict[tuple, TrainingFigure] = {}


def agg_figure(figsize, chinese: bool = False) -> tuple[Figure, dict]:
    """A Figure on the Agg canvas, and its font: with Chinese to draw (the words, or a text such
    as a mark a Chinese run left), a CJK font with DejaVu Sans for the other glyphs."""
    figure = Figure(figsize=figsize, dpi=96)
    FigureCanvasAgg(figure)
    cjk = cjk_font_name() if chinese or drawn_language() == "zh" else None
    return figure, {"family": [cjk, "DejaVu Sans"]} if cjk else {}


class _Curves:
    """One metric's three curves, in plot coordinates (x in epochs completed)."""

    def __init__(self, smoothing: float) -> None:
        # one value at a time, so each draw costs nothing for the values already seen
        self.smoother = SmoothedAverage(max(smoothing, 0.0))
        self.batch: list = []  # batch records not yet taken into the columns below
        # a batch's place on the x axis needs the number of batches per epoch, unknown during
        # the first epoch: keep (epoch, batch) and place the points when drawing
        self.batch_epoch: list[int] = []
        self.batch_index: list[int] = []
        self.batch_y: list[float] = []
        self.epochs = {"train": ([], []), "validation": ([], [])}  # phase -> (x, y)

    def take_batches(self) -> int:
        """Move the new batch records into the columns, a column at a time (a 20-epoch run's
        2,500 records: 0.74 ms, 1.3 one by one); returns the largest batch count of an epoch."""
        if not self.batch:
            return 0
        new, self.batch = self.batch, []
        self.batch_epoch += [r.epoch for r in new]
        self.batch_index += [r.batch for r in new]
        add, finite = self.smoother.add, math.isfinite
        # a NaN or infinite value is drawn as it is (a gap) and left out of the average
        self.batch_y += [add(r.value) if finite(r.value) else r.value for r in new]
        return max(self.batch_index[-len(new) :]) + 1


def no_canvas() -> dict:
    """What a canvas is made of, before one is built: moved whole from a finished plot to the
    next (TrainingFigure._take_spare); ``_layout`` is the key it was built for, ``_marked`` the
    events drawn on it as (epoch, text)."""
    return dict(
        fig=None,
        _font={},
        _axes={},
        _lines={},
        _backgrounds=None,
        _event_artists=[],
        _marked=[],
        _layout=None,
        _epoch_ticks={},
        _base=None,
        _base_key=None,
        _legend_box=None,
        _labels_placed=False,
        _layers_overlap=False,
    )


class TrainingFigure:
    def __init__(
        self,
        *,
        log_scale: bool = False,
        smoothing: float = 0.6,
        figsize: tuple[float, float] | None = None,
        shared_canvas: bool = False,
    ):
        self.shared_canvas = shared_canvas  # may take a finished plot's canvas, and lend its own
        self.log_scale = log_scale
        self.smoothing = smoothing
        self.figsize = figsize
        self.metrics: list[str] = []
        self.fig: Figure | None = None
        self.__dict__.update(no_canvas())
        self._lent = False  # a canvas taken from another plot: its limits not checked yet
        self._curves: dict[str, _Curves] = {}
        self._consumed = 0  # history records already turned into curves
        self._per_epoch: int | None = None  # batches per epoch, once the recorder knows
        self._batches_seen = 0  # the most batches of one epoch seen so far
        self._x_range: tuple[float, float] | None = None
        self.full_draws = self.blits = self.base_draws = 0
        # metric name -> the range its values lie in (None: unbounded), from the metric
        # objects of the run; names not in it are looked up among MXNet's own metrics
        self.ranges: dict[str, tuple[float, float] | None] = {}
        self._events: list = []

    def value_range(self, metric: str) -> tuple[float, float] | None:
        if metric in self.ranges:
            return self.ranges[metric]
        facts = facts_of_name(metric)
        return facts.value_range if facts is not None else None

    def update(
        self,
        history: MetricHistory,
        batches_per_epoch: int | None,
        x_range: tuple[float, float] | None,
    ) -> None:
        """Take the records added to ``history`` since the last call."""
        self._x_range = x_range
        self._events = history.events
        self._per_epoch = batches_per_epoch
        for r in history.records[self._consumed :]:
            curves = self._curves.get(r.metric)
            if curves is None:
                curves = self._curves[r.metric] = _Curves(self.smoothing)
                self.metrics.append(r.metric)
                self.fig = None  # a new metric needs a new subplot
            if r.kind == "batch":
                curves.batch.append(r)
            else:
                xs, ys = curves.epochs[r.phase]
                xs.append(r.epoch + 1)
                ys.append(r.value)
        for curves in self._curves.values():
            self._batches_seen = max(self._batches_seen, curves.take_batches())
        self._consumed = len(history.records)

    def _layout_key(self) -> tuple:
        """Everything a canvas's drawing depends on besides its titles, limits and marks: the
        number of subplots and their scales, the words' language and font, and matplotlib's
        settings (a figure takes them when it is made: a style changed since is not in a lent
        canvas)."""
        chinese = any(CJK.search(e.text) for e in self._events)
        titles = self.metrics or ["metric"]
        scales = tuple(self.log_scale and self.value_range(m) is None for m in titles)
        return (scales, self.figsize, chinese, drawn_language(), _settings())

    def _take_spare(self, key: tuple) -> bool:
        """Take the canvas a finished plot of the same layout left, if there is one."""
        donor = _spare.pop(key, None)
        if donor is None or donor.fig is None:
            return False
        empty = no_canvas()
        for name in empty:
            setattr(self, name, getattr(donor, name))
        donor.__dict__.update(empty)  # it builds a canvas again if ever asked to draw
        self._lent = donor is not self
        titles = self.metrics or ["metric"]
        if list(self._axes) != titles:  # other metrics: the same axes under their titles
            self._axes = dict(zip(titles, self._axes.values()))
            self._lines = dict(zip(titles, self._lines.values()))
            for ax, metric in zip(self._axes.values(), titles):
                self._title(ax, metric)
            self._backgrounds = None
        return True

    def _title(self, ax, metric: str) -> None:
        # y given: matplotlib then skips placing the title above tick labels (none there)
        ax.set_title(metric, fontdict=self._font, y=1.0)

    def release(self) -> None:
        """The run is over: the next plot of this layout may take the canvas."""
        if self.shared_canvas and self.fig is not None and self._layout is not None:
            _spare.pop(self._layout, None)
            _spare[self._layout] = self
            while len(_spare) > SPARE_CANVASES:
                del _spare[next(iter(_spare))]

    def _build(self) -> None:
        key = self._layout_key() if self.shared_canvas else None
        if key is not None and self._take_spare(key):
            return
        n = max(1, len(self.metrics))
        size = self.figsize or (min(5.0 * n, 15.0), 3.4 + LEGEND_ROW)
        chinese = any(CJK.search(e.text) for e in self._events)
        self.fig, self._font = agg_figure(size, chinese)
        self._layout = key
        axes = self.fig.subplots(1, n, squeeze=False)[0]
        self._axes, self._lines, self._epoch_ticks = {}, {}, {}
        styles = (  # the batch curve, the training epochs, the validation epochs
            dict(lw=0.8, color="tab:blue", alpha=0.45, label=say_drawn("train (batch)")),
            dict(marker="o", ms=4, color="tab:blue", label=say_drawn("train (epoch)")),
            dict(marker="s", ms=4, color="tab:orange", label=say_drawn("validation")),
        )
        for ax, metric in zip(axes, self.metrics or ["metric"]):
            lines = tuple(ax.plot([], [], animated=True, **style)[0] for style in styles)
            self._title(ax, metric)
            ax.set_xlabel(say_drawn("epochs completed"), fontdict=self._font)
            ax.xaxis.set_major_locator(EPOCH_TICKS())  # no epoch 1.5 (#28)
            self._epoch_ticks[ax] = ax.xaxis.get_major_locator()
            ax.grid(alpha=0.3)
            if self.log_scale and self.value_range(metric) is None:
                ax.set_yscale("log")
            self._axes[metric], self._lines[metric] = ax, lines
        # One legend for every subplot (their curves look the same), in a row below them: inside
        # an axes it covered the curves (#28). Held by the first axes, drawn with the background.
        axes[0].legend(
            loc="lower center",
            bbox_to_anchor=(0.5, 0.0),
            bbox_transform=self.fig.transFigure,
            ncol=3,
            frameon=False,
            prop={**self._font, "size": "small"},
        )
        # Fixed margins in inches: tight_layout would cost ~25 ms per figure for the same look.
        width, height = size
        self._event_artists, self._marked = [], []
        self._labels_placed = False
        self.fig.subplots_adjust(
            left=0.6 / width,
            right=1 - 0.15 / width,
            bottom=(0.5 + LEGEND_ROW) / height,
            top=1 - 0.3 / height,
            wspace=0.7 * n / width,
        )
        self._backgrounds = None

    def _batch_x(self, c: _Curves) -> np.ndarray:
        """Batch points in epochs completed; a first epoch of unknown length is filled by the
        batches so far."""
        per_epoch = self._per_epoch or max(self._batches_seen, 1)
        return np.asarray(c.batch_epoch, float) + (np.asarray(c.batch_index) + 1) / per_epoch

    def _set_data(self) -> bool:
        """Put the curves into the lines; True when some curve left the axis limits."""
        outside = False
        for metric, (batch, *epochs) in self._lines.items():
            c = self._curves.get(metric)
            if c is None:  # no value yet: none of a lent canvas's last run either
                for line in (batch, *epochs):
                    line.set_data([], [])
                continue
            bx, by = self._batch_x(c), np.asarray(c.batch_y, float)
            if len(bx) > MAX_BATCH_POINTS:
                step = math.ceil(len(bx) / MAX_BATCH_POINTS)
                bx, by = np.r_[bx[::step], bx[-1]], np.r_[by[::step], by[-1]]
            batch.set_data(bx, by)
            for line, (xs, ys) in zip(epochs, c.epochs.values()):
                line.set_data(xs, ys)
            outside |= self._outside(metric, bx, by, c)
        return outside

    def _outside(self, metric, bx, by, c) -> bool:
        ax = self._axes[metric]
        xs = np.concatenate([bx, *(x for x, _ in c.epochs.values())])
        ys = np.concatenate([by, *(y for _, y in c.epochs.values())])
        ys = ys[np.isfinite(ys)]
        if not len(ys):
            return False
        (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
        return bool(xs.max() > x1 or xs.min() < x0 or ys.max() > y1 or ys.min() < y0)

    def _fit_limits(self) -> None:
        for metric, ax in self._axes.items():
            c = self._curves.get(metric)
            bounds = self.value_range(metric)
            if bounds is not None:  # a fixed axis never needs re-laying out
                lo, hi = bounds
                ax.set_ylim(lo, hi + 0.02 * (hi - lo))
            elif c is None:  # no value yet: limits of its own, not a lent canvas's last run's
                ax.set_ylim(*((0.1, 10.0) if ax.get_yscale() == "log" else (0.0, 1.0)))
            if self._x_range:
                lo, hi = self._x_range
            elif c is None:
                lo, hi = 0.0, 1.0
            else:  # grow in steps, so that most draws can keep the background
                xs = np.concatenate([self._batch_x(c), *(x for x, _ in c.epochs.values()), [0.0]])
                lo, hi = float(xs.min()), float(2 ** math.ceil(math.log2(max(xs.max(), 1.0))))
            ax.set_xlim(lo, max(hi, lo + 1))
            # the epochs' ticks found once for these limits: matplotlib asks its locator six
            # times a draw (0.2 ms each)
            ax.xaxis.set_major_locator(FixedLocator(self._epoch_ticks[ax]()))
            if c is None:
                continue
            ys = np.concatenate([c.batch_y, *(y for _, y in c.epochs.values())])
            ys = ys[np.isfinite(ys)]
            if bounds is None and len(ys):
                y0, y1 = float(ys.min()), float(ys.max())
                if ax.get_yscale() == "log":
                    positive = ys[ys > 0]
                    if len(positive):
                        ax.set_ylim(float(positive.min()) / 1.5, float(positive.max()) * 1.5)
                else:
                    pad = 0.08 * (y1 - y0) or 0.1 * abs(y1) or 0.1
                    ax.set_ylim(min(0.0, y0 - pad) if y0 >= 0 else y0 - pad, y1 + pad)

    def _limits(self) -> list[tuple]:
        return [(ax.get_xlim(), ax.get_ylim()) for ax in self._axes.values()]

    def _mark_events(self, events) -> None:
        """A dashed line with its text at each event, e.g. 'resumed at epoch 3'."""
        for artist in self._event_artists:
            artist.remove()
        self._event_artists = []
        self._marked = [(event.epoch, event.text) for event in events]
        at = dict(xycoords=("data", "axes fraction"), xytext=(3, -12), textcoords="offset points")
        look = dict(fontsize="small", color="grey", fontfamily=self._font.get("family"))
        for event in events:
            for ax in self._axes.values():
                line = ax.axvline(event.epoch, color="grey", ls="--", lw=1)
                text = ax.annotate(event.text, (event.epoch, 1.0), **at, **look)
                self._event_artists += [line, text]

    def draw(self, exact: bool = False) -> None:
        """Bring the canvas up to date: a blit when the limits still hold, else a full draw."""
        if self.fig is None:
            self._build()
        outside = self._set_data()
        canvas = self.fig.canvas
        events_changed = self._marked != [(event.epoch, event.text) for event in self._events]
        fitted = self._lent  # another plot's limits: its background holds only if they are ours
        if fitted:
            self._lent, limits = False, self._limits()
            self._fit_limits()
            outside |= self._limits() != limits
        if exact or outside or events_changed or self._backgrounds is None:
            if not fitted:  # the same curves give the same limits (~0.5 ms)
                self._fit_limits()
            self._mark_events(self._events)
            self._draw_background()  # everything but the (animated) curves
            self._keep_labels_placed()
            # a margin around each axes: a marker on its edge reaches past it, and a blit must
            # restore where the last one was (a lent canvas held another run's markers there)
            self._backgrounds = [
                canvas.copy_from_bbox(ax.bbox.padded(BLIT_MARGIN)) for ax in self._axes.values()
            ]
            self.full_draws += 1
        else:
            for background in self._backgrounds:
                canvas.restore_region(background)
            self.blits += 1
        for metric, ax in self._axes.items():
            for line in self._lines[metric]:
                ax.draw_artist(line)

    def _keep_labels_placed(self) -> None:
        """Keep each x axis label where its first draw put it: below tick labels that are all
        one line of digits, so of one height, in fonts and settings that a canvas keeps (its
        layout key). Matplotlib would measure every tick label again to place it (~1 ms a draw)."""
        if self._labels_placed:
            return
        for ax in self._axes.values():
            # placed in pixels below the axes: kept in axes coordinates, which a picture saved
            # at another dpi (fig.savefig(dpi=300), a PDF) scales as matplotlib would place it
            label = ax.xaxis.label
            at = label.get_transform().transform(label.get_position())
            ax.xaxis.set_label_coords(*ax.transAxes.inverted().transform(at))
        self._labels_placed = True

    def _draw_background(self) -> None:
        """Everything but the curves: the x axes, spines and titles over a base of the rest,
        which is drawn again only when the y limits or matplotlib's settings change.

        Matplotlib draws one subplot after another, so the layers give its picture only where
        no part drawn over the base reaches a part of the base drawn after it. Marks are not
        layered (a mark's text may run into the next subplot, which matplotlib draws over it),
        nor a canvas whose x axis label meets the legend (a style's large texts): matplotlib
        then draws the whole figure."""
        canvas, axes = self.fig.canvas, list(self._axes.values())
        if self._event_artists or self._layers_overlap:
            canvas.draw()
            self._base_key = None
            return
        key = [(ax.get_ylim(), ax.get_yscale()) for ax in axes], _settings()
        # in matplotlib's order: by zorder, then as the axes lists them (Axes.draw)
        over = [
            part
            for ax in axes
            for part in sorted(
                (a for a in ax.get_children() if a in {ax.xaxis, ax.title, *ax.spines.values()}),
                key=_zorder,
            )
        ]
        if key != self._base_key:
            for part in over:
                part.set_visible(False)
            canvas.draw()
            for part in over:
                part.set_visible(True)
            self._base, self._base_key = canvas.copy_from_bbox(self.fig.bbox), key
            legend = axes[0].get_legend()
            self._legend_box = legend.get_window_extent(canvas.get_renderer()) if legend else None
            self.base_draws += 1
        else:
            canvas.restore_region(self._base)
        for part in over:
            part.axes.draw_artist(part)
        renderer, legend = canvas.get_renderer(), self._legend_box
        if legend is not None and any(
            ax.xaxis.label.get_window_extent(renderer).overlaps(legend) for ax in axes
        ):
            self._layers_overlap = True
            self._draw_background()

    def png(self) -> bytes:
        """The canvas as PNG, in a 64-colour palette: a plot of lines shows no difference, and
        the encoding time and the bytes halve (2.2 ms here)."""
        image = self._image().quantize(64, method=Image.Quantize.FASTOCTREE)
        buffer = io.BytesIO()
        image.save(buffer, format="png", compress_level=1)
        return buffer.getvalue()

    def jpeg(self) -> bytes:
        """The canvas as JPEG for live frames; no chroma subsampling: lines stay clean."""
        buffer = io.BytesIO()
        self._image().save(buffer, format="jpeg", quality=95, subsampling=0)
        return buffer.getvalue()

    def _image(self) -> Image.Image:
        # read from the canvas's RGBA buffer in C: an array view without its alpha is not
        # contiguous, and Pillow copied it in Python's time (2.2 ms against 0.2)
        width, height = self.fig.canvas.get_width_height()
        buffer = self.fig.canvas.buffer_rgba()
        return Image.frombuffer("RGBA", (width, height), buffer, "raw", "RGBA", 0, 1).convert("RGB")

    def _rgb(self) -> np.ndarray:
        return np.asarray(self.fig.canvas.buffer_rgba())[..., :3]

    def line_data(self, metric: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The data of each curve of ``metric``, as drawn (for tests and inspection)."""
        names = ("train (batch)", "train (epoch)", "validation")
        if self.fig is None:  # its canvas was lent to a later plot: drawn again with its curves
            self.draw()
        return {
            n: (np.asarray(line.get_xdata()), np.asarray(line.get_ydata()))
            for n, line in zip(names, self._lines[metric])
        }

    def save(self, path) -> None:
        self.draw(exact=True)
        with open(path, "wb") as f:
            f.write(self.png())


def _zorder(artist) -> float:
    return artist.get_zorder()


def _settings() -> str:
    """Matplotlib's settings, as a key: some are read when a figure draws (the minus sign, the
    hinting), so a base drawn under others is not this figure's (~0.5 ms)."""
    return repr(sorted(dict.items(matplotlib.rcParams)))


def prepare_canvas() -> None:
    """A one-subplot canvas, drawn and left to lend: made at ``import mxlearn`` in a kernel that
    draws widgets, where waiting is expected. The kernel's first live plot of one metric then
    redraws it instead of building a figure and loading matplotlib's fonts and caches in the
    student's training cell; its y axis is that of a metric in [0, 1] (accuracy, F1, ...), whose
    plot then draws only its x axis and title (benchmarks/README.md). Its x axis has ten epochs:
    six ticks made and drawn once, which a first plot's x axis reuses (1.5-2 ms less)."""
    canvas = TrainingFigure(shared_canvas=True)
    canvas.ranges["metric"] = (0.0, 1.0)
    canvas._x_range = (0.0, 10.0)
    canvas.draw()
    canvas.png()
    canvas.release()
