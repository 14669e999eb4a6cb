"""fit(epoch_report_callback=...): called once per epoch after validation, with its values;
StopTraining raised in it ends fit cleanly."""

from __future__ import annotations

from conftest import seed_all

import mxlearn
from mxlearn import mx


def _val_iter(small_data):
    X, y = small_data
    return mx.io.NDArrayIter(X[:64], y[:64], batch_size=32)


def test_reports_come_after_validation_with_the_epochs_values(small_iter, small_net, small_data):
    seed_all(0)
    reports = []
    mod = mxlearn.Module(small_net)
    mod.fit(
        small_iter,
        eval_data=_val_iter(small_data),
        eval_metric=["acc", "ce"],
        optimizer_params={"learning_rate": 0.1},
        num_epoch=3,
        epoch_report_callback=reports.append,
    )
    assert [r.epoch for r in reports] == [0, 1, 2]
    for report in reports:
        for name in ("accuracy", "cross-entropy"):
            train_epochs, train_values = mod.history.series(name, "train", "epoch")
            val_epochs, val_values = mod.history.series(name, "validation", "epoch")
            assert report.train[name] == train_values[train_epochs.index(report.epoch)]
            assert report.validation[name] == val_values[val_epochs.index(report.epoch)]
        assert report.module is mod
    assert "validation accuracy=" in str(reports[-1])


def test_without_eval_data_a_report_holds_the_training_values(small_iter, small_net):
    reports = []
    mxlearn.Module(small_net).fit(small_iter, num_epoch=2, epoch_report_callback=[reports.append])
    assert [r.epoch for r in reports] == [0, 1]
    assert reports[0].validation == {} and set(reports[0].train) == {"accuracy"}


def test_stop_training_in_a_report_ends_fit_after_that_epoch(
    small_iter, small_net, small_data, capsys
):
    def stop_when_good(report):
        if report.validation["accuracy"] >= 0.0:  # true at once: stops after epoch 0
            raise mxlearn.StopTraining(f"validation accuracy reached at epoch {report.epoch}")

    mod = mxlearn.Module(small_net)
    mod.fit(
        small_iter,
        eval_data=_val_iter(small_data),
        num_epoch=5,
        epoch_report_callback=stop_when_good,
    )
    assert "validation accuracy reached at epoch 0" in capsys.readouterr().out
    assert mod.history.series("accuracy", "validation", "epoch")[0] == [0]
    assert sum(1 for _ in small_iter) == 8  # the iterator was reset: the next fit starts clean
