"""The boundary of the public calls: what escapes MXNet is explained, naming the call, in both
languages, without MXNet's C++ stack; what the student's own code raises stays theirs."""

from __future__ import annotations

import re

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.boundary import CallFailed, condensed
from mxlearn.errors import MXLearnError
from mxlearn.guards.rows import EmptyDimension

CJK = re.compile(r"[\u4e00-\u9fff]")
ENGINE_NOISE = ("Stack trace", "[bt]", ".cc:", ".h:", "Traceback")


@pytest.fixture(params=["en", "zh"])
def language(request):
    mxlearn.set_language(request.param)
    yield request.param
    mxlearn.set_language("en")


def _net():
    return mxlearn.models.mlp(num_classes=4, num_hidden=8)


def _iter(rows=64, shape=(16,)):
    X = np.random.RandomState(0).rand(rows, *shape).astype("float32")
    return mx.io.NDArrayIter(X, (np.arange(rows) % 4).astype("float32"), batch_size=32)


def _conv_net():
    conv = mx.sym.Convolution(mx.sym.Variable("data"), kernel=(9, 9), num_filter=2)
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(conv, num_hidden=4), name="softmax")


def _explained(error: Exception, language: str, called: str) -> None:
    text = str(error)
    assert isinstance(error, MXLearnError)
    assert called in text
    assert not any(noise in text for noise in ENGINE_NOISE), text
    assert not re.search(r"\[\d\d:\d\d:\d\d\]", text), text  # no engine timestamps
    assert bool(CJK.search(text)) == (language == "zh"), text


def test_a_kernel_larger_than_its_input_at_bind(language):
    mod = mxlearn.Module(_conv_net())
    with pytest.raises(MXLearnError) as caught:
        mod.bind([("data", (32, 1, 4, 4))], [("softmax_label", (32,))])
    _explained(caught.value, language, "mod.bind()")


def test_a_kernel_larger_than_its_input_in_fit(language):
    with pytest.raises(MXLearnError) as caught:
        mxlearn.Module(_conv_net()).fit(_iter(shape=(1, 4, 4)), num_epoch=1)
    _explained(caught.value, language, "mod.bind()")


def test_a_zero_sized_batch_at_bind_is_refused_before_mxnet_slices_it(language):
    mod = mxlearn.Module(_net())
    with pytest.raises(EmptyDimension) as caught:  # MXNet's own: "Too many slices"
        mod.bind([("data", (0, 16))], [("softmax_label", (0,))])
    _explained(caught.value, language, "mod.bind()")


def test_a_raw_python_error_inside_mxnet_keeps_its_family():
    with pytest.raises(CallFailed) as caught:
        _top_9_of_4_classes()
    assert caught.value.fields["where"] == "MXNet"
    assert caught.value.state  # the module's state, as every module error gives it
    assert isinstance(caught.value, ValueError)  # the family MXNet's error was
    assert isinstance(caught.value.__cause__, ValueError)  # and the raw one kept for %tb


def _top_9_of_4_classes():
    mod, train = _bound()
    batch = next(iter(train))
    mod.forward(batch, is_train=False)
    mod.update_metric(mx.metric.TopKAccuracy(top_k=9), batch.label)


def test_a_zero_sized_dimension_in_forward(language):
    mod = mxlearn.Module(_net())
    train = _iter()
    mod.bind(train.provide_data, train.provide_label)
    mod.init_params()
    batch = mx.io.DataBatch([mx.nd.array(np.zeros((32, 0)))], [mx.nd.zeros((32,))])
    with pytest.raises(MXLearnError) as caught:
        mod.forward(batch, is_train=True)
    _explained(caught.value, language, "mod.forward()")


@pytest.mark.parametrize(
    "damage", ['{"nodes": [ broken', '{"nodes": [], "arg_nodes": [], "heads": [[5, 0, 0]]}']
)
def test_a_damaged_symbol_file_at_load_checkpoint(tmp_path, language, damage):
    prefix = str(tmp_path / "plain")  # saved by MXNet itself: no manifest to compare with
    mod = mxlearn.Module(_net())
    mod.fit(_iter(), num_epoch=1)
    mx.model.save_checkpoint(prefix, 1, mod.symbol, *mod.get_params())
    (tmp_path / "plain-symbol.json").write_text(damage)
    with pytest.raises(MXLearnError) as caught:
        mxlearn.load_checkpoint(prefix, 1)
    assert not any(noise in str(caught.value) for noise in ENGINE_NOISE)
    assert bool(CJK.search(str(caught.value))) == (language == "zh")


def test_mxnets_message_is_condensed_to_its_meaningful_line():
    try:
        mx.nd.ones((2, 3)).reshape((7,))
    except mx.base.MXNetError as raw:
        line = condensed(raw)
    assert "Stack trace" not in line and "\n" not in line and line


class Broken(mxlearn.Callback):
    def on_epoch_end(self, run, epoch):
        raise ValueError("my callback's own bug")


def test_an_error_in_the_students_callback_stays_theirs():
    with pytest.raises(ValueError, match="my callback's own bug") as caught:
        mxlearn.Module(_net()).fit(_iter(), num_epoch=1, callbacks=[Broken()])
    assert not isinstance(caught.value, MXLearnError)
    assert any("your own code" in note for note in caught.value.__notes__)
    assert any("test_boundary.py" in note for note in caught.value.__notes__)


