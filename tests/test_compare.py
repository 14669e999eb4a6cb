"""mxlearn.compare: the curves of several real runs overlaid, one line per run, phase and metric,
with a table of their final and best values."""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.checkpoint.files import NoCompleteCheckpoint
from mxlearn.experiments.comparison import (
    LabelledAlike,
    NoRuns,
    NotAFigureFile,
    NotARun,
    NotOneLabelPerRun,
    RunHoldsNoEpoch,
    RunHoldsNothing,
)

QUIET = logging.getLogger("quiet-compare")
QUIET.setLevel(logging.WARNING)


def _trained(rate, checkpoint=None, metrics="acc", num_epoch=3, **fit_args):
    mxlearn.seed(0)
    X, y = mxlearn.datasets.synthetic_classification(num_samples=320)
    train = mx.io.NDArrayIter(X[:256], y[:256], batch_size=32, shuffle=True)
    val = mx.io.NDArrayIter(X[256:], y[256:], batch_size=32)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4), context=mx.cpu(), logger=QUIET)
    mod.fit(
        train,
        eval_data=val,
        num_epoch=num_epoch,
        eval_metric=metrics,
        optimizer_params={"learning_rate": rate},
        checkpoint=checkpoint,
        **fit_args,
    )
    return mod


@pytest.fixture(scope="module")
def two_runs():
    return _trained(0.01, metrics=["acc", "ce"]), _trained(0.5, metrics=["acc", "ce"])


def test_one_line_per_run_phase_and_metric_with_the_histories_values(two_runs):
    slow, fast = two_runs
    comparison = mxlearn.compare(slow, fast, show=False)
    assert comparison.metrics == ["accuracy", "cross-entropy"]
    assert [len(ax.lines) for ax in comparison.fig.axes] == [4, 4]  # 2 runs x 2 phases
    labels = [run.label for run in comparison.runs]
    assert labels == ["run 1: sgd, learning_rate=0.01", "run 2: sgd, learning_rate=0.5"]
    for run, mod in zip(comparison.runs, two_runs):
        epochs, values = mod.history.series("accuracy", "validation", "epoch")
        xs, ys = comparison.lines("accuracy")[(run.label, "validation")]
        assert xs == [e + 1 for e in epochs] and ys == values
    drawn = comparison.fig.axes[0].lines[1]  # the first run's validation accuracy
    assert list(drawn.get_ydata()) == slow.history.series("accuracy", "validation", "epoch")[1]
    assert drawn.get_linestyle() == "--"


def test_histories_and_checkpoints_are_runs_too(tmp_path):
    mod = _trained(0.1, checkpoint=str(tmp_path / "mlp"))
    comparison = mxlearn.compare(
        mod.history, str(tmp_path / "mlp"), labels=["history", "checkpoint"], show=False
    )
    assert (
        comparison.lines("accuracy")[("history", "train")]
        == comparison.lines("accuracy")[("checkpoint", "train")]
    )
    assert comparison.runs[1].settings == {"optimizer": "sgd", "params": {"learning_rate": 0.1}}


def test_the_table_gives_final_and_best_values(two_runs):
    table = mxlearn.compare(*two_runs, labels=["slow", "fast"], show=False).table()
    assert list(table.columns) == [
        "run",
        "metric",
        "epochs",
        "final epoch",
        "final train",
        "final validation",
        "best validation",
        "best epoch",
    ]
    for label, mod in zip(["slow", "fast"], two_runs):
        row = table[(table.run == label) & (table.metric == "cross-entropy")].iloc[0]
        epochs, values = mod.history.series("cross-entropy", "validation", "epoch")
        assert row["best validation"] == min(values)  # a loss: lower is better
        # numbered as fit logs them and diagnose names them: Epoch[0] is the first
        assert row["best epoch"] == epochs[int(np.argmin(values))]
        assert row["epochs"] == 3 and row["final epoch"] == 2
        assert row["final train"] == mod.history.last("cross-entropy", "train")


def test_a_metric_of_unknown_direction_has_no_best(two_runs):
    history = mxlearn.MetricHistory()
    for epoch, value in enumerate([0.3, 0.2]):
        history.record(
            "my_score",
            "validation",
            "epoch",
            epoch=epoch,
            batch=1,
            samples=1,
            time=0.0,
            value=value,
        )
    row = mxlearn.compare(history, show=False).table().iloc[0]
    assert row["best validation"] is None and row["final validation"] == 0.2


