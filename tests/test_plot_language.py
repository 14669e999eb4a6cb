"""A plot's words follow set_language('zh') only when matplotlib has a font for Chinese.

The Chinese case needs a CJK font on the machine (Debian's fonts-wqy-microhei; .ci/run
installs it). Outside CI a machine without one skips that test with the reason; in CI
(CI=true) a missing font is a failure. The English fallback is tested on every machine, by
hiding the CJK fonts from matplotlib.
"""

from __future__ import annotations

import os
import re
import warnings

import pytest
from matplotlib import font_manager

import mxlearn
from mxlearn.cjk_font import cjk_font_name, find_cjk_font
from mxlearn.live.figure import TrainingFigure
from mxlearn.metrics.history import MetricHistory

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def english_after():
    cjk_font_name.cache_clear()
    yield
    mxlearn.set_language("en")
    cjk_font_name.cache_clear()


def _drawn_words(figure: TrainingFigure) -> list[str]:
    ax = figure.fig.axes[0]
    legend = [text.get_text() for text in ax.get_legend().get_texts()]
    return [ax.get_xlabel(), *legend, *(text.get_text() for text in ax.texts)]


def _figure_of_a_resumed_run() -> TrainingFigure:
    history = MetricHistory()
    for epoch in range(3):
        for phase, kind in (("train", "batch"), ("train", "epoch"), ("validation", "epoch")):
            history.record(
                "accuracy", phase, kind, epoch=epoch, batch=0, samples=0, time=0, value=0.5
            )
    history.mark(mxlearn.language.say_drawn("resumed at epoch {epoch}", epoch=2), epoch=2)
    figure = TrainingFigure(smoothing=0.0)
    figure.update(history, 1, (0, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font": boxes, not words
        figure.draw(exact=True)
        figure.png()
    return figure


def _require_cjk_font() -> None:
    if cjk_font_name() is None:
        if os.environ.get("CI"):
            pytest.fail("no CJK font; .ci/run installs one with apt-get install fonts-wqy-microhei")
        pytest.skip("no CJK font on this machine (install Debian's fonts-wqy-microhei)")


def test_with_a_cjk_font_the_plot_speaks_chinese():
    _require_cjk_font()
    mxlearn.set_language("zh")
    words = _drawn_words(_figure_of_a_resumed_run())
    assert len(words) == 5 and all(CJK.search(word) for word in words), words


def test_without_a_cjk_font_the_plot_stays_english(monkeypatch):
    others = [e for e in font_manager.fontManager.ttflist if find_cjk_font([e]) is None]
    monkeypatch.setattr(font_manager.fontManager, "ttflist", others)
    monkeypatch.setattr(
        font_manager,
        "findSystemFonts",
        lambda *a, **k: [e.fname for e in others],
    )
    mxlearn.set_language("zh")
    assert cjk_font_name() is None
    words = _drawn_words(_figure_of_a_resumed_run())
    assert words == [
        "epochs completed",
        "train (batch)",
        "train (epoch)",
        "validation",
        "resumed at epoch 2",
    ]


def test_a_font_without_chinese_glyphs_is_not_taken_for_one():
    dejavu = [e for e in font_manager.fontManager.ttflist if e.name == "DejaVu Sans"]
    assert dejavu and find_cjk_font(dejavu) is None


def test_a_chinese_mark_left_by_a_chinese_run_is_drawn_in_an_english_plot():
    _require_cjk_font()
    history = MetricHistory()
    history.record("accuracy", "train", "epoch", epoch=0, batch=0, samples=0, time=0, value=0.5)
    history.mark("从迭代周期 1 恢复", epoch=1)  # as a checkpoint saved in Chinese holds it
    figure = TrainingFigure(smoothing=0.0)
    figure.update(history, 1, (0, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # boxes instead of the characters would warn
        figure.draw(exact=True)
    assert figure.fig.axes[0].get_xlabel() == "epochs completed"
