"""lr_find: a learning-rate range test that leaves the module alone and suggests a rate that
learns, on real MXNet.

The letters are standardized here (each feature to mean 0, deviation 1): on them the range
test shows its textbook curve (flat, falling, exploding), and SGD with momentum learns in 3
epochs from about 0.01 to 0.3, collapses to one class at 1 and turns NaN at 10.
"""

from __future__ import annotations

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.errors import ArgumentTypeError, DivergenceError, InputError, NonFiniteError
from mxlearn.training.rate_finder import RateFinding, Smoothed, lr_find

MOMENTUM = {"momentum": 0.9}
BATCHES = 300  # at 100 the smoothed loss lags the rate by ~3 decades (see the report)
NUM_TRAIN = 16000


@pytest.fixture(scope="module")
def letters():
    X, y = mxlearn.datasets.letter_recognition()
    X = (X - X[:NUM_TRAIN].mean(axis=0)) / X[:NUM_TRAIN].std(axis=0)
    return X.astype(np.float32), y


def train_iter(letters, batch_size=64, rows=NUM_TRAIN):
    X, y = letters
    return mx.io.NDArrayIter(X[:rows], y[:rows], batch_size, shuffle=True)


def accuracy_after_3_epochs(letters, rate: float) -> float:
    X, y = letters
    mxlearn.seed(1)
    mod = mxlearn.Module(mxlearn.models.mlp(), context=mx.cpu())
    mod.fit(
        train_iter(letters),
        num_epoch=3,
        optimizer="sgd",
        optimizer_params={"learning_rate": rate, **MOMENTUM},
        initializer=mx.init.Xavier(),
    )
    return mod.score(mx.io.NDArrayIter(X[NUM_TRAIN:], y[NUM_TRAIN:], 500), "acc")[0][1]


def snapshot(mod) -> dict:
    arg, aux = mod.get_params()
    return {name: array.asnumpy().tobytes() for name, array in {**arg, **aux}.items()}


@pytest.fixture(scope="module")
def found(letters):
    """lr_find on a bound, initialized, trained-one-step module; its weights before and after."""
    mxlearn.seed(0)
    data = train_iter(letters)
    mod = mxlearn.Module(mxlearn.models.mlp(), context=mx.cpu())
    mod.bind(data.provide_data, data.provide_label)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1, **MOMENTUM})
    mod.forward_backward(next(data))
    mod.update()  # an optimizer with state, and the iterator mid-epoch
    before = snapshot(mod)
    finding = lr_find(mod, data, num_batches=BATCHES, optimizer_params=MOMENTUM, plot=False)
    batches_after = sum(1 for _ in data)
    return finding, before, snapshot(mod), batches_after


def test_the_modules_weights_stay_bit_identical_and_the_iterator_is_reset(found):
    finding, before, after, batches_after = found
    assert before.keys() == after.keys() and len(before) == 4
    assert all(before[name] == after[name] for name in before)
    assert batches_after == NUM_TRAIN // 64  # a whole epoch from its start
    assert isinstance(finding, RateFinding) and len(finding.losses) > 100


def test_the_suggested_rate_learns_in_3_epochs(found, letters):
    finding = found[0]
    assert finding.suggested is not None and finding.suggested < finding.diverged_at
    assert accuracy_after_3_epochs(letters, finding.suggested) > 0.5  # chance: 1/26


def test_a_rate_100_times_the_divergence_does_not_learn(found, letters):
    try:
        accuracy = accuracy_after_3_epochs(letters, 100 * found[0].diverged_at)
    except (DivergenceError, NonFiniteError):
        return  # mxlearn's watchdog stopped it
    assert accuracy < 0.2


def test_the_divergence_is_found_below_stop_10_and_the_test_stops_there(found):
    finding = found[0]
    assert finding.diverged_at is not None and finding.diverged_at < 10
    assert len(finding.rates) < BATCHES and finding.rates[-1] == finding.diverged_at
    # the smoothed loss past 4 times its lowest, or the raw loss past it twice in a row
    best = finding.smoothed[:-1].min()
    smoothed_over = np.isnan(finding.smoothed[-1]) or finding.smoothed[-1] > 4 * best
    raw_over = all(not loss <= 4 * best for loss in finding.losses[-2:])
    assert smoothed_over or raw_over
    assert np.allclose(np.diff(np.log(finding.rates)), np.log(10 / 1e-6) / (BATCHES - 1))
    assert "diverged at lr" in finding.reason and "Steepest descent" in finding.reason


