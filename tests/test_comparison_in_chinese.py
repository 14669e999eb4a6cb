"""mxlearn.compare in a Chinese run: the table is headed in Chinese, its numbers the English
table's, and the figure and table name each metric as Chinese prose does."""

from __future__ import annotations

import pytest

import mxlearn
from mxlearn.experiments.comparison import TABLE_COLUMNS


def _history(values: dict[str, list[float]]) -> mxlearn.MetricHistory:
    history = mxlearn.MetricHistory()
    for metric, series in values.items():
        for epoch, value in enumerate(series):
            for phase, shift in (("train", 0.0), ("validation", 0.01)):
                history.record(
                    metric, phase, "epoch", epoch=epoch, batch=10, samples=320 * (epoch + 1),
                    time=float(epoch), value=value + shift,
                )  # fmt: skip
    return history


@pytest.fixture
def runs():
    return (
        _history({"accuracy": [0.5, 0.7, 0.8], "cross-entropy": [1.2, 0.9, 0.7]}),
        _history({"accuracy": [0.4, 0.6, 0.65]}),
    )


def _compared(runs, language: str):
    mxlearn.set_language(language)
    try:
        comparison = mxlearn.compare(*runs, show=False)
        return comparison, comparison.table()
    finally:
        mxlearn.set_language("en")


def test_the_table_is_headed_in_chinese_with_the_english_tables_numbers(runs):
    _, english = _compared(runs, "en")
    _, chinese = _compared(runs, "zh")
    assert list(english.columns) == list(TABLE_COLUMNS)
    assert list(chinese.columns) == [
        "运行", "指标", "迭代周期数", "最终迭代周期", "最终训练值", "最终验证值", "最佳验证值",
        "最佳迭代周期",
    ]  # fmt: skip
    numbers = ["epochs", "final epoch", "final train", "final validation", "best validation"]
    for column in numbers + ["best epoch"]:
        shown = chinese[mxlearn.language.say_in("zh", TABLE_COLUMNS[column])]
        assert list(shown) == list(english[column]), column
    assert str(chinese["迭代周期数"].dtype) == "Int64"
