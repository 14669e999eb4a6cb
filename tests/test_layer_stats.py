"""LayerStats: per layer and epoch, the gradient norm, weight norm and update ratio equal NumPy's
on the same arrays read by hand; one or two devices; the first non-finite layer named."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.experiments.layer_stats import (
    LayerStats,
    NoSuchLayer,
    NoSuchStatistic,
    NotABatchCount,
    NothingRecorded,
    layer_of,
)

QUIET = logging.getLogger("quiet-layers")
QUIET.setLevel(logging.WARNING)


class ByHand(mxlearn.Callback):
    """Reads every gradient and weight with NumPy after each batch (the slow, obvious way)."""

    def __init__(self):
        self.before, self.grads, self.ratios, self.weights = None, {}, {}, {}

    def on_batch_end(self, run, batch):
        group = run.module.executor_group
        names = group.param_names
        now = {n: w[0].asnumpy().copy() for n, w in zip(names, group.param_arrays)}
        if self.before is not None:
            for layer in {layer_of(n) for n in names}:
                mine = [i for i, n in enumerate(names) if layer_of(n) == layer]
                grad = sum(
                    (sum(d.asnumpy() for d in group.grad_arrays[i]) ** 2).sum() for i in mine
                )
                step = sum(((now[names[i]] - self.before[names[i]]) ** 2).sum() for i in mine)
                size = sum((self.before[names[i]] ** 2).sum() for i in mine)
                self.grads.setdefault((run.epoch, layer), []).append(np.sqrt(grad))
                self.ratios.setdefault((run.epoch, layer), []).append(np.sqrt(step / size))
        self.before = now

    def on_epoch_end(self, run, epoch):
        group = run.module.executor_group
        for layer in {layer_of(n) for n in group.param_names}:
            arrays = [
                w[0].asnumpy()
                for n, w in zip(group.param_names, group.param_arrays)
                if layer_of(n) == layer
            ]
            self.weights[(epoch, layer)] = np.sqrt(sum((a**2).sum() for a in arrays))


def _fit(context, callbacks, rate=0.1, epochs=2):
    mxlearn.seed(0)
    X, y = mxlearn.datasets.synthetic_classification(num_samples=256)
    it = mx.io.NDArrayIter(X, y, batch_size=32, shuffle=True)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4), context=context, logger=QUIET)
    mod.fit(it, num_epoch=epochs, optimizer_params={"learning_rate": rate}, callbacks=callbacks)
    return mod


@pytest.mark.parametrize("context", [mx.cpu(), [mx.cpu(0), mx.cpu(1)]], ids=["one", "two"])
def test_the_statistics_equal_numpys_on_the_arrays_read_by_hand(context):
    stats, hand = LayerStats(every=1), ByHand()
    _fit(context, [stats, hand])
    assert [r["layer"] for r in stats.rows] == ["fc1", "fc2"] * 2
    for row in stats.rows:
        key = (row["epoch"], row["layer"])
        assert row["batches"] == len(hand.grads[key])
        assert row["grad_norm"] == pytest.approx(np.mean(hand.grads[key]), rel=1e-5)
        assert row["update_ratio"] == pytest.approx(np.mean(hand.ratios[key]), rel=1e-4)
        assert row["weight_norm"] == pytest.approx(hand.weights[key], rel=1e-6)


def test_every_n_batches_samples_fewer_batches():
    stats = LayerStats(every=3)
    _fit(mx.cpu(), [stats], epochs=1)
    assert stats.rows[0]["batches"] == 2  # of 8 batches: 3 and 6 (each after a kept "before")
    table = stats.to_pandas()
    assert list(table.columns[:5]) == ["epoch", "layer", "grad_norm", "weight_norm", "update_ratio"]


def test_an_epoch_shorter_than_every_has_rows_without_samples():
    stats = LayerStats(every=100)  # 8 batches an epoch: none sampled
    _fit(mx.cpu(), [stats], epochs=2)
    assert [r["batches"] for r in stats.rows] == [0, 0, 0, 0]
    assert all(np.isnan(r["grad_norm"]) and r["weight_norm"] > 0 for r in stats.rows)


def test_the_figure_has_one_line_per_layer_in_each_statistic():
    stats = LayerStats(every=1)
    _fit(mx.cpu(), [stats])
    fig = stats.figure()
    assert [len(ax.lines) for ax in fig.axes[:3]] == [2, 2, 2]
    assert list(fig.axes[1].lines[0].get_ydata()) == stats.series("fc1", "weight_norm")[1]


def test_the_first_non_finite_layer_is_named(capsys):
    stats = LayerStats(every=1)
    with pytest.raises(mxlearn.MXLearnError):
        _fit(mx.cpu(), [stats], rate=1e30, epochs=3)
    assert stats.non_finite is not None and stats.non_finite.layer in ("fc1", "fc2")
    assert f"layer '{stats.non_finite.layer}'" in capsys.readouterr().out


@pytest.mark.parametrize("every", [0, -1, 1.5, True])
def test_every_must_be_a_positive_number_of_batches(every):
    with pytest.raises(NotABatchCount) as refused:
        LayerStats(every=every)
    assert refused.value.fields["every"] is every


def test_frozen_parameters_have_a_zero_gradient_and_training_goes_on():
    stats = LayerStats(every=1)
    mxlearn.seed(0)
    X, y = mxlearn.datasets.synthetic_classification(num_samples=256)
    it = mx.io.NDArrayIter(X, y, batch_size=32)
    mod = mxlearn.Module(
        mxlearn.models.mlp(num_classes=4),
        fixed_param_names=["fc1_weight", "fc1_bias"],
        logger=QUIET,
    )
    mod.fit(it, num_epoch=1, callbacks=[stats])
    first, last = stats.rows
    assert first["grad_norm"] == 0 and first["update_ratio"] == 0 and last["grad_norm"] > 0


def test_a_second_fit_starts_over_and_questions_before_any_fit_are_answered():
    stats = LayerStats(every=1)
    with pytest.raises(NothingRecorded):
        stats.figure()
    _fit(mx.cpu(), [stats], epochs=2)
    _fit(mx.cpu(), [stats], epochs=1)
    assert [r["epoch"] for r in stats.rows] == [0, 0]
    with pytest.raises(NoSuchStatistic) as refused:
        stats.series("fc1", "gradnorm")
    assert refused.value.fields["column"] == "gradnorm"
    with pytest.raises(NoSuchLayer) as refused:
        stats.series("fc9", "grad_norm")
    assert refused.value.fields["layer"] == "fc9"


@pytest.mark.parametrize("shuffle", [False, True], ids=["shape by shape", "shapes mixed"])
def test_a_mutable_module_whose_shape_changes_is_read_like_any_module(shuffle):
    """Each batch shape has its own executors (sharing the parameters' memory): the statistics
    follow the parameters across them, as read by hand."""
    from mxlearn.shaped_data import ShapeVaryingIter, striped_images

    mxlearn.seed(0)
    train = ShapeVaryingIter(striped_images(per_size=32), 16, shuffle=shuffle)
    stats, hand = LayerStats(every=1), ByHand()
    mod = mxlearn.MutableModule(mxlearn.models.conv_net(), logger=QUIET)
    mod.fit(train, num_epoch=2, optimizer_params={"learning_rate": 0.05}, callbacks=[stats, hand])
    assert stats.rows and all(r["batches"] > 0 for r in stats.rows)
    for row in stats.rows:
        key = (row["epoch"], row["layer"])
        assert row["batches"] == len(hand.grads[key])
        assert row["grad_norm"] == pytest.approx(np.mean(hand.grads[key]), rel=1e-4)
        assert row["update_ratio"] == pytest.approx(np.mean(hand.ratios[key]), rel=1e-4)
        assert row["weight_norm"] == pytest.approx(hand.weights[key], rel=1e-6)
