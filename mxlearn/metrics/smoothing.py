"""An exponential moving average corrected for its start at 0 (TensorBoard's smoothing, fast.ai's
smoothed loss): the live figure's batch curve and lr_find's loss. A NaN is the caller's to
handle: the figure leaves it out, lr_find keeps it in (a NaN loss is an explosion)."""

from __future__ import annotations


class SmoothedAverage:
    """Divided by (1 - weight**n) so that the first values are not pulled towards the 0 it
    starts from; ``weight`` 0 gives each value back as it is."""

    def __init__(self, weight: float) -> None:
        self.weight, self.average, self.count = weight, 0.0, 0

    def add(self, value: float) -> float:
        self.count += 1
        self.average = self.weight * self.average + (1 - self.weight) * value
        return self.average / (1 - self.weight**self.count)


def weight_for_lag(lag: float) -> float:
    """The weight whose average trails the values by ``lag`` values: an average of values
    k steps old, each weighted (1 - w) w**k, is on average w / (1 - w) steps old."""
    return lag / (1 + lag)
