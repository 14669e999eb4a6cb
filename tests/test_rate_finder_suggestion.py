"""lr_find's suggestion learns on the data it was given (issue 26): raw and scaled letters, a
small set, unscaled Gaussian blobs, SGD with and without momentum and Adam, each followed by a
3-epoch fit; or no suggestion, with the reason, and the advice of the reason followed. Its
report of a breakdown is true: where it says the network collapsed, a fit collapses.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.experiments import rate_finder_plot as rfp
from mxlearn.experiments.rate_finder import lr_find
from mxlearn.metrics.smoothing import SmoothedAverage

MOMENTUM = {"momentum": 0.9}
NUM_TRAIN = 16000


@pytest.fixture(scope="module")
def letters():
    X, y = mxlearn.datasets.letter_recognition()
    X = (X - X[:NUM_TRAIN].mean(axis=0)) / X[:NUM_TRAIN].std(axis=0)
    return X.astype(np.float32), y


def raw_letters():
    X, y = mxlearn.datasets.letter_recognition()
    return X.astype(np.float32), y


def validation_accuracy(letters, rate, optimizer="sgd", settings=None, rows=NUM_TRAIN, net=None):
    """3 epochs at ``rate`` on ``rows`` training rows (batches of 32), scored on the rows past
    NUM_TRAIN."""
    X, y = letters
    mxlearn.seed(1)
    mod = mxlearn.Module(net or mxlearn.models.mlp(), context=mx.cpu())
    mod.fit(
        mx.io.NDArrayIter(X[:rows], y[:rows], 32, shuffle=True),
        num_epoch=3,
        optimizer=optimizer,
        optimizer_params={"learning_rate": rate, **(settings or {})},
        initializer=mx.init.Xavier(),
    )
    return mod.score(mx.io.NDArrayIter(X[NUM_TRAIN:], y[NUM_TRAIN:], 500), "acc")[0][1]


def one_class_share(mod, X) -> float:
    predicted = mod.predict(mx.io.NDArrayIter(X, batch_size=500)).asnumpy().argmax(axis=1)
    return np.bincount(predicted).max() / len(predicted)


def test_the_readme_first_look_gets_a_rate_that_learns_and_a_true_collapse():
    """The issue's example: raw letters, SGD without momentum. On main the suggestion was the
    first rate read (1.8e-6, chance after 3 epochs) and "did not diverge up to lr 10"."""
    mxlearn.seed(0)  # the iterator's shuffle
    train_iter, val_iter = mxlearn.datasets.letter_iters(batch_size=32)
    finding = lr_find(mxlearn.models.mlp(), train_iter, plot=False)
    assert finding.suggested is not None and finding.suggested > 100 * finding.rates[0]
    assert finding.collapsed and finding.diverged_at < 10  # not "did not diverge up to lr 10"
    for rate, learns in ((finding.suggested, True), (finding.diverged_at, False), (10, False)):
        mxlearn.seed(1)
        mod = mxlearn.Module(mxlearn.models.mlp(), context=mx.cpu())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the collapse warning: what is checked here
            mod.fit(train_iter, eval_data=val_iter, num_epoch=3,
                    optimizer_params={"learning_rate": rate})  # fmt: skip
        accuracy = mod.history.last("accuracy", "validation")
        if learns:
            assert accuracy > 0.5
        else:  # collapsed: one letter for every row, accuracy at chance
            assert accuracy < 0.1 and one_class_share(mod, raw_letters()[0][NUM_TRAIN:]) == 1.0


@pytest.mark.parametrize("features", ["raw", "scaled"])
@pytest.mark.parametrize(
    "optimizer, settings", [("sgd", {}), ("sgd", MOMENTUM), ("adam", {})],
    ids=["sgd", "sgd-momentum", "adam"],
)  # fmt: skip
def test_the_suggestion_learns_in_3_epochs_on_raw_and_scaled_letters(
    letters, features, optimizer, settings
):
    data = raw_letters() if features == "raw" else letters
    mxlearn.seed(2)
    iterator = mx.io.NDArrayIter(data[0][:NUM_TRAIN], data[1][:NUM_TRAIN], 32, shuffle=True)
    finding = lr_find(mxlearn.models.mlp(), iterator, optimizer=optimizer, optimizer_params=settings,
                      plot=False)  # fmt: skip
    assert finding.suggested is not None, finding.reason
    assert validation_accuracy(data, finding.suggested, optimizer, settings) > 0.5


@pytest.mark.parametrize(
    "optimizer, settings", [("sgd", {}), ("sgd", MOMENTUM), ("adam", {})],
    ids=["sgd", "sgd-momentum", "adam"],
)  # fmt: skip
def test_the_suggestion_learns_on_a_small_set_and_on_unscaled_blobs(letters, optimizer, settings):
    """2,000 scaled letters; 26 Gaussian blobs with features around 100 (unscaled)."""
    X, y = mxlearn.datasets.synthetic_classification(NUM_TRAIN + 2000, 16, 26, seed=0)
    blobs = (X * 20 + 100, y)
    for data, rows in ((letters, 2000), (blobs, 6000)):
        mxlearn.seed(2)
        iterator = mx.io.NDArrayIter(data[0][:rows], data[1][:rows], 32, shuffle=True)
        finding = lr_find(mxlearn.models.mlp(), iterator, optimizer=optimizer, optimizer_params=settings,
                          plot=False)  # fmt: skip
        assert finding.suggested is not None, finding.reason
        accuracy = validation_accuracy(data, finding.suggested, optimizer, settings, rows)
        assert accuracy > 0.5


def letters_iter(data, batch_size=32):
    return mx.io.NDArrayIter(data[0][:NUM_TRAIN], data[1][:NUM_TRAIN], batch_size, shuffle=True)


@pytest.mark.parametrize(
    "why, batch_size, settings, changes",
    [
        (rfp.DIVERGED_AT_START, 32, MOMENTUM, {"start": 3.0, "stop": 1000.0}),
        (rfp.STILL_FALLING, 32, {}, {"stop": 0.1}),
    ],
    ids=["diverged at once", "still falling"],
)
def test_no_suggestion_says_why_and_its_advice_gives_one_that_learns(
    letters, why, batch_size, settings, changes
):
    mxlearn.seed(0)
    run = dict(optimizer_params=settings, plot=False, **changes)
    finding = lr_find(mxlearn.models.mlp(), letters_iter(letters, batch_size), **run)
    assert finding.suggested is None and finding.no_suggestion == why
    assert finding.diverged_at is (None if why == rfp.STILL_FALLING else finding.diverged_at)
    mxlearn.seed(0)  # the advice followed, on the same run
    followed = lr_find(mxlearn.models.mlp(), letters_iter(letters), **{**run, **finding.retry})
    assert followed.suggested is not None
    assert validation_accuracy(letters, followed.suggested, settings=settings) > 0.5


def test_noise_larger_than_the_fall_suggests_nothing_and_larger_batches_tell(letters):
    mxlearn.seed(0)
    flat = {"start": 1e-9, "stop": 1e-8, "num_batches": 100, "plot": False}
    finding = lr_find(mxlearn.models.mlp(), letters_iter(letters, batch_size=1), **flat)
    assert finding.no_suggestion == rfp.NOISE_OVER_FALL
    assert finding.fall > rfp.MIN_FALL * finding.smoothed[0]  # more than a loss that did not fall
    assert finding.fall < rfp.NOISE * finding.noise
    mxlearn.seed(0)  # larger batches, as advised: the same rates, an answer that is sure
    sure = lr_find(mxlearn.models.mlp(), letters_iter(letters, batch_size=64), **flat)
    assert sure.no_suggestion == rfp.NO_DESCENT and sure.noise < finding.noise / 4


def test_the_noise_of_the_smoothed_loss_is_read_from_the_raw_losses():
    rng = np.random.default_rng(0)
    losses = 3.0 + rng.normal(0, 0.5, 5000)
    beta = 0.9
    average = SmoothedAverage(beta)
    smoothed = np.array([average.add(x) for x in losses])
    measured = rfp.smoothed_noise(losses, beta)
    assert measured == pytest.approx(smoothed[100:].std(), rel=0.1)
