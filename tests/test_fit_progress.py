"""fit(live=...) chooses what a run prints: MXNet's own log (the default), a live plot (True),
one line an epoch ('lines'), or nothing but warnings (False)."""

from __future__ import annotations

import pytest
from conftest import seed_all

import mxlearn
from mxlearn import mx


def _fit(small_iter, small_net, small_data, **fit_args):
    seed_all(0)
    X, y = small_data
    mod = mxlearn.Module(small_net)
    mod.fit(
        small_iter,
        eval_data=mx.io.NDArrayIter(X[:64], y[:64], batch_size=32),
        optimizer_params={"learning_rate": 0.1},
        num_epoch=3,
        **fit_args,
    )
    return mod


def test_lines_print_one_line_an_epoch_with_its_train_and_validation_values(
    small_iter, small_net, small_data, capsys
):
    mod = _fit(small_iter, small_net, small_data, live="lines")
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3 and not any("Train-accuracy=" in line for line in lines)
    for epoch, line in enumerate(lines):
        train = mod.history.series("accuracy", "train", "epoch")[1][epoch]
        validation = mod.history.series("accuracy", "validation", "epoch")[1][epoch]
        assert line.startswith(f"Epoch[{epoch}]")
        assert f"train accuracy={train:.4f}" in line
        assert f"validation accuracy={validation:.4f}" in line


def test_false_prints_no_epoch_lines(small_iter, small_net, small_data, capsys):
    mod = _fit(small_iter, small_net, small_data, live=False)
    assert "Epoch[" not in capsys.readouterr().out
    assert len(mod.history.series("accuracy", "validation", "epoch")[0]) == 3  # still recorded


def test_a_run_that_stops_early_prints_its_reason_once_and_quietly(
    small_iter, small_net, small_data, capsys
):
    def stop(report):
        raise mxlearn.StopTraining(f"enough after epoch {report.epoch}")

    _fit(small_iter, small_net, small_data, live=False, epoch_report_callback=stop)
    out = capsys.readouterr().out
    assert out.count("enough after epoch 0") == 1 and "Epoch[" not in out


@pytest.mark.parametrize("spec", ["plot", 1, 0.5])
def test_another_value_is_refused_with_the_choices(small_iter, small_net, small_data, spec):
    with pytest.raises(mxlearn.MXLearnError) as caught:
        _fit(small_iter, small_net, small_data, live=spec)
    assert "'lines'" in str(caught.value) and "False" in str(caught.value)


def test_a_numpy_bool_is_the_bool_it_holds(small_iter, small_net, small_data, capsys):
    import numpy as np

    _fit(small_iter, small_net, small_data, live=np.bool_(False))
    assert "Epoch[" not in capsys.readouterr().out


@pytest.mark.parametrize("spec", ["LINES", "Lines", "line"])
def test_the_word_in_another_form_is_refused_with_the_word(small_iter, small_net, small_data, spec):
    with pytest.raises(mxlearn.MXLearnError) as caught:
        _fit(small_iter, small_net, small_data, live=spec)
    assert "live='lines'" in str(caught.value) and "live=True (a live plot)" not in str(
        caught.value
    )


@pytest.mark.parametrize("live", ["lines", False])
def test_no_plot_asked_for_beside_a_live_plot_in_callbacks_is_refused(
    small_iter, small_net, small_data, live
):
    # both would print an epoch's line in a terminal, or a plot would show under live=False
    with pytest.raises(mxlearn.MXLearnError) as caught:
        _fit(small_iter, small_net, small_data, live=live, callbacks=[mxlearn.LivePlot()])
    assert "live=plot" in str(caught.value)
    plot = mxlearn.LivePlot()
    _fit(small_iter, small_net, small_data, live=plot)  # the fix: one LivePlot, given as live=
    assert len(plot.history.series("accuracy", "validation", "epoch")[0]) == 3


def test_an_early_stop_after_one_epoch_of_patience_says_one_epoch(
    small_iter, small_net, small_data, capsys
):
    mod = _fit(small_iter, small_net, small_data, live=False, early_stopping=1)
    out = capsys.readouterr().out
    if mod.history.stops:
        assert "for 1 epoch;" in out and "1 epochs" not in out
    stopper = mxlearn.EarlyStopping(patience=1)
    stopper.best_value, stopper.best_epoch, stopper.restore_best = 0.5, 0, False
    assert "for 1 epoch;" in stopper.summary("accuracy")
