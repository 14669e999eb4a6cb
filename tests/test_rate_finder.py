"""lr_find: a learning-rate range test that leaves the module, the iterator and NumPy's
random state alone and suggests a rate that learns, on real MXNet.

The letters are standardized here (each feature to mean 0, deviation 1): on them the range
test shows its textbook curve (flat, falling, exploding), and SGD with momentum learns in 3
epochs from about 0.01 to 0.3, collapses to one class at 1 and turns NaN at 10. Without
momentum it learns from about 0.03 to 3, Adam from about 0.001 to 0.1.
"""

from __future__ import annotations

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.devices import DeviceUnusable
from mxlearn.errors import DivergenceError, NonFiniteError
from mxlearn.experiments import rate_finder as rf
from mxlearn.experiments import rate_finder_plot as rfp
from mxlearn.experiments.rate_finder import CALLED, NUM_BATCHES, lr_find
from mxlearn.experiments.rate_finder_plot import RateFinding, Smoothed
from mxlearn.guards import binding, data_values
from mxlearn.guards.optimizer_settings import NoSuchSetting
from mxlearn.metrics.smoothing import SmoothedAverage, weight_for_lag
from mxlearn.rules import OutOfRange, WrongKind

MOMENTUM = {"momentum": 0.9}
NUM_TRAIN = 16000
SHORT = {"start": 1e-4, "stop": 1e-2, "num_batches": 10, "plot": False}  # a quick run


@pytest.fixture(scope="module")
def letters():
    X, y = mxlearn.datasets.letter_recognition()
    X = (X - X[:NUM_TRAIN].mean(axis=0)) / X[:NUM_TRAIN].std(axis=0)
    return X.astype(np.float32), y


def train_iter(letters, batch_size=64, rows=NUM_TRAIN):
    X, y = letters
    return mx.io.NDArrayIter(X[:rows], y[:rows], batch_size, shuffle=True)


def accuracy_after_3_epochs(letters, rate: float, optimizer="sgd", settings=MOMENTUM) -> float:
    X, y = letters
    mxlearn.seed(1)
    mod = mxlearn.Module(mxlearn.models.mlp(), context=mx.cpu())
    mod.fit(
        train_iter(letters),
        num_epoch=3,
        optimizer=optimizer,
        optimizer_params={"learning_rate": rate, **settings},
        initializer=mx.init.Xavier(),
    )
    return mod.score(mx.io.NDArrayIter(X[NUM_TRAIN:], y[NUM_TRAIN:], 500), "acc")[0][1]


def snapshot(mod) -> dict:
    arg, aux = mod.get_params()
    return {name: array.asnumpy().tobytes() for name, array in {**arg, **aux}.items()}


def bound_module(data, seed=0):
    mxlearn.seed(seed)
    mod = mxlearn.Module(mxlearn.models.mlp(), context=mx.cpu())
    mod.bind(data.provide_data, data.provide_label)
    mod.init_params(mx.init.Xavier())
    return mod


@pytest.fixture(scope="module")
def found(letters):
    """lr_find with its defaults on a bound, initialized, trained-one-step module; its weights
    before and after, and the batches left in the iterator."""
    mxlearn.seed(0)
    data = train_iter(letters)
    mod = bound_module(data)
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1, **MOMENTUM})
    mod.forward_backward(next(data))
    mod.update()  # an optimizer with state, and the iterator mid-epoch
    before = snapshot(mod)
    finding = lr_find(mod, data, optimizer_params=MOMENTUM, plot=False)
    batches_after = sum(1 for _ in data)
    return finding, before, snapshot(mod), batches_after


def test_the_modules_weights_stay_bit_identical_and_the_iterator_where_it_was(found):
    finding, before, after, batches_after = found
    assert before.keys() == after.keys() and len(before) == 4
    assert all(before[name] == after[name] for name in before)
    assert batches_after == NUM_TRAIN // 64 - 1  # the rest of the epoch it was in
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


