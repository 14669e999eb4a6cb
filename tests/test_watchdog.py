"""The divergence watchdog in fit: growing or non-finite losses stop training with the likely
cause; a classifier stuck on one class gets one warning; healthy training is left alone."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from conftest import seed_all

import mxlearn
from mxlearn import checkpoint as ckpt
from mxlearn import mx
from mxlearn.errors import DivergenceError, NonFiniteError, TrainingWarning
from mxlearn.training.rate_probe import USUAL_RATES, candidates
from mxlearn.training.watchdog import LOSS_KINDS, LossDiverging, WeightsNotFinite, _where


def _regression_iter(num_samples):
    X, y, _ = mxlearn.datasets.synthetic_regression(num_samples=num_samples, num_features=8)
    return mx.io.NDArrayIter(X, y, 32, label_name="lro_label")


def _fit_regression(learning_rate, num_samples, seen):
    seed_all(0)
    mod = mxlearn.Module(mxlearn.models.linear_regression(), label_names=["lro_label"])
    mod.fit(
        _regression_iter(num_samples),
        eval_metric="mse",
        optimizer_params={"learning_rate": learning_rate},
        num_epoch=3,
        batch_end_callback=lambda p: seen.append((p.epoch, p.nbatch)),
    )
    return mod


def _letter_iters():
    return mxlearn.datasets.letter_iters(batch_size=32)


def _fit_letters(learning_rate, num_epoch=1, **fit_args):
    seed_all(0)
    train, _ = _letter_iters()
    mod = mxlearn.Module(mxlearn.models.mlp())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod.fit(
            train,
            optimizer_params={"learning_rate": learning_rate},
            num_epoch=num_epoch,
            **fit_args,
        )
    return mod, [w for w in caught if issubclass(w.category, TrainingWarning)]


def _probed_rates(cause: str) -> list[float]:
    """The rates a probe reports in the cause ("10: 5.5 -> 4.7, 1: ..."), in its order."""
    return [float(rate) for rate in re.findall(r"([0-9.e+-]+): \S+ -> ", cause)]


def _was_probed(cause: str, failed_rate: float) -> bool:
    """The probe ran: it reports the first of the rates it tries, in their order (its time
    budget may cut the list short on a busy machine)."""
    probed = _probed_rates(cause)
    return bool(probed) and probed == pytest.approx(candidates(failed_rate)[: len(probed)])


def _suggested_rate(fix: str) -> float:
    """The rate in the fix's code: optimizer_params={'learning_rate': 0.1}."""
    return float(re.search(r"'learning_rate': ([0-9.e+-]+)\}", fix).group(1))


def test_a_regression_whose_loss_keeps_growing_is_stopped_before_it_overflows():
    seen = []
    with pytest.raises(LossDiverging) as info:
        _fit_regression(1.8, 16384, seen)  # 512 batches an epoch; stable up to about 1.5
    fields = info.value.fields
    assert isinstance(info.value, ArithmeticError)
    assert fields["loss_name"] == LOSS_KINDS["LinearRegressionOutput"].words()
    assert fields["patience"] == 3 and fields["limit"] == pytest.approx(10 * fields["start"])
    streak = [part.rsplit(": ", 1)[0] for part in fields["streak"].split("; ")]
    assert streak == [_where(0, batch) for batch in (100, 200, 300)]  # 3 checks in a row
    assert _was_probed(fields["cause"], 1.8)
    assert _suggested_rate(info.value.fix) < 1.8
    # checks at batches 0, 100, 200 and 300 (the third over the limit stops, before the user's
    # callback sees batch 300)
    assert seen[-1] == (0, 299)


def test_a_regression_that_overflows_within_an_epoch_is_stopped_at_its_end():
    seen = []
    with pytest.raises(WeightsNotFinite) as info:
        _fit_regression(10.0, 2048, seen)  # 64 batches: checked at batch 0 and the epoch end
    assert isinstance(info.value, NonFiniteError)
    assert info.value.fields["where"] == _where(0, None)
    assert _was_probed(info.value.fields["cause"], 10.0)
    assert seen[-1] == (0, 63)  # not epochs 1 and 2


def test_healthy_regression_runs_to_the_end():
    seen = []
    mod = _fit_regression(0.1, 2048, seen)
    assert seen[-1] == (2, 63) and mod.history.last("mse") < 0.05


