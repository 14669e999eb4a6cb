"""The figure of ``LayerStats``: one subplot per statistic, one line per layer, log scale (the
layers of a deep network differ by orders of magnitude, which is the point)."""

from __future__ import annotations

import math

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..cjk_font import cjk_font_name
from ..language import drawn_language, say_drawn


def titles() -> dict[str, str]:
    return {
        "grad_norm": say_drawn("gradient norm"),
        "weight_norm": say_drawn("weight norm"),
        "update_ratio": say_drawn("update / weight"),
    }


def layer_figure(stats) -> Figure:
    fig = Figure(figsize=(13.0, 3.6), dpi=96)
    FigureCanvasAgg(fig)
    cjk = cjk_font_name() if drawn_language() == "zh" else None
    font = {"family": [cjk, "DejaVu Sans"]} if cjk else {}
    axes = fig.subplots(1, 3, squeeze=False)[0]
    for ax, (column, title) in zip(axes, titles().items()):
        for layer in stats.layers:
            epochs, values = stats.series(layer, column)
            ax.plot([e + 1 for e in epochs], values, "o-", ms=3, label=layer)
        positive = [v for r in stats.rows for v in [r[column]] if math.isfinite(v) and v > 0]
        if positive:
            ax.set_yscale("log")
        ax.set_title(title, fontdict=font)
        ax.set_xlabel(say_drawn("epochs completed"), fontdict=font)
        ax.grid(alpha=0.3)
    axes[0].legend(loc="best", prop={**font, "size": "small"})
    fig.subplots_adjust(left=0.06, right=0.98, bottom=0.16, top=0.88, wspace=0.3)
    return fig
