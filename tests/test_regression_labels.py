"""Regression outputs take their labels in every shape MXNet takes them: a target per output
value, shaped like the output ((N, 1) for one value a row) or, for one value a row, flat (N,).
Trained and scored as MXNet's own Module trains and scores them; what MXNet refuses (another
number of values a row) is refused before binding, naming the shapes."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.guards.binding import LabelsOneColumnTooMany, TargetsShapeDiffer

ROWS = np.random.RandomState(0).rand(200, 4).astype("float32")
OUTPUTS = ["LinearRegressionOutput", "MAERegressionOutput", "LogisticRegressionOutput"]


def _net(output: str, width: int):
    hidden = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=width, name="fc")
    return getattr(mx.sym, output)(hidden, name="reg")


def _targets(output: str, shape: tuple) -> np.ndarray:
    values = np.tanh(ROWS @ np.arange(1, 5, dtype="float32"))[:, None].repeat(
        int(np.prod(shape[1:])), 1
    )
    values = (values > 0.9).astype("float32") if output == "LogisticRegressionOutput" else values
    return values.reshape(shape)


def _trained(module_class, net, labels):
    it = mx.io.NDArrayIter(ROWS, labels, batch_size=20, label_name="reg_label")
    mod = module_class(net, label_names=["reg_label"], context=mx.cpu())
    with contextlib.redirect_stdout(io.StringIO()):
        mod.fit(
            it,
            num_epoch=3,
            eval_metric="mse",
            initializer=mx.init.Constant(0.1),
            optimizer_params={"learning_rate": 0.05},
        )
    it.reset()
    weights = {n: a.asnumpy() for n, a in mod.get_params()[0].items()}
    return weights, mod.score(it, "mse")[0][1]


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize("shape", [(200, 1), (200,)], ids=["column", "flat"])
def test_one_value_a_row_trains_with_flat_or_column_labels_as_in_mxnet(output, shape):
    net, labels = _net(output, 1), _targets(output, shape)
    ours, our_mse = _trained(mxlearn.Module, net, labels)
    theirs, their_mse = _trained(mx.mod.Module, net, labels)
    assert all(np.array_equal(ours[n], theirs[n]) for n in theirs)
    assert our_mse == pytest.approx(their_mse, rel=1e-7)  # float32 sums in another order


@pytest.mark.parametrize("output", OUTPUTS)
def test_several_values_a_row_train_with_labels_shaped_like_the_output(output):
    net, labels = _net(output, 3), _targets(output, (200, 3))
    ours, our_mse = _trained(mxlearn.Module, net, labels)
    theirs, their_mse = _trained(mx.mod.Module, net, labels)
    assert all(np.array_equal(ours[n], theirs[n]) for n in theirs)
    assert our_mse == pytest.approx(their_mse, rel=1e-7)  # float32 sums in another order


@pytest.mark.parametrize(("width", "labels"), [(1, (200, 2)), (3, (200,)), (3, (200, 2))])
def test_another_number_of_values_a_row_is_refused_with_the_shape_that_fits(width, labels):
    net = _net("LinearRegressionOutput", width)
    it = mx.io.NDArrayIter(ROWS, np.zeros(labels, "float32"), 20, label_name="reg_label")
    mod = mxlearn.Module(net, label_names=["reg_label"])
    with pytest.raises(TargetsShapeDiffer) as refused:
        mod.bind(it.provide_data, it.provide_label)
    assert refused.value.fields["got"] == (20, *labels[1:])
    assert refused.value.fields["who"] == "LinearRegressionOutput 'reg'"
    # the advice followed: targets shaped as it says bind
    want = refused.value.fields["want"]
    assert str(want) in refused.value.fix
    fixed = _targets("LinearRegressionOutput", (200, *want[1:]))
    it = mx.io.NDArrayIter(ROWS, fixed, 20, label_name="reg_label")
    mod.bind(it.provide_data, it.provide_label)
    assert mod.binded


def test_a_classifier_still_refuses_a_column_of_class_numbers():
    net = mx.sym.SoftmaxOutput(
        mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3), name="softmax"
    )
    it = mx.io.NDArrayIter(ROWS, np.zeros((200, 1), "float32"), 20)
    with pytest.raises(LabelsOneColumnTooMany):
        mxlearn.Module(net).bind(it.provide_data, it.provide_label)


def test_accuracy_of_a_logistic_output_is_refused_with_the_metric_that_fits():
    """LogisticRegressionOutput gives a probability per row: a class only at a threshold, which
    'acc' does not apply; the fix is accuracy at 0.5, and it measures the run."""
    from mxlearn.metrics.catalogue import ClassMetricOfProbabilities

    net = _net("LogisticRegressionOutput", 1)
    labels = (ROWS[:, 0] + ROWS[:, 1] > 1).astype("float32")  # about half of each class
    it = mx.io.NDArrayIter(ROWS, labels, batch_size=20, label_name="reg_label")
    mod = mxlearn.Module(net, label_names=["reg_label"])
    with pytest.raises(ClassMetricOfProbabilities) as refused:
        mod.fit(it, num_epoch=1, eval_metric="acc")
    advised = eval(refused.value.fix.removeprefix("eval_metric="), {"mx": mx})
    with contextlib.redirect_stdout(io.StringIO()):
        mod.fit(it, num_epoch=20, eval_metric=advised, optimizer_params={"learning_rate": 0.5})
    ((name, accuracy),) = mod.score(it, advised)
    guessing = max(labels.mean(), 1 - labels.mean())
    assert name == "accuracy_at_0.5" and accuracy > guessing + 0.05