def test_a_collapsing_classifier_is_stopped_and_the_last_good_checkpoint_stays_newest(tmp_path):
    prefix = str(tmp_path / "letters")
    _fit_letters(0.1, checkpoint=prefix)
    assert ckpt.manifested_epochs(prefix) == [1]
    seed_all(0)
    train, _ = _letter_iters()
    seen = []
    with pytest.raises(LossDiverging) as info:
        mxlearn.Module(mxlearn.models.mlp()).fit(
            train,
            optimizer_params={"learning_rate": 100.0},  # raw MXNet ends on one class, silently
            num_epoch=4,
            resume=prefix,
            checkpoint=prefix,
            batch_end_callback=lambda p: seen.append((p.epoch, p.nbatch)),
        )
    assert info.value.fields["loss_name"] == LOSS_KINDS["SoftmaxOutput"].words()
    assert _was_probed(info.value.fields["cause"], 100.0)
    assert "'learning_rate': 10}" not in info.value.fix  # ten times smaller still collapses
    assert seen[-1] == (1, 299)  # in the resumed epoch 1, at its check of batch 300
    assert ckpt.manifested_epochs(prefix) == [1]  # the good checkpoint is still the newest


def test_an_epoch_whose_loss_is_past_the_limit_is_not_checkpointed(tmp_path, capsys):
    prefix = str(tmp_path / "small")
    X, y = mxlearn.datasets.letter_recognition()
    seed_all(0)
    mod = mxlearn.Module(mxlearn.models.mlp())
    with pytest.raises((DivergenceError, NonFiniteError)):
        # 32 batches an epoch: checked at each epoch end, and every one is past the limit
        mod.fit(
            mx.io.NDArrayIter(X[:1024], y[:1024], 32),
            optimizer_params={"learning_rate": 100.0},
            num_epoch=5,
            checkpoint=prefix,
        )
    assert "not written: the training loss is past the divergence limit" in capsys.readouterr().out
    assert ckpt.manifested_epochs(prefix) == []


def test_a_classifier_stuck_on_one_class_gets_one_warning():
    mod, caught = _fit_letters(3.0)  # raw MXNet: accuracy 0.04, predicts one letter, silently
    assert len(caught) == 1
    text = str(caught[0].message)
    assert "same class for every row" in text and "no better than guessing" in text
    assert "A probe of 100 batches" in text and "'learning_rate': 0.1}" in text
    assert mod.history.last("accuracy") < 0.06


def _deep(act_type, layers=6):
    """Notebook 07's deep stack: six hidden layers of 64 units."""
    deep = mx.sym.Variable("data")
    for i in range(1, layers + 1):
        deep = mx.sym.FullyConnected(deep, name=f"fc{i}", num_hidden=64)
        deep = mx.sym.Activation(deep, name=f"{act_type}{i}", act_type=act_type)
    deep = mx.sym.FullyConnected(deep, num_hidden=26, name="out")
    return mx.sym.SoftmaxOutput(deep, name="softmax")


def _fit_deep(act_type, **fit_args):
    """Plain SGD at 0.03, by default from fit's own initializer (MXNet's Uniform(0.01))."""
    seed_all(0)
    train, val = _letter_iters()
    mod = mxlearn.Module(_deep(act_type))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod.fit(
            train,
            eval_data=val,
            optimizer_params={"learning_rate": 0.03},
            num_epoch=1,
            **fit_args,
        )
    return mod, [w for w in caught if issubclass(w.category, TrainingWarning)]


def test_a_fading_gradient_is_named_with_its_figures_and_the_advice_works():
    mod, caught = _fit_deep("sigmoid")
    (warning,) = caught
    text = str(warning.message)
    ratio = float(re.search(r"it is ([0-9.e+-]+) times what it is at the last", text).group(1))
    assert ratio < 1e-4 and "('fc1')" in text and "('out')" in text
    assert "ReLU layer" not in text and "learning rate" not in text  # not a rate, not dead units
    assert "act_type='relu' in place of 'sigmoid'" in text
    assert "initializer=mx.init.Xavier()" in text
    # the advice followed: the same stack with ReLU and Xavier's weights, trained the same way,
    # learns (0.57 after its one epoch)
    relu, caught = _fit_deep("relu", initializer=mx.init.Xavier())
    assert caught == []
    assert (
        relu.history.last("accuracy", "validation")
        > 0.3
        > mod.history.last("accuracy", "validation")
    )


