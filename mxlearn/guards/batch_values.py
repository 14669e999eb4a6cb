"""Per-batch value checks for iterators whose rows mxlearn cannot see in memory.

Each batch queues small device-side reductions (no wait): per data input its norm, which is
NaN or infinite as soon as one value is NaN, infinite or past 1.8e19; per classifier label its
values sorted (its smallest and largest, in one call). (Fractional labels are checked on the first batch of each pass,
as for every iterator: their coding rarely changes within a data set.) They are
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
        """Queue the reductions of one batch (``label_names`` in the batch's label order):
        one MXNet call per data input and per classifier label."""
        reductions = [mx.nd.norm(array) for array in batch.data]
        checked = []
        for name, label in zip(label_names, batch.label or []):
            rule = self.rules.get(name)
            if rule is not None:
                checked.append(rule)
                if rule.ignore_label is not None:  # ignored rows count as class 0
                    label = mx.nd.where(label == rule.ignore_label, mx.nd.zeros_like(label), label)
                if label.ndim != 1:
                    label = label.reshape((-1,))  # a view: no device work
                reductions.append(mx.nd.sort(label))  # min and max in one call
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
            found = []
            for reduction in reductions:
                size = reduction.shape[0]
                found.append(values[position : position + size])
                position += size
            self._judge(where, found, rules)

    def read_at_end(self, _param=None) -> None:
        """As score's first score_end_callback: the checks are read before the score is used."""
        self.read()

    def _judge(self, where: str, found: list[np.ndarray], rules: list[LabelRule]) -> None:
        for name, norm in zip(self.data_names, found):
            if not math.isfinite(norm[0]):
                raise InputError(
                    f"The {self.what} data '{name}' of {where} holds NaN, infinite or absurdly "
                    "large values (past 1.8e19): they turn the results (and, in training, every "
                    "weight) into NaN. mxlearn checks every batch of an iterator it cannot "
                    "read in memory when it next reads the device.",
                    fix="clean the data where the iterator reads it, e.g. keep the finite rows: "
                    "ok = np.isfinite(X).all(axis=1); X, y = X[ok], y[ok]",
                )
        labels = found[len(self.data_names) :]
        for rule, ordered in zip(rules, labels):
            if not ordered.size:
                continue
            low, high = ordered[0], ordered[-1]
            if low < 0 or high >= rule.classes:
                raise InputError(
                    f"The {self.what} labels '{rule.name}' of {where} lie outside the classes "
                    f"0..{rule.classes - 1} of {rule.describe}: they range from {low:g} to "
                    f"{high:g} (MXNet would not complain, and every number it gave would be "
                    "wrong).",
                    fix="labels must be whole class numbers from 0 (e.g. y = y - 1 if they "
                    "start at 1), or widen the last layer to the number of classes",
                )
