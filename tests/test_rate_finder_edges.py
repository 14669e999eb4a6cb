"""lr_find at the edges a hostile probe found: many batches, frozen layers, bad rows after the
first batch, an input the iterator does not feed, a module with no network yet, rates beyond
what floats span."""

from __future__ import annotations

import numpy as np
import pytest
from test_rate_finder import MOMENTUM, accuracy_after_3_epochs, bound_module, refused, train_iter

import mxlearn
from mxlearn import mx
from mxlearn.errors import InputError
from mxlearn.training.rate_finder import lr_find


@pytest.fixture(scope="module")
def letters():
    X, y = mxlearn.datasets.letter_recognition()
    X = (X - X[:16000].mean(axis=0)) / X[:16000].std(axis=0)
    return X.astype(np.float32), y


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
    with pytest.raises(InputError) as refused_row:
        lr_find(mxlearn.models.mlp(), data, plot=False)
    assert refused_row.value.problem.startswith("lr_find()")
    assert ("row 700" if bad == "NaN" else "row 500") in refused_row.value.problem


def test_an_input_the_iterator_does_not_feed_is_named():
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    net = mx.sym.FullyConnected(mx.sym.concat(a, b), num_hidden=26, name="out")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    data = mx.io.NDArrayIter(
        {"a": np.zeros((64, 8), np.float32)}, {"softmax_label": np.zeros(64, np.float32)}, 32
    )
    problem = refused(InputError, mod_or_symbol=net, train_iter=data)
    assert "reads 'b'" in problem and "gives 'a', 'softmax_label'" in problem


def test_a_module_with_no_network_yet_and_rates_beyond_floats_are_refused():
    net = mxlearn.models.mlp()
    bucketing = mx.mod.BucketingModule(lambda key: (net, ["data"], ["softmax_label"]), 10)
    assert "until it is bound" in refused(InputError, mod_or_symbol=bucketing)
    assert "numbers can span" in refused(InputError, start=1e-300, stop=1e300)