def test_dead_relus_are_counted_and_the_probed_rate_works():
    mod, caught = _fit_letters(3.0)
    text = str(caught[0].message)
    assert re.search(r"The ReLU layer 'relu1' gives 0 for every row in (\d+) of its \1 units", text)
    # the advice followed: fresh weights at the rate the probe found
    rate = _suggested_rate(text)
    followed, caught = _fit_letters(rate)
    assert caught == []
    assert followed.history.last("accuracy") > 0.3 > 5 * mod.history.last("accuracy")


@pytest.mark.parametrize("learning_rate", [0.1, 0.001])  # a good rate and a slow one
def test_healthy_or_slow_classifiers_get_no_warning(learning_rate):
    mod, caught = _fit_letters(learning_rate, num_epoch=2)
    assert caught == []
    assert len(mod.history.series("accuracy", "train", "epoch")[0]) == 2


def test_batch_loss_matches_mxnets_metrics():
    from mxlearn.training.watchdog import LOSS_KINDS, batch_loss

    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(5), size=16).astype(np.float32)
    labels = rng.integers(0, 5, size=16).astype(np.float32)
    ce = mx.metric.CrossEntropy()
    ce.update([mx.nd.array(labels)], [mx.nd.array(probs)])
    assert batch_loss(LOSS_KINDS["SoftmaxOutput"], probs, labels) == pytest.approx(ce.get()[1])
    outputs, targets = rng.normal(size=(16, 1)), rng.normal(size=16)
    mse = mx.metric.MSE()
    mse.update([mx.nd.array(targets)], [mx.nd.array(outputs)])
    assert batch_loss(LOSS_KINDS["LinearRegressionOutput"], outputs, targets) == pytest.approx(
        mse.get()[1], rel=1e-5
    )


def test_following_the_divergence_advice_once_learns():
    """Notebook 02's network and data at learning_rate=100: the printed fix, followed once,
    reaches a validation accuracy above 0.5 within 3 epochs."""
    seed_all(42)
    train, val = _letter_iters()
    net = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(net, name="fc1", num_hidden=64)
    net = mx.sym.Activation(net, name="relu1", act_type="relu")
    net = mx.sym.FullyConnected(net, name="fc2", num_hidden=26)
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    with pytest.raises((DivergenceError, NonFiniteError)) as info:
        mxlearn.Module(net).fit(train, optimizer_params={"learning_rate": 100}, num_epoch=3)
    rate = _suggested_rate(info.value.fix)
    mod = mxlearn.Module(net)
    mod.fit(train, eval_data=val, optimizer_params={"learning_rate": rate}, num_epoch=3)
    assert mod.history.last("accuracy", "validation") > 0.5, rate


def _letters_net():
    net = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(net, name="fc1", num_hidden=64)
    net = mx.sym.Activation(net, name="relu1", act_type="relu")
    net = mx.sym.FullyConnected(net, name="fc2", num_hidden=26)
    return mx.sym.SoftmaxOutput(net, name="softmax")


def _advice(train, **fit_args) -> mxlearn.MXLearnError:
    """The error that stopped the run: its cause (a field) and its fix."""
    with pytest.raises((DivergenceError, NonFiniteError)) as info:
        mxlearn.Module(_letters_net()).fit(train, num_epoch=40, **fit_args)
    return info.value


def _not_probed(stopped) -> bool:
    """The advice of a run mxlearn could not probe: no probe in the cause, no rate in the fix,
    the usual rates below the failed 100 to try by hand instead."""
    fix = stopped.fix
    tried = ", ".join(f"{rate:g}" for rate in USUAL_RATES[-3:])  # 0.1, 0.01, 0.001
    probed = _probed_rates(stopped.fields["cause"])
    return not probed and "'learning_rate'" not in fix and tried in fix


