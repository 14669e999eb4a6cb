"""``mxlearn.LayerStats``: a callback recording, per layer (the parameters that share a name
before ``_weight``, ``_bias``, ...) and epoch, the gradient's norm, the weights' norm and the
update-to-weight ratio (about 1e-3 is healthy), from reductions queued on the device every
``every`` batches and read once an epoch, so no batch waits (benchmarks/layer_stats.py).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
from matplotlib.font_manager import FontProperties
from matplotlib.ticker import NullLocator

from .. import rules
from .._compat import mx
from ..errors import N_, InputError, did_you_mean
from ..language import say, say_drawn
from ..live.figure import EPOCH_TICKS, agg_figure
from ..live.renderers import show_figure
from ..training.callback import Callback, RunContext


class NotABatchCount(InputError):
    says = N_("LayerStats(every={every!r}): every is a number of batches, 1 or more.")
    fix_code = "mxlearn.LayerStats(every=50)"


class NothingRecorded(InputError):
    says = N_("LayerStats holds nothing yet: give it to fit as a callback first.")
    fix_code = "mod.fit(train_iter, num_epoch=3, callbacks=[stats])"


# Raised with fix= the names most like the one asked for (did_you_mean).
class NoSuchStatistic(InputError):
    says = N_("LayerStats has no statistic {column!r}.")


class NoSuchLayer(InputError):
    says = N_("LayerStats has no layer {layer!r}.")


STATISTICS = ("grad_norm", "weight_norm", "update_ratio")
COLUMNS = ["epoch", "layer", *STATISTICS, "batches"]


def layer_of(param: str) -> str:
    """The layer a parameter belongs to: its name before ``_weight``, ``_bias``, ..."""
    return re.sub("_(weight|bias|gamma|beta)$", "", param)


@dataclass(frozen=True)
class NonFinite:
    epoch: int
    batch: int
    layer: str
    what: str  # 'gradient' or 'weights'

    def __str__(self) -> str:
        return say(
            "The first non-finite value: the {what} of layer '{layer}', in epoch {epoch} by "
            "batch {batch} (batches are sampled every few: it turned between the previous "
            "sample and this one).",
            what=say("gradient") if self.what == "gradient" else say("weights"),
            layer=self.layer,
            epoch=self.epoch,
            batch=self.batch,
        )


class LayerStats(Callback):
    """Per layer and epoch: ``grad_norm`` (all the layer's parameters, summed over the devices
    as the optimizer sees it), ``weight_norm`` at the epoch's end, and ``update_ratio`` (||W
    after - W before|| / ||W before|| of one update), averaged over the sampled batches.

    When a value turns NaN or infinite, it names the layer and sampled batch where a gradient
    or a weight first did: of the layers whose gradient turned at once, the one nearest the
    output, where backpropagation met it first (it reads no layer's outputs).
    """

    def __init__(self, every: int = 50) -> None:
        if rules.whole(1).test(every) is not None:  # a NumPy integer is a count too
            raise NotABatchCount(every=every)
        self.every = int(every)
        self.rows: list[dict] = []  # one per epoch and layer, in the order of the network
        self.non_finite: NonFinite | None = None
        self._group = None
        self._before: list | None = None  # the weights before the next sampled update

    def on_train_begin(self, run: RunContext) -> None:  # another fit starts over: one run's rows
        self.rows, self.non_finite, self._group, self._before = [], None, None, None

    def _setup(self, run: RunContext) -> None:
        group = run.module.executor_group
        if group is self._group:
            return
        same = self._group is not None and group.param_names == self._group.param_names
        self._group = group
        if same:  # a MutableModule's executors for another shape: the same parameters' memory
            return
        self.layers: dict[str, list[int]] = {}
        for index, name in enumerate(group.param_names):
            self.layers.setdefault(layer_of(name), []).append(index)
        self._before: list | None = None
        self._sampled: list[tuple[int, mx.nd.NDArray]] = []

    def on_batch_end(self, run: RunContext, batch: int) -> None:
        keep = (batch + 1) % self.every == 0
        if self._before is None and not keep and self._group is not None:
            return  # most batches: nothing to queue (and no lookup of the executors)
        self._setup(run)
        if self._before is not None:  # this batch is sampled: its gradient and its update
            self._sampled.append((batch, self._queue_norms()))
            self._before = None
        if keep:  # these weights are the next batch's "before"
            self._before = [w[0].copy() for w in self._group.param_arrays]

    def _queue_norms(self) -> mx.nd.NDArray:
        """Per parameter, on the device: the gradient's norm, the update's and the weight's."""
        group, grads, steps, sizes = self._group, [], [], []
        for i, devices in enumerate(group.grad_arrays):
            if not devices or devices[0] is None:  # a frozen parameter (fixed_param_names)
                grads.append(mx.nd.zeros((1,), ctx=self._before[i].context))
            else:  # the devices' gradients added on the first one (what the kvstore sums)
                others = [d.as_in_context(devices[0].context) for d in devices[1:]]
                grads.append(mx.nd.norm(mx.nd.add_n(devices[0], *others) if others else devices[0]))
            steps.append(mx.nd.norm(group.param_arrays[i][0] - self._before[i]))
            sizes.append(mx.nd.norm(self._before[i]))
        return mx.nd.concat(*grads, *steps, *sizes, dim=0)

    def _by_layer(self, norms: np.ndarray) -> np.ndarray:
        """Parameters' norms (the last axis) per layer: the root of their squares' sum."""
        norms = norms.astype(np.float64)
        with np.errstate(over="ignore"):  # an exploding layer's norm may square to infinity
            return np.stack(
                [np.sqrt((norms[..., idx] ** 2).sum(axis=-1)) for idx in self.layers.values()],
                axis=-1,
            )

    def on_epoch_end(self, run: RunContext, epoch: int) -> None:
        self._setup(run)
        self._read(epoch)

    def on_train_end(self, run: RunContext) -> None:
        if self._group is not None and self._sampled:  # a run stopped inside an epoch
            self._read(run.epoch)
        if self.non_finite is not None:
            print(self.non_finite, flush=True)

    def _read(self, epoch: int) -> None:
        """One wait for the epoch: every sampled batch's values, and the weights' norms now."""
        arrays = self._group.param_arrays
        weights = mx.nd.concat(*[mx.nd.norm(a[0]) for a in arrays], dim=0).asnumpy()
        weight_norms = self._by_layer(weights)
        batches = [b for b, _ in self._sampled]
        count = len(arrays)
        read = np.array([n.asnumpy() for _, n in self._sampled]).reshape((len(batches), 3, count))
        self._sampled = []
        grads, steps, sizes = (self._by_layer(read[:, i]) for i in range(3))  # as _queue_norms
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = steps / sizes
        self._find_non_finite(epoch, batches, grads, weight_norms)
        for k, layer in enumerate(self.layers):
            grad, ratio = (float(v[:, k].mean()) if batches else math.nan for v in (grads, ratios))
            values = (epoch, layer, grad, float(weight_norms[k]), ratio, len(batches))
            self.rows.append(dict(zip(COLUMNS, values)))

    def _find_non_finite(self, epoch, batches, grads, weight_norms) -> None:
        if self.non_finite is not None:
            return
        layers = list(self.layers)
        for row, batch in zip(grads, batches):
            bad = np.flatnonzero(~np.isfinite(row))
            if bad.size:  # backpropagation meets the layer nearest the output first
                self.non_finite = NonFinite(epoch, batch, layers[bad[-1]], "gradient")
                return
        bad = np.flatnonzero(~np.isfinite(weight_norms))
        if bad.size:
            batch = batches[-1] if batches else -1
            self.non_finite = NonFinite(epoch, batch, layers[bad[-1]], "weights")

    def to_pandas(self):
        import pandas as pd

        return pd.DataFrame(self.rows, columns=COLUMNS)

    def figure(self):
        """A subplot per statistic, a line per layer, on a log scale (the layers of a deep
        network differ by orders of magnitude, which is the point), each line named at its end."""
        self._known()
        fig, font = agg_figure((13.0, 3.6))
        titles = {
            "grad_norm": say_drawn("gradient norm"),
            "weight_norm": say_drawn("weight norm"),
            "update_ratio": say_drawn("update / weight"),
        }
        axes = fig.subplots(1, 3, squeeze=False)[0]
        for ax, (column, title) in zip(axes, titles.items()):
            for layer in self.layers:
                epochs, values = self.series(layer, column)
                ax.plot([e + 1 for e in epochs], values, "o-", ms=3, label=layer)
            if any(math.isfinite(r[column]) and r[column] > 0 for r in self.rows):
                ax.set_yscale("log")
            ax.set_title(title, fontdict=font)
            ax.set_xlabel(say_drawn("epochs completed"), fontdict=font)
            ax.xaxis.set_major_locator(EPOCH_TICKS())
            ax.grid(alpha=0.3)
        lay_out(fig, axes, font)
        name_lines(fig, axes, font)
        return fig

    def plot(self, backend: str | None = None):
        return show_figure(self.figure(), "layers", backend)

    def _known(self, layer: str | None = None, column: str | None = None) -> None:
        if not self.rows:
            raise NothingRecorded()
        if column is not None and column not in STATISTICS:
            raise NoSuchStatistic(column=column, fix=did_you_mean(column, STATISTICS))
        if layer is not None and layer not in self.layers:
            raise NoSuchLayer(layer=layer, fix=did_you_mean(layer, self.layers))

    def series(self, layer: str, column: str) -> tuple[list[int], list[float]]:
        self._known(layer, column)
        rows = [r for r in self.rows if r["layer"] == layer]
        return [r["epoch"] for r in rows], [r[column] for r in rows]


# Margins in inches, fixed as TrainingFigure's: constrained layout cost more than drawing the
# rest of the figure, and ran again for the PNG.
LEFT, TICK_LABELS, NAME_PAD = 0.8, 0.7, 0.15  # y tick labels and the names' pad
BOTTOM, TOP = 0.16, 0.88
NAME_SIZE, LINE_SPACING = "small", 1.15


def lay_out(fig, axes, font: dict) -> None:
    """Right of each panel, room for its lines' names (as wide as the widest) and for the tick
    labels of the panel after it."""
    renderer, prop = fig.canvas.get_renderer(), FontProperties(size=NAME_SIZE, **font)
    widths = [
        renderer.get_text_width_height_descent(line.get_label(), prop, ismath=False)[0]
        for ax in axes
        for line in ax.lines
    ]
    room = max(widths, default=0.0) / fig.dpi + NAME_PAD
    width, gap = fig.get_figwidth(), room + TICK_LABELS
    panel = (width - LEFT - room - gap * (len(axes) - 1)) / len(axes)
    right = 1 - room / width
    fig.subplots_adjust(left=LEFT / width, right=right, bottom=BOTTOM, top=TOP, wspace=gap / panel)


def name_lines(fig, axes, font: dict) -> None:
    """Each line's label beside its last value, right of its panel, in its colour: a legend in
    one panel covered its curves and left the other panels' lines unnamed (#28). The names are
    tick labels of a right-hand axis; where values lie closer than a line of text, the names
    are pushed apart."""
    text = FontProperties(size=NAME_SIZE).get_size_in_points() * LINE_SPACING
    for ax in axes:
        ax.get_ylim()  # the limits autoscaled now: the names are placed within them
        names = ax.secondary_yaxis("right")
        names.yaxis.set_minor_locator(NullLocator())  # a log axis' 2x10^0 ... would come back
        names.tick_params(length=0, labelsize=NAME_SIZE)
        height = ax.get_position().height * fig.get_figheight() * 72  # points
        values, lines = _line_ends(ax)
        _put_names(ax, names, values, lines, gap=text / height)
        for label, line in zip(names.get_yticklabels(), lines):
            label.set_color(line.get_color())
            if font:
                label.set_fontfamily(font["family"])


def _line_ends(ax) -> tuple[list[float], list]:
    """The last value each line shows (finite, and positive on a log axis), and the lines."""
    values, lines = [], []
    for line in ax.lines:
        y = np.asarray(line.get_ydata(), dtype=np.float64)
        shown = np.isfinite(y) & ((y > 0) if ax.get_yscale() == "log" else True)
        if shown.any():
            values.append(float(y[shown][-1]))
            lines.append(line)
    return values, lines


def _put_names(ax, names, values, lines, gap: float) -> None:
    """The lines' names as ticks at ``values``, at least ``gap`` (axes fraction) apart."""
    to_axes = ax.transScale + ax.transLimits
    at = [to_axes.transform((0.0, v))[1] for v in values]
    spread = _spread(at, gap)
    ticks = [to_axes.inverted().transform((0.0, f))[1] for f in spread]
    names.set_yticks(ticks, labels=[line.get_label() for line in lines])


def _spread(at: list[float], gap: float) -> np.ndarray:
    """Positions in [0, 1] near ``at``, in the same order, ``gap`` apart where they fit."""
    order = np.argsort(at, kind="stable")
    placed = np.clip(np.asarray(at, dtype=np.float64)[order], gap / 2, 1 - gap / 2)
    for i in range(1, len(placed)):  # up from the lowest
        placed[i] = max(placed[i], placed[i - 1] + gap)
    for i in reversed(range(len(placed))):  # then down from the top, if that went past it
        placed[i] = min(placed[i], placed[i + 1] - gap if i + 1 < len(placed) else 1 - gap / 2)
    spread = np.empty_like(placed)
    spread[order] = placed
    return spread
