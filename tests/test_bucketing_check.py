"""checks.buckets_bound passes MXNet's BucketingModule trained by fit on every size, its default
bucket the largest, and fails what only looks like one: a module trained on one size and then
shown the others, a default bucket bound at a small shape, buckets set by hand, another network.
"""

from __future__ import annotations

import pytest

import mxlearn
from mxlearn import checks, mx
from mxlearn.errors import CheckFailed
from mxlearn.rules import WrongKind
from mxlearn.shaped_data import ShapeVaryingIter, striped_images
from mxlearn.work_checks import (
    BucketNotMXNets,
    BucketsMissing,
    BucketsUndertrained,
    DefaultBucketNotLargest,
    NotABucketingModule,
    OtherNetwork,
)

SIZES = (8, 12)


@pytest.fixture
def data():
    return ShapeVaryingIter(striped_images(sizes=SIZES, per_size=16), batch_size=8, shuffle=True)


def _net(channels=4):
    return mxlearn.models.conv_net(num_classes=3, channels=channels)


def _bucketing(default_bucket_key, channels=4):
    net = _net(channels)
    return mx.mod.BucketingModule(
        lambda key: (net, ("data",), ("softmax_label",)),
        default_bucket_key=default_bucket_key,
        context=mx.cpu(),
    )


def _fit(bmod, data, epochs=2):
    data.reset()
    bmod.fit(data, num_epoch=epochs, optimizer_params={"learning_rate": 0.1})
    return bmod


def test_a_bucketing_module_fit_on_every_size_passes(data, capsys):
    mxlearn.seed(0)
    bmod = _fit(_bucketing(data.default_bucket_key), data)
    checks.buckets_bound(bmod, data, _net(), epochs=2)
    assert capsys.readouterr().out.startswith("OK")
    # bound by hand first at the iterator's shapes, as MXNet's own examples do
    bound = _bucketing(data.default_bucket_key)
    bound.bind(data.provide_data, data.provide_label)
    checks.buckets_bound(_fit(bound, data), data, _net(), epochs=2)


class OneSize(mx.io.DataIter):
    """``data``'s batches of its largest key only."""

    def __init__(self, data):
        super().__init__(data.batch_size)
        self.data, self.provide_data, self.provide_label = (
            data,
            data.provide_data,
            data.provide_label,
        )

    def reset(self):
        self.data.reset()

    def next(self):
        batch = self.data.next()
        while batch.bucket_key != self.data.default_bucket_key:
            batch = self.data.next()
        return batch


def test_a_module_trained_on_one_size_then_shown_the_others_fails(data):
    bmod = _fit(_bucketing(data.default_bucket_key), OneSize(data))
    data.reset()
    for batch in data:  # every bucket made, none trained
        bmod.forward(batch, is_train=False)
    with pytest.raises(BucketsUndertrained) as refused:
        checks.buckets_bound(bmod, data, _net(), epochs=2)
    assert refused.value.fields["updates"] == 4 and refused.value.fields["batches"] == 4


def test_a_default_bucket_bound_small_passes_once_fit_reshaped_it(data, capsys):
    # MXNet's Module.forward reshapes a module to a batch of another shape: the first batch of
    # the largest key rebinds the default bucket at that shape, as if bound there
    bmod = _bucketing(data.default_bucket_key)
    bmod.bind([mx.io.DataDesc("data", (8, 1, 8, 8))], data.provide_label)
    checks.buckets_bound(_fit(bmod, data), data, _net(), epochs=2)
    assert bmod._buckets[data.default_bucket_key].data_shapes[0].shape == (8, 1, 12, 12)


def test_buckets_set_by_hand_fail(data):
    bmod = _fit(_bucketing(data.default_bucket_key), OneSize(data))
    default = bmod._buckets[data.default_bucket_key]
    bmod._buckets[(8, 8)] = default  # the key is there, but its module is the 12x12 one
    with pytest.raises(BucketNotMXNets):
        checks.buckets_bound(bmod, data, _net(), epochs=2)


def test_the_smallest_as_default_and_no_buckets_fail(data):
    with pytest.raises(DefaultBucketNotLargest):
        checks.buckets_bound(_fit(_bucketing((8, 8)), data), data, _net(), epochs=2)
    with pytest.raises(BucketsMissing):
        checks.buckets_bound(_bucketing(data.default_bucket_key), data, _net(), epochs=2)


def test_another_network_fails(data):
    bmod = _fit(_bucketing(data.default_bucket_key, channels=2), data)
    with pytest.raises(OtherNetwork):
        checks.buckets_bound(bmod, data, _net(channels=4), epochs=2)


def test_what_is_not_a_bucketing_module_or_its_data_is_refused_with_the_fix(data):
    mod = mxlearn.MutableModule(_net(), max_data_shapes=[("data", (8, 1, 12, 12))])
    with pytest.raises(NotABucketingModule):
        checks.buckets_bound(mod, data, _net(), epochs=2)
    with pytest.raises(WrongKind) as not_a_module:
        checks.buckets_bound("bmod", data, _net(), epochs=2)
    assert "mx.mod.BucketingModule(sym_gen" in str(not_a_module.value)
    plain = mx.io.NDArrayIter(mx.nd.zeros((8, 1, 8, 8)), mx.nd.zeros(8), batch_size=8)
    with pytest.raises(WrongKind) as not_buckets:
        checks.buckets_bound(_bucketing(data.default_bucket_key), plain, _net(), epochs=2)
    assert "default_bucket_key" in str(not_buckets.value)
    with pytest.raises(CheckFailed) as verdict:  # in an exercise: a verdict, not a stopped cell
        checks.buckets_bound(_bucketing((12, 12)), plain, _net(), epochs=2, exercise="05.3")
    assert "default_bucket_key" in str(verdict.value) and "gap" not in str(verdict.value)
