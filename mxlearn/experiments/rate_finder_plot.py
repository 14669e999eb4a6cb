"""What the range test found: how the smoothed loss is read, the :class:`RateFinding`, its
sentence and its figure (on matplotlib's Agg canvas, shown or saved as ``live.renderers`` does).
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from ..language import N_, say, say_drawn
from ..live.figure import agg_figure
from ..live.renderers import figure_png, saved_png, show_figure
from ..metrics.smoothing import SmoothedAverage

FIGSIZE = (6.0, 4.0)  # the legend in two rows below the axes
SKIP_START = 10  # smoothed values too young to have a slope
EXPLOSION = 4.0  # the smoothed loss this many times its lowest value: the rate is too large
# A loss that never fell by this share of its level after the first batches did not fall:
# wandering within a few percent (a rate too small to move it, a dead network) suggests nothing.
MIN_FALL = 0.05
# The floor of the valley: the first smoothed value within FLOOR noise deviations of the lowest
# (a minimum on a flat floor lies anywhere along it). The suggestion is a tenth of its rate
# (fast.ai's lr_min / 10), not the rate of the steepest fall: on raw features that is the
# network unlearning its large first logits, far too slow to learn; a fall of less than NOISE
# deviations is the noise's own (#26).
FLOOR, NOISE, FRACTION = 1.0, 5.0, 10.0

# Why no rate is suggested (RateFinding.no_suggestion); the reason says it in words.
NO_DESCENT = "no_descent"
NOISE_OVER_FALL = "noise_over_fall"
DIVERGED_AT_START = "diverged_at_start"
STILL_FALLING = "still_falling"
SAID = {  # what the reason says: by no_suggestion (None: a rate), then by how training broke
    None: N_(
        "The smoothed loss reaches its lowest from lr {floor:.3g} on; a tenth of that, "
        "lr {suggested:.3g}, is the suggestion."
    ),
    NOISE_OVER_FALL: N_(
        "The smoothed loss fell by {fall:.3g}, within its noise ({noise:.3g} a value): "
        "no rate to suggest; larger batches average the noise out."
    ),
    DIVERGED_AT_START: N_(
        "The loss did not fall before training broke down: no rate to suggest; start "
        "lower, e.g. start={lower:.0e}."
    ),
    STILL_FALLING: N_(
        "The smoothed loss was still falling at lr {last:.3g}, the last rate, so its "
        "lowest may lie beyond: no rate to suggest; raise stop, e.g. stop={higher:g}."
    ),
    NO_DESCENT: N_(
        "The smoothed loss did not fall between lr {start:.3g} and lr {last:.3g}: no rate "
        "to suggest."
    ),
    "collapsed": N_(
        "At lr {rate:.3g} the network collapsed: it predicts one class for every row "
        "and its loss is back to guessing ({guessing:.3g})."
    ),
    True: N_("The loss diverged at lr {rate:.3g}."),
    False: N_("The loss did not diverge up to lr {last:.3g}."),
}


class Reading:
    """Where the smoothed loss's valley floor begins, the suggestion or why there is none, and
    the fall and the noise it was compared with."""

    def __init__(self, rates, losses, smoothed, beta: float, skip: int, diverged: bool):
        rates = np.asarray(rates, dtype=np.float64)
        smoothed = np.asarray(smoothed, dtype=np.float64)
        self.floor_at = self.suggested = self.why_none = None
        self.fall = self.noise = 0.0
        # up to the last value before the breakdown: the breakdown's own values are not a valley
        end = len(smoothed) - 1 if diverged else len(smoothed)
        kept = np.where(np.isfinite(smoothed[:end]), smoothed[:end], np.inf)
        if end - skip < 2 or not np.isfinite(kept[skip:]).any():
            self.why_none = DIVERGED_AT_START if diverged else NO_DESCENT
            return
        self.noise = smoothed_noise(np.asarray(losses, dtype=np.float64)[skip:end], beta)
        lowest = skip + int(np.argmin(kept[skip:]))
        floor = skip + int(np.argmax(kept[skip:] <= kept[lowest] + FLOOR * self.noise))
        self.fall = float(np.max(kept[skip : floor + 1]) - kept[lowest])
        if floor <= skip and diverged:  # lowest at once, then up: the start is too large
            self.why_none = DIVERGED_AT_START
        elif self.fall < MIN_FALL * abs(kept[skip]):
            self.why_none = DIVERGED_AT_START if diverged else NO_DESCENT
        elif self.fall < NOISE * self.noise:
            self.why_none = NOISE_OVER_FALL
        elif not diverged and floor >= end - 1 - math.ceil(beta / (1 - beta)):
            self.why_none = STILL_FALLING  # its lowest may lie past stop
        else:
            self.floor_at = float(rates[floor])
            self.suggested = self.floor_at / FRACTION


def smoothed_noise(losses, beta: float) -> float:
    """The deviation of the smoothed loss's noise: the raw losses' (1.4826 times the MAD of
    their steps, over sqrt 2: robust to spikes) times what an average keeps of it."""
    steps = np.diff(losses[np.isfinite(losses)])
    if steps.size < 2:
        return 0.0
    raw = 1.4826 * float(np.median(np.abs(steps - np.median(steps)))) / math.sqrt(2)
    return raw * math.sqrt((1 - beta) / (1 + beta))


class Smoothed:
    """The loss smoothed (a NaN stays in: it is an explosion too), and whether it exploded."""

    def __init__(self, beta: float) -> None:
        self.average = SmoothedAverage(beta)
        self.lowest = math.inf
        self.raw_over = False  # the previous raw loss was past the limit

    def add(self, loss: float) -> tuple[float, bool]:
        """The smoothed value, and whether the loss exploded: the smoothed loss past 4 times its
        lowest, or the raw loss twice in a row (the average trails: the rate grew meanwhile)."""
        value = self.average.add(loss)
        raw_over = not loss <= EXPLOSION * self.lowest  # NaN counts as over
        exploded = math.isnan(value) or value > EXPLOSION * self.lowest
        exploded = exploded or (raw_over and self.raw_over)
        self.raw_over = raw_over
        self.lowest = min(self.lowest, value)
        return value, exploded


class RateFinding:
    """What :func:`lr_find` measured: per batch the rate, the loss and its smoothed value; the
    suggested rate or why there is none (``no_suggestion``), and where training exploded or
    (``collapsed``) came to predict one class with its loss back to ``guessing``."""

    def __init__(
        self, rates, losses, smoothed, reading, diverged_at, collapsed=False, guessing=None
    ) -> None:
        self.rates = np.asarray(rates, dtype=np.float64)
        self.losses = np.asarray(losses, dtype=np.float64)  # raw, one per batch
        self.smoothed = np.asarray(smoothed, dtype=np.float64)
        self.suggested: float | None = reading.suggested
        self.no_suggestion: str | None = reading.why_none
        self.floor_at: float | None = reading.floor_at  # where the valley's floor begins
        self.fall, self.noise = reading.fall, reading.noise
        self.diverged_at: float | None = diverged_at
        self.collapsed = bool(collapsed)
        self.guessing: float | None = guessing

    @property
    def retry(self) -> dict | None:
        """The arguments the reason advises changing: a start 1000 times lower, or a stop 1000
        times higher."""
        if self.no_suggestion == DIVERGED_AT_START:
            return {"start": float(f"{self.rates[0] / 1000:.0e}")}
        if self.no_suggestion == STILL_FALLING:
            return {"stop": float(f"{self.rates[-1] * 1000:.0e}")}
        return None

    @property
    def reason(self) -> str:
        """Why this rate, or why none, and where training broke down."""
        retry, last = self.retry or {}, float(self.rates[-1])
        suggestion = say(
            SAID[self.no_suggestion],
            floor=self.floor_at,
            suggested=self.suggested,
            fall=self.fall,
            noise=self.noise,
            lower=retry.get("start"),
            higher=retry.get("stop"),
            start=float(self.rates[0]),
            last=last,
        )
        broke = "collapsed" if self.collapsed else self.diverged_at is not None
        breakdown = say(SAID[broke], rate=self.diverged_at, guessing=self.guessing, last=last)
        return say("{suggestion} {breakdown}", suggestion=suggestion, breakdown=breakdown)

    def figure(self) -> Figure:
        """The loss against the rate (log axis), raw and smoothed, the two rates marked."""
        figure, font = agg_figure(FIGSIZE)
        ax = figure.subplots()
        rates, losses, smoothed = self.rates, self.losses, self.smoothed
        ax.plot(rates, losses, lw=0.8, color="tab:blue", alpha=0.35, label=say_drawn("loss"))
        ax.plot(rates, smoothed, lw=1.6, color="tab:blue", label=say_drawn("smoothed loss"))
        if self.suggested is not None:
            label = say_drawn("suggested lr {rate:.3g}", rate=self.suggested)
            ax.axvline(self.suggested, color="tab:green", ls="--", label=label)
        if self.diverged_at is not None:
            rate = self.diverged_at
            label = say_drawn("collapsed at lr {rate:.3g}", rate=rate)
            if not self.collapsed:
                label = say_drawn("diverged at lr {rate:.3g}", rate=rate)
            ax.axvline(rate, color="tab:red", ls=":", label=label)
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
        # below the axes, where it covers no curve (#28); the layout makes room for it
        figure.set_layout_engine("constrained")
        figure.legend(
            loc="outside lower center", ncol=2, frameon=False, prop={**font, "size": "small"}
        )
        return figure

    def plot(self, path: str | None = None, backend: str | None = None) -> str | None:
        """Show the figure where the code runs, or save it at ``path``, printing its path."""
        figure = self.figure()
        if path is None:
            return show_figure(figure, "lr-find", backend)
        saved_png(figure_png(figure), path, "lr-find")
        print(say("Learning-rate plot saved to {path}", path=path), flush=True)
        return path

    def __repr__(self) -> str:
        rates = ("None" if r is None else f"{r:.3g}" for r in (self.suggested, self.diverged_at))
        suggested, diverged = rates
        return (
            f"RateFinding(suggested={suggested}, diverged_at={diverged}, "
            f"collapsed={self.collapsed}, batches={len(self.rates)})"
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
