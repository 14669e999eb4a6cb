"""Every check that fails with advice is followed, on the run that made it fail: doing what the
fix says makes that check pass (the course's letters for the learning checks)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SHARED_DATA

import mxlearn
from mxlearn import checks, mx
from mxlearn.checks import (
    BeginEpochSkips,
    GradientsCutOff,
    GradientsNotFinite,
    NoBackwardYet,
    NotLearned,
    NotLearnedEnough,
    ParametersNotGiven,
    ParametersUnchanged,
)

ROWS = 4000


@pytest.fixture(scope="module")
def letters():
    return mxlearn.datasets.letter_recognition(SHARED_DATA)


def _iters(letters, labels=None):
    X, y = letters
    y = y if labels is None else labels
    train = mx.io.NDArrayIter(X[:ROWS], y[:ROWS], 32, shuffle=True)
    return train, mx.io.NDArrayIter(X[16000:], y[16000:], 32)


def _fit(letters, rate, epochs, labels=None, net=None):
    mxlearn.seed(0)
    train, val = _iters(letters, labels)
    mod = mxlearn.Module(net if net is not None else mxlearn.models.mlp())
    mod.fit(train, num_epoch=epochs, optimizer_params={"learning_rate": rate})
    return mod, val


@pytest.mark.parametrize(
    ("rate", "epochs", "shuffled"),
    [(0.0001, 1, False), (10.0, 1, False), (0.1, 3, True)],
    ids=["rate too low", "rate too high", "labels apart from their rows"],
)
def test_not_learned_is_found_by_following_its_two_steps(letters, rate, epochs, shuffled):
    X, y = letters
    labels = y.copy()
    if shuffled:  # the training labels shuffled on their own
        np.random.RandomState(0).shuffle(labels[:ROWS])
    mod, val = _fit(letters, rate, epochs, labels)
    with pytest.raises(NotLearned) as failed:
        checks.learned(mod, val)
    assert "'learning_rate': 0.1" in failed.value.fix and "X[p], y[p]" in failed.value.fix
    # step 1: a new module at learning_rate 0.1 for 3 epochs
    mod, val = _fit(letters, 0.1, 3, labels)
    try:
        checks.learned(mod, val)
        assert not shuffled  # the rate was the cause
    except NotLearned:
        assert shuffled
        # step 2: X and y shuffled with one permutation keep each row's label
        p = np.random.RandomState(0).permutation(ROWS)
        X2, y2 = X.copy(), y.copy()
        X2[:ROWS], y2[:ROWS] = X[:ROWS][p], y[:ROWS][p]
        mod, val = _fit((X2, y2), 0.1, 3)
        checks.learned(mod, val)


def test_not_learned_enough_is_passed_by_more_epochs(letters):
    mod, val = _fit(letters, 0.1, 3)
    with pytest.raises(NotLearnedEnough) as failed:
        checks.learned(mod, val, above=0.55)
    assert "begin_epoch" in failed.value.fix
    train, _ = _iters(letters)
    mod.fit(train, begin_epoch=3, num_epoch=6, optimizer_params={"learning_rate": 0.1})
    checks.learned(mod, val, above=0.55)


def _bound(net=None, rate=0.1):
    mxlearn.seed(0)
    X, y = mxlearn.datasets.synthetic_classification(num_samples=256, seed=1)
    it = mx.io.NDArrayIter(X, y, 32)
    mod = mxlearn.Module(
        net if net is not None else mxlearn.models.mlp(num_classes=4, num_hidden=16)
    )
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer_params={"learning_rate": rate})
    return mod, next(iter(it))


def test_parameters_unchanged_is_passed_by_a_whole_step():
    mod, batch = _bound()
    before = checks.snapshot(mod)
    mod.forward(batch, is_train=True)  # a forward alone
    with pytest.raises(ParametersUnchanged):
        checks.parameters_changed(mod, before)
    # the fix: per batch, forward, backward, update
    mod.forward(batch, is_train=True)
    mod.backward()
    mod.update()
    checks.parameters_changed(mod, before)


def test_no_backward_yet_is_passed_by_its_fix():
    mod, batch = _bound()
    mod.forward(batch, is_train=True)
    with pytest.raises(NoBackwardYet) as failed:
        checks.gradients_computed(mod)
    assert failed.value.fix == "mod.forward(batch, is_train=True); mod.backward()"
    mod.forward(batch, is_train=True)
    mod.backward()
    checks.gradients_computed(mod)


def _net(grad_scale):
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    return mx.sym.SoftmaxOutput(net, name="softmax", grad_scale=grad_scale)


def test_gradients_cut_off_is_passed_without_the_grad_scale_0_it_points_at():
    mod, batch = _bound(_net(0.0))
    mod.forward_backward(batch)
    with pytest.raises(GradientsCutOff) as failed:
        checks.gradients_computed(mod)
    assert "grad_scale=0" in str(failed.value)
    mod, batch = _bound(_net(1.0))
    mod.forward_backward(batch)
    checks.gradients_computed(mod)


def test_gradients_not_finite_are_passed_at_a_lower_rate():
    mod, batch = _bound(rate=1e30)
    for _ in range(3):
        mod.forward_backward(batch)
        mod.update()
    mod.forward_backward(batch)
    with pytest.raises(GradientsNotFinite) as failed:
        checks.gradients_computed(mod)
    assert "lower the learning rate" in failed.value.fix
    mod, batch = _bound(rate=0.1)
    for _ in range(4):
        mod.forward_backward(batch)
        mod.update()
    mod.forward_backward(batch)
    checks.gradients_computed(mod)


def test_begin_epoch_skips_is_passed_by_the_begin_epoch_it_names(tmp_path):
    prefix = str(tmp_path / "m")
    X, y = mxlearn.datasets.synthetic_classification(num_samples=256, seed=1)
    it = mx.io.NDArrayIter(X, y, 32)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=16))
    mod.fit(it, num_epoch=2, epoch_end_callback=mx.callback.do_checkpoint(prefix))
    with pytest.raises(BeginEpochSkips) as failed:
        checks.begin_epoch_matches(prefix, 2, 3)
    begin = int(failed.value.fix.split("=")[1])
    checks.begin_epoch_matches(prefix, 2, begin)
    resumed = mxlearn.Module.load(prefix, 2)
    resumed.fit(it, begin_epoch=begin, num_epoch=3)


def test_parameters_not_given_is_passed_by_set_params():
    mod, batch = _bound()
    saved = {k: v.copy() for k, v in mod.get_params()[0].items()}, mod.get_params()[1]
    mod.forward_backward(batch)
    mod.update()
    with pytest.raises(ParametersNotGiven) as failed:
        checks.parameters_equal(mod, *saved)
    assert failed.value.fix == "mod.set_params(arg_params, aux_params)"
    mod.set_params(*saved)
    checks.parameters_equal(mod, *saved)
