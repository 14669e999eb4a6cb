"""The class summary a teacher reads after grading: per exercise, the pass rate, the failures
grouped by cause with how many students each, and how many asked for hints."""

from __future__ import annotations

import nbformat

from mxlearn.commands.grade import Grade
from mxlearn.commands.grade_exercises import hints_asked
from mxlearn.commands.grade_report import report_page

NB = "01_module_step_by_step.ipynb"


def _exercise_section(page: str, exercise: str) -> str:
    return page.split(f"{NB} — {exercise}</h3>")[1].split("<h3>")[0]


def test_each_exercise_shows_its_pass_rate_causes_and_hints():
    grades = [
        Grade("ana", NB, "01.1", "passed", ""),
        Grade("ben", NB, "01.1", "failed", "accuracy 0.31 is below 0.5"),
        Grade("cai", NB, "01.1", "failed", "accuracy 0.12 is below 0.5"),
        Grade("dan", NB, "01.1", "error", "NameError: name 'mod' is not defined"),
        Grade("ana", NB, "01.2", "passed", ""),
        Grade("ben", NB, "01.2", "passed", ""),
        Grade("cai", NB, "01.2", "passed", ""),
        Grade("dan", NB, "01.2", "passed", ""),
    ]
    hints = {("ben", NB): {"01.1"}, ("cai", NB): {"01.1", "01.2"}, ("dan", NB): set()}

    page = report_page(grades, "grades.csv", hints)

    first = _exercise_section(page, "01.1")
    assert "passed by 1 of 4 students (25%); 2 asked for hints (as their notebooks show)" in first
    # the two accuracies are one cause, counted twice, shown by one of its messages
    assert '<td class="count">2</td><td class="failed">failed</td><td>accuracy 0.31' in first
    assert "accuracy 0.12" not in first
    assert '<td class="count">1</td><td class="error">error</td><td>NameError' in first
    second = _exercise_section(page, "01.2")
    assert "passed by 4 of 4 students (100%); 1 asked for hints" in second
    assert "message (one of them)" not in second  # no failures: no table of causes


def test_hints_count_only_where_the_saved_notebook_shows_them_run():
    run = nbformat.v4.new_code_cell("mxlearn.hint('01.1')\nmxlearn.hint(\"02.3\")")
    run.outputs = [nbformat.v4.new_output("stream", text="Exercise 01.1 (...), hint 1 of 3")]
    unrun = nbformat.v4.new_code_cell("mxlearn.hint('04.1')")  # written, never run
    text = nbformat.v4.new_markdown_cell("call mxlearn.hint('05.1') when stuck")
    notebook = nbformat.v4.new_notebook(cells=[run, unrun, text])

    assert hints_asked(notebook) == {"01.1", "02.3"}
    assert hints_asked(None) == set()  # an unreadable notebook tells nothing


def _student_notebook(path, answer: str, hint_output: str | None = None):
    from mxlearn.commands.exercise_cells import metadata

    answer_cell = nbformat.v4.new_code_cell(f"# Exercise 01.1\n{answer}")
    answer_cell.metadata.update(metadata("01.1", "answer"))
    check = nbformat.v4.new_code_cell("# Check of exercise 01.1 (do not change)\ncheck(mod)")
    check.metadata.update(metadata("01.1", "check"))
    cells = [nbformat.v4.new_markdown_cell("# Notebook 01"), answer_cell, check]
    if hint_output is not None:
        asked = nbformat.v4.new_code_cell("mxlearn.hint('01.1')")
        asked.outputs = [nbformat.v4.new_output("stream", text=hint_output)]
        cells.insert(2, asked)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return path


def test_a_feedback_notebook_gives_each_grade_and_the_hint_not_seen_yet(tmp_path):
    from mxlearn.commands.grade_feedback import write_feedback
    from mxlearn.commands.grade_inputs import Submission
    from mxlearn.exercises import catalogue

    title, hints = catalogue()["01.1"]
    mine = _student_notebook(tmp_path / "in" / "ben" / NB, "mod = None", hint_output=hints[0])
    other = _student_notebook(tmp_path / "in" / "cai" / NB, "mod = trained")
    found = [Submission("ben", NB, mine), Submission("cai", NB, other)]
    grades = [
        Grade("ben", NB, "01.1", "failed", "the loop made 0 updates <of 12>"),
        Grade("cai", NB, "01.1", "passed", ""),
    ]
    folder = tmp_path / "grades-feedback"
    (folder / "cai").mkdir(parents=True)
    (folder / "cai" / NB).write_text("the teacher's own notes")  # not ours: kept

    written, kept = write_feedback(folder, found, grades)

    assert written == [folder / "ben" / NB]
    assert kept == [(folder / "cai" / NB, "not a feedback notebook: kept")]
    assert (folder / "cai" / NB).read_text() == "the teacher's own notes"
    back = nbformat.read(folder / "ben" / NB, as_version=4)
    sources = [cell.source for cell in back.cells]
    assert (
        sources[0]
        == "**Grading's feedback: 0 of 1 exercises passed. Each exercise's grade is in the cell after its check.**"
    )
    assert sources[1:5] == [c.source for c in nbformat.read(mine, as_version=4).cells]
    said = sources[5]  # right after the check cell
    assert said.startswith(f"**Exercise 01.1 ({title}): failed**")
    assert "&lt;of 12&gt;" in said  # a message is text, never markup
    assert f"next hint: {hints[1]}" in said and hints[0] not in said  # the one not seen yet
    assert back.metadata["mxlearn"] == {"feedback": True}

    rewritten, _ = write_feedback(folder, found[:1], grades)  # a second run: ours, replaced
    assert rewritten == [folder / "ben" / NB]
