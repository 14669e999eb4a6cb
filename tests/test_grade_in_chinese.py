"""A Chinese edition's grades are said in Chinese, whatever the grader speaks: "not answered"
and the grader's other words come in the language the teacher's notebook runs in, and the
summary page shows its statuses in its own language (the CSV keeps the statuses themselves)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest

import mxlearn
from mxlearn.commands.exercise_cells import metadata
from mxlearn.commands.grade import Grade
from mxlearn.commands.grade_exercises import edition_language, grades_from_run, prepare
from mxlearn.commands.grade_report import report_page
from mxlearn.language import current_language, spoken

NB = "01_exercises.ipynb"
SETUP = {"en": "import mxlearn", "zh": "import mxlearn\nmxlearn.set_language('zh')  # 中文"}
STUB = "# YOUR CODE HERE\nraise NotImplementedError()"


def _notebook(language: str, answer: str = "x = 42"):
    cells = [nbformat.v4.new_markdown_cell("# 练习"), nbformat.v4.new_code_cell(SETUP[language])]
    for source, role in ((answer, "answer"), ("assert x == 42", "check")):
        cell = nbformat.v4.new_code_cell(source)
        cell.metadata.update(metadata("01.1", role))
        cells.append(cell)
    return nbformat.v4.new_notebook(cells=cells)


def _graded(language: str) -> tuple[str, str]:
    """(status, message) of a stub answer handed in for the ``language`` edition."""
    prepared = prepare(_notebook(language, STUB), _notebook(language))
    events = [
        {"cell": 1, "status": "ok"},
        {"cell": 2, "status": "error", "ename": "NotImplementedError", "evalue": ""},
        {"cell": 3, "status": "error", "ename": "NameError", "evalue": "name 'x' is not defined"},
    ]
    grades = grades_from_run(prepared, events, False, {"timeout": 60.0, "tail": ""})
    return grades["01.1"][:2]


def test_the_edition_is_the_language_its_notebook_sets():
    assert edition_language(_notebook("zh")) == "zh"
    assert edition_language(_notebook("en")) is None  # the grader's own language, then
    odd = _notebook("en", "mxlearn.set_language('klingon')")
    assert edition_language(odd) is None


def test_a_chinese_editions_not_answered_is_chinese_while_the_grader_speaks_english():
    assert current_language() == "en"
    assert _graded("zh") == ("failed", "未作答：代码仍然抛出 NotImplementedError")
    assert _graded("en") == ("failed", "not answered: the code still raises NotImplementedError")
    assert current_language() == "en"  # the grader's language is as it was


def test_threads_grading_both_editions_at_once_each_say_their_own():
    with ThreadPoolExecutor(max_workers=4) as pool:
        said = list(pool.map(_graded, ["zh", "en"] * 8))
    assert {message for _, message in said[0::2]} == {"未作答：代码仍然抛出 NotImplementedError"}
    assert {message for _, message in said[1::2]} == {
        "not answered: the code still raises NotImplementedError"
    }


def test_spoken_refuses_a_language_mxlearn_does_not_speak():
    with pytest.raises(mxlearn.MXLearnError):
        with spoken("fr"):
            pass


def test_a_chinese_summary_shows_statuses_in_chinese_and_keeps_them_as_classes():
    grades = [
        Grade("ana", NB, "01.1", "passed", ""),
        Grade("ben", NB, "01.1", "failed", "未作答：代码仍然抛出 NotImplementedError"),
    ]
    page = report_page(grades, "grades.csv", language="zh")
    assert '<html lang="zh">' in page and "<h1>评分：grades.csv</h1>" in page
    assert '<td class="failed">未通过</td><td>未作答' in page
    assert '<td class="passed" title="">通过</td>' in page
    assert "<th>通过</th><th>未通过</th><th>出错</th><th>超时</th>" in page
    assert ">passed<" not in page and ">failed<" not in page
    english = report_page(grades, "grades.csv")  # the language mxlearn speaks: English here
    assert '<html lang="en">' in english and '<td class="failed">failed</td>' in english
