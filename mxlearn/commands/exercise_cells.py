"""``python -m mxlearn mark NOTEBOOK...``: mark each exercise cell by its first line (``# Exercise
08.1``, ``# Check of exercise 08.1 (do not change)``, or the Chinese edition's) with mxlearn's
metadata and nbgrader's, so that the grader, the student edition and nbgrader read the same.
"""

from __future__ import annotations

import re

import nbformat

from .student_edition import read_teacher_notebook

FIRST_LINES = (
    ("check", re.compile(r"# (?:Check of exercise (\d+\.\d+)|练习 (\d+\.\d+) 的检查)")),
    ("answer", re.compile(r"# (?:Exercise|练习) (\d+\.\d+)\s*$")),
)


def metadata(exercise: str, role: str) -> dict:
    """Both metadata of the ``role`` ('answer' or 'check') cell of ``exercise``."""
    check = role == "check"
    grade_id = "ex" + exercise.replace(".", "_") + ("" if check else "_answer")
    nbgrader = {"grade": check, "grade_id": grade_id, "locked": check}
    nbgrader |= {"schema_version": 3, "solution": not check, "task": False}
    if check:
        nbgrader["points"] = 1
    return {"mxlearn": {"exercise": exercise, "role": role}, "nbgrader": nbgrader}


def cell_role(source: str) -> tuple[str, str] | None:
    """(exercise, role) that a code cell's first line declares, or None."""
    first = source.split("\n", 1)[0].strip()
    for role, pattern in FIRST_LINES:
        found = pattern.match(first)
        if found:
            return next(g for g in found.groups() if g), role
    return None


def mark(notebook) -> list[tuple[str, str]]:
    """Write the metadata of every exercise cell of ``notebook``; the (exercise, role) marked."""
    marked = []
    for cell in notebook.cells:
        found = cell_role(cell.source) if cell.cell_type == "code" else None
        if found:
            cell.metadata.update(metadata(*found))
            marked.append(found)
    return marked


def mark_files(paths) -> dict[str, list[tuple[str, str]]]:
    done = {}
    for path in paths:
        notebook = read_teacher_notebook(path, "python -m mxlearn mark")
        done[str(path)] = mark(notebook)
        nbformat.write(notebook, path)
    return done
