"""Students' self-checks pass after a right step and explain a wrong one."""

from __future__ import annotations

import pytest

import mxlearn
from mxlearn import checks, mx
from mxlearn.checks import (
    BeginEpochRepeats,
    GradientsCutOff,
    NoBackwardYet,
    NoSuchCheckpoint,
    NotLearned,
    NotLearnedEnough,
    ParametersNotGiven,
    ParametersUnchanged,
    WrongOutputShape,
    WrongPredictionShape,
)


def test_checks_of_a_training_step(ready_module, small_iter, capsys):
    small_iter.reset()
    batch = next(iter(small_iter))
    checks.output_shape(ready_module, (32, 4))
    before = checks.snapshot(ready_module)
    trained = sorted(ready_module.get_params()[0])
    with pytest.raises(ParametersUnchanged) as unchanged:
        checks.parameters_changed(ready_module, before)
    assert sorted(unchanged.value.fields["names"]) == trained
    with pytest.raises(NoBackwardYet) as no_backward:
        checks.gradients_computed(ready_module)
    assert type(no_backward.value) is NoBackwardYet
    ready_module.forward(batch, is_train=True)
    ready_module.backward()
    checks.gradients_computed(ready_module)
    ready_module.update()
    checks.parameters_changed(ready_module, before)
    out = capsys.readouterr().out
    assert out.count("OK:") == 3
    with pytest.raises(WrongOutputShape) as wrong:
        checks.output_shape(ready_module, (32, 26))
    assert wrong.value.fields["shape"] == (32, 4)
    assert wrong.value.fields["expected"] == (32, 26)
    with pytest.raises(AssertionError):  # a failed check is also an AssertionError
        checks.output_shape(ready_module, (1, 1))


def test_begin_epoch_check(tmp_path, small_iter):
    prefix = str(tmp_path / "m")
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    mod.fit(small_iter, num_epoch=3, epoch_end_callback=mx.callback.do_checkpoint(prefix))
    checks.begin_epoch_matches(prefix, 3, 3)
    with pytest.raises(BeginEpochRepeats) as info:
        checks.begin_epoch_matches(prefix, 3, 0)
    assert type(info.value) is BeginEpochRepeats
    assert info.value.fields["epoch"] == 3 and info.value.fields["begin"] == 0
    assert info.value.fix == "begin_epoch=3"
    with pytest.raises(NoSuchCheckpoint) as missing:
        checks.begin_epoch_matches(prefix, 7, 7)
    assert missing.value.fields["epoch"] == 7 and missing.value.fields["prefix"] == prefix
    assert 7 not in missing.value.fields["saved"] and 3 in missing.value.fields["saved"]


def test_learned_passes_a_trained_network_and_explains_an_untrained_one(
    small_net, small_iter, capsys
):
    mod = mxlearn.Module(small_net)
    mod.fit(small_iter, num_epoch=3, optimizer_params={"learning_rate": 0.1})
    checks.learned(mod, small_iter, above=0.5)
    assert "OK: accuracy" in capsys.readouterr().out
    with pytest.raises(NotLearnedEnough) as info:
        checks.learned(mod, small_iter, above=0.999)
    assert type(info.value) is NotLearnedEnough
    fields = info.value.fields
    assert fields["above"] == 0.999 and fields["guessing"] < fields["accuracy"] <= 0.999
    args, auxs = mod.get_params()
    mod.set_params({k: v.zeros_like() for k, v in args.items()}, auxs)  # predicts class 0 only
    with pytest.raises(NotLearned) as info:
        checks.learned(mod, small_iter)
    assert type(info.value) is NotLearned
    assert info.value.fields["accuracy"] <= info.value.fields["guessing"]


def test_prediction_shape_and_parameters_equal(ready_module, small_iter, capsys):
    predictions = ready_module.predict(small_iter)
    checks.prediction_shape(predictions, small_iter, 4)
    with pytest.raises(WrongPredictionShape) as wrong:
        checks.prediction_shape(predictions, small_iter, 26)
    assert wrong.value.fields["shape"] == (256, 4)
    assert wrong.value.fields["rows"] == 256 and wrong.value.fields["classes"] == 26
    args, auxs = ready_module.get_params()
    saved = ({k: v.copy() for k, v in args.items()}, auxs)
    checks.parameters_equal(ready_module, *saved)
    small_iter.reset()
    ready_module.forward_backward(next(iter(small_iter)))
    ready_module.update()
    with pytest.raises(ParametersNotGiven) as info:
        checks.parameters_equal(ready_module, *saved)
    assert info.value.fields["differ"] == sorted(args) and info.value.fields["missing"] == []
    assert "mod.set_params(" in info.value.fix
    assert capsys.readouterr().out.count("OK:") == 2


def test_zero_gradients_after_backward_are_not_blamed_on_a_missing_backward(small_iter):
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    net = mx.sym.SoftmaxOutput(net, name="softmax", grad_scale=0.0)  # passes no gradient back
    mod = mxlearn.Module(net, context=mx.cpu())
    mod.bind(small_iter.provide_data, small_iter.provide_label)
    mod.init_params(initializer=mx.init.Uniform(0.1))
    small_iter.reset()
    mod.forward(next(iter(small_iter)), is_train=True)
    mod.backward()
    with pytest.raises(GradientsCutOff) as failed:
        checks.gradients_computed(mod)
    assert type(failed.value) is GradientsCutOff  # not NoBackwardYet: backward did run
