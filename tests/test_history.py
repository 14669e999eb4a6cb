"""MetricHistory: grouping and export round-trips; the throttle, with an injected clock."""

from __future__ import annotations

import math

import pytest

from mxlearn import MetricHistory
from mxlearn.live.throttle import NotABudget, Throttle
from mxlearn.metrics.catalogue import MetricFacts
from mxlearn.metrics.history import (
    NoSuchColumn,
    NoSuchKind,
    NoSuchPhase,
    NotASavedHistory,
    NotInHistory,
    SavedHistoryUnreadable,
)


def _history() -> MetricHistory:
    h = MetricHistory()
    for epoch in range(2):
        for batch in range(3):
            h.record(
                "accuracy",
                "train",
                "batch",
                epoch=epoch,
                batch=batch,
                samples=(epoch * 3 + batch + 1) * 32,
                time=0.1 * batch,
                value=0.5 + 0.1 * batch,
            )
        h.record(
            "accuracy",
            "train",
            "epoch",
            epoch=epoch,
            batch=3,
            samples=(epoch + 1) * 96,
            time=1.0 + epoch,
            value=0.6 + epoch / 10,
        )
        h.record(
            "accuracy",
            "validation",
            "epoch",
            epoch=epoch,
            batch=3,
            samples=(epoch + 1) * 96,
            time=1.1 + epoch,
            value=0.55 + epoch / 10,
        )
        h.record(
            "cross-entropy",
            "train",
            "epoch",
            epoch=epoch,
            batch=3,
            samples=(epoch + 1) * 96,
            time=1.0 + epoch,
            value=math.nan if epoch else 2.5,
        )
    h.mark("resumed at epoch 1", epoch=1, samples=96, time=1.05)
    return h


def test_groups_put_train_and_validation_of_a_metric_together():
    groups = _history().groups()
    assert list(groups) == ["accuracy", "cross-entropy"]
    assert len(groups["accuracy"]["train"]) == 8 and len(groups["accuracy"]["validation"]) == 2
    assert groups["cross-entropy"]["validation"] == []


def test_series_and_last():
    h = _history()
    assert h.series("accuracy", "validation", "epoch") == ([0, 1], [0.55, 0.65])
    assert h.series("accuracy", "train", "batch", x="samples")[0][:3] == [32, 64, 96]
    assert h.last("accuracy", "train") == pytest.approx(0.7)


def test_pandas_and_csv_round_trip(tmp_path):
    import pandas as pd

    h = _history()
    frame = h.to_pandas()
    assert list(frame.columns) == [
        "metric",
        "phase",
        "kind",
        "epoch",
        "batch",
        "samples",
        "time",
        "value",
    ]
    assert len(frame) == len(h) == 12
    h.to_csv(tmp_path / "h.csv")
    again = pd.read_csv(tmp_path / "h.csv")
    pd.testing.assert_frame_equal(frame, again, check_dtype=False)


def test_json_round_trip_keeps_nan_and_events(tmp_path):
    h = _history()
    h.save(tmp_path / "h.json")
    loaded = MetricHistory.load(tmp_path / "h.json")
    assert [r for r in loaded.records if not math.isnan(r.value)] == [
        r for r in h.records if not math.isnan(r.value)
    ]
    assert math.isnan(loaded.records[-1].value)
    assert loaded.events == h.events and loaded.events[0].text == "resumed at epoch 1"
    assert not (tmp_path / "h.json.tmp").exists()


def test_load_refuses_other_json(tmp_path):
    (tmp_path / "x.json").write_text('{"rows": []}')
    with pytest.raises(NotASavedHistory) as refused:
        MetricHistory.load(tmp_path / "x.json")
    assert refused.value.fields == {"found": None}  # no "format" in it
    assert isinstance(refused.value, ValueError)


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_throttle_pays_draws_from_a_cumulative_budget():
    clock = FakeClock()
    t = Throttle(budget=0.03, min_interval=0.25, clock=clock)
    assert not t.due()  # the first question opens the account; nothing to show yet
    clock.now += 0.25
    assert t.due()
    clock.now += 0.003
    t.drew(cost=0.003)  # cheap: the minimum interval rules
    clock.now += 0.2
    assert not t.due()
    clock.now += 0.05
    assert t.due()
    clock.now += 0.03
    t.drew(cost=0.03)  # 33 ms spent, and the next may cost 30: at 3% that needs 2.1 s
    clock.now += 1.5
    assert not t.due()
    clock.now += 0.1
    assert t.due()
    assert t.draws == 2 and t.spent == pytest.approx(0.033)


def test_forced_draws_use_up_the_budget_for_optional_ones():
    clock = FakeClock()
    t = Throttle(budget=0.03, min_interval=0.0, clock=clock)
    optional = 0
    for _ in range(20):  # short epochs: 0.2 s each, ending in a forced 8 ms draw
        for _ in range(40):
            clock.now += 0.005
            if t.due():
                optional += 1
                clock.now += 0.008
                t.drew(0.008)
        clock.now += 0.008
        t.drew(0.008)
    assert optional <= 2


