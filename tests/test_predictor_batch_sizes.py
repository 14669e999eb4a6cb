"""A module bound for prediction, with or without label shapes, predicts iterators and forwards
of any batch size: the label argument MXNet keeps follows the data's rows (MXNet's own module
fails, "Shape of unspecified arg: softmax_label changed"). The numbers are those of plain
``mx.mod.Module`` bound at each batch size."""

from __future__ import annotations

import re

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.guards.binding import BoundWithoutLabels, LabelParamKeepsItsRows

X = np.random.RandomState(0).rand(10, 5).astype("float32")
Y = np.random.RandomState(1).randint(0, 3, 10).astype("float32")


def _net():
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    return mx.sym.SoftmaxOutput(fc, name="softmax")


@pytest.fixture
def params():
    mx.random.seed(0)
    mod = mx.mod.Module(_net())
    mod.bind([("data", (5, 5))], [("softmax_label", (5,))])
    mod.init_params(mx.init.Xavier())
    return mod.get_params()


def _reference(params, rows):
    """Plain MXNet, bound with labels at the batch size of ``rows``."""
    mod = mx.mod.Module(_net())
    mod.bind([("data", rows.shape)], [("softmax_label", rows.shape[:1])], for_training=False)
    mod.set_params(*params)
    mod.forward(mx.io.DataBatch([mx.nd.array(rows)]), is_train=False)
    return mod.get_outputs()[0].asnumpy()


def _every_size(mod, params):
    expected = _reference(params, X)
    for batch_size in (4, 5, 2):
        got = mod.predict(mx.io.NDArrayIter(X, batch_size=batch_size)).asnumpy()
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    labelled = mod.predict(mx.io.NDArrayIter(X, Y, batch_size=5)).asnumpy()
    np.testing.assert_allclose(labelled, expected, rtol=1e-6)
    mod.forward(mx.io.DataBatch([mx.nd.array(X[:6])]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), expected[:6], rtol=1e-6)
    np.testing.assert_allclose(mod.predict(X[:3]).asnumpy(), expected[:3], rtol=1e-6)


@pytest.mark.parametrize("context", [[mx.cpu()], [mx.cpu(0), mx.cpu(1)]])
def test_a_module_bound_with_data_only_predicts_at_any_batch_size(params, context):
    mod = mxlearn.Module(_net(), context=context)
    mod.bind([("data", (4, 5))], for_training=False)
    mod.set_params(*params)
    _every_size(mod, params)


def test_a_module_bound_with_labels_for_prediction_predicts_at_any_batch_size(params):
    mod = mxlearn.Module(_net())
    mod.bind([("data", (4, 5))], [("softmax_label", (4,))], for_training=False)
    mod.set_params(*params)
    _every_size(mod, params)


def test_the_label_param_refusals_advice_followed_predicts_at_any_batch_size(params):
    predictor = mxlearn.Module(_net(), label_names=None)
    predictor.bind([("data", (4, 5))], for_training=False)
    predictor.set_params(*params, allow_missing=True)
    with pytest.raises(LabelParamKeepsItsRows) as refused:
        predictor.predict(mx.io.NDArrayIter(X, batch_size=5))
    fix = refused.value.fix
    assert re.search(r"mxlearn\.Module\(net\)", fix) and "for_training=False" in fix
    fixed = mxlearn.Module(_net())  # the advice, literally
    fixed.bind(data_shapes=[("data", (4, 5))], for_training=False)
    fixed.set_params(*params)
    _every_size(fixed, params)


def test_a_loaded_checkpoint_predicts_unlabelled_iterators_of_any_batch_size(tmp_path, params):
    saved = mxlearn.Module(_net())
    saved.bind([("data", (5, 5))], [("softmax_label", (5,))])
    saved.set_params(*params)
    saved.save_checkpoint(str(tmp_path / "a"), 1)
    _every_size(mxlearn.Module.load(str(tmp_path / "a"), 1), params)
    bound = mxlearn.Module.load(str(tmp_path / "a"), 1)
    bound.bind(data_shapes=[("data", (4, 5))], for_training=False)
    _every_size(bound, params)


