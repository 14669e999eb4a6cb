"""Networks with several outputs (issue 13, family 4, part): labels are matched to their loss
layers by name, in whatever order label_names lists them."""

from __future__ import annotations

import numpy as np

import mxlearn
from mxlearn import mx


def _two_heads():
    h = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=16, name="fc1")
    cls = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=4, name="fcc"), name="cls")
    reg = mx.sym.LinearRegressionOutput(
        mx.sym.FullyConnected(h, num_hidden=1, name="fcr"), name="reg"
    )
    return mx.sym.Group([cls, reg])


def test_label_names_in_another_order_than_the_iterators_are_checked_by_name(small_data):
    X, y = small_data
    fractions = np.random.RandomState(0).rand(len(y)).astype("float32")
    it = mx.io.NDArrayIter(X, {"reg_label": fractions, "cls_label": y}, 32)  # sorted by name
    assert [d.name for d in it.provide_label] == ["cls_label", "reg_label"]
    mod = mxlearn.Module(_two_heads(), label_names=["reg_label", "cls_label"])
    mod.fit(it, num_epoch=1, eval_metric="acc")  # no false "not a class number"
    assert mod.history.last("accuracy") is not None