def test_save_writes_png_and_svg_and_refuses_other_kinds(two_runs, tmp_path):
    comparison = mxlearn.compare(*two_runs, show=False)
    assert (
        comparison.save(tmp_path / "c.png") and (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    )
    ET.parse(comparison.save(tmp_path / "plots" / "c.svg"))
    for wrong in (tmp_path / "c.jpg", 42):
        with pytest.raises(NotAFigureFile) as refused:
            comparison.save(wrong)
        assert refused.value.fields == {"path": str(wrong)}


def test_in_a_terminal_it_prints_the_table_and_saves_a_png(two_runs, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    mxlearn.compare(*two_runs, labels=["slow", "fast"], backend="console")
    printed = capsys.readouterr().out
    assert "best validation" in printed and "Plot saved to runs/plots/compare-" in printed
    assert len(list((tmp_path / "runs" / "plots").glob("compare-*.png"))) == 1


@pytest.mark.parametrize(
    "runs, kind, fields",
    [
        ((), NoRuns, {}),
        ((42,), NotARun, {"number": 1, "kind": "int"}),
        ((mxlearn.MetricHistory(),), RunHoldsNothing, {"number": 1}),
        (("nowhere/mlp",), NoCompleteCheckpoint, {"prefix": "nowhere/mlp"}),
    ],
)
def test_what_cannot_be_compared_is_refused(runs, kind, fields):
    with pytest.raises(mxlearn.MXLearnError) as refused:
        mxlearn.compare(*runs, show=False)
    assert type(refused.value) is kind
    assert {name: refused.value.fields[name] for name in fields} == fields


def test_runs_that_cannot_be_told_apart_are_refused(two_runs, tmp_path):
    with pytest.raises(LabelledAlike) as refused:
        mxlearn.compare(*two_runs, labels=["x", "x"], show=False)
    assert refused.value.fields == {"labels": "'x'"}
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        _trained(0.1, checkpoint=str(tmp_path / folder / "mlp"))
    prefixes = [str(tmp_path / "a" / "mlp"), str(tmp_path / "b" / "mlp")]
    comparison = mxlearn.compare(*prefixes, show=False)
    assert [run.label for run in comparison.runs] == [
        f"{prefix}: sgd, learning_rate=0.1" for prefix in prefixes
    ]
    assert [len(ax.lines) for ax in comparison.fig.axes] == [4]


def test_labels_must_be_one_per_run(two_runs):
    with pytest.raises(NotOneLabelPerRun) as refused:
        mxlearn.compare(*two_runs, labels=["only one"], show=False)
    assert refused.value.fields == {"count": 2, "labels": ["only one"]}
    with pytest.raises(NotOneLabelPerRun) as refused:
        mxlearn.compare(*two_runs, labels="ab", show=False)
    assert refused.value.fields == {"count": 2, "labels": "ab"}


def test_chinese_labels_in_a_chinese_run(two_runs):
    mxlearn.set_language("zh")
    try:
        comparison = mxlearn.compare(*two_runs, show=False)
    finally:
        mxlearn.set_language("en")
    assert comparison.runs[0].label.startswith("运行 1")


def test_the_table_tells_the_weights_early_stopping_kept_and_leaves_out_what_was_not_measured():
    stopping = mxlearn.EarlyStopping("ce", patience=2, min_delta=0.05)
    mod = _trained(0.5, metrics=["ce"], num_epoch=30, early_stopping=stopping)
    epochs, values = mod.history.series("cross-entropy", "validation", "epoch")
    best = stopping.best_epoch  # the last epoch that improved by more than min_delta
    assert len(epochs) == best + 3  # stopped two epochs after it
    plain = _trained(0.1)  # measured accuracy only
    table = mxlearn.compare(mod, plain, labels=["stopped", "plain"], show=False).table()
    assert list(zip(table.run, table.metric)) == [
        ("stopped", "cross-entropy"),
        ("plain", "accuracy"),
    ]
    row = table.iloc[0]
    assert row["epochs"] == best + 3 and row["final epoch"] == best
    assert row["best epoch"] == int(np.argmin(values))
    assert row["final validation"] == values[best]  # the weights put back, not the last epoch's
    assert mod.history.events[-1].kind == "restored"


def test_a_run_with_no_complete_epoch_is_refused():
    history = mxlearn.MetricHistory()
    history.record("accuracy", "train", "batch", epoch=0, batch=0, samples=32, time=0.1, value=0.2)
    with pytest.raises(RunHoldsNoEpoch) as refused:
        mxlearn.compare(history, show=False)
    assert refused.value.fields == {"number": 1}