def test_a_probe_on_few_batches_never_suggests_a_rate_that_does_not_beat_guessing():
    """16 batches: 10 lowered the loss from 5.5 to 4.7, still far worse than guessing (3.26)."""
    seed_all(0)
    X, y = mxlearn.datasets.letter_recognition()
    stopped = _advice(
        mx.io.NDArrayIter(X[:512], y[:512], 32), optimizer_params={"learning_rate": 100}
    )
    fix = stopped.fix
    assert "'learning_rate': 10}" not in fix and "'learning_rate': 1}" not in fix, fix
    # 10 batches cannot show a fall (first and last 10 are the same): not probed, not blamed
    seed_all(0)
    stopped = _advice(
        mx.io.NDArrayIter(X[:320], y[:320], 32), optimizer_params={"learning_rate": 100}
    )
    assert _not_probed(stopped), stopped


def test_an_optimizer_object_is_not_probed_as_plain_sgd():
    seed_all(0)
    train, _ = _letter_iters()
    stopped = _advice(train, optimizer=mx.optimizer.SGD(learning_rate=100, rescale_grad=1 / 32))
    assert _not_probed(stopped), stopped


def test_a_probe_that_fails_leaves_the_divergence_error_explained():
    class OneShot(mx.io.DataIter):
        """A stream that cannot rewind once it has started."""

        def __init__(self, inner):
            super().__init__(inner.batch_size)
            self.inner, self.started = inner, False
            self.provide_data, self.provide_label = inner.provide_data, inner.provide_label

        def reset(self):
            if self.started:
                raise RuntimeError("stream cannot rewind")
            self.inner.reset()

        def next(self):
            self.started = True
            return self.inner.next()

    seed_all(0)
    train, _ = _letter_iters()
    with pytest.warns(UserWarning, match="could not be reset"):
        stopped = _advice(OneShot(train), optimizer_params={"learning_rate": 100})
    assert _not_probed(stopped), stopped


def _makes_nan(wrap):
    """A small classifier whose hidden layer goes through ``wrap`` (which may make NaN)."""
    hidden = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=16, name="fc1")
    hidden = wrap(hidden)
    out = mx.sym.FullyConnected(hidden, num_hidden=2, name="fc2")
    return mx.sym.SoftmaxOutput(out, name="softmax")


def _fit_small(net, rate=0.01, epochs=2):
    seed_all(0)
    X = np.random.RandomState(0).randn(256, 8).astype("float32")
    y = (X[:, 0] > 0).astype("float32")
    mod = mxlearn.Module(net)
    mod.fit(
        mx.io.NDArrayIter(X, y, 32),
        eval_data=mx.io.NDArrayIter(X, y, 32),
        num_epoch=epochs,
        optimizer_params={"learning_rate": rate},
    )
    return mod


NAN_MAKERS = {  # a network that makes NaN itself: its layer's op, the layer, and its name
    "sqrt": lambda h: mx.sym.sqrt(h, name="root"),
    "log": lambda h: mx.sym.log(h, name="logs"),
    "rsqrt": lambda h: mx.sym.rsqrt(h, name="inverse_root"),
}
NAMES = {"sqrt": "root", "log": "logs", "rsqrt": "inverse_root"}


@pytest.mark.parametrize("op", list(NAN_MAKERS))
def test_a_network_that_makes_nan_itself_is_named_not_the_learning_rate(op):
    with pytest.raises(NonFiniteError) as info:
        _fit_small(_makes_nan(NAN_MAKERS[op]))
    cause, fix = info.value.fields["cause"], info.value.fix
    assert f"'{NAMES[op]}' ({op})" in cause and "too high" not in cause
    assert not fix or "learning_rate" not in fix
    if op == "rsqrt":  # no fix was tried for it: none is given
        assert fix is None
        return
    # the advice followed: that layer's input kept where it is defined; the same run trains
    # without NaN, and the network learns
    advised = re.search(r"mx\.sym\.\w+\(.*\)", fix).group(0)
    fixed = _makes_nan(lambda h: eval(advised, {"mx": mx, "x": h}))
    _fit_small(fixed)  # the run that stopped: now to its end, its weights finite

    # (0.77 to above 0.85 after 10 epochs, by the CPU's float rounding; guessing: 0.5)
    assert _fit_small(fixed, rate=0.5, epochs=10).history.last("accuracy", "validation") > 0.7


def test_a_rate_too_high_is_still_named_when_the_network_makes_no_nan_itself():
    with pytest.raises(NonFiniteError) as info:
        _fit_small(_makes_nan(lambda h: mx.sym.Activation(h, act_type="relu")), rate=1e6)
    assert "learning rate" in info.value.fields["cause"]
