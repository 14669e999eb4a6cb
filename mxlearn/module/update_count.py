"""The updates a module made since its weights were last made or given, by a loop by hand and
by fit, and where those weights came from: what ``checks.trained_by_hand`` reads."""

from __future__ import annotations

from dataclasses import dataclass

from ..states import WeightsFrom


@dataclass
class UpdateCount:
    by_hand: int = 0
    by_fit: int = 0
    started_from: WeightsFrom | None = None

    def restart(self, weights_from: WeightsFrom | None) -> None:
        self.by_hand, self.by_fit, self.started_from = 0, 0, weights_from

    def count(self, in_fit: bool) -> None:  # per batch: one attribute increment
        if in_fit:
            self.by_fit += 1
        else:
            self.by_hand += 1
