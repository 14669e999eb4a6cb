"""The student edition: every answer replaced by nbgrader's stub, nothing else changed, and no
answer line left anywhere in the files."""

from __future__ import annotations

import nbformat
import pytest

from mxlearn.commands.student_edition import write_student_edition
from mxlearn.errors import InputError

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
    with pytest.raises(InputError, match="also appears outside") as info:
        write_student_edition(tmp_path / "notebooks", tmp_path / "student")
    assert "mx.init.Xavier" in str(info.value)


@pytest.mark.parametrize(
    "source, problem",
    [
        ("### BEGIN SOLUTION\nx = 1", "never closed"),
        ("x = 1\n### END SOLUTION", "without"),
        ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "a second"),
    ],
)
def test_unbalanced_markers_are_refused_with_the_cell(tmp_path, source, problem):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source)]
    (tmp_path / "notebooks").mkdir()
    nbformat.write(notebook, tmp_path / "notebooks" / "02_broken.ipynb")
    with pytest.raises(InputError, match=problem) as info:
        write_student_edition(tmp_path / "notebooks", tmp_path / "student")
    assert "02_broken.ipynb, cell 0" in str(info.value)
    assert not (tmp_path / "student").exists()


def test_the_teachers_folder_is_never_overwritten(tmp_path):
    _teacher_notebook(tmp_path / "notebooks")
    with pytest.raises(InputError, match="teacher's edition"):
        write_student_edition(tmp_path / "notebooks", tmp_path / "notebooks")


def test_the_command_line_writes_both_languages(tmp_path, capsys):
    from mxlearn.__main__ import main

    _teacher_notebook(tmp_path / "notebooks")
    _teacher_notebook(tmp_path / "notebooks" / "zh")
    out = tmp_path / "student"
    assert main(["course", "--notebooks", str(tmp_path / "notebooks"), "--student", str(out)]) == 0
    assert "2 notebooks" in capsys.readouterr().out
    assert (out / "zh" / "01_exercise.ipynb").exists()
