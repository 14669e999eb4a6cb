"""mod.predict and mod.score: an array is predicted in inference mode at any number of rows, a
module stays usable after data of another shape, and no rows or no labels are explained."""

from __future__ import annotations

import re

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.guards.arguments import NoLabelsToScore, NoRows
from mxlearn.guards.binding import LabelParamKeepsItsRows, LabelTakenForAParameter, ParamsDoNotMatch


def _dropout_net(num_classes=4):
    net = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(net, name="fc1", num_hidden=32)
    net = mx.sym.Activation(net, act_type="relu")
    net = mx.sym.Dropout(net, p=0.5)
    net = mx.sym.FullyConnected(net, name="fc2", num_hidden=num_classes)
    return mx.sym.SoftmaxOutput(net, name="softmax")


def test_predict_on_an_array_runs_in_inference_mode_at_any_number_of_rows(small_data):
    X, y = small_data
    mod = mxlearn.Module(_dropout_net())
    mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1, optimizer_params={"learning_rate": 0.1})
    first = mod.predict(X[:50]).asnumpy()  # 50 rows after training at batch 32
    again = mod.predict(mx.nd.array(X[:50])).asnumpy()
    assert first.shape == (50, 4)
    np.testing.assert_array_equal(first, again)  # no Dropout: the same answer twice
    by_iter = mod.predict(mx.io.NDArrayIter(X[:50], batch_size=10)).asnumpy()
    np.testing.assert_allclose(first, by_iter, rtol=1e-5, atol=1e-7)


def test_predict_after_another_feature_shape_leaves_the_module_usable(small_data, small_net):
    X, y = small_data
    mod = mxlearn.Module(small_net)
    mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1)
    assert mod.predict(X[:4].reshape(4, 4, 4)).shape == (4, 4)
    assert mod.predict(X[:4]).shape == (4, 4)
    assert mod.predict(mx.io.NDArrayIter(X, y, 32)).shape == (len(X), 4)


def test_predict_and_score_without_rows_or_labels_are_explained(ready_module, small_data):
    X, _ = small_data
    with pytest.raises(NoRows) as refused:
        ready_module.predict(X[:0])
    assert refused.value.fields == {"called": "mod.predict()", "shape": (0, X.shape[1])}
    with pytest.raises(NoLabelsToScore):
        ready_module.score(mx.io.NDArrayIter(X, None, 32), "acc")


def _trained(small_data, small_net):
    X, y = small_data
    mod = mxlearn.Module(small_net)
    mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1, optimizer_params={"learning_rate": 0.1})
    return mod


def test_a_predictor_without_label_names_takes_trained_weights_as_in_mxnets_idiom(
    small_data, small_net
):
    """Module(net, label_names=None): MXNet takes the loss layer's label for a parameter, and
    its idiom is set_params(..., allow_missing=True); the label is never read to predict."""
    X, _ = small_data
    trained = _trained(small_data, small_net)
    predictor = mxlearn.Module(small_net, label_names=None)
    predictor.bind([("data", (32, 16))], for_training=False)
    with pytest.raises(LabelTakenForAParameter) as refused:
        predictor.set_params(*trained.get_params())
    assert refused.value.fields["name"] == "softmax_label"
    assert "allow_missing=True" in refused.value.fix
    # the advice followed: the predictions are the trained module's (at the bound batch size:
    # the label taken for a parameter has the batch's shape)
    predictor.set_params(*trained.get_params(), allow_missing=True)
    rows = mx.io.NDArrayIter(X[:64], batch_size=32)
    expected = trained.predict(X[:64]).asnumpy()
    np.testing.assert_allclose(predictor.predict(rows).asnumpy(), expected, rtol=1e-6)


def test_a_predictor_without_label_names_cannot_start_from_an_initializer(small_net):
    predictor = mxlearn.Module(small_net, label_names=None)
    predictor.bind([("data", (32, 16))], for_training=False)
    with pytest.raises(LabelTakenForAParameter) as refused:
        predictor.init_params()
    assert refused.value.fields["name"] == "softmax_label"
    # the advice followed: a module that keeps its label starts from the initializer
    call = re.search(r"mxlearn\.Module\(net\)", refused.value.fix).group(0)
    fixed = eval(call, {"mxlearn": mxlearn, "net": small_net})
    fixed.bind([("data", (32, 16))], for_training=False)
    fixed.init_params()
    assert fixed.predict(np.zeros((3, 16), "float32")).shape == (3, 4)


def test_other_missing_parameters_are_still_named_beside_the_label(small_data, small_net):
    trained = _trained(small_data, small_net)
    arg_params, aux_params = trained.get_params()
    del arg_params["fc1_weight"]
    predictor = mxlearn.Module(small_net, label_names=None)
    predictor.bind([("data", (32, 16))], for_training=False)
    with pytest.raises(ParamsDoNotMatch) as refused:
        predictor.set_params(arg_params, aux_params)
    assert "fc1_weight" in refused.value.fields["problems"]


