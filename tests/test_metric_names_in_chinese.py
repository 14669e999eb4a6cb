"""Chinese prose names a metric in Chinese (准确率, 交叉熵), and a finding's kind too; code a
student copies keeps the name fit recorded ('cross-entropy'), and a custom metric its author's."""

from __future__ import annotations

import re

import pytest

import mxlearn
from mxlearn.language import say
from mxlearn.metrics.catalogue import KNOWN_METRICS, create_metric, metric_title
from mxlearn.metrics.findings import KINDS, kind_title

CHINESE = re.compile(r"[\u4e00-\u9fff]")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


@pytest.fixture(autouse=True)
def english_after():
    yield
    mxlearn.set_language("en")


def _recorded_names() -> list[str]:
    """The name each known metric's values are recorded under, as MXNet's metric reports it."""
    names = []
    for row in KNOWN_METRICS:
        spec = row.names[0]
        metric = create_metric(spec, ignore_label=None) if spec == "perplexity" else None
        names.append((metric or create_metric(spec)).get()[0])
    return names


def test_every_known_metric_has_a_chinese_name_and_keeps_its_own_in_english():
    names = _recorded_names()
    assert "cross-entropy" in names and "top_5_accuracy" in names
    for name in names:
        assert metric_title(name, "en") == name
        chinese = metric_title(name, "zh")
        assert CHINESE.search(chinese), name
        assert not set(LATIN_WORD.findall(chinese)) - {"F"}, (name, chinese)  # F1 分数
    assert metric_title("top_k_accuracy_3", "zh") == "前 3 准确率"  # MXNet's own top-k name
    assert metric_title("my_score", "zh") == "my_score"  # a custom metric: its author's name


def test_each_finding_kind_has_a_chinese_name():
    mxlearn.set_language("zh")
    assert all(CHINESE.search(kind_title(kind)) for kind in KINDS)
    assert kind_title("overfitting") == "过拟合"
    mxlearn.set_language("en")
    assert [kind_title(kind) for kind in KINDS] == list(KINDS)


def _overfitting_history() -> mxlearn.MetricHistory:
    history = mxlearn.MetricHistory()
    curves = {
        ("cross-entropy", "train"): [1.0, 0.8, 0.6, 0.45, 0.35, 0.28, 0.22],
        ("cross-entropy", "validation"): [1.0, 0.85, 0.8, 0.9, 1.0, 1.1, 1.2],
        ("accuracy", "train"): [0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93],
        ("accuracy", "validation"): [0.5, 0.6, 0.62, 0.6, 0.58, 0.57, 0.55],
    }
    for (metric, phase), values in curves.items():
        for epoch, value in enumerate(values):
            history.record(
                metric, phase, "epoch", epoch=epoch, batch=10, samples=1000 * (epoch + 1),
                time=float(epoch), value=value,
            )  # fmt: skip
    return history


def test_a_chinese_finding_names_the_metric_in_chinese_and_the_code_as_recorded():
    history = _overfitting_history()
    (english,) = history.diagnose(lang="en")
    (chinese,) = history.diagnose(lang="zh")
    assert chinese.kind == english.kind == "overfitting" and chinese.metric == "cross-entropy"
    assert chinese.numbers == english.numbers
    assert "验证集上的交叉熵在迭代周期 2 最好" in chinese.text
    assert "cross-entropy" not in chinese.text
    assert "EarlyStopping('cross-entropy', patience=3)" in chinese.next_step
    assert "验证集上的交叉熵为 0.8" in chinese.next_step
    assert "validation cross-entropy was best at epoch 2" in english.text


def test_a_chinese_name_in_a_chinese_text_takes_no_space_a_latin_name_keeps_it():
    mxlearn.set_language("zh")
    template = "validation {metric} {value:.4f}"
    assert say(template, metric=metric_title("accuracy"), value=0.5) == "验证准确率 0.5000"
    assert say(template, metric="my_score", value=0.5) == "验证 my_score 0.5000"
    assert say("no {kind} in the curves.", kind=kind_title("plateau")) == (
        "曲线中没有出现这类问题：停滞。"
    )


def test_the_comparison_names_its_metrics_in_chinese():
    history = _overfitting_history()
    mxlearn.set_language("zh")
    comparison = mxlearn.compare(history, show=False)
    table = comparison.table()
    assert list(table["指标"]) == ["交叉熵", "准确率"]
    if mxlearn.language.drawn_language() == "zh":  # a font that draws Chinese is installed
        assert [ax.get_title() for ax in comparison.fig.axes] == ["交叉熵", "准确率"]


def test_fits_epoch_lines_and_early_stopping_name_the_metrics_in_chinese(
    small_iter, small_net, small_data, capsys
):
    from mxlearn import mx

    X, y = small_data
    mxlearn.set_language("zh")
    mod = mxlearn.Module(small_net)
    mod.fit(
        small_iter,
        eval_data=mx.io.NDArrayIter(X[:64], y[:64], batch_size=32),
        eval_metric=["acc", "ce"],
        optimizer_params={"learning_rate": 0.1},
        num_epoch=2,
        live="lines",
    )
    first = capsys.readouterr().out.splitlines()[0]
    assert "训练准确率=" in first and "验证交叉熵=" in first
    assert not re.search(r"accuracy|cross-entropy", first)
    stopper = mxlearn.EarlyStopping(patience=2)
    stopper.best_value, stopper.best_epoch, stopper.restore_best = 0.5, 0, False
    assert "验证集上的准确率已连续 2 个迭代周期" in stopper.summary("accuracy")
