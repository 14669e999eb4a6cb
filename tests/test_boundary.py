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


def test_a_zero_sized_batch_at_bind(language):
    mod = mxlearn.Module(_net())
    with pytest.raises(CallFailed) as caught:
        mod.bind([("data", (0, 16))], [("softmax_label", (0,))])
    _explained(caught.value, language, "mod.bind()")
    assert caught.value.fields["where"] == "MXNet"
    assert caught.value.state  # the module's state, as every module error gives it
    assert isinstance(caught.value, ValueError)  # the family MXNet's error was
    assert isinstance(caught.value.__cause__, ValueError)  # and the raw one kept for %tb


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
