"""Networks with several outputs: labels are matched to their loss layers by name, in whatever
order label_names lists them, and each metric measures its own output."""

from __future__ import annotations

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.metrics.catalogue import TopKCountsAll
from mxlearn.metrics.outputs import OtherHeadsLabel, OutputOfOtherKind, SeveralOutputsOfKind


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


def _fitted_two_heads(small_data):
    X, y = small_data
    fractions = np.random.RandomState(0).rand(len(y)).astype("float32")
    it = mx.io.NDArrayIter(X, {"reg_label": fractions, "cls_label": y}, 32)
    mxlearn.seed(0)
    mod = mxlearn.Module(_two_heads(), label_names=["cls_label", "reg_label"])
    mod.fit(it, num_epoch=3, eval_metric="acc", optimizer_params={"learning_rate": 0.05})
    return mod, it, y, fractions


def test_acc_and_mse_each_measure_their_own_head(small_data):
    mod, it, y, fractions = _fitted_two_heads(small_data)
    classes, values = (out.asnumpy() for out in mod.predict(it))
    acc = dict(mod.score(it, "acc"))["accuracy"]
    assert acc == pytest.approx(float((classes.argmax(axis=1) == y).mean()))
    mse = dict(mod.score(it, "mse"))["mse"]
    assert mse == pytest.approx(float(((values.ravel() - fractions) ** 2).mean()), rel=1e-5)


def test_a_metric_pointed_at_the_wrong_head_or_two_candidates_is_refused(small_data):
    mod, it, _, _ = _fitted_two_heads(small_data)
    with pytest.raises(OutputOfOtherKind) as wrong_head:
        mod.score(it, mx.metric.create("acc", output_names=["reg_output"]))
    fields = wrong_head.value.fields
    assert (fields["name"], fields["op"]) == ("reg_output", "LinearRegressionOutput")
    assert (fields["metric"], fields["kind"]) == ("accuracy", "classification")
    h = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=8, name="fc1")
    a = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=4, name="fa"), name="a")
    b = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=4, name="fb"), name="b")
    X, y = small_data
    both = mx.io.NDArrayIter(X, {"a_label": y, "b_label": y}, 32)
    with pytest.raises(SeveralOutputsOfKind) as info:
        mxlearn.Module(mx.sym.Group([a, b]), label_names=["a_label", "b_label"]).fit(
            both, num_epoch=1, eval_metric="acc"
        )
    assert info.value.fields["metric"] == "accuracy"
    assert info.value.fields["outputs"] == "'a_output' (SoftmaxOutput), 'b_output' (SoftmaxOutput)"
    assert "output_names=['a_output']" in info.value.fix


def test_output_names_without_label_names_take_that_outputs_own_label(small_data):
    mod, it, y, _ = _fitted_two_heads(small_data)
    classes = mod.predict(it)[0].asnumpy()
    metric = mx.metric.create("acc", output_names=["cls_output"])  # no label_names
    acc = dict(mod.score(it, metric))["accuracy"]
    assert acc == pytest.approx(float((classes.argmax(axis=1) == y).mean()))


def test_a_label_that_is_not_the_outputs_own_is_refused(small_data):
    mod, it, _, _ = _fitted_two_heads(small_data)
    wrong = mx.metric.create("acc", output_names=["cls_output"], label_names=["reg_label"])
    with pytest.raises(OtherHeadsLabel) as refused:
        mod.score(it, wrong)
    fields = refused.value.fields
    assert (fields["op"], fields["layer"], fields["read"]) == ("SoftmaxOutput", "cls", "cls_label")
    assert fields["label"] == "reg_label"


def test_top_k_is_checked_against_the_classes_of_its_own_output(small_data):
    mod, it, _, _ = _fitted_two_heads(small_data)  # the classifier has 4 classes
    with pytest.raises(TopKCountsAll) as refused:
        mod.score(it, mx.metric.create("top_k_acc", top_k=4))
    assert (refused.value.fields["top_k"], refused.value.fields["classes"]) == (4, 4)


def test_an_output_without_a_loss_layer_beside_a_classifier(small_data):
    X, y = small_data
    h = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=8, name="fc1")
    cls = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=4, name="fc2"), name="softmax")
    net = mx.sym.Group([cls, mx.sym.BlockGrad(h, name="features")])
    mod = mxlearn.Module(net)
    mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1, eval_metric="acc")
    classes = mod.predict(mx.io.NDArrayIter(X, y, 32))[0].asnumpy()
    acc = dict(mod.score(mx.io.NDArrayIter(X, y, 32), "acc"))["accuracy"]
    assert acc == pytest.approx(float((classes.argmax(axis=1) == y).mean()))


def test_a_metric_object_used_on_two_networks_measures_each(small_data):
    mod, it, y, _ = _fitted_two_heads(small_data)
    metric = mx.metric.Accuracy()
    mod.score(it, metric)  # mxlearn points it at 'cls_output' for this network
    X, _ = small_data
    h = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=8, name="fc1")
    other = mx.sym.Group(
        [
            mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=4), name="letters"),
            mx.sym.BlockGrad(h, name="features"),
        ]
    )
    again = mxlearn.Module(other, label_names=["letters_label"])
    again.fit(mx.io.NDArrayIter(X, {"letters_label": y}, 32), num_epoch=1)
    metric.reset()
    # not "no output 'cls_output'": the names mxlearn chose before are chosen again here
    assert (
        0
        <= dict(again.score(mx.io.NDArrayIter(X, {"letters_label": y}, 32), metric))["accuracy"]
        <= 1
    )
