"""Per-batch value checks for iterators whose rows mxlearn cannot see in memory.

Each batch queues small device-side reductions (no wait): per data input its norm, which is
NaN or infinite as soon as one value is NaN, infinite or past 1.8e19; per classifier label its
largest distance from the middle of the classes and its count of fractional values. They are
read together later, where a read happens anyway (the watchdog's schedule in fit, the end of
score), and a bad batch is named then, before any loss or score built on it is believed.
"""

from __future__ import annotations

import math

import numpy as np

from .._compat import mx
from ..errors import InputError
from .data_values import LabelRule


class QueuedValueChecks:
    def __init__(self, what: str, data_names: list[str], rules: dict[str, LabelRule]) -> None:
        self.what = what
        self.data_names = list(data_names)
        self.rules = rules
        self.pending: list[tuple[str, list, list]] = []  # (where, reductions, rules) per batch
        self.batches = 0

    def queue(self, batch, label_names: list[str]) -> None:
        """Queue the reductions of one batch (``label_names`` in the batch's label order)."""
        reductions = [mx.nd.norm(array).reshape((1,)) for array in batch.data]
        checked = []
        for name, label in zip(label_names, batch.label or []):
            rule = self.rules.get(name)
            if rule is not None:
                checked.append(rule)
                middle = (rule.classes - 1) / 2
                # ignored rows count as class 0: a valid class number
                if rule.ignore_label is not None:
                    label = mx.nd.where(label == rule.ignore_label, mx.nd.zeros_like(label), label)
                reductions.append(mx.nd.max(mx.nd.abs(label - middle)).reshape((1,)))
                reductions.append(mx.nd.sum(label != mx.nd.round(label)).reshape((1,)))
        self.pending.append((f"batch {self.batches}", reductions, checked))
        self.batches += 1

    def start_pass(self) -> None:
        """A new epoch or scoring pass: batches are counted from 0 again."""
        self.batches = 0

    def read(self) -> None:
        """Read every queued reduction at once; refuse the first bad batch."""
        if not self.pending:
            return
        pending, self.pending = self.pending, []
        values = mx.nd.concat(*[r for _, rs, _ in pending for r in rs], dim=0).asnumpy()
        position = 0
        for where, reductions, rules in pending:
            found = values[position : position + len(reductions)]
            position += len(reductions)
            self._judge(where, found, rules)

    def read_at_end(self, _param=None) -> None:
        """As score's first score_end_callback: the checks are read before the score is used."""
        self.read()

    def _judge(self, where: str, found: np.ndarray, rules: list[LabelRule]) -> None:
        for name, norm in zip(self.data_names, found):
            if not math.isfinite(norm):
                raise InputError(
                    f"The {self.what} data '{name}' of {where} holds NaN, infinite or absurdly "
                    "large values (past 1.8e19): they turn the results (and, in training, every "
                    "weight) into NaN. mxlearn checks every batch of an iterator it cannot "
                    "read in memory when it next reads the device.",
                    fix="clean the data where the iterator reads it, e.g. keep the finite rows: "
                    "ok = np.isfinite(X).all(axis=1); X, y = X[ok], y[ok]",
                )
        labels = found[len(self.data_names) :]
        for index, rule in enumerate(rules):
            distance, fractional = labels[2 * index], labels[2 * index + 1]
            if fractional or distance > (rule.classes - 1) / 2:
                raise InputError(
                    f"The {self.what} labels '{rule.name}' of {where} are not all class numbers "
                    f"0..{rule.classes - 1} of {rule.describe} (MXNet would train on them "
                    "without a word, and every number it gave would be wrong).",
                    fix="labels must be whole class numbers from 0 (e.g. y = y - 1 if they "
                    "start at 1), or widen the last layer to the number of classes",
                )
