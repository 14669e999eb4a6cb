"""Metrics by the seed tutorial's names, F1 for many classes, and metrics that fit the output."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SHARED_DATA, seed_all

import mxlearn
from mxlearn import mx
from mxlearn.errors import InputError
from mxlearn.metrics.catalogue import F1, create_metric


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


@pytest.mark.parametrize("name", ["rmse", "mse", "mae"])
def test_regression_metrics_on_a_classifier_are_refused(trained, name):
    mod, X, y = trained
    with pytest.raises(InputError, match="class probabilities") as info:
        mod.score(mx.io.NDArrayIter(X, y, 40), name)
    assert "eval_metric='acc'" in str(info.value)


def test_classification_metrics_on_a_regression_are_refused():
    X, y, _ = mxlearn.datasets.synthetic_regression(num_samples=64)
    it = mx.io.NDArrayIter(X, y, 32, label_name="lro_label")
    mod = mxlearn.Module(mxlearn.models.linear_regression(), label_names=["lro_label"])
    with pytest.raises(InputError, match="predicts numbers"):
        mod.fit(it, eval_metric="acc", num_epoch=1)
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
