"""Per-batch value checks for iterators whose rows mxlearn cannot see in memory.

Each batch queues device-side reductions (no wait): a norm per data input and regression target
(NaN or infinite as soon as one value is bad), each classifier label sorted (NaN, min and max in
one call). They are read where a read happens anyway (the watchdog's schedule, score's end).
"""

from __future__ import annotations

import math

import numpy as np

from .._compat import mx
from ..errors import N_
from .data_values import LabelRule, LabelsOutsideClasses, NonFiniteData, what_words


class NonFiniteBatch(NonFiniteData):
    says = N_(
        "The {what} data '{name}' of batch {batch} holds NaN, infinite or absurdly large values "
        "(past 1.8e19): they turn the results (and, in training, every weight) into NaN. mxlearn "
        "checks every batch of an iterator it cannot read in memory when it next reads the device."
    )
    fix_says = N_(
        "clean the data where the iterator reads it, e.g. keep the finite rows: ok = "
        "np.isfinite(X).all(axis=1) & np.isfinite(y); X, y = X[ok], y[ok]"
    )


class NonFiniteBatchLabels(NonFiniteBatch):
    says = N_(
        "The {what} labels '{name}' of batch {batch} hold NaN, infinite or absurdly large values "
        "(past 1.8e19): they turn the results (and, in training, every weight) into NaN. mxlearn "
        "checks every batch of an iterator it cannot read in memory when it next reads the device."
    )


class BatchLabelsOutsideClasses(LabelsOutsideClasses):
    says = N_(
        "The {what} labels '{name}' of batch {batch} lie outside the classes 0..{last} of {layer}: "
        "they range from {low} to {high} (MXNet would not complain, and every number it gave would "
        "be wrong)."
    )
    fix_says = N_(
        "labels must be whole class numbers from 0 (e.g. y = y - 1 if they start at 1), or widen "
        "the last layer to the number of classes"
    )


def _float32(array):  # a float16 norm overflows, and concat needs one dtype
    return array if array.dtype == np.float32 else array.astype("float32")


class QueuedValueChecks:
    def __init__(self, what: str, data_names: list[str], rules: dict[str, LabelRule]) -> None:
        self.what = what
        self.data_names = list(data_names)
        self.rules = rules
        # per batch: (its number in the pass, reductions, what each reduction checks: a data
        # name, a LabelRule or a label name without a rule)
        self.pending: list[tuple[int, list, list]] = []
        self.batches = 0

    def queue(self, batch, label_names: list[str]) -> None:
        """Queue one batch's reductions (``label_names`` in the batch's label order)."""
        reductions = [mx.nd.norm(_float32(array)) for array in batch.data]
        subjects: list = list(self.data_names)
        for name, label in zip(label_names, batch.label or []):
            rule = self.rules.get(name)
            if rule is None:  # a regression target: finite and not absurd, like the data
                reductions.append(mx.nd.norm(_float32(label)))
                subjects.append(name)
                continue
            if rule.ignore_label is not None:  # ignored rows count as class 0
                label = mx.nd.where(label == rule.ignore_label, mx.nd.zeros_like(label), label)
            if label.ndim != 1:
                label = label.reshape((-1,))  # a view: no device work
            reductions.append(_float32(mx.nd.sort(label)))  # min, max and any NaN in one call
            subjects.append(rule)
        self.pending.append((self.batches, reductions, subjects))
        self.batches += 1

    def start_pass(self) -> None:
        self.batches = 0

    def read(self) -> None:
        if not self.pending:
            return
        pending, self.pending = self.pending, []
        values = mx.nd.concat(*[r for _, rs, _ in pending for r in rs], dim=0).asnumpy()
        position = 0
        for batch, reductions, subjects in pending:
            for reduction, subject in zip(reductions, subjects):
                size = reduction.shape[0]
                found = values[position : position + size]
                position += size
                if isinstance(subject, LabelRule):
                    self._judge_classes(batch, subject, found)
                elif not math.isfinite(found[0]):
                    self._refuse_values(batch, subject)

    def _refuse_values(self, batch: int, name: str) -> None:
        refused = NonFiniteBatch if name in self.data_names else NonFiniteBatchLabels
        raise refused(what=what_words(self.what), name=name, batch=batch)

    def _judge_classes(self, batch: int, rule: LabelRule, ordered: np.ndarray) -> None:
        if not ordered.size:
            return
        if not np.isfinite(ordered).all():
            self._refuse_values(batch, rule.name)
        low, high = ordered[0], ordered[-1]
        if low < 0 or high >= rule.classes:
            facts = dict(
                what=what_words(self.what), name=rule.name, batch=batch, layer=rule.describe
            )
            raise BatchLabelsOutsideClasses(
                last=rule.classes - 1, low=f"{low:g}", high=f"{high:g}", **facts
            )