def test_a_symbol_gets_seeded_xavier_weights_and_the_same_result_twice(letters):
    runs = []
    for _ in range(2):
        mxlearn.seed(3)  # the iterator's shuffle
        runs.append(
            lr_find(
                mxlearn.models.mlp(),
                train_iter(letters),
                num_batches=BATCHES,
                optimizer_params=MOMENTUM,
                plot=False,
            )
        )
    assert np.array_equal(runs[0].losses, runs[1].losses)
    assert runs[0].suggested == runs[1].suggested and runs[0].diverged_at is not None
    assert abs(runs[0].losses[0] - np.log(26)) < 1.0  # fresh weights: about a guess


def test_a_short_iterator_is_read_again_from_its_start(letters):
    data = train_iter(letters, batch_size=50, rows=500)  # 10 batches
    finding = lr_find(mxlearn.models.mlp(), data, start=1e-4, stop=1e-2, num_batches=25, plot=False)
    assert len(finding.losses) == 25 and finding.diverged_at is None
    assert np.isfinite(finding.losses).all()
    assert sum(1 for _ in data) == 10


def test_the_smoothing_is_bias_corrected_and_flags_an_explosion():
    smoother = Smoothed(0.98)
    assert smoother.add(3.0) == (pytest.approx(3.0), False)  # not pulled towards 0
    assert smoother.add(3.0)[0] == pytest.approx(3.0)
    assert smoother.add(1000.0)[1] is True
    assert Smoothed(0.5).add(float("nan"))[1] is True


def test_the_figure_and_the_summaries(found, tmp_path, monkeypatch):
    finding = found[0]
    ax = finding.figure().axes[0]
    assert ax.get_xscale() == "log" and len(ax.lines) == 4  # loss, smoothed, two marks
    assert ax.lines[2].get_xdata()[0] == finding.suggested
    path = finding.plot(str(tmp_path / "lr.png"))
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    monkeypatch.chdir(tmp_path)  # a terminal: saved under runs/plots, no window
    assert finding.plot().startswith("runs")
    assert repr(finding).startswith("RateFinding(suggested=") and "batches=" in repr(finding)
    assert finding.reason in str(finding)


def refused(error, **changes):
    data = mx.io.NDArrayIter(np.zeros((64, 16), np.float32), np.zeros(64, np.float32), 32)
    arguments = {"mod_or_symbol": mxlearn.models.mlp(), "train_iter": data, "plot": False}
    arguments.update(changes)
    with pytest.raises(error) as caught:
        lr_find(**arguments)
    assert caught.value.fix
    return caught.value.problem


@pytest.mark.parametrize(
    "changes, words",
    [
        ({"start": 1.0, "stop": 0.1}, "is not below stop"),
        ({"start": 0.0}, "positive number"),
        ({"stop": -1.0}, "positive number"),
        ({"num_batches": 5}, "at least 10"),
        ({"beta": 1.0}, "smoothing weight"),
        ({"optimizer_params": {"learning_rate": 0.1}}, "sets the learning rate itself"),
    ],
)
def test_bad_settings_are_refused_with_a_fix(changes, words):
    assert words in refused(InputError, **changes)


def test_an_iterator_without_labels_is_refused():
    unlabelled = mx.io.NDArrayIter(np.zeros((64, 16), np.float32), batch_size=32)
    assert "no labels" in refused(InputError, train_iter=unlabelled)


def test_a_network_without_softmax_output_is_refused_naming_its_op():
    problem = refused(InputError, mod_or_symbol=mxlearn.models.linear_regression())
    assert "only classification losses" in problem and "LinearRegressionOutput 'lro'" in problem
    assert "not a data iterator" in refused(ArgumentTypeError, train_iter=[1, 2])


def test_a_loss_that_never_fell_suggests_no_rate(letters):
    mxlearn.seed(3)
    finding = lr_find(
        mxlearn.models.mlp(),
        train_iter(letters),
        start=1e-9,
        stop=1e-8,
        num_batches=100,
        plot=False,
    )
    assert finding.suggested is None and finding.diverged_at is None
    assert "did not fall" in finding.reason


def test_an_iterator_feeding_other_names_is_told_what_the_network_reads(letters):
    X, y = letters[0][:640], letters[1][:640]
    data = mx.io.NDArrayIter({"pixels": X}, {"softmax_label": y}, batch_size=64)
    with pytest.raises(InputError, match="'pixels'") as info:
        lr_find(mxlearn.models.mlp(), data, plot=False)
    assert "fc1_weight" not in info.value.problem  # parameters are not inputs
    assert "NDArrayIter({'data': X}, {'softmax_label': y}" in info.value.fix
