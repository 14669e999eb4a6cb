"""Which learning rate to suggest after a run diverged: measured, not divided by ten (the letter
MLP diverges at lr=100 and collapses to one class at 10, 1 and 0.5). On that failure path only,
within a time budget, fresh copies of the network (the run's initializer, optimizer and batches)
train at smaller rates; the one whose loss fell lowest is suggested. The module is untouched.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .._compat import mx
from ..guards import data_values
from ..language import say

PROBE_BATCHES = 100
WINDOW = 10  # the loss is compared over the first and the last 10 batches
PROBE_SECONDS = 20.0  # a large network gets fewer candidates rather than a long wait
# Rates tried: 10, 100 and 1000 times smaller than the one that failed, and the usual rates
# below it (so that a rate of 1e30 still leads to one that learns).
FACTORS = (10, 100, 1_000)
USUAL_RATES = (1.0, 0.1, 0.01, 0.001)


def candidates(rate: float) -> list[float]:
    """The rates a probe tries after ``rate`` failed, largest first."""
    tried = {rate / f for f in FACTORS} | {r for r in USUAL_RATES if r < rate}
    return sorted(tried, reverse=True)


@dataclass
class ProbeResult:
    rate: float | None  # the suggestion, or None when no rate lowered the loss
    losses: dict  # rate -> (loss over the first 10 batches, over the last 10)
    batches: int

    def text(self) -> str:
        tried = ", ".join(
            f"{rate:g}: {first:.3g} -> {last:.3g}" for rate, (first, last) in self.losses.items()
        )
        if self.rate is None:
            return say(
                "A probe of {batches} batches from fresh weights lowered the loss at none of the "
                "smaller rates ({tried}): the rate is not the only cause; check the data and the "
                "network.",
                batches=self.batches,
                tried=tried,
            )
        return say(
            "A probe of {batches} batches from fresh weights at smaller rates (loss over the "
            "first and last 10 batches: {tried}) found the loss falling most at learning_rate "
            "{rate:g}.",
            batches=self.batches,
            tried=tried,
            rate=self.rate,
        )


def _batches(train_data, may_reset: bool) -> list | None:
    """Up to PROBE_BATCHES batches: from a new iterator over an in-memory iterator's arrays
    (the run's own is left where it is), else from the run's own after a reset, if the run is
    over (``may_reset``)."""
    arrays = data_values.source_arrays(train_data)
    if arrays is not None:
        data, labels = arrays
        source = mx.io.NDArrayIter(dict(data), dict(labels), train_data.batch_size)
    elif may_reset:
        source = train_data
        source.reset()
    else:
        return None
    taken = []
    for batch in source:
        taken.append(batch)
        if len(taken) == PROBE_BATCHES:
            break
    return taken


def _trial(module, shapes, batches, optimizer: str, params: dict, initializer, measure, until):
    """(loss over the first 10 batches, over the last 10), or None past the ``until`` time."""
    trial = mx.mod.Module(
        module.symbol,
        data_names=module.data_names,
        label_names=module.label_names,
        context=module.contexts,
        logger=module.logger,
    )
    trial.bind(*shapes)
    trial.init_params(initializer)
    trial.init_optimizer(optimizer=optimizer, optimizer_params=params)
    losses = []
    for batch in batches:
        if time.perf_counter() > until:
            return None  # a large network: fewer candidates rather than a long wait
        trial.forward_backward(batch)
        trial.update()
        losses.append(measure(trial, batch))
    return float(np.mean(losses[:WINDOW])), float(np.mean(losses[-WINDOW:]))


def probe(
    module, train_data, rate: float, initializer, measure, guessing=None, may_reset=True
) -> ProbeResult | None:
    """Try rates smaller than ``rate``; ``measure(trial_module, batch)`` is a batch's loss and
    ``guessing`` a classifier's loss when it guesses (a rate must end below it to count).
    None when it cannot judge: an optimizer object (its class and settings cannot be made
    again here), fewer than 2 x 10 batches, or the run's iterator cannot be read again while it
    trains (``may_reset`` False). The probe only advises: a failure inside it gives None."""
    settings = module.optimizer_settings
    if settings is None:
        return None
    try:
        batches = [b for b in _batches(train_data, may_reset) or [] if b.label and not b.pad]
        if len(batches) < 2 * WINDOW:  # the first and the last 10 batches must differ
            return None
        shapes = (train_data.provide_data, train_data.provide_label)
        until = time.perf_counter() + PROBE_SECONDS
        losses = {}
        for candidate in candidates(rate):
            params = {**settings["params"], "learning_rate": candidate}
            params.pop("lr_scheduler", None)
            with np.errstate(all="ignore"):
                found = _trial(
                    module,
                    shapes,
                    batches,
                    settings["optimizer"],
                    params,
                    initializer,
                    measure,
                    until,
                )
            if found is None:
                break
            losses[candidate] = found
    except Exception:  # noqa: BLE001 - advice must never replace the error it explains
        return None
    ceiling = guessing if guessing is not None else math.inf
    learned = {
        r: last
        for r, (first, last) in losses.items()
        # fell beyond noise, and (a classifier) ended better than guessing
        if math.isfinite(last) and last < first * 0.999 and last < 0.98 * ceiling
    }
    best = min(learned, key=learned.get) if learned else None
    return ProbeResult(best, losses, len(batches))
