"""Metrics over the real rows of a batch, without the padding that fills the last one: MXNet's
``update_metric`` counts it (0.609 instead of 0.630 on 100 samples in batches of 32)."""

from __future__ import annotations

from collections import OrderedDict

from .deferred import DeferredMetric


def update_without_padding(eval_metric, labels, executor_group, padding: int) -> None:
    """MXNet's per-device metric update, leaving out the ``padding`` rows at the batch's end."""
    group = executor_group
    real = group.batch_size - padding
    if isinstance(eval_metric, DeferredMetric):  # it counts the batch's samples
        eval_metric.begin_batch(real)
    for texec, rows in zip(group.execs, group.slices):
        stop = min(rows.stop, real)
        if stop <= rows.start:
            continue  # this device holds only padding
        labels_ = OrderedDict(
            (name, label[rows.start : stop]) for name, label in zip(group.label_names, labels)
        )
        preds = OrderedDict(
            (name, out[: stop - rows.start]) for name, out in zip(group.output_names, texec.outputs)
        )
        eval_metric.update_dict(labels_, preds)
