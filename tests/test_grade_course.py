"""Grading the real course: five students hand in notebook 01 (every answer right; a wrong
answer; the stubs left; a loop that never ends; a kernel killed with os._exit), and the grades
are exactly what a teacher expects, within the time limit, listed in the HTML summary."""

from __future__ import annotations

import csv
import time
from pathlib import Path

import nbformat
import pytest

from mxlearn.commands.grade import grade
from mxlearn.commands.student_edition import write_student_edition

pytestmark = pytest.mark.slow  # a kernel per notebook

ROOT = Path(__file__).resolve().parents[1] / "notebooks"
NAME = "01_module_step_by_step.ipynb"


def _answer_cell(notebook, exercise):
    return next(
        c
        for c in notebook.cells
        if c.metadata.get("mxlearn") == {"exercise": exercise, "role": "answer"}
    )


def _hand_in(folder: Path, student: str, notebook) -> None:
    (folder / student).mkdir(parents=True)
    nbformat.write(notebook, folder / student / NAME)


def test_five_students_of_notebook_01_get_exactly_the_expected_grades(tmp_path):
    submissions = tmp_path / "submitted"
    _hand_in(submissions, "alice", nbformat.read(ROOT / NAME, as_version=4))
    wrong = nbformat.read(ROOT / NAME, as_version=4)
    cell = _answer_cell(wrong, "01.1")
    cell.source = cell.source.replace("range(3)", "range(0)")  # never trains
    _hand_in(submissions, "bob", wrong)
    write_student_edition(ROOT, tmp_path / "student")
    _hand_in(submissions, "carol", nbformat.read(tmp_path / "student" / NAME, as_version=4))
    looping = nbformat.read(ROOT / NAME, as_version=4)
    cell = _answer_cell(looping, "01.2")
    cell.source = cell.source.replace(
        "### BEGIN SOLUTION", "### BEGIN SOLUTION\nwhile True:\n    pass"
    )
    _hand_in(submissions, "dave", looping)
    crashing = nbformat.read(ROOT / NAME, as_version=4)
    cell = _answer_cell(crashing, "01.1")
    cell.source = cell.source.replace(
        "### BEGIN SOLUTION", "### BEGIN SOLUTION\nimport os; os._exit(3)"
    )
    _hand_in(submissions, "erin", crashing)

    started = time.monotonic()
    result = grade(submissions, tmp_path / "grades.csv", timeout=40, jobs=2, teacher=ROOT)
    took = time.monotonic() - started

    with open(tmp_path / "grades.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    table = [(r["student"], r["exercise"], r["status"]) for r in rows]
    assert table == [
        ("alice", "01.1", "passed"),
        ("alice", "01.2", "passed"),
        ("bob", "01.1", "failed"),
        ("bob", "01.2", "passed"),
        ("carol", "01.1", "failed"),
        ("carol", "01.2", "failed"),
        ("dave", "01.1", "passed"),
        ("dave", "01.2", "timeout"),
        ("erin", "01.1", "error"),
        ("erin", "01.2", "error"),
    ]
    messages = {(r["student"], r["exercise"]): r["message"] for r in rows}
    assert messages[("bob", "01.1")].startswith("Exercise 01.1 (your own module, step by step): ")
    assert "made 0 updates" in messages[("bob", "01.1")]  # the loop by hand never ran
    assert messages[("carol", "01.1")].startswith("not answered")
    assert "40 s" in messages[("dave", "01.2")]
    assert "kernel died" in messages[("erin", "01.1")]
    assert all(r["notebook"] == NAME for r in rows)
    # the loop is stopped at its limit: the run takes two notebooks' time at most beyond it
    assert took < 40 + 60, took
    html = result.html.read_text(encoding="utf-8")
    for student in ("alice", "bob", "carol", "dave", "erin"):
        assert student in html
    assert "not answered" in html
