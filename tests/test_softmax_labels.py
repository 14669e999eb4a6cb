"""What a SoftmaxOutput's label holds, read as MXNet reads it: a class number per softmax, counted
along the axis the softmax runs over (a row's values, the last axis with ``preserve_shape``,
axis 1 with ``multi_output``), or, shaped like the output, a probability per class (label
smoothing, soft targets), whose gradient MXNet takes as output minus label. Probabilities train;
class metrics that would cut them to integers (MXNet's Accuracy reads 1.0 for any run) are
refused with a metric that reads them, and the advised metric measures the run."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.guards.data_values import LabelsOutsideClasses

RNG = np.random.RandomState(0)
ROWS = RNG.normal(size=(200, 8)).astype("float32")
CLASSES = (ROWS @ RNG.normal(size=(8, 3))).argmax(axis=1)  # 3 classes a linear layer can tell


def _softmax_net(**settings):
    hidden = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    return mx.sym.SoftmaxOutput(hidden, name="softmax", **settings)


def _smoothed(classes, count=3, smoothing=0.1) -> np.ndarray:
    return (np.eye(count)[classes] * (1 - smoothing) + smoothing / count).astype("float32")


def _quiet(call, *args, **kwargs):
    with contextlib.redirect_stdout(io.StringIO()):
        return call(*args, **kwargs)


def _refused_then_followed(labels, metric_spec="acc"):
    """Fit on probability ``labels`` with ``metric_spec``: the refusal, then the advised metric
    trained with and the accuracy it reports against the class numbers' own."""
    from mxlearn.metrics.catalogue import ClassMetricOfProbabilityLabels

    it = mx.io.NDArrayIter(ROWS, labels, batch_size=20, label_name="softmax_label")
    mod = mxlearn.Module(_softmax_net(), context=mx.cpu())
    with pytest.raises(ClassMetricOfProbabilityLabels) as refused:
        mod.fit(it, num_epoch=1, eval_metric=metric_spec)
    advised = eval(refused.value.fix.removeprefix("eval_metric="), {"mx": mx})
    mx.random.seed(0)
    _quiet(mod.fit, it, num_epoch=10, eval_metric=advised, optimizer_params={"learning_rate": 0.5})
    ((name, reported),) = mod.score(it, advised)
    predicted = mod.predict(mx.io.NDArrayIter(ROWS, batch_size=20)).asnumpy().argmax(axis=1)
    return name, reported, float((predicted == labels.argmax(axis=1)).mean())


@pytest.mark.parametrize("metric_spec", ["acc", "ce", mx.metric.TopKAccuracy(top_k=2)])
def test_probability_labels_train_and_class_metrics_are_refused_for_one_that_reads_them(
    metric_spec,
):
    """Label smoothing (0.1): MXNet trains on it, and its Accuracy would read every label as 0.
    The advised metric's accuracy is the run's own (argmax against argmax), well above the commonest class."""
    name, reported, measured = _refused_then_followed(_smoothed(CLASSES), metric_spec)
    assert name == "accuracy"
    assert reported == pytest.approx(measured, abs=1e-6) and measured > 0.8


def test_mixed_targets_are_probabilities_too():
    """Soft targets from two classes mixed (mixup-like, weights 0.7 / 0.3) train alike."""
    other = (CLASSES + 1) % 3
    labels = (0.7 * np.eye(3)[CLASSES] + 0.3 * np.eye(3)[other]).astype("float32")
    _, reported, measured = _refused_then_followed(labels)
    assert (
        reported == pytest.approx(measured, abs=1e-6) and measured > 0.7
    )  # the commonest class: 0.395


def test_probability_labels_pass_the_per_batch_checks_of_an_iterator_read_by_batch():
    """An iterator mxlearn cannot read in memory (ResizeIter over a generator-like source) gets
    its labels checked per batch: probabilities are not refused as classes outside 0..2."""
    labels = _smoothed(CLASSES)
    inner = mx.io.NDArrayIter(ROWS, labels, batch_size=20, label_name="softmax_label")
    it = mx.io.PrefetchingIter(inner)
    mod = mxlearn.Module(_softmax_net(), context=mx.cpu())
    metric = mx.metric.np(
        lambda label, pred: (pred.argmax(axis=1) == label.argmax(axis=1)).mean(), name="accuracy"
    )
    _quiet(mod.fit, it, num_epoch=2, eval_metric=metric)
    epochs, _ = mod.history.series("accuracy", "train", "epoch")
    assert list(epochs) == [0, 1]


def test_lr_find_reads_probability_labels_as_a_soft_cross_entropy():
    """The rate finder's loss on probability labels is -sum(p log q): on one-hot rows, the same
    sweep, loss for loss, as on the class numbers they encode."""
    swept = []
    for labels in (CLASSES.astype("float32"), np.eye(3, dtype="float32")[CLASSES]):
        it = mx.io.NDArrayIter(ROWS, labels, batch_size=20, label_name="softmax_label")
        found = _quiet(
            mxlearn.lr_find, _softmax_net(), it, stop=1, num_batches=30, plot=False, seed=0
        )
        swept.append(np.asarray(found.losses))
    assert len(swept[0]) == 30
    np.testing.assert_allclose(swept[1], swept[0], rtol=1e-5)


