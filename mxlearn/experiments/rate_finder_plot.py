"""What the range test found, and how it is shown: how the smoothed loss is read (where it
falls fastest, where it exploded), the :class:`RateFinding`, its sentence, and its figure (the
loss against the learning rate, on a log axis, with the suggested rate and the rate where the
loss diverged marked).

Drawn on matplotlib's Agg canvas (no pyplot: no window, no global figure list, no second copy
shown by a notebook's inline backend). In a notebook the PNG goes into the cell's output; in a
terminal or a script it is saved as a file whose path is printed, as a LivePlot's final
figure is (the same choice of place: ``live.renderers``).
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from ..language import say, say_drawn
from ..live.figure import agg_figure
from ..live.renderers import figure_png, saved_png, show_figure
from ..metrics.smoothing import SmoothedAverage

FIGSIZE = (6.0, 3.6)
SKIP_START = 10  # smoothed values too young to have a slope
EXPLOSION = 4.0  # the smoothed loss this many times its lowest value: the rate is too large
# A loss that never fell by this share of its level after the first batches did not fall:
# wandering within a few percent (a rate too small to move it, a dead network) suggests nothing.
MIN_FALL = 0.05


def steepest_descent(rates, smoothed, skip: int = SKIP_START) -> float | None:
    """The rate where ``smoothed`` falls fastest against log(rate), looked for before its
    minimum (past it the loss rises) and after its first ``skip`` values (they average a few
    batches only: their slopes are noise). None when the loss never fell."""
    smoothed = np.asarray(smoothed, dtype=np.float64)
    lowest = int(np.argmin(np.where(np.isfinite(smoothed), smoothed, np.inf)))
    first = skip  # a minimum among the first values has no slope worth reading
    if lowest - first < 1 or smoothed[lowest] > (1 - MIN_FALL) * smoothed[first]:
        return None
    part = slice(first, lowest + 1)
    slopes = np.gradient(smoothed[part], np.log(np.asarray(rates, dtype=np.float64)[part]))
    steepest = int(np.argmin(slopes))
    return float(rates[first + steepest]) if slopes[steepest] < 0 else None


class Smoothed:
    """The loss smoothed (a NaN stays in: it is an explosion too), and whether it exploded."""

    def __init__(self, beta: float) -> None:
        self.average = SmoothedAverage(beta)
        self.lowest = math.inf
        self.raw_over = False  # the previous raw loss was past the limit

    def add(self, loss: float) -> tuple[float, bool]:
        """The smoothed value with ``loss`` added, and whether the loss exploded there: the
        smoothed loss past 4 times its lowest, or the raw loss past it twice in a row (the
        average trails the raw loss: by then the rate has grown further)."""
        value = self.average.add(loss)
        raw_over = not loss <= EXPLOSION * self.lowest  # NaN counts as over
        exploded = math.isnan(value) or value > EXPLOSION * self.lowest
        exploded = exploded or (raw_over and self.raw_over)
        self.raw_over = raw_over
        self.lowest = min(self.lowest, value)
        return value, exploded


class RateFinding:
    """What :func:`lr_find` measured: per batch the rate, the loss and its smoothed value."""

    def __init__(self, rates, losses, smoothed, suggested, diverged_at) -> None:
        self.rates = np.asarray(rates, dtype=np.float64)
        self.losses = np.asarray(losses, dtype=np.float64)  # raw, one per batch
        self.smoothed = np.asarray(smoothed, dtype=np.float64)
        self.suggested: float | None = suggested
        self.diverged_at: float | None = diverged_at

    @property
    def reason(self) -> str:
        """Why this rate, in the language mxlearn speaks now."""
        last = float(self.rates[-1])
        if self.suggested is None and self.diverged_at is None:
            return say(
                "The smoothed loss did not fall between lr {start:.3g} and lr {last:.3g}: no "
                "rate to suggest; the loss did not diverge either.",
                start=float(self.rates[0]),
                last=last,
            )
        if self.suggested is None:
            return say(
                "The smoothed loss did not fall before it diverged at lr {diverged:.3g}: no "
                "rate to suggest; try a smaller start.",
                diverged=self.diverged_at,
            )
        if self.diverged_at is None:
            return say(
                "Steepest descent of the smoothed loss at lr {suggested:.3g}; the loss did not "
                "diverge up to lr {last:.3g}.",
                suggested=self.suggested,
                last=last,
            )
        return say(
            "Steepest descent of the smoothed loss at lr {suggested:.3g}; the loss diverged at "
            "lr {diverged:.3g}.",
            suggested=self.suggested,
            diverged=self.diverged_at,
        )

    def figure(self) -> Figure:
        """The loss against the rate (log axis), raw and smoothed, the two rates marked, as a
        matplotlib Figure (Agg: nothing shown)."""
        figure, font = agg_figure(FIGSIZE)
        ax = figure.subplots()
        rates, losses, smoothed = self.rates, self.losses, self.smoothed
        ax.plot(rates, losses, lw=0.8, color="tab:blue", alpha=0.35, label=say_drawn("loss"))
        ax.plot(rates, smoothed, lw=1.6, color="tab:blue", label=say_drawn("smoothed loss"))
        if self.suggested is not None:
            ax.axvline(
                self.suggested,
                color="tab:green",
                ls="--",
                label=say_drawn("suggested lr {rate:.3g}", rate=self.suggested),
            )
        if self.diverged_at is not None:
            ax.axvline(
                self.diverged_at,
                color="tab:red",
                ls=":",
                label=say_drawn("diverged at lr {rate:.3g}", rate=self.diverged_at),
            )
        ax.set_xscale("log")
        finite = smoothed[np.isfinite(smoothed)]
        if finite.size:  # up to the smoothed loss's top: an explosion's raw loss would squash it
            low = min(np.min(finite), np.min(losses, initial=np.inf, where=np.isfinite(losses)))
            low, high = float(low), float(np.max(finite))
            margin = 0.1 * (high - low) or 0.1 * abs(high) or 0.1
            ax.set_ylim(low - margin, high + margin)
        ax.set_xlabel(say_drawn("learning rate (log scale)"), fontdict=font)
        ax.set_ylabel(say_drawn("training loss (cross-entropy)"), fontdict=font)
        ax.grid(alpha=0.3)
        ax.legend(loc="best", prop={**font, "size": "small"})
        figure.tight_layout()
        return figure

    def plot(self, path: str | None = None, backend: str | None = None) -> str | None:
        """Show the figure where the code runs: in a notebook, as an image in the output;
        elsewhere saved as a PNG (``path``, else runs/plots/lr-find-<time>.png), its path
        printed and returned. No window opens."""
        figure = self.figure()
        if path is None:
            return show_figure(figure, "lr-find", backend)
        saved_png(figure_png(figure), path, "lr-find")
        print(say("Learning-rate plot saved to {path}", path=path), flush=True)
        return path

    def __repr__(self) -> str:
        return (
            f"RateFinding(suggested={_short(self.suggested)}, "
            f"diverged_at={_short(self.diverged_at)}, batches={len(self.rates)})"
        )

    def __str__(self) -> str:
        return say(
            "Learning-rate range test, {batches} batches from lr {start:.3g} to {last:.3g}: "
            "{reason}",
            batches=len(self.rates),
            start=float(self.rates[0]),
            last=float(self.rates[-1]),
            reason=self.reason,
        )


def _short(rate: float | None) -> str:
    return "None" if rate is None else f"{rate:.3g}"
