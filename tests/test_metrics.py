"""Metrics by the seed tutorial's names, one row of facts per MXNet metric class that agrees with
MXNet, F1 for many classes, and metrics that fit the output.
The deferred metric fit reads later gives what MXNet's fit gives: labels changed in place during
an epoch, accuracy per position, a float64 classifier. Two metrics of one name are refused."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import SHARED_DATA, seed_all

import mxlearn
from mxlearn import mx
from mxlearn.datasets import synthetic_classification
from mxlearn.metrics.catalogue import (
    F1,
    KNOWN_METRICS,
    LEFT_OUT,
    ClassMetricOfNumbers,
    PerplexityIgnoresDiffer,
    RegressionMetricOfClasses,
    create_metric,
    facts_of,
    facts_of_name,
    metric_kind,
)
from mxlearn.training.plan import MetricNamedTwice


def _reference_f1(truth, guess, average):
    classes = sorted(set(truth) | set(guess))
    if average == "micro":
        return float(np.mean(truth == guess))
    scores = []
    for c in classes:
        tp = np.sum((guess == c) & (truth == c))
        fp = np.sum((guess == c) & (truth != c))
        fn = np.sum((guess != c) & (truth == c))
        scores.append(2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores))


@pytest.fixture(scope="module")
def trained():
    seed_all(4)
    # module-scoped: runs before the per-test environment, so the data folder is given here
    X, y = mxlearn.datasets.letter_recognition(SHARED_DATA)
    mod = mxlearn.Module(mxlearn.models.mlp())
    mod.fit(
        mx.io.NDArrayIter(X[:3200], y[:3200], 32, shuffle=True),
        optimizer_params={"learning_rate": 0.1},
        num_epoch=3,
    )
    return mod, X[16000:17000], y[16000:17000]


@pytest.mark.parametrize("average", ["macro", "micro"])
def test_f1_on_26_classes_equals_numpy_over_the_whole_set(trained, average):
    mod, X, y = trained
    guess = mod.predict(mx.io.NDArrayIter(X, y, 32)).asnumpy().argmax(axis=1)
    metric = F1(average=average)
    ((name, value),) = mod.score(mx.io.NDArrayIter(X, y, 32), metric)
    assert name == "f1"
    assert value == pytest.approx(_reference_f1(y.astype(int), guess, average), abs=1e-12)
    # counted over the whole set: the batch size does not change it
    assert mod.score(mx.io.NDArrayIter(X, y, 100), F1(average=average))[0][1] == pytest.approx(
        value
    )


def test_seed_names_work_case_insensitive(trained):
    mod, X, y = trained
    it = mx.io.NDArrayIter(X, y, 40)
    names = [n for n, _ in mod.score(it, ["ACC", "top_k_acc", "F1", "ce"])]
    assert names == ["accuracy", "top_5_accuracy", "f1", "cross-entropy"]
    scores = dict(mod.score(it, ["acc", "top_k_acc"]))
    assert scores["top_5_accuracy"] > scores["accuracy"]
    assert create_metric("top_k_acc", top_k=3).name == "top_3_accuracy"


# What MXNet needs to make these by name (it asserts top_k > 1, but defaults it to 1).
NEEDED_TO_MAKE = {
    mx.metric.Perplexity: {"ignore_label": None},
    mx.metric.TopKAccuracy: {"top_k": 5},
}


def test_the_known_metrics_agree_with_mxnets_metric_classes():
    """A row per class, naming every name MXNet registers it under (mxlearn adds none) and the
    name its values are reported under; every class MXNet makes by name has a row or is left
    out (LEFT_OUT says why)."""
    registered = mx.registry.get_registry(mx.metric.EvalMetric)
    classes = [row.cls for row in KNOWN_METRICS]
    assert len(set(classes)) == len(classes)
    assert set(registered.values()) == set(classes) | set(LEFT_OUT)
    assert not set(classes) & set(LEFT_OUT)
    for row in KNOWN_METRICS:
        assert all(issubclass(cls, mx.metric.EvalMetric) for cls in row.classes), row
        assert {n for n, cls in registered.items() if cls is row.cls} == set(row.names), row
        settings = NEEDED_TO_MAKE.get(row.cls, {})
        for name in row.names:
            mxnets, ours = mx.metric.create(name, **settings), create_metric(name, **settings)
            assert type(mxnets) is row.cls and type(ours) is (row.whole_set or row.cls), name
            assert re.fullmatch(row.reports, mxnets.name) and re.fullmatch(row.reports, ours.name)
            assert facts_of(ours) == facts_of(mxnets) == facts_of_name(ours.name) == row.facts
            assert metric_kind(ours) == metric_kind(mxnets) == row.kind
        assert row.kind in ("classification", "regression", None)


@pytest.mark.parametrize("name", ["rmse", "mse", "mae"])
def test_regression_metrics_on_a_classifier_are_refused(trained, name):
    mod, X, y = trained
    with pytest.raises(RegressionMetricOfClasses) as info:
        mod.score(mx.io.NDArrayIter(X, y, 40), name)
    assert info.value.fields == {"called": "mod.score()", "metric": name}
    assert "eval_metric='acc'" in info.value.fix


def test_classification_metrics_on_a_regression_are_refused():
    X, y, _ = mxlearn.datasets.synthetic_regression(num_samples=64)
    it = mx.io.NDArrayIter(X, y, 32, label_name="lro_label")
    mod = mxlearn.Module(mxlearn.models.linear_regression(), label_names=["lro_label"])
    with pytest.raises(ClassMetricOfNumbers) as refused:
        mod.fit(it, eval_metric="acc", num_epoch=1)
    assert refused.value.fields == {"called": "mod.fit()", "metric": "accuracy"}
    mod.fit(it, eval_metric="mse", num_epoch=1)
    assert mod.history.last("mse") is not None
    # two full batches of 32: the whole-set MSE is the mean of the two batches' MSEs
    batches = mod.history.series("mse", "train", "batch")[1]
    assert len(batches) == 2 and all(np.isfinite(batches))
    assert mod.history.last("mse") == pytest.approx(np.mean(batches), rel=1e-6)


def _padded_iter(X, y, **names):
    return mx.io.NDArrayIter(X, y, 64, **names)  # 1000 rows: the last batch pads 24


def test_classification_metrics_equal_numpy_with_a_padded_last_batch(trained):
    mod, X, y = trained
    probs = mod.predict(_padded_iter(X, y)).asnumpy()
    assert probs.shape == (1000, 26)
    truth, guess = y.astype(int), probs.argmax(axis=1)
    top5 = np.argsort(-probs, axis=1)[:, :5]
    reference = {
        "accuracy": np.mean(guess == truth),
        "top_5_accuracy": np.mean((top5 == truth[:, None]).any(axis=1)),
        "f1": _reference_f1(truth, guess, "macro"),
        "cross-entropy": np.mean(-np.log(probs[np.arange(1000), truth] + 1e-12)),
    }
    scores = dict(mod.score(_padded_iter(X, y), ["acc", "top_k_acc", "f1", "ce"]))
    assert scores.keys() == reference.keys()
    for name, value in reference.items():
        assert scores[name] == pytest.approx(value, rel=1e-5), name


def test_regression_metrics_are_over_every_value_not_per_batch():
    X, y, _ = mxlearn.datasets.synthetic_regression(num_samples=1000, num_features=4)
    seed_all(0)
    names = {"label_name": "lro_label"}
    mod = mxlearn.Module(mxlearn.models.linear_regression(), label_names=["lro_label"])
    mod.fit(_padded_iter(X, y, **names), eval_metric="mse", num_epoch=1)
    error = mod.predict(_padded_iter(X, y, **names)).asnumpy().ravel() - y
    reference = {
        "mse": np.mean(error**2),
        "rmse": np.sqrt(np.mean(error**2)),
        "mae": np.mean(np.abs(error)),
    }
    scores = dict(mod.score(_padded_iter(X, y, **names), ["MSE", "rmse", "mae"]))
    for name, value in reference.items():
        assert scores[name] == pytest.approx(value, rel=1e-5), name
    # MXNet's own RMSE is a mean of per-batch roots, which depends on the batch size
    plain = dict(mod.score(_padded_iter(X, y, **names), mx.metric.RMSE()))["rmse"]
    assert abs(plain - reference["rmse"]) > 1e-4


@pytest.mark.parametrize("shape, axis", [((32, 26), 1), ((8, 5, 7), 1), ((8, 5, 7), 2)])
def test_a_prepared_argmax_into_a_slot_equals_mxnets_argmax(shape, axis):
    """The deferred metric's prepared C call computes exactly MXNet's argmax, into each slot."""
    from mxlearn.metrics.prepared_call import PreparedCall

    rows = int(np.prod([s for i, s in enumerate(shape) if i != axis]))
    ring = mx.nd.zeros((3 * rows,))
    result_shape = mx.nd.argmax(mx.nd.zeros(shape), axis=axis).shape
    slots = [ring[i * rows : (i + 1) * rows].reshape(result_shape) for i in range(3)]
    arrays = [mx.nd.random.uniform(shape=shape) for _ in range(3)]
    argmax = PreparedCall("argmax", {"axis": axis}, slots)
    for index in (2, 0, 1):
        assert argmax(arrays[index], index) is slots[index]
    for array, slot in zip(arrays, slots):
        assert np.array_equal(slot.asnumpy(), mx.nd.argmax(array, axis=axis).asnumpy())


def test_a_prepared_copy_keeps_the_values_of_its_moment():
    from mxlearn.metrics.prepared_call import PreparedCall

    source = mx.nd.array([1, 2, 3])
    slots = [mx.nd.zeros((3,)), mx.nd.zeros((3,))]
    copy = PreparedCall("_copyto", {}, slots)
    copy(source, 0)
    source[:] = 7
    copy(source, 1)
    assert slots[0].asnumpy().tolist() == [1, 2, 3] and slots[1].asnumpy().tolist() == [7] * 3


def _data(rows=100):
    return synthetic_classification(num_samples=rows, num_features=16, num_classes=4, seed=1)


def _net():
    return mxlearn.models.mlp(num_classes=4, num_hidden=8)


def test_labels_changed_during_an_epoch_are_measured_as_they_were_trained():
    """A callback shifts every label by one class after the first batch, in place. Each
    batch's recorded accuracy must be its outputs against the labels it trained on, even
    though the metric is read later (deferred): the labels are copied when the batch runs."""
    X, y = _data(96)
    labels = mx.nd.array(y)
    train = mx.io.NDArrayIter(mx.nd.array(X), labels, 32)  # holds `labels` itself
    trained_on = []

    def relabel(param):
        module, batch = param.locals["self"], param.locals["data_batch"]
        predicted = module.get_outputs()[0].asnumpy().argmax(axis=1)
        trained_on.append(float((predicted == batch.label[0].asnumpy()).mean()))
        if param.nbatch == 0:
            labels[:] = (labels + 1) % 4

    mxlearn.seed(0)
    mod = mxlearn.Module(_net())
    mod.fit(train, num_epoch=1, optimizer_params={"learning_rate": 0.1}, batch_end_callback=relabel)
    assert mod.history.series("accuracy", "train", "batch")[1] == trained_on
    assert mod.history.last("accuracy", "train") == np.mean(trained_on)


def _final_train_values(module_class, net, X, y, metric_factory) -> list:
    """The training metric's value at the end of each epoch, as MXNet's fit holds it."""
    ends = []

    def keep(param):
        if param.locals["end_of_batch"]:
            ends.append(param.eval_metric.get_global()[1])

    mxlearn.seed(0)
    train = mx.io.NDArrayIter(X, y, 32, shuffle=True, last_batch_handle="discard")
    mod = module_class(net)
    mod.fit(
        train,
        eval_metric=metric_factory(),
        optimizer_params={"learning_rate": 0.1},
        num_epoch=2,
        batch_end_callback=keep,
    )
    return ends


def test_per_position_accuracy_is_mxnets():
    """Outputs (N, C, T) and labels (N, T): one class per position, not per row."""
    rng = np.random.RandomState(0)
    X = rng.rand(100, 16).astype("float32")
    y = rng.randint(0, 4, (100, 5)).astype("float32")
    hidden = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=20, name="fc")
    outputs = mx.sym.reshape(hidden, shape=(-1, 4, 5))
    net = mx.sym.SoftmaxOutput(outputs, multi_output=True, name="softmax")

    def accuracy():
        return mx.metric.Accuracy(axis=1)

    expected = _final_train_values(mx.mod.Module, net, X, y, accuracy)
    assert _final_train_values(mxlearn.Module, net, X, y, accuracy) == expected


def test_a_float64_classifier_is_measured_like_mxnet():
    X, y = _data()
    data = mx.sym.Cast(mx.sym.Variable("data"), dtype="float64")
    label = mx.sym.Cast(mx.sym.Variable("softmax_label"), dtype="float64")
    hidden = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    net = mx.sym.SoftmaxOutput(hidden, label=label, name="softmax")

    def accuracy():
        return mx.metric.Accuracy()

    expected = _final_train_values(mx.mod.Module, net, X, y, accuracy)
    assert _final_train_values(mxlearn.Module, net, X, y, accuracy) == expected


def test_two_metrics_of_one_name_are_refused_before_training(small_iter, small_net):
    mod = mxlearn.Module(small_net)
    with pytest.raises(MetricNamedTwice) as info:
        mod.fit(small_iter, num_epoch=1, eval_metric=["acc", mx.metric.Accuracy()])
    assert info.value.fields == {"names": ["accuracy"], "name": "accuracy"}
    assert "name=" in info.value.fix and mod.state == "created"
    mod.fit(small_iter, num_epoch=1, eval_metric=["acc", mx.metric.Accuracy(name="acc_again")])
    assert {"accuracy", "acc_again"} <= set(mod.history.metrics())


def test_perplexity_by_name_is_made_with_the_networks_ignore_label():
    """MXNet's Perplexity requires ignore_label; by name mxlearn gives it the loss layer's, so
    the rows the network leaves out of its loss are left out of the perplexity too."""
    rng = np.random.RandomState(0)
    X = rng.rand(128, 8).astype("float32")
    y = rng.randint(0, 3, 128).astype("float32")
    y[::4] = -1  # rows the network ignores
    for use_ignore, ignore_label in ((False, None), (True, -1.0)):
        hidden = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
        net = mx.sym.SoftmaxOutput(hidden, name="softmax", use_ignore=use_ignore, ignore_label=-1)
        labels = y if use_ignore else np.abs(y)
        it = mx.io.NDArrayIter(X, labels, 32)
        mod = mxlearn.Module(net)
        mod.fit(it, num_epoch=1, eval_metric="perplexity")
        ((name, value),) = mod.score(it, "perplexity")
        by_hand = mx.metric.Perplexity(ignore_label=ignore_label)
        it.reset()
        for batch in it:
            mod.forward(batch, is_train=False)
            by_hand.update(batch.label, mod.get_outputs())
        assert name == "perplexity" and value == pytest.approx(by_hand.get()[1], rel=1e-6)
    assert mxlearn.create_metric("perplexity").ignore_label is None


def test_perplexity_by_name_over_classifiers_that_ignore_different_labels_is_refused():
    rng = np.random.RandomState(0)
    X = rng.rand(64, 8).astype("float32")
    a, b = rng.randint(0, 3, 64).astype("float32"), rng.randint(0, 3, 64).astype("float32")
    a[::4], b[::5] = -1, 2  # rows each classifier leaves out
    data = mx.sym.var("data")
    heads = [
        mx.sym.SoftmaxOutput(
            mx.sym.FullyConnected(data, num_hidden=3, name=f"fc_{n}"),
            name=n,
            use_ignore=True,
            ignore_label=ignore,
        )
        for n, ignore in (("a", -1), ("b", 2))
    ]
    it = mx.io.NDArrayIter({"data": X}, {"a_label": a, "b_label": b}, 32)
    mod = mxlearn.Module(mx.sym.Group(heads), label_names=["a_label", "b_label"])
    with pytest.raises(PerplexityIgnoresDiffer) as refused:
        mod.fit(it, num_epoch=1, eval_metric="perplexity")
    assert refused.value.fields["ignored"] == [-1.0, 2.0]
    assert "name='perplexity_<layer>'" in refused.value.fix
    assert "name='perplexity_<layer>'" in refused.value.fix
    # the advice followed: one Perplexity per classifier, each with its own ignore_label
    each = mx.metric.CompositeEvalMetric(
        [
            mx.metric.Perplexity(
                ignore_label=i,
                name=f"perplexity_{n}",
                output_names=[f"{n}_output"],
                label_names=[f"{n}_label"],
            )
            for n, i in (("a", -1), ("b", 2))
        ]
    )
    mod.fit(it, num_epoch=1, eval_metric=each)
    scores = dict(mod.score(it, each))
    it.reset()
    by_hand = [mx.metric.Perplexity(ignore_label=i) for i in (-1, 2)]
    for batch in it:
        mod.forward(batch, is_train=False)
        for k, metric in enumerate(by_hand):
            metric.update([batch.label[k]], [mod.get_outputs()[k]])
    assert list(scores.values()) == pytest.approx([m.get()[1] for m in by_hand], rel=1e-6)


@pytest.mark.parametrize("recorded, mxnets", [("cross-entropy", "ce"), ("nll-loss", "nll_loss")])
def test_a_metric_is_made_by_the_name_fit_records_it_under(recorded, mxnets):
    X, y = mxlearn.datasets.synthetic_classification(num_samples=128)
    it = mx.io.NDArrayIter(X, y, 32)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4))
    mod.fit(it, num_epoch=1, eval_metric=recorded)
    assert mod.history.last(recorded) is not None
    ((name, by_recorded),) = mod.score(it, recorded)
    ((_, by_mxnets),) = mod.score(it, mxnets)
    assert name == recorded and by_recorded == by_mxnets