@pytest.mark.parametrize(
    "optimizer, settings",
    [("sgd", MOMENTUM), ("sgd", {}), ("adam", {})],
    ids=["sgd-momentum", "sgd", "adam"],
)
def test_the_default_suggestion_lies_where_a_3_epoch_fit_learns(letters, optimizer, settings):
    """The suggestion and a rate 3 times smaller both learn: the suggestion is inside the range
    that learns, not at its edge (measured: 0.82-0.89 at the suggestion, 0.79-0.88 at a third)."""
    mxlearn.seed(2)
    finding = lr_find(
        mxlearn.models.mlp(),
        train_iter(letters),
        optimizer=optimizer,
        optimizer_params=settings,
        plot=False,
    )
    assert finding.suggested is not None
    for rate in (finding.suggested, finding.suggested / 3):
        assert accuracy_after_3_epochs(letters, rate, optimizer, settings) > 0.5


def test_the_default_smoothing_trails_a_quarter_decade_and_a_given_beta_is_kept(letters):
    data = train_iter(letters, rows=640)
    for beta, expected in ((None, weight_for_lag(0.25 * 99 / 2)), (0.98, 0.98)):
        finding = lr_find(mxlearn.models.mlp(), data, **{**SHORT, "num_batches": 100}, beta=beta)
        average = SmoothedAverage(expected)
        assert np.allclose(finding.smoothed, [average.add(loss) for loss in finding.losses])


def test_the_divergence_is_found_below_stop_10_and_the_test_stops_there(found):
    finding = found[0]
    assert finding.diverged_at is not None and finding.diverged_at < 10
    assert len(finding.rates) < NUM_BATCHES and finding.rates[-1] == finding.diverged_at
    # the smoothed loss past 4 times its lowest, or the raw loss past it twice in a row
    best = finding.smoothed[:-1].min()
    smoothed_over = np.isnan(finding.smoothed[-1]) or finding.smoothed[-1] > 4 * best
    raw_over = all(not loss <= 4 * best for loss in finding.losses[-2:])
    assert smoothed_over or raw_over
    assert np.allclose(np.diff(np.log(finding.rates)), np.log(10 / 1e-6) / (NUM_BATCHES - 1))
    assert not finding.collapsed and finding.no_suggestion is None


