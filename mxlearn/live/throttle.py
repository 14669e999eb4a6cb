"""When to draw: by wall-clock time, so that drawing stays within a share of training time."""

from __future__ import annotations

import time
from collections.abc import Callable


class Throttle:
    """Allows a draw once the time since the last one pays for it within ``budget``.

    After a draw that took ``cost`` seconds, the next optional draw waits at least
    ``max(min_interval, cost / budget)``: with budget 0.03 a 15 ms draw happens at most every
    0.5 s. Forced draws (epoch ends, the end of training) are counted the same way. The clock is
    injectable, so tests need no sleeps.

    Examples
    --------
    >>> now = [0.0]
    >>> t = Throttle(budget=0.02, min_interval=0.1, clock=lambda: now[0])
    >>> t.due()
    True
    >>> t.drew(cost=0.01)   # 10 ms: the next draw waits 0.5 s
    >>> now[0] = 0.4; t.due()
    False
    >>> now[0] = 0.5; t.due()
    True
    """

    def __init__(
        self,
        budget: float = 0.03,
        min_interval: float = 0.25,
        clock: Callable[[], float] = time.perf_counter,
    ):
        if not 0 < budget <= 1:
            raise ValueError(f"budget is a share of training time, in (0, 1]; got {budget}")
        self.budget = budget
        self.min_interval = min_interval
        self.clock = clock
        self._last_end: float | None = None
        self._wait = 0.0
        self.spent = 0.0  # seconds spent drawing, in total
        self.draws = 0

    def due(self) -> bool:
        return self._last_end is None or self.clock() - self._last_end >= self._wait

    def drew(self, cost: float) -> None:
        """Record a draw that took ``cost`` seconds and just ended."""
        self._last_end = self.clock()
        self._wait = max(self.min_interval, cost / self.budget)
        self.spent += cost
        self.draws += 1
