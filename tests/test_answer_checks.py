"""Answers to the course's questions are graded against what the exercise's settings or the
student's own run show, in any way of writing the right value; wrong ones fail without the
check cell showing the answer."""

from __future__ import annotations

import numpy as np
import pytest

import mxlearn
from mxlearn import checks, mx
from mxlearn.answer_checks import (
    NotARunAnswered,
    OtherEpochsAnswered,
    OtherRebindsAnswered,
    OtherRunAnswered,
)
from mxlearn.run_checks import OptimizerNotKnown, OtherRunSettings

X, Y = mxlearn.datasets.synthetic_classification(num_samples=128, num_classes=4, seed=2)


@pytest.mark.parametrize("answer", [[4, 6], (4, 6), [6, 4], np.array([4, 6])])
def test_the_epochs_kept_pass_in_any_form(answer):
    checks.epochs_kept(answer, num_epoch=6, period=2, keep=2)


@pytest.mark.parametrize("answer", [[2, 4, 6], [5, 6], "4, 6", 6, None])
def test_other_epochs_fail_without_being_shown(answer):
    with pytest.raises(Exception) as refused:
        checks.epochs_kept(answer, num_epoch=6, period=2, keep=2, exercise="04.2")
    assert "[4, 6]" not in str(refused.value)
    if answer is not None:
        with pytest.raises(OtherEpochsAnswered):
            checks.epochs_kept(answer, num_epoch=6, period=2, keep=2)


def _mutable():
    mod = mxlearn.MutableModule(
        mxlearn.models.mlp(num_classes=4), max_data_shapes=[("data", (8, 16))]
    )
    mod.bind([("data", (8, 16))], [("softmax_label", (8,))])
    mod.init_params()
    for rows in (8, 5, 3, 5, 8):
        mod.forward(mx.io.DataBatch([mx.nd.array(X[:rows])]), is_train=False)
    return mod


def test_the_rebinds_counted_pass_as_the_inspector_counts_them():
    mod = _mutable()
    checks.rebinds_counted(mod.inspector.rebinds, mod)
    checks.rebinds_counted(int(np.int64(mod.inspector.rebinds)), mod)
    for wrong in (mod.inspector.rebinds + 1, str(mod.inspector.rebinds), True):
        with pytest.raises(OtherRebindsAnswered):
            checks.rebinds_counted(wrong, mod)


def _run(optimizer, rate, epochs=2, validation=True):
    mxlearn.seed(3)
    train = mx.io.NDArrayIter(X[:96], Y[:96], batch_size=32, shuffle=True)
    val = mx.io.NDArrayIter(X[96:], Y[96:], batch_size=32) if validation else None
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=16))
    mod.fit(
        train,
        eval_data=val,
        num_epoch=epochs,
        optimizer=optimizer,
        optimizer_params={"learning_rate": rate},
    )
    return mod


def test_the_faster_learner_is_the_run_with_the_higher_first_validation():
    sgd, adam = _run("sgd", 0.001), _run("adam", 0.01)
    optimizers = mxlearn.compare(sgd, adam, show=False)
    first = {
        m.optimizer_settings["optimizer"]: m.history.series("accuracy", "validation", "epoch")[1][0]
        for m in (sgd, adam)
    }
    faster = max(first, key=first.get)
    checks.faster_learner(faster, optimizers)
    with pytest.raises(OtherRunAnswered) as refused:
        checks.faster_learner({"sgd": "adam", "adam": "sgd"}[faster], optimizers)
    assert "'sgd'" not in str(refused.value) or "'adam'" not in str(refused.value)  # no answer
    for unknown in ("Adam optimizer", None):  # no run's name: the names are said
        with pytest.raises(NotARunAnswered) as refused:
            checks.faster_learner(unknown, optimizers)
        assert "['adam', 'sgd']" in str(refused.value)


def test_a_comparison_of_runs_that_differ_in_more_than_the_optimizer_fails():
    settings = dict(learning_rates=[0.01, 0.001], num_epoch=2)
    checks.runs_compared(
        mxlearn.compare(_run("sgd", 0.01), _run("adam", 0.001), show=False),
        ["sgd", "adam"],
        **settings,
    )
    shortcuts = [
        (_run("sgd", 0.1), _run("adam", 0.001)),  # another rate
        (_run("sgd", 0.01, epochs=1), _run("adam", 0.001)),  # fewer epochs
        (_run("sgd", 0.01), _run("adam", 0.001, validation=False)),  # no validation
    ]
    for runs in shortcuts:
        with pytest.raises(OtherRunSettings):
            checks.runs_compared(mxlearn.compare(*runs, show=False), ["sgd", "adam"], **settings)


@pytest.mark.parametrize("answer", [["4", "6"], "46", [4.5, 6.9], [True, 6]])
def test_epochs_that_are_not_whole_numbers_fail_the_answer(answer):
    with pytest.raises(OtherEpochsAnswered):
        checks.epochs_kept(answer, num_epoch=6, period=2, keep=2)


def test_a_wrong_rebind_count_is_not_told_the_line_that_answers_it():
    mod = _mutable()
    with pytest.raises(OtherRebindsAnswered) as refused:
        checks.rebinds_counted(mod.inspector.rebinds + 1, mod)
    assert "inspector.rebinds" not in str(refused.value)


def test_a_comparison_in_the_other_order_or_with_numpy_rates_passes():
    sgd, adam = _run("sgd", 0.01), _run("adam", np.float32(0.001))  # a NumPy rate
    settings = dict(learning_rates=[0.01, 0.001], num_epoch=2)
    for runs in ((sgd, adam), (adam, sgd)):  # the task names no order
        checks.runs_compared(mxlearn.compare(*runs, show=False), ["sgd", "adam"], **settings)


def test_an_optimizer_given_as_an_object_is_named_as_not_known():
    mxlearn.seed(3)
    adam = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=16))
    train = mx.io.NDArrayIter(X[:96], Y[:96], batch_size=32)
    val = mx.io.NDArrayIter(X[96:], Y[96:], batch_size=32)
    adam.fit(train, eval_data=val, num_epoch=2,
             optimizer=mx.optimizer.Adam(learning_rate=0.001, rescale_grad=1 / 32))  # fmt: skip
    comparison = mxlearn.compare(_run("sgd", 0.01), adam, show=False)
    with pytest.raises(OptimizerNotKnown) as refused:
        checks.runs_compared(comparison, ["sgd", "adam"], learning_rates=[0.01, 0.001])
    assert refused.value.fields["number"] == 2