def test_a_module_bound_without_labels_predicts_arrays_of_any_number_of_rows(small_net):
    """Exercise 01.2's predictor: bound with the data shapes only, for_training=False."""
    mod = mxlearn.Module(small_net)
    mod.bind([("data", (32, 16))], for_training=False)
    mod.init_params()
    rows = np.random.RandomState(0).rand(50, 16).astype("float32")
    whole = mod.predict(rows).asnumpy()
    for n in (3, 32, 7):
        np.testing.assert_allclose(mod.predict(rows[:n]).asnumpy(), whole[:n], rtol=1e-6)


@pytest.mark.parametrize("rows", [3, 50])
def test_a_predictor_without_label_names_at_another_batch_size_names_the_label(
    small_data, small_net, rows
):
    """MXNet cannot reshape a label taken for a parameter ("Shape of unspecified array arg
    softmax_label changed"): refused naming it, with MXNet's way to predict at any size."""
    X, _ = small_data
    trained = _trained(small_data, small_net)
    predictor = mxlearn.Module(small_net, label_names=None)
    predictor.bind([("data", (32, 16))], for_training=False)
    predictor.set_params(*trained.get_params(), allow_missing=True)
    with pytest.raises(LabelParamKeepsItsRows) as refused:
        predictor.predict(X[:rows])
    assert refused.value.fields["name"] == "softmax_label"
    assert (refused.value.fields["bound"], refused.value.fields["rows"]) == (32, rows)
    # the advice followed: a module that keeps its label, bound without it, takes any rows
    call = re.search(r"mxlearn\.Module\(net\)", refused.value.fix).group(0)
    fixed = eval(call, {"mxlearn": mxlearn, "net": small_net})
    fixed.bind([("data", (32, 16))], for_training=False)
    fixed.set_params(*trained.get_params())
    expected = trained.predict(X[:rows]).asnumpy()
    np.testing.assert_allclose(fixed.predict(X[:rows]).asnumpy(), expected, rtol=1e-6)


def test_a_module_without_label_names_cannot_score_and_says_so(small_data, small_net):
    X, y = small_data
    predictor = mxlearn.Module(small_net, label_names=None)
    predictor.bind([("data", (32, 16))], for_training=False)
    predictor.set_params(*_trained(small_data, small_net).get_params(), allow_missing=True)
    with pytest.raises(NoLabelsToScore) as refused:
        predictor.score(mx.io.NDArrayIter(X, y, 32), "acc")
    # the advice followed: a module that reads the label scores the same weights
    assert "mxlearn.Module(net)" in refused.value.fix
    scorer = mxlearn.Module(small_net)
    val = mx.io.NDArrayIter(X, y, 32)
    scorer.bind(val.provide_data, val.provide_label, for_training=False)
    scorer.set_params(*predictor.get_params(), allow_extra=True)
    assert 0 <= scorer.score(val, "acc")[0][1] <= 1


def _predictor(small_data, small_net, cls=mxlearn.Module):
    trained = _trained(small_data, small_net)
    predictor = cls(small_net, label_names=None)
    predictor.bind([("data", (32, 16))], for_training=False)
    predictor.set_params(*trained.get_params(), allow_missing=True)
    return trained, predictor


def test_a_predictors_checkpoint_holds_weights_only_and_loads_at_any_batch_size(
    tmp_path, small_data, small_net
):
    X, _ = small_data
    trained, predictor = _predictor(small_data, small_net)
    predictor.save_checkpoint(str(tmp_path / "p"), 1)
    assert "arg:softmax_label" not in mx.nd.load(str(tmp_path / "p-0001.params"))
    loaded = mxlearn.Module.load(str(tmp_path / "p"), 1)
    expected = trained.predict(X[:3]).asnumpy()
    np.testing.assert_allclose(loaded.predict(X[:3]).asnumpy(), expected, rtol=1e-6)


def test_mxnets_own_predictor_checkpoint_with_its_label_loads_as_weights(
    tmp_path, small_data, small_net
):
    X, _ = small_data
    trained, theirs = _predictor(small_data, small_net, mx.mod.Module)  # MXNet saves the label
    theirs.save_checkpoint(str(tmp_path / "m"), 1)
    assert "arg:softmax_label" in mx.nd.load(str(tmp_path / "m-0001.params"))
    loaded = mxlearn.Module.load(str(tmp_path / "m"), 1)
    expected = trained.predict(X[:3]).asnumpy()
    np.testing.assert_allclose(loaded.predict(X[:3]).asnumpy(), expected, rtol=1e-6)


def test_a_module_without_label_names_cannot_train_and_says_what_can(small_data, small_net):
    X, y = small_data
    _, predictor = _predictor(small_data, small_net)
    labelled = mx.io.NDArrayIter(X, y, 32)
    with pytest.raises(LabelTakenForAParameter) as refused:
        predictor.fit(labelled, num_epoch=1, force_rebind=True)
    assert type(refused.value).__name__ == "LabelTakenForTraining"
    call = re.search(r"mxlearn\.Module\(net\)", refused.value.fix).group(0)
    fixed = eval(call, {"mxlearn": mxlearn, "net": small_net})  # the advice followed
    fixed.fit(labelled, num_epoch=1)
    assert fixed.predict(X[:3]).shape == (3, 4)