def test_throttle_keeps_drawing_within_budget_over_a_run():
    clock = FakeClock()
    t = Throttle(budget=0.03, min_interval=0.0, clock=clock)
    start = clock.now
    for _ in range(10000):  # a batch every 5 ms, a draw costs 20 ms when due
        clock.now += 0.005
        if t.due():
            clock.now += 0.02
            t.drew(0.02)
    assert t.spent / (clock.now - start) <= 0.031


def test_throttle_rejects_a_budget_outside_0_1():
    with pytest.raises(NotABudget) as refused:
        Throttle(budget=3)
    assert refused.value.fields == {"budget": 3}
    assert isinstance(refused.value, ValueError)


def test_a_hand_edited_history_is_explained(tmp_path):
    import json

    from mxlearn.metrics.history import MetricHistory

    h = MetricHistory()
    h.record("accuracy", "train", "epoch", epoch=0, batch=0, samples=32, time=0.1, value=0.5)
    h.save(tmp_path / "h.json")
    data = json.loads((tmp_path / "h.json").read_text())
    data["rows"][0][-1] = "half"  # a value edited by hand
    (tmp_path / "h.json").write_text(json.dumps(data))
    with pytest.raises(SavedHistoryUnreadable) as refused:
        MetricHistory.load(tmp_path / "h.json")
    assert refused.value.fields["kind"] == "ValueError"
    assert "'half'" in str(refused.value.fields["error"])  # Python's own words, naming the value


# ---------------------------------------------------------------- names and phases (#26)
@pytest.mark.parametrize(
    "metric, phase",
    [("acc", "validation"), ("accuracy", "val"), ("Accuracy", "eval"), ("acc", "VAL")],
)
def test_a_curve_is_read_by_fits_names_and_the_phase_names_students_use(metric, phase):
    h = _history()
    assert h.last(metric, phase) == h.last("accuracy", "validation") == pytest.approx(0.65)
    assert h.series(metric, phase, "epoch") == ([0, 1], [0.55, 0.65])
    assert h.last_record(metric, phase).value == pytest.approx(0.65)
    assert h.series("ce", "training", "epoch")[1][0] == 2.5  # MXNet's alias of cross-entropy
    assert math.isnan(h.last("crossentropy", "training"))


def test_top_k_acc_reads_the_runs_one_top_k_accuracy():
    h = MetricHistory()
    h.record(
        "top_3_accuracy", "validation", "epoch", epoch=0, batch=1, samples=1, time=0, value=0.9
    )
    assert h.last("top_k_acc", "val") == 0.9 and h.last("TOP_3_ACCURACY", "val") == 0.9


@pytest.mark.parametrize(
    "question",
    [
        lambda h: h.last("acc", "valid"),
        lambda h: h.series("accuracy", "test", "epoch"),
        lambda h: h.last_record("accuracy", None),
    ],
)
def test_a_phase_it_does_not_know_is_refused_naming_the_ones_it_knows(question):
    with pytest.raises(NoSuchPhase) as refused:
        question(_history())
    assert refused.value.fields["phase"] in ("valid", "test", None)
    assert isinstance(refused.value, ValueError)


@pytest.mark.parametrize(
    "metric, near",
    [("accurcy", "accuracy"), ("mse", None), ("f1", None), ("cross_entropy", "cross-entropy")],
)
def test_a_metric_the_run_did_not_measure_is_refused_naming_those_it_did(metric, near):
    h = _history()
    with pytest.raises(NotInHistory) as refused:
        h.last(metric, "validation")
    fields = refused.value.fields
    assert fields["metric"] == metric and fields["called"] == "history.last()"
    assert fields["held"] == ["accuracy", "cross-entropy"]
    assert (repr(near) in fields["suggestion"]) if near else fields["suggestion"] == ""
    with pytest.raises(NotInHistory):
        h.series(metric, "train", "epoch")


def test_a_kind_or_column_it_does_not_know_is_refused():
    with pytest.raises(NoSuchKind) as refused:
        _history().series("accuracy", "train", "epochs")
    assert refused.value.fields["kind"] == "epochs"
    with pytest.raises(NoSuchColumn) as refused:
        _history().series("accuracy", "train", "epoch", x="sample")
    assert (
        refused.value.fields["x"] == "sample" and "'samples'" in refused.value.fields["suggestion"]
    )


def test_an_empty_history_has_no_value_yet_of_any_curve():
    assert MetricHistory().last("acc", "val") is None
    assert MetricHistory().series("accuracy", "validation", "epoch") == ([], [])


def test_facts_and_describe_take_fits_names_too():
    h = _history()
    h.know("accuracy", MetricFacts(True, (0.0, 1.0)))
    assert h.facts("acc") == h.facts("accuracy") == MetricFacts(True, (0.0, 1.0))
    with pytest.raises(NotInHistory) as refused:
        h.facts("mse")
    assert refused.value.fields["called"] == "history.facts()"
    custom = MetricHistory()
    custom.record("my_error", "train", "epoch", epoch=0, batch=1, samples=1, time=0.0, value=1.0)
    custom.describe("MY_ERROR", higher_is_better=False)
    assert custom.facts("my_error") == MetricFacts(False, None)