def test_a_symbol_gets_seeded_xavier_weights_and_the_same_result_twice(letters):
    runs = []
    for _ in range(2):
        mxlearn.seed(3)  # the iterator's shuffle
        runs.append(
            lr_find(
                mxlearn.models.mlp(),
                train_iter(letters),
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


def refused(kind, **changes):
    """The error of ``kind`` lr_find raises with ``changes`` to a right call."""
    data = mx.io.NDArrayIter(np.zeros((64, 16), np.float32), np.zeros(64, np.float32), 32)
    arguments = {"mod_or_symbol": mxlearn.models.mlp(), "train_iter": data, "plot": False}
    arguments.update(changes)
    with pytest.raises(kind) as caught:
        lr_find(**arguments)
    error = caught.value
    assert type(error) is kind, type(error)
    # the call the student made, not the calls lr_find makes on its trial module
    assert error.fields.get("called", CALLED) == CALLED and error.problem.startswith(CALLED)
    assert error.fix and "mod." not in error.problem + error.fix
    return error


@pytest.mark.parametrize(
    "changes, kind, fields",
    [
        ({"start": 1.0, "stop": 0.1}, rf.StartNotBelowStop, {"start": 1.0, "stop": 0.1}),
        ({"start": 0.0}, OutOfRange, {"name": "start", "shown": "0.0"}),
        ({"stop": -1.0}, OutOfRange, {"name": "stop", "shown": "-1.0"}),
        ({"num_batches": 5}, OutOfRange, {"name": "num_batches", "example": "num_batches=300"}),
        ({"num_batches": 10.0}, WrongKind, {"name": "num_batches"}),
        ({"beta": 1.0}, OutOfRange, {"name": "beta", "example": "beta=None"}),
        ({"seed": -1}, OutOfRange, {"name": "seed"}),
        ({"plot": "yes"}, WrongKind, {"name": "plot"}),
        (
            {"optimizer_params": {"learning_rate": 0.1}},
            rf.SetsTheRate,
            {"names": "'learning_rate'"},
        ),
        ({"optimizer_params": (("lr_scheduler", None),)}, rf.SetsTheRate, {}),
        ({"optimizer_params": 0.9}, WrongKind, {"name": "optimizer_params"}),
        ({"optimizer": mx.optimizer.SGD()}, rf.OptimizerObject, {}),
    ],
)
def test_bad_settings_are_refused_with_a_fix(changes, kind, fields):
    error = refused(kind, **changes)
    assert fields.items() <= error.fields.items()


def test_the_iterator_and_the_optimizer_are_checked_by_fits_own_rules():
    from mxlearn.module import parameters as P

    rules = lr_find.__mxlearn_rules__
    assert rules["train_iter"] is P.FIT["train_data"]
    assert rules["optimizer"] is P.TRAINING["optimizer"]
    assert rules["optimizer_params"] is P.TRAINING["optimizer_params"]
    assert rules["num_batches"].values["minimum"] == 10
    assert rules["start"].values["above"] == 0 and rules["stop"].values["above"] == 0
    assert rules["beta"].values["minimum"] == 0 and rules["beta"].values["below"] == 1
    assert rules["beta"].test(0.0) is None and rules["beta"].test(None) is None


def test_an_iterator_without_labels_is_refused():
    unlabelled = mx.io.NDArrayIter(np.zeros((64, 16), np.float32), batch_size=32)
    refused(rf.NoLabels, train_iter=unlabelled)


def test_a_network_without_softmax_output_is_refused_naming_its_op():
    error = refused(rf.NotAClassifier, mod_or_symbol=mxlearn.models.linear_regression())
    assert error.fields["found"] == "LinearRegressionOutput 'lro'"
    assert refused(WrongKind, train_iter=[1, 2]).fields["name"] == "train_iter"
    assert refused(WrongKind, mod_or_symbol="mlp").fields["name"] == "mod_or_symbol"


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
    assert finding.no_suggestion == rfp.NO_DESCENT and finding.retry is None


def test_an_iterator_feeding_other_names_is_told_what_the_network_reads(letters):
    X, y = letters[0][:640], letters[1][:640]
    data = mx.io.NDArrayIter({"pixels": X}, {"softmax_label": y}, batch_size=64)
    with pytest.raises(rf.FeedsUnknownInputs) as info:
        lr_find(mxlearn.models.mlp(), data, plot=False)
    assert info.value.fields["names"] == "'pixels'"
    assert "fc1_weight" not in info.value.fields["inputs"]  # parameters are not inputs
    assert "NDArrayIter({'data': X}, {'softmax_label': y}" in info.value.fix


def test_seed_draws_the_same_fresh_weights_whatever_mxnets_generator_did(letters):
    data = train_iter(letters, rows=640)
    losses = {}
    for seed, before in ((5, 1), (5, 2), (None, 1), (None, 2)):
        mx.random.seed(before)
        losses[seed, before] = lr_find(mxlearn.models.mlp(), data, seed=seed, **SHORT).losses
    assert np.array_equal(losses[5, 1], losses[5, 2])
    assert losses[None, 1][0] != losses[None, 2][0]  # without seed: as MXNet's generator is


def test_the_trial_runs_on_the_modules_devices_by_default_else_on_the_cpu(letters, monkeypatch):
    contexts = []

    class Recorded(rf.Module):
        def __init__(self, *args, context, **kwargs):
            contexts.append(context)
            super().__init__(*args, context=context, **kwargs)

    monkeypatch.setattr(rf, "Module", Recorded)
    data = train_iter(letters, rows=640)
    lr_find(mxlearn.Module(mxlearn.models.mlp(), context=mx.cpu(1)), data, **SHORT)
    lr_find(mxlearn.models.mlp(), data, **SHORT)
    lr_find(mxlearn.models.mlp(), data, context=mx.cpu(2), **SHORT)
    assert contexts == [[mx.cpu(1)], mx.cpu(), mx.cpu(2)]


def test_the_rows_padding_the_last_batch_do_not_count_in_its_loss(letters):
    X, y = letters[0][:100], letters[1][:100]
    data = mx.io.NDArrayIter(X, y, 64, last_batch_handle="pad")  # 2nd batch: 36 rows + 28 pad
    mod = bound_module(data)
    # rates of 1e-9: the weights do not move, each batch's loss is the module's own
    finding = lr_find(mod, data, **{**SHORT, "start": 1e-10, "stop": 1e-9})
    probabilities = mod.predict(X).asnumpy()
    per_row = -np.log(probabilities[np.arange(100), y.astype(int)])
    assert finding.losses[0] == pytest.approx(per_row[:64].mean(), rel=1e-5)
    assert finding.losses[1] == pytest.approx(per_row[64:].mean(), rel=1e-5)
    assert finding.losses[1] != pytest.approx(np.r_[per_row[64:], per_row[:28]].mean(), rel=1e-3)


def test_rows_with_the_ignore_label_do_not_count_in_the_loss(letters):
    X, y = letters[0][:64], letters[1][:64].copy()
    y[:20] = -1  # read from the SoftmaxOutput's own settings
    logits = mxlearn.models.mlp().get_children()[0]
    net = mx.sym.SoftmaxOutput(logits, name="softmax", use_ignore=True, ignore_label=-1)
    data = mx.io.NDArrayIter(X, y, 64)
    mxlearn.seed(0)
    mod = mxlearn.Module(net, context=mx.cpu())
    mod.bind(data.provide_data, data.provide_label)
    mod.init_params(mx.init.Xavier())
    finding = lr_find(mod, data, **{**SHORT, "start": 1e-10, "stop": 1e-9})
    probabilities = mod.predict(X).asnumpy()
    per_row = -np.log(probabilities[np.arange(20, 64), y[20:].astype(int)])
    assert finding.losses[0] == pytest.approx(per_row.mean(), rel=1e-5)


def fitted_weights(letters, find_first: bool) -> dict:
    mxlearn.seed(4)  # the module's weights and the iterator's shuffles
    data = train_iter(letters, rows=1280)
    mod = bound_module(data, seed=4)
    if find_first:
        lr_find(mod, data, num_batches=30, plot=False)
    mod.fit(data, num_epoch=2, optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    return snapshot(mod)


def test_a_seeded_fit_after_lr_find_is_the_fit_without_it(letters):
    assert fitted_weights(letters, find_first=True) == fitted_weights(letters, find_first=False)


class Shuffling(mx.io.DataIter):
    """An iterator mxlearn cannot read the arrays of, which reshuffles with NumPy at reset."""

    def __init__(self, X, y):
        super().__init__(64)
        self.inner = mx.io.NDArrayIter(X, y, 64, shuffle=True)
        self.provide_data, self.provide_label = self.inner.provide_data, self.inner.provide_label

    def reset(self):
        self.inner.reset()

    def next(self):
        return self.inner.next()


def test_another_iterator_is_reset_and_numpys_random_state_put_back(letters):
    data = Shuffling(letters[0][:640], letters[1][:640])
    next(data)
    state = np.random.get_state()
    finding = lr_find(mxlearn.models.mlp(), data, **{**SHORT, "num_batches": 25})  # 2.5 epochs
    assert len(finding.losses) == 25
    after = np.random.get_state()
    assert all(np.array_equal(a, b) for a, b in zip(state, after))
    assert sum(1 for _ in data) == 10  # reset at the end: a whole epoch from its start


def a_module_bound_for_10_features():
    mod = mxlearn.Module(mxlearn.models.mlp(), context=mx.cpu())
    mod.bind([("data", (32, 10))], [("softmax_label", (32,))])
    mod.init_params(mx.init.Xavier())
    return mod


def iterator(labels, rows=64):
    return mx.io.NDArrayIter(np.zeros((rows, 16), np.float32), labels, 32)


@pytest.mark.parametrize(
    "kind, changes, fields",
    [
        (binding.OneHotLabels, {"train_iter": iterator(np.zeros((64, 10)))}, {"width": 10}),
        (rf.GaveNoBatch, {"train_iter": iterator(np.zeros(0), rows=0)}, {}),
        (
            binding.FeaturesDifferFromBinding,
            {"mod_or_symbol": a_module_bound_for_10_features()},
            {"features": 16, "bound": 10},
        ),
        (NoSuchSetting, {"optimizer_params": {"momentm": 0.9}}, {"name": "momentm"}),
    ],
    ids=["one-hot rows of another width", "no batch", "other width", "typo"],
)
def test_a_refusal_names_lr_find_not_the_trial_modules_calls(kind, changes, fields):
    assert fields.items() <= refused(kind, **changes).fields.items()


def test_a_refusal_of_the_data_and_of_the_device_names_lr_find():
    error = refused(rf.RefusedInTheTrial, train_iter=iterator(np.full(64, 30.0)))
    assert type(error.__cause__) is data_values.LabelsOutsideClasses
    assert error.__cause__.fields["classes"] == 26
    assert "context=gpu(99)" in refused(DeviceUnusable, context=mx.gpu(99)).problem


def test_many_batches_suggest_a_rate_that_learns_not_the_start(letters):
    # 10,000 batches: the default smoothing averages ~330 losses, whose corrected start is
    # noise; read from the start, the steepest slope was the first rate (1e-6)
    mxlearn.seed(0)
    finding = lr_find(
        mxlearn.models.mlp(), train_iter(letters), num_batches=10000, optimizer_params=MOMENTUM,
        plot=False,
    )  # fmt: skip
    assert finding.suggested is not None and finding.suggested > 1e-4
    assert accuracy_after_3_epochs(letters, finding.suggested) > 0.5


def test_frozen_parameters_stay_frozen_in_the_trial(letters):
    data = train_iter(letters, rows=4000)
    plain = bound_module(data)
    frozen = mxlearn.Module(
        mxlearn.models.mlp(), context=mx.cpu(), fixed_param_names=["fc1_weight", "fc1_bias"]
    )
    frozen.bind(data.provide_data, data.provide_label)
    frozen.set_params(*plain.get_params())
    runs = [lr_find(m, data, optimizer_params=MOMENTUM, plot=False) for m in (plain, frozen)]
    # the same weights and batches: only the frozen first layer tells the runs apart
    assert runs[0].losses[0] == runs[1].losses[0]
    assert not np.allclose(runs[0].losses[:50], runs[1].losses[:50])


@pytest.mark.parametrize("bad", ["label 26", "NaN"])
def test_a_bad_row_after_the_first_batch_is_refused_as_fit_refuses_it(bad):
    X = np.random.default_rng(0).normal(size=(1000, 16)).astype(np.float32)
    y = np.random.default_rng(1).integers(0, 26, 1000).astype(np.float32)
    if bad == "NaN":
        X[700, 3] = np.nan
    else:
        y[500] = 26
    data = mx.io.NDArrayIter(X, y, 64)
    with pytest.raises(rf.RefusedInTheTrial) as refused_row:
        lr_find(mxlearn.models.mlp(), data, plot=False)
    assert refused_row.value.fields["called"] == CALLED
    cause = refused_row.value.__cause__
    if bad == "NaN":  # rows past the first batch's 64: only row 700 holds a NaN
        assert type(cause) is data_values.NonFiniteData and cause.fields["nan"] == 1
        assert "700" in cause.fields["where"]
    else:
        assert type(cause) is data_values.LabelsOutsideClasses and cause.fields["label"] == "26"
        assert "500" in cause.fields["where"]


def test_an_input_the_iterator_does_not_feed_is_named():
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    net = mx.sym.FullyConnected(mx.sym.concat(a, b), num_hidden=26, name="out")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    data = mx.io.NDArrayIter(
        {"a": np.zeros((64, 8), np.float32)}, {"softmax_label": np.zeros(64, np.float32)}, 32
    )
    error = refused(rf.UnfedInputs, mod_or_symbol=net, train_iter=data)
    assert error.fields == {"called": CALLED, "names": "'b'", "given": "'a', 'softmax_label'"}


def test_a_module_with_no_network_yet_and_rates_beyond_floats_are_refused():
    net = mxlearn.models.mlp()
    bucketing = mx.mod.BucketingModule(lambda key: (net, ["data"], ["softmax_label"]), 10)
    assert refused(rf.NoNetworkYet, mod_or_symbol=bucketing).fields["kind"] == "BucketingModule"
    refused(rf.SpanBeyondFloats, start=1e-300, stop=1e300)