@pytest.mark.parametrize(
    ("settings", "data_shape", "label_shape", "classes"),
    [
        ({"preserve_shape": True}, (20, 4, 3), (20, 4), 3),  # classes on the last axis
        ({"multi_output": True}, (20, 3, 4), (20, 4), 3),  # classes on axis 1
        ({}, (20, 3, 4), (20, 3), 12),  # one softmax over each row's 12 values
    ],
)
def test_class_count_follows_the_axis_the_softmax_runs_over(
    settings, data_shape, label_shape, classes
):
    """The last class is accepted and the next refused, naming the count MXNet uses."""
    net = mx.sym.SoftmaxOutput(mx.sym.var("data"), name="softmax", **settings)
    data = RNG.normal(size=data_shape).astype("float32")
    for last, refused in ((classes - 1, False), (classes, True)):
        labels = np.full(label_shape, last, dtype="float32")
        it = mx.io.NDArrayIter(data, labels, batch_size=20, label_name="softmax_label")
        mod = mxlearn.Module(net, context=mx.cpu())
        mod.bind(it.provide_data, it.provide_label, for_training=False)
        mod.init_params()
        if refused:
            with pytest.raises(LabelsOutsideClasses) as error:
                mod.score(it, mx.metric.Loss())
            assert f"({classes} classes)" in str(error.value)
        else:
            mod.score(it, mx.metric.Loss())


def test_a_module_trained_on_probabilities_scores_probabilities_and_says_how_to_make_them():
    """MXNet binds class numbers and probabilities apart and fails deep in its engine when one
    is scored by a module bound for the other; the advised np.eye turns class numbers into
    the probabilities the module reads, and scores as the argmax of the predictions does."""
    from mxlearn.guards.binding import ClassNumbersForProbabilities, OneHotLabels

    metric = mx.metric.np(
        lambda label, pred: (pred.argmax(axis=1) == label.argmax(axis=1)).mean(), name="accuracy"
    )
    trained = mx.io.NDArrayIter(ROWS, _smoothed(CLASSES), batch_size=20, label_name="softmax_label")
    mod = mxlearn.Module(_softmax_net(), context=mx.cpu())
    _quiet(
        mod.fit, trained, num_epoch=5, eval_metric=metric, optimizer_params={"learning_rate": 0.5}
    )
    y = CLASSES.astype("float32")
    numbers = mx.io.NDArrayIter(ROWS, y, batch_size=20, label_name="softmax_label")
    with pytest.raises(ClassNumbersForProbabilities) as refused:
        mod.score(numbers, metric)
    namespace = {"np": np, "y": y}
    exec(refused.value.fix, namespace)  # the advice followed
    advised = mx.io.NDArrayIter(ROWS, namespace["y"], batch_size=20, label_name="softmax_label")
    ((_, accuracy),) = mod.score(advised, metric)
    predicted = mod.predict(mx.io.NDArrayIter(ROWS, batch_size=20)).asnumpy().argmax(axis=1)
    assert accuracy == pytest.approx(float((predicted == CLASSES).mean()), abs=1e-6)
    # and the other way round: validation one-hot rows for a module trained on class numbers
    with pytest.raises(OneHotLabels):
        mxlearn.Module(_softmax_net(), context=mx.cpu()).fit(
            numbers, eval_data=advised, num_epoch=1
        )


def test_the_advised_metric_reads_the_classes_on_the_axis_the_softmax_runs_over():
    """SoftmaxOutput(multi_output=True) holds its classes on axis 1 of an (N, C, T) output:
    the advised metric's argmax must run there, and it then gives the run's own accuracy."""
    from mxlearn.metrics.catalogue import ClassMetricOfProbabilityLabels

    rows = RNG.normal(size=(200, 3, 4)).astype("float32")
    labels = np.eye(3, dtype="float32")[rows.argmax(axis=1)].transpose(0, 2, 1)  # (N, 3, 4)
    net = mx.sym.SoftmaxOutput(mx.sym.var("data") * 2, name="softmax", multi_output=True)
    it = mx.io.NDArrayIter(rows, labels, batch_size=20, label_name="softmax_label")
    mod = mxlearn.Module(net, context=mx.cpu())
    mod.bind(it.provide_data, it.provide_label, for_training=False)
    mod.init_params()
    with pytest.raises(ClassMetricOfProbabilityLabels) as refused:
        mod.score(it, "acc")
    assert "axis=1" in refused.value.fix
    advised = eval(refused.value.fix.removeprefix("eval_metric="), {"mx": mx})
    ((_, accuracy),) = mod.score(it, advised)
    assert accuracy == pytest.approx(1.0)  # the softmax of 2x keeps each position's argmax


def test_rows_of_another_width_than_the_classes_are_refused_for_their_shape():
    """Probabilities over 4 classes for a 3-class network: the shape is the mistake, not
    fractional class numbers (the value checks run first, and once said "MXNet would cut
    them to integers")."""
    from mxlearn.guards.binding import OneHotLabels

    labels = np.full((200, 4), 0.25, dtype="float32")
    it = mx.io.NDArrayIter(ROWS, labels, batch_size=20, label_name="softmax_label")
    with pytest.raises(OneHotLabels) as refused:
        mxlearn.Module(_softmax_net(), context=mx.cpu()).fit(it, num_epoch=1)
    assert refused.value.fields["width"] == 4
