"""fit's fast paths (batches as views, the deferred metric's argmax ring) against the edges a
student can reach: a short batch without padding, callbacks that read fit's locals, labels
changed in place during an epoch. Each must give what MXNet's own fit gives."""

from __future__ import annotations

import numpy as np

import mxlearn
from mxlearn import mx
from mxlearn.datasets import synthetic_classification


class ShortLast(mx.io.DataIter):
    """An iterator whose last batch simply has fewer rows (no padding): MXNet reshapes."""

    def __init__(self, X, y, batch_size):
        super().__init__(batch_size)
        self.X, self.y, self.at = mx.nd.array(X), mx.nd.array(y), 0

    @property
    def provide_data(self):
        return [mx.io.DataDesc("data", (self.batch_size, self.X.shape[1]))]

    @property
    def provide_label(self):
        return [mx.io.DataDesc("softmax_label", (self.batch_size,))]

    def reset(self):
        self.at = 0

    def next(self):
        if self.at >= self.X.shape[0]:
            raise StopIteration
        start, self.at = self.at, min(self.at + self.batch_size, self.X.shape[0])
        return mx.io.DataBatch([self.X[start : self.at]], [self.y[start : self.at]], pad=0)


def _data(rows=100):
    return synthetic_classification(num_samples=rows, num_features=16, num_classes=4, seed=1)


def _net():
    return mxlearn.models.mlp(num_classes=4, num_hidden=8)


def test_a_short_last_batch_without_padding_is_measured_like_mxnet():
    X, y = _data()
    mxlearn.seed(0)
    mod = mxlearn.Module(_net())
    mod.fit(
        mx.io.NDArrayIter(X, y, 32),
        eval_data=ShortLast(X[:70], y[:70], 32),
        optimizer_params={"learning_rate": 0.1},
        num_epoch=2,
    )
    outputs = mod.predict(mx.io.NDArrayIter(X[:70], y[:70], 70)).asnumpy()
    expected = float((outputs.argmax(axis=1) == y[:70]).mean())
    assert mod.history.last("accuracy", "validation") == expected


def _iterator_positions(module_class) -> list:
    X, y = _data()
    train = mx.io.NDArrayIter(X, y, 32, shuffle=True)
    seen = []

    def progress(param):
        iterator = param.locals["train_data"]
        seen.append((iterator is train, iterator.cursor, iterator.getpad()))

    module_class(_net()).fit(
        train, num_epoch=1, batch_end_callback=progress, optimizer_params={"learning_rate": 0.1}
    )
    return seen


def test_callbacks_see_the_users_own_iterator():
    seen = _iterator_positions(mxlearn.Module)
    assert seen == _iterator_positions(mx.mod.Module)
    assert len(seen) == 4 and all(is_it for is_it, _, _ in seen)


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