def test_an_error_in_the_students_metric_stays_theirs():
    def feval(label, pred):
        return 1 / 0

    metric = mx.metric.CustomMetric(feval, name="mine")
    with pytest.raises(ZeroDivisionError) as caught:
        mxlearn.Module(_net()).fit(_iter(), num_epoch=1, eval_metric=metric)
    assert not isinstance(caught.value, MXLearnError)
    assert any("your own code" in note for note in caught.value.__notes__)


class FailingIter(mx.io.NDArrayIter):
    def next(self):
        if self.cursor > 0:
            raise KeyError("my iterator's own bug")
        return super().next()


def test_an_error_in_the_students_iterator_stays_theirs():
    X = np.zeros((96, 16), "float32")
    data = FailingIter(X, np.zeros(96, "float32"), batch_size=32)
    with pytest.raises(KeyError) as caught:
        mxlearn.Module(_net()).fit(data, num_epoch=1)
    assert not isinstance(caught.value, MXLearnError)


# ---------------------------------------------------------------- found by a hostile probe
def _bound():
    mod = mxlearn.Module(_net())
    train = _iter()
    mod.bind(train.provide_data, train.provide_label)
    mod.init_params()
    return mod, train


class SimpleBatch:  # MXNet's custom-iterator idiom: any object with data and label
    def __init__(self, data, label):
        self.data, self.label, self.pad = data, label, 0
        self.provide_data = self.provide_label = None


class SimpleIter(mx.io.DataIter):
    def __init__(self):
        super().__init__(32)
        self.inner = _iter()
        self.provide_data, self.provide_label = self.inner.provide_data, self.inner.provide_label

    def reset(self):
        self.inner.reset()

    def next(self):
        batch = self.inner.next()
        return SimpleBatch(batch.data, batch.label)


def test_a_batch_of_the_students_own_class_trains_as_in_mxnet():
    mxlearn.Module(_net()).fit(SimpleIter(), num_epoch=1)


@pytest.mark.parametrize(
    "initializer",
    [
        mx.init.Mixed([".*"], [mx.init.Xavier()]),
        mx.init.Load({}, default_init=mx.init.Xavier()),
        lambda desc, array: array.__setitem__(slice(None), 0.1),
    ],
)
def test_every_initializer_mxnet_takes_is_taken(initializer):
    mod, _ = _bound()
    mod.init_params(initializer, force_init=True)


@pytest.mark.parametrize("grad_req", [["write"] * 6, ("write",) * 6, np.str_("write")])
def test_every_grad_req_mxnet_takes_is_taken(grad_req):
    train = _iter()
    mxlearn.Module(_net()).bind(train.provide_data, train.provide_label, grad_req=grad_req)


def test_flags_given_as_0_and_1_are_taken_as_mxnet_takes_them():
    train = _iter()
    mod = mxlearn.Module(_net())
    mod.bind(train.provide_data, train.provide_label, for_training=1)
    mod.init_params()
    mod.forward(next(iter(train)), is_train=0)


def test_an_mxnet_operator_failing_inside_a_call_is_mxnets_not_the_students():
    mod, train = _bound()
    batch = next(iter(train))
    mod.forward(batch, is_train=True)
    with pytest.raises(CallFailed) as caught:
        mod.update_metric(mx.metric.Accuracy(axis=3), batch.label)
    assert caught.value.fields["where"] == "MXNet"
    assert isinstance(caught.value, mx.base.MXNetError)  # except MXNetError still catches it


def test_mxnets_traceback_format_keeps_its_reason(tmp_path):
    mod, _ = _bound()
    missing = tmp_path / "no-such-folder" / "m.params"
    with pytest.raises(MXLearnError) as caught:
        mod.save_params(str(missing))
    assert "no-such-folder" in str(caught.value) and "Traceback" not in str(caught.value)


def test_stop_iteration_in_the_students_callback_stays_theirs():
    with pytest.raises(RuntimeError) as caught:
        mxlearn.Module(_net()).fit(
            _iter(), num_epoch=1, batch_end_callback=lambda params: next(iter([]))
        )
    assert not isinstance(caught.value, MXLearnError)
    assert any("your own code" in note for note in caught.value.__notes__)


def test_a_warning_points_at_the_students_line():
    mod, _ = _bound()
    with pytest.warns(UserWarning) as warned:
        mod.init_optimizer(optimizer=mx.optimizer.SGD(learning_rate=0.1))
    assert {w.filename for w in warned} == {__file__}


def test_errors_cross_a_process_boundary():
    import pickle

    mod, train = _bound()
    with pytest.raises(MXLearnError) as refused:
        mod.forward(next(iter(train)), is_train="yes")
    with pytest.raises(CallFailed) as failed:
        _top_9_of_4_classes()
    for error in (refused.value, failed.value):
        again = pickle.loads(pickle.dumps(error))
        assert type(again).__name__ == type(error).__name__
        assert str(again) == str(error) and again.fields == error.fields


def test_an_error_while_iter_predict_runs_is_explained_too():
    class Failing(FailingIter):
        pass

    X = np.zeros((96, 16), "float32")
    mod = mxlearn.Module(_net())
    mod.fit(_iter(), num_epoch=1)
    with pytest.raises(KeyError) as caught:
        for _ in mod.iter_predict(Failing(X, np.zeros(96, "float32"), batch_size=32)):
            pass
    assert any("your own code" in note for note in caught.value.__notes__)
