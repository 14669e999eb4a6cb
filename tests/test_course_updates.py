"""The student edition as a git repository that nbgitpuller (a class hub's link) pulls: an
update the teacher publishes after the students began reaches them without losing their answers;
a line both changed keeps the student's version, as nbgitpuller merges (-Xours)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from nbgitpuller.pull import GitPuller

from mxlearn.__main__ import main

pytestmark = pytest.mark.slow  # git and a whole student edition, twice

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NAME = "01_module_step_by_step.ipynb"


def _publish(teacher: Path, repo: Path, capsys) -> str:
    assert main(["course", "--notebooks", str(teacher), "--student", str(repo), "--git"]) == 0
    return capsys.readouterr().out


def _pull(repo: Path, home: Path) -> None:
    for _ in GitPuller(str(repo), str(home), branch="main").pull():
        pass


def _cell(notebook, exercise: str, role: str = "answer"):
    (cell,) = [
        c
        for c in notebook.cells
        if c.metadata.get("mxlearn", {}) == {"exercise": exercise, "role": role}
    ]
    return cell


def test_a_published_fix_and_a_new_cell_reach_a_student_who_has_answered(tmp_path, capsys):
    teacher, repo, home = tmp_path / "notebooks", tmp_path / "published", tmp_path / "alice"
    shutil.copytree(NOTEBOOKS, teacher)
    assert "git: committed" in _publish(teacher, repo, capsys)
    _pull(repo, home)

    # Alice answers 01.1 and runs the cell; Jupyter saves the notebook
    mine = nbformat.read(home / NAME, as_version=4)
    answer = _cell(mine, "01.1")
    answer.source = answer.source.replace("raise NotImplementedError()", "mod = 'my answer'")
    answer.execution_count = 1
    answer.outputs = [nbformat.v4.new_output("stream", name="stdout", text="bound\n")]
    nbformat.write(mine, home / NAME)

    # The teacher fixes a typo in the introduction, adds a cell, and changes the answer's stub
    edited = nbformat.read(teacher / NAME, as_version=4)
    intro = edited.cells[0]
    assert "Module" in intro.source
    intro.source = intro.source.replace("Module", "Module (fixed)", 1)
    edited.cells.append(nbformat.v4.new_markdown_cell("A cell added after the class began."))
    teachers_answer = _cell(edited, "01.1")
    teachers_answer.source = teachers_answer.source.replace(
        "### BEGIN SOLUTION", "# a changed stub line\n### BEGIN SOLUTION", 1
    )
    nbformat.write(edited, teacher / NAME)
    assert "git: committed" in _publish(teacher, repo, capsys)
    assert "nothing changed" in _publish(teacher, repo, capsys)  # no empty commits

    _pull(repo, home)
    pulled = nbformat.read(home / NAME, as_version=4)
    assert "mod = 'my answer'" in _cell(pulled, "01.1").source  # Alice's answer stays
    assert _cell(pulled, "01.1").outputs[0]["text"] == "bound\n"
    assert "Module (fixed)" in pulled.cells[0].source  # the fix arrived
    assert pulled.cells[-1].source == "A cell added after the class began."
    # the answer cell, where the stub's changed line is not one Alice changed: it arrives too
    assert "# a changed stub line" in _cell(pulled, "01.1").source
    # a student who wants the fresh notebook deletes theirs and clicks the link again
    (home / "02_fit.ipynb").unlink()
    _pull(repo, home)
    assert nbformat.read(home / "02_fit.ipynb", as_version=4).cells
    log = subprocess.run(["git", "log", "--format=%s"], cwd=home, capture_output=True, text=True)
    assert "Automatic commit by nbgitpuller" in log.stdout  # her work, committed in her copy


def test_a_line_the_student_changed_too_keeps_the_students_version(tmp_path, capsys):
    teacher, repo, home = tmp_path / "notebooks", tmp_path / "published", tmp_path / "bob"
    shutil.copytree(NOTEBOOKS, teacher)
    _publish(teacher, repo, capsys)
    _pull(repo, home)
    line = "mxlearn.set_language('en')"
    mine = nbformat.read(home / NAME, as_version=4)
    first = next(c for c in mine.cells if c.cell_type == "code" and line in c.source)
    first.source = first.source.replace(line, "mxlearn.set_language('zh')")  # Bob's choice
    first.execution_count = 1  # and he ran the cell: its output is saved beside its code
    first.outputs = [nbformat.v4.new_output("stream", name="stdout", text="Using cpu(0)\n")]
    nbformat.write(mine, home / NAME)
    edited = nbformat.read(teacher / NAME, as_version=4)
    code = next(c for c in edited.cells if c.cell_type == "code" and line in c.source)
    code.source = "# a fix above the code Bob ran\n" + code.source
    code.source = code.source.replace(line, "mxlearn.set_language('en')  # or 'zh'")  # Bob's line
    nbformat.write(edited, teacher / NAME)
    _publish(teacher, repo, capsys)
    _pull(repo, home)
    cells = nbformat.read(home / NAME, as_version=4).cells
    pulled = next(c for c in cells if c.cell_type == "code" and "set_language(" in c.source)
    assert "mxlearn.set_language('zh')" in pulled.source and "# or 'zh'" not in pulled.source
    assert "# a fix above the code Bob ran" in pulled.source  # a line he did not change arrives
    assert pulled.outputs[0]["text"] == "Using cpu(0)\n"


def test_git_without_the_student_edition_is_refused(capsys):
    assert main(["course", "--notebooks", str(NOTEBOOKS), "--git"]) != 0
    assert "--student" in capsys.readouterr().err
