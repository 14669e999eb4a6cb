"""When to draw: by wall-clock time, so that drawing stays within a share of training time."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from .. import rules
from ..errors import N_, InputError


class NotABudget(InputError):
    says = N_(
        "LivePlot(budget={budget!r}): budget is the share of training time the plot "
        "may take, a number in (0, 1]."
    )
    fix_code = "LivePlot(budget=0.03)"


class Throttle:
    """Allows a draw when the drawing time since the first question, plus one more draw, fits
    in ``budget``, at least ``min_interval`` apart. Draws the caller makes anyway (epoch ends)
    are paid from the same account, so short epochs leave no extra draws between them.

    Examples
    --------
    >>> now = [0.0]
    >>> t = Throttle(budget=0.02, min_interval=0.1, clock=lambda: now[0])
    >>> t.due()   # the account opens; the first draw waits min_interval for some data
    False
    >>> now[0] = 0.1; t.due()
    True
    >>> t.drew(cost=0.01)   # 10 ms spent: 2% of the time allows the next at 1.0 s
    >>> now[0] = 0.5; t.due()
    False
    >>> now[0] = 1.0; t.due()
    True
    """

    def __init__(
        self,
        budget: float = 0.03,
        min_interval: float = 0.25,
        clock: Callable[[], float] = time.perf_counter,
    ):
        if rules.number("", above=0, maximum=1).test(budget) is not None:
            raise NotABudget(budget=budget)
        self.budget = budget
        self.min_interval = min_interval
        self.clock = clock
        self.restart()

    def restart(self) -> None:  # a new account: a new training run
        self._start: float | None = None
        self._last_end: float | None = None
        self._last_cost = 0.0
        self.spent = 0.0  # seconds spent drawing since the account opened
        self.draws = 0

    def due(self) -> bool:
        now = self.clock()
        if self._start is None:
            self._start = now
        return now >= self.quiet_until()

    def quiet_until(self) -> float:
        """The clock time before which ``due()`` is False: a caller can skip asking until then."""
        if self._start is None:
            return -math.inf
        if self._last_end is None:  # the first draw: nothing spent yet
            return self._start + self.min_interval
        budget_allows = self._start + (self.spent + self._last_cost) / self.budget
        return max(self._last_end + self.min_interval, budget_allows)

    def drew(self, cost: float) -> None:
        """Record a draw that took ``cost`` seconds and just ended."""
        now = self.clock()
        if self._start is None:
            self._start = now - cost
        self._last_end = now
        self._last_cost = cost
        self.spent += cost
        self.draws += 1
