"""What an early stop would put back on a run's curve (a :class:`.diagnosis.Curve`):
EarlyStopping's own rule over the recorded values, so that ``diagnose`` advises a stop only
when it makes the run better by the metric the run is judged by (#26)."""

from __future__ import annotations

from .directions import improves

FIRST_PATIENCE = 3  # EarlyStopping's default: the patience tried first


def early_stop(curve, patience: int) -> tuple[int, float] | None:
    """(best epoch, its value) that EarlyStopping(curve.metric, patience) puts back (any gain
    counts, min_delta 0); None: it would not stop, and the run keeps its last weights."""
    best = best_epoch = None
    waited = 0
    for epoch, value in zip(curve.epochs, curve.values):
        if improves(curve.higher_is_better, value, best):
            best, best_epoch, waited = value, epoch, 0
            continue
        waited += 1
        if waited >= patience:
            return best_epoch, best
    return None


def restoring_stop(curve) -> dict | None:
    """The smallest patience from 3 whose stop puts back weights better than the last by more
    than noise, or None (#26: the loss's best epoch was advised, with a worse accuracy).
    tests/test_diagnosis.py trains a seeded run again and follows this advice."""
    if curve is None:
        return None
    latest = curve.values[-1]
    for patience in range(FIRST_PATIENCE, len(curve.values)):
        stop = early_stop(curve, patience)
        if stop is None:
            return None  # a larger patience would not stop either
        epoch, value = stop
        if curve.gain(value, latest) > curve.noise(latest):
            return dict(patience=patience, epoch=epoch, value=value, latest=latest)
    return None