def test_a_sequence_label_follows_the_batch_axis_of_time_major_data():
    """TNC data, a label the network infers as (T, N): a new N reshapes it on its axis 1."""
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, flatten=False, name="fc")
    net = mx.sym.SoftmaxOutput(fc, name="softmax", preserve_shape=True)
    data = np.random.RandomState(2).rand(5, 6, 2).astype("float32")
    devices = [mx.cpu(0), mx.cpu(1)]  # each a slice of the sequences, along axis 1
    mod = mxlearn.Module(net, context=devices)
    mod.bind([mx.io.DataDesc("data", (5, 4, 2), layout="TNC")], for_training=False)
    mod.init_params(mx.init.Xavier())
    arg_params, aux_params = mod.get_params()
    for n in (6, 2):
        mod.forward(mx.io.DataBatch([mx.nd.array(data[:, :n])]), is_train=False)
        ref = mx.mod.Module(net, context=devices)
        shapes = [mx.io.DataDesc("data", (5, n, 2), layout="TNC")]
        ref.bind(shapes, [mx.io.DataDesc("softmax_label", (5, n), layout="TN")], False)
        ref.set_params(arg_params, aux_params)
        ref.forward(mx.io.DataBatch([mx.nd.array(data[:, :n])]), is_train=False)
        got = mod.get_outputs()[0].asnumpy()
        np.testing.assert_allclose(got, ref.get_outputs()[0].asnumpy(), rtol=1e-6)


def test_a_module_bound_with_data_only_reads_no_labels_at_any_batch_size(params):
    """As MXNet's at the bound batch size: a batch's labels are not read (MXNet fails on them at
    another size, "'NoneType' object is not iterable")."""
    expected = _reference(params, X)
    mod = mxlearn.Module(_net())
    mod.bind([("data", (4, 5))], for_training=False)
    mod.set_params(*params)
    for rows, labels in ((6, Y[:6]), (6, Y[:6, None]), (4, Y[:4, None])):
        mod.forward(mx.io.DataBatch([mx.nd.array(X[:rows])], [mx.nd.array(labels)]), False)
        np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), expected[:rows], rtol=1e-6)
    assert mod.label_shapes is None


@pytest.mark.parametrize("rows", [4, 6])  # the bound batch size, and another
def test_a_module_bound_with_data_only_cannot_score_and_says_how(params, rows):
    """MXNet has no labels to slice over the devices ("'NoneType' object is not iterable")."""
    mod = mxlearn.Module(_net())
    mod.bind([("data", (4, 5))], for_training=False)
    mod.set_params(*params)
    mod.forward(mx.io.DataBatch([mx.nd.array(X[:rows])]), is_train=False)
    with pytest.raises(BoundWithoutLabels) as refused:
        mod.update_metric(mx.metric.Accuracy(), [mx.nd.array(Y[:rows])])
    assert refused.value.fields["called"] == "mod.update_metric()"
    val = mx.io.NDArrayIter(X, Y, batch_size=4)
    with pytest.raises(BoundWithoutLabels) as refused:
        mod.score(val, "acc")
    fix = refused.value.fix
    assert fix.startswith("mod.bind(val_iter.provide_data, val_iter.provide_label")
    eval(fix, {"mod": mod, "val_iter": val})  # the advice followed
    accuracy = float((_reference(params, X).argmax(axis=1) == Y).mean())
    for batch_size in (4, 5, 2):  # padded, and other batch sizes
        score = mod.score(mx.io.NDArrayIter(X, Y, batch_size=batch_size), "acc")
        assert score == [("accuracy", pytest.approx(accuracy))]


def test_the_refusal_to_train_without_labels_advice_followed_predicts_at_any_batch_size(params):
    predictor = mxlearn.Module(_net(), label_names=None)
    predictor.bind([("data", (5, 5))], for_training=False)
    predictor.set_params(*params, allow_missing=True)
    with pytest.raises(mxlearn.errors.MXLearnError) as refused:
        predictor.fit(mx.io.NDArrayIter(X, Y, batch_size=5), num_epoch=1, force_rebind=True)
    assert type(refused.value).__name__ == "LabelTakenForTraining"
    assert "any batch size" in refused.value.fix
    trained = mxlearn.Module(_net())  # the advice followed
    trained.fit(mx.io.NDArrayIter(X, Y, batch_size=5), num_epoch=1, arg_params=params[0])
    _every_size(trained, trained.get_params())
