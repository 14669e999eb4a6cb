"""Partial credit: an exercise whose check is split into parts (a check cell each, nbgrader's
points each) earns the points of the parts that passed, listed in the CSV and the feedback."""

from __future__ import annotations

import nbformat
import pytest

from mxlearn.commands.exercise_cells import metadata
from mxlearn.commands.grade import grade
from mxlearn.exercises import parts_of
from tests.test_grade import (
    ANSWER_2,
    CHECK_1,
    CHECK_2,
    NOTEBOOK,
    SETUP,
    _cell,
    _notebook,
    _rows,
)

PART_2 = (
    "# Check of exercise 01.1, part 2 (do not change)\n"
    "from mxlearn.errors import CheckFailed\n"
    "if y != 1:\n"
    "    raise CheckFailed('y should be 1', fix='y = 1')"
)


def _two_parts(path, answer_1="x = 6 * 7\ny = 1", part_2=PART_2):
    notebook = nbformat.v4.new_notebook()
    second = nbformat.v4.new_code_cell(part_2)
    second.metadata.update(metadata("01.1", "check", 2))
    notebook.cells = [
        _cell(SETUP),
        _cell(answer_1, "01.1", "answer"),
        _cell(CHECK_1, "01.1", "check"),
    ]
    notebook.cells += [second, _cell(ANSWER_2, "01.2", "answer"), _cell(CHECK_2, "01.2", "check")]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)


@pytest.mark.slow
def test_each_part_that_passed_earns_its_points(temporary):
    tmp_path = temporary
    teacher, submitted = tmp_path / "notebooks", tmp_path / "submitted"
    _two_parts(teacher / NOTEBOOK)
    _two_parts(submitted / "alice" / NOTEBOOK)
    _two_parts(submitted / "bob" / NOTEBOOK, answer_1="x = 42\ny = 0")
    _two_parts(submitted / "dave" / NOTEBOOK, answer_1="x = 42\ny = 0", part_2="pass")
    (submitted / "carol").mkdir()
    _notebook(submitted / "erin" / NOTEBOOK)  # the edition before 01.1 was split: one check
    loop, accuracy = parts_of("01.1")

    grading = grade(submitted, tmp_path / "grades.csv", timeout=60, jobs=2, teacher=teacher)

    rows = _rows(grading.csv, columns=8)
    assert rows[0][5:] == ("points", "out_of", "parts")
    by_student = {(r[0], r[2]): (r[3], *r[5:]) for r in rows[1:]}
    assert by_student["alice", "01.1"] == ("passed", "2", "2", f"{loop}: 1/1; {accuracy}: 1/1")
    assert by_student["bob", "01.1"] == ("failed", "1", "2", f"{loop}: 1/1; {accuracy}: 0/1")
    assert by_student["bob", "01.2"] == ("passed", "1", "1", "")  # one check: no parts
    assert by_student["dave", "01.1"] == ("tampered", "0", "2", f"{loop}: 0/1; {accuracy}: 0/1")
    assert by_student["carol", "01.1"] == ("failed", "0", "2", "")  # not handed in
    stale = [r for r in rows if r[:3] == ("erin", NOTEBOOK, "01.1")][0]
    assert stale[3] == "failed" and stale[4].startswith("only 1 of the 2 check cells")
    feedback = nbformat.read(tmp_path / "grades-feedback" / "bob" / NOTEBOOK, as_version=4)
    said = [c.source for c in feedback.cells if c.cell_type == "markdown"]
    assert any(f"points: 1 of 2 ({loop}: 1/1; {accuracy}: 0/1)" in s for s in said)
    assert "failed 1/2" in grading.html.read_text(encoding="utf-8")
