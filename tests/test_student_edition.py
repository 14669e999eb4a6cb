"""The student edition: every answer replaced by nbgrader's stub, nothing else changed, and no
answer line left anywhere in the files."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from mxlearn.__main__ import TwoCourseOutputs
from mxlearn.commands.student_edition import (
    AnswerLeaks,
    BadRegion,
    EditionNotWritten,
    IntoTheTeachersEdition,
    NoOutName,
    NotANotebook,
    OutHoldsOtherFiles,
    OutIsAFile,
    UnknownEdition,
    write_student_edition,
)

ANSWER = [
    "mod.bind(data_shapes=train_iter.provide_data, label_shapes=train_iter.provide_label)",
    "mod.init_params(initializer=mx.init.Xavier())",
]


def _teacher_notebook(folder, name="01_exercise.ipynb", answer=ANSWER):
    notebook = nbformat.v4.new_notebook()
    solution = nbformat.v4.new_code_cell(
        "mod = mxlearn.Module(net)\n### BEGIN SOLUTION\n" + "\n".join(answer) + "\n### END SOLUTION"
    )
    solution.metadata["nbgrader"] = {
        "grade": False,
        "solution": True,
        "locked": False,
        "grade_id": "ex-01-1",
        "schema_version": 3,
    }
    solution.outputs = [nbformat.v4.new_output("stream", text="bound\n")]
    solution.execution_count = 3
    indented = nbformat.v4.new_code_cell(
        "def step(batch):\n    ### BEGIN SOLUTION\n    mod.forward(batch, is_train=True)\n"
        "    ### END SOLUTION\n    return mod"
    )
    check = nbformat.v4.new_code_cell("mxlearn.checks.bound(mod)")
    notebook.cells = [nbformat.v4.new_markdown_cell("# Bind"), solution, indented, check]
    notebook.metadata["widgets"] = {"state": {"saved": "mod.forward(batch, is_train=True)"}}
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, folder / name)
    return notebook


def test_answers_become_stubs_and_everything_else_stays(tmp_path):
    teacher = _teacher_notebook(tmp_path / "notebooks")
    _teacher_notebook(tmp_path / "notebooks" / "zh")
    written = write_student_edition(tmp_path / "notebooks", tmp_path / "student")
    assert [p.relative_to(tmp_path / "student").as_posix() for p in written] == [
        "01_exercise.ipynb",
        "zh/01_exercise.ipynb",
    ]
    student = nbformat.read(written[0], as_version=4)
    assert student.cells[1].source == (
        "mod = mxlearn.Module(net)\n# YOUR CODE HERE\nraise NotImplementedError()"
    )
    assert student.cells[2].source == (
        "def step(batch):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n    return mod"
    )
    assert student.cells[1].metadata["nbgrader"] == teacher.cells[1].metadata["nbgrader"]
    # the stubbed cells raise until answered: Run All goes on past them
    assert [c.metadata.get("tags") for c in student.cells] == [
        None,
        ["raises-exception"],
        ["raises-exception"],
        None,
    ]
    assert [c.source for c in student.cells[::3]] == [c.source for c in teacher.cells[::3]]
    assert all(c.outputs == [] and c.execution_count is None for c in student.cells[1:])
    chinese = nbformat.read(written[1], as_version=4)
    assert chinese.cells[1].source.splitlines()[1] == "# 在这里写你的代码"


def test_no_answer_line_is_left_in_any_student_file(tmp_path):
    _teacher_notebook(tmp_path / "notebooks")
    _teacher_notebook(tmp_path / "notebooks" / "zh")
    for path in write_student_edition(tmp_path / "notebooks", tmp_path / "student"):
        text = path.read_text(encoding="utf-8")
        for line in [*ANSWER, "mod.forward(batch, is_train=True)"]:
            assert line not in text, (path, line)


def test_an_answer_line_shown_outside_its_region_is_refused(tmp_path):
    notebook = _teacher_notebook(tmp_path / "notebooks")
    notebook.cells.append(nbformat.v4.new_markdown_cell(f"Hint: `{ANSWER[1]}`"))
    nbformat.write(notebook, tmp_path / "notebooks" / "01_exercise.ipynb")
    with pytest.raises(AnswerLeaks) as info:
        write_student_edition(tmp_path / "notebooks", tmp_path / "student")
    assert info.value.fields["line"] == ANSWER[1]
    assert Path(info.value.fields["target"]).name == "01_exercise.ipynb"
    assert info.value.fields["where"] == "cell 5"  # the hint appended after the four cells


@pytest.mark.parametrize(
    "source, problem",
    [
        ("### BEGIN SOLUTION\nx = 1", "never closed"),
        ("x = 1\n### END SOLUTION", "without its BEGIN"),
        ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "a second BEGIN"),
    ],
)
def test_unbalanced_markers_are_refused_with_the_cell(tmp_path, source, problem):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source)]
    (tmp_path / "notebooks").mkdir()
    nbformat.write(notebook, tmp_path / "notebooks" / "02_broken.ipynb")
    with pytest.raises(BadRegion) as info:
        write_student_edition(tmp_path / "notebooks", tmp_path / "student")
    # which of the three is wrong is said only in words: BadRegion has no field for it
    assert problem in info.value.fields["problem"]
    assert info.value.fields["where"].endswith("02_broken.ipynb, cell 1")  # counted from 1
    assert info.value.fields["line"] == 2
    assert not (tmp_path / "student").exists()


def test_the_teachers_folder_is_never_overwritten(tmp_path):
    _teacher_notebook(tmp_path / "notebooks")
    with pytest.raises(IntoTheTeachersEdition) as refused:
        write_student_edition(tmp_path / "notebooks", tmp_path / "notebooks")
    assert Path(refused.value.fields["folder"]) == (tmp_path / "notebooks").resolve()


def test_the_command_line_writes_both_languages(tmp_path, capsys):
    from mxlearn.__main__ import main

    _teacher_notebook(tmp_path / "notebooks")
    _teacher_notebook(tmp_path / "notebooks" / "zh")
    out = tmp_path / "student"
    assert main(["course", "--notebooks", str(tmp_path / "notebooks"), "--student", str(out)]) == 0
    assert "2 notebooks" in capsys.readouterr().out
    assert (out / "zh" / "01_exercise.ipynb").exists()


def _one_cell_course(folder, source, cell_type="code", solution=False, name="03_x.ipynb"):
    notebook = nbformat.v4.new_notebook()
    make = nbformat.v4.new_code_cell if cell_type == "code" else nbformat.v4.new_markdown_cell
    cell = make(source)
    if solution:
        cell.metadata["nbgrader"] = {"grade": False, "solution": True, "grade_id": "a"}
    notebook.cells = [nbformat.v4.new_markdown_cell("# Exercise"), cell]
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, folder / name)
    return notebook


def _student_cell(tmp_path, name="03_x.ipynb", index=1):
    written = write_student_edition(tmp_path / "notebooks", tmp_path / "student")
    path = next(p for p in written if p.name == name)
    return nbformat.read(path, as_version=4).cells[index]


def test_a_solution_cell_without_markers_is_replaced_whole_as_nbgrader_does(tmp_path):
    _one_cell_course(tmp_path / "notebooks", "mod.fit(train_iter, num_epoch=7)", solution=True)
    assert _student_cell(tmp_path).source == "# YOUR CODE HERE\nraise NotImplementedError()"
    _one_cell_course(tmp_path / "notebooks", "It overfits after epoch 5", "markdown", True)
    assert _student_cell(tmp_path).source == "YOUR ANSWER HERE"


@pytest.mark.parametrize(
    "begin, end",
    [("# BEGIN SOLUTION", "## END SOLUTION"), ("#### BEGIN SOLUTION", "#END SOLUTION")],
)
def test_every_marker_spelling_nbgrader_accepts_is_stubbed(tmp_path, begin, end):
    _one_cell_course(tmp_path / "notebooks", f"a = 1\n  {begin}\n  b = mod.score(x)\n  {end}\n")
    assert _student_cell(tmp_path).source == (
        "a = 1\n  # YOUR CODE HERE\n  raise NotImplementedError()\n"  # the last newline kept
    )


@pytest.mark.parametrize(
    "line",
    [
        "### begin solution",
        "###BEGINSOLUTION",
        "### BEGIN\u00a0SOLUTION",
        "# End_Solution",
        "mod.fit(x)  ### BEGIN SOLUTION",
        "### BEGIN SOLUTION here",
    ],
)
def test_a_marker_nbgrader_would_miss_or_misread_is_refused_with_its_line(tmp_path, line):
    _one_cell_course(tmp_path / "notebooks", f"x = 1\n{line}\nmod.fit(train_iter)")
    with pytest.raises(BadRegion) as info:
        write_student_edition(tmp_path / "notebooks", tmp_path / "student")
    assert info.value.fields["line"] == 2
    assert info.value.fields["where"].endswith("03_x.ipynb, cell 2")
    assert not (tmp_path / "student").exists()


def test_hidden_tests_are_removed_from_the_student_edition(tmp_path):
    _one_cell_course(
        tmp_path / "notebooks",
        "check(mod)\n### BEGIN HIDDEN TESTS\nassert mod.score(val_iter)[0][1] > 0.7\n"
        "### END HIDDEN TESTS",
    )
    assert _student_cell(tmp_path).source == "check(mod)"


def test_an_answer_shown_in_another_notebook_or_the_other_language_is_refused(tmp_path):
    _one_cell_course(
        tmp_path / "notebooks",
        "### BEGIN SOLUTION\nmod.score(val_iter, 'acc')\n### END SOLUTION",
        name="03_x.ipynb",
    )
    _one_cell_course(
        tmp_path / "notebooks" / "zh",
        "# 提示: mod.score(val_iter, 'acc')",
        "markdown",
        name="03_x.ipynb",
    )
    with pytest.raises(AnswerLeaks) as info:
        write_student_edition(tmp_path / "notebooks", tmp_path / "student")
    assert info.value.fields["line"] == "mod.score(val_iter, 'acc')"
    assert Path(info.value.fields["target"]).parts[-2:] == ("zh", "03_x.ipynb")


def test_words_that_give_nothing_away_are_not_taken_for_leaks(tmp_path):
    # a lone keyword found in prose, an answer that is one of nbformat's JSON words, the stub
    _one_cell_course(
        tmp_path / "notebooks",
        "for b in it:\n    ### BEGIN SOLUTION\n    continue\n    raise NotImplementedError()\n"
        "    ### END SOLUTION",
    )
    notebook = nbformat.read(tmp_path / "notebooks" / "03_x.ipynb", as_version=4)
    notebook.cells.append(nbformat.v4.new_markdown_cell("We continue with the markdown."))
    answer = nbformat.v4.new_markdown_cell("### BEGIN SOLUTION\nmarkdown\n### END SOLUTION")
    notebook.cells.append(answer)
    nbformat.write(notebook, tmp_path / "notebooks" / "03_x.ipynb")
    assert "continue" not in _student_cell(tmp_path).source


def test_only_the_attachments_of_an_answer_are_dropped(tmp_path):
    png = {"image/png": "iVBORw0KGgo="}
    cell = nbformat.v4.new_markdown_cell(
        "![curve](attachment:curve.png)\n### BEGIN SOLUTION\n![mine](attachment:answer.png)\n"
        "### END SOLUTION\n"
    )
    cell.attachments = {"curve.png": png, "answer.png": png}
    plain = nbformat.v4.new_markdown_cell("![net](attachment:net.png)\n")
    plain.attachments = {"net.png": png}
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [cell, plain]
    (tmp_path / "notebooks").mkdir()
    nbformat.write(notebook, tmp_path / "notebooks" / "03_x.ipynb")
    student = nbformat.read(
        write_student_edition(tmp_path / "notebooks", tmp_path / "student")[0], as_version=4
    )
    assert list(student.cells[0].attachments) == ["curve.png"]
    assert student.cells[0].source.endswith("YOUR ANSWER HERE\n")
    assert student.cells[1] == notebook.cells[1]


def test_a_line_separator_inside_a_string_stays_in_its_line(tmp_path):
    kept = 'title = "a\u2028b"  # kept'
    _one_cell_course(tmp_path / "notebooks", f"{kept}\n### BEGIN SOLUTION\nx = 2\n### END SOLUTION")
    assert _student_cell(tmp_path).source.split("\n")[0] == kept


def test_a_student_folder_that_reaches_the_teachers_files_is_refused(tmp_path):
    course = tmp_path / "course"
    _teacher_notebook(course)
    _teacher_notebook(course / "zh")
    before = (course / "01_exercise.ipynb").read_bytes()
    with pytest.raises(OutHoldsOtherFiles) as refused:  # zh's edition over DIR
        write_student_edition(course / "zh", course)
    assert Path(refused.value.fields["out"]) == course.resolve()
    with pytest.raises(IntoTheTeachersEdition) as inside:  # inside the teacher's folder
        write_student_edition(course, course / "student")
    assert Path(inside.value.fields["folder"]) == course.resolve()
    out = tmp_path / "student"
    out.mkdir()
    (out / "zh").symlink_to(course / "zh")
    with pytest.raises(IntoTheTeachersEdition) as through:
        write_student_edition(course, out)
    assert Path(through.value.fields["folder"]) == course.resolve()
    assert (course / "01_exercise.ipynb").read_bytes() == before


@pytest.mark.parametrize(
    "damage",
    [
        b"{not json",
        b"",
        b"\xff\xfe{",
        b"[1, 2]",
        b'{"nbformat": 4, "nbformat_minor": 5, "cells": []}',
    ],
)
def test_an_unreadable_teacher_notebook_is_named_and_nothing_is_written(tmp_path, damage):
    _teacher_notebook(tmp_path / "notebooks")
    (tmp_path / "notebooks" / "02_damaged.ipynb").write_bytes(damage)
    with pytest.raises(NotANotebook) as refused:
        write_student_edition(tmp_path / "notebooks", tmp_path / "student")
    assert Path(refused.value.fields["path"]) == tmp_path / "notebooks" / "02_damaged.ipynb"
    assert not (tmp_path / "student").exists()


def test_a_folder_that_cannot_take_the_edition_is_refused_before_writing(tmp_path):
    _teacher_notebook(tmp_path / "notebooks")
    _teacher_notebook(tmp_path / "notebooks" / "zh")
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(OutIsAFile) as refused:
        write_student_edition(tmp_path / "notebooks", tmp_path / "a_file")
    assert Path(refused.value.fields["path"]) == tmp_path / "a_file"
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "zh").write_text("x")
    with pytest.raises(OutIsAFile) as refused:
        write_student_edition(tmp_path / "notebooks", tmp_path / "out")
    assert Path(refused.value.fields["path"]) == tmp_path / "out" / "zh"
    with pytest.raises(OutHoldsOtherFiles) as refused:  # files of someone else
        write_student_edition(tmp_path / "notebooks", tmp_path)
    assert Path(refused.value.fields["out"]) == tmp_path
    with pytest.raises(EditionNotWritten) as refused:  # /proc takes no new folder
        write_student_edition(tmp_path / "notebooks", "/proc/mxlearn-student")
    assert refused.value.fields["out"] == "/proc/mxlearn-student"


def test_a_new_edition_replaces_the_old_one_and_keeps_the_teachers_files(tmp_path, capsys):
    _teacher_notebook(tmp_path / "notebooks")
    _teacher_notebook(tmp_path / "notebooks", "02_stale.ipynb")
    out = tmp_path / "student"
    write_student_edition(tmp_path / "notebooks", out)
    (tmp_path / "notebooks" / "02_stale.ipynb").unlink()  # a notebook the course dropped
    (out / "data").mkdir()
    (out / "data" / "letters.csv").write_text("the teacher's")  # files the teacher added
    (out / "README.txt").write_text("hand out on Monday")
    capsys.readouterr()
    write_student_edition(tmp_path / "notebooks", out)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        ".mxlearn-student-edition",
        "01_exercise.ipynb",
        "README.txt",
        "data/letters.csv",
    ]
    assert (out / "data" / "letters.csv").read_text() == "the teacher's"
    said = capsys.readouterr().out
    assert "kept README.txt" in said and "kept data/letters.csv" in said
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_editions_mxlearn_has_no_stub_for_are_refused_and_checkpoints_skipped(tmp_path):
    _teacher_notebook(tmp_path / "notebooks")
    _teacher_notebook(tmp_path / "notebooks" / ".ipynb_checkpoints", "01_exercise-checkpoint.ipynb")
    written = write_student_edition(tmp_path / "notebooks", tmp_path / "student")
    assert [p.name for p in written] == ["01_exercise.ipynb"]
    _teacher_notebook(tmp_path / "notebooks" / "fr")
    with pytest.raises(UnknownEdition) as refused:
        write_student_edition(tmp_path / "notebooks", tmp_path / "student")
    assert (
        Path(refused.value.fields["folder"]).name == "fr" and refused.value.fields["known"] == "zh"
    )


@pytest.mark.parametrize(
    "arguments, kind",
    [(["--student", ""], NoOutName), (["--student", "s", "--out", "o"], TwoCourseOutputs)],
)
def test_the_command_line_refuses_what_it_cannot_do(tmp_path, capsys, arguments, kind):
    from mxlearn.__main__ import main

    _teacher_notebook(tmp_path / "notebooks")
    assert main(["course", "--notebooks", str(tmp_path / "notebooks"), *arguments]) == 1
    assert str(kind()) in capsys.readouterr().err  # the refusal of that kind (it has no fields)


def test_a_failed_swap_puts_the_old_edition_back(tmp_path, monkeypatch):
    _teacher_notebook(tmp_path / "notebooks")
    out = tmp_path / "student"
    write_student_edition(tmp_path / "notebooks", out)
    before = (out / "01_exercise.ipynb").read_bytes()
    real_rename = Path.rename

    def rename(self, target):
        if self.name.endswith(".writing"):  # the new edition cannot take OUT's place
            raise PermissionError(13, "Permission denied")
        return real_rename(self, target)

    monkeypatch.setattr(Path, "rename", rename)
    with pytest.raises(EditionNotWritten) as refused:
        write_student_edition(tmp_path / "notebooks", out)
    assert Path(refused.value.fields["out"]) == out
    assert "PermissionError" in refused.value.fields["problem"]  # Python's own error, named
    assert (out / "01_exercise.ipynb").read_bytes() == before
