"""``python -m mxlearn mark NOTEBOOK...``: mark each exercise cell by its first line (``# Exercise
08.1``, ``# Check of exercise 08.1 (do not change)``, or the Chinese edition's) with mxlearn's
metadata and nbgrader's, so that the grader, the student edition and nbgrader read the same.
A notebook nbgrader or the grader would misread is refused whole, before anything is written.
"""

from __future__ import annotations

import re
from collections import Counter

import nbformat

from ..errors import N_, InputError, did_you_mean
from ..exercises import catalogue, parts_of
from .student_edition import read_teacher_notebook

ID = r"([0-9]{2}\.[0-9]+)"  # as exercises.toml names them: ASCII digits, two for the notebook
PART = r"([0-9]+)"  # of an exercise graded in parts: each part a check cell of its own
FIRST_LINES = (
    (
        "check",
        re.compile(
            rf"# (?:Check of exercise {ID}(?:, part {PART})?|练习 {ID} 的检查(?:，第 {PART} 部分)?)"
        ),
    ),
    ("answer", re.compile(rf"# (?:Exercise|练习) {ID}\s*$")),
)
# a first line meant as one of those, written another way: "#Exercise 8.1", "# exercise 08.1"
ALMOST = re.compile(
    r"#\s*(?:check of exercise|exercise|练习)\s*[\d.０-９．]+\s*(?:\(.*|的检查.*)?$", re.I
)


class NotInCatalogue(InputError):
    says = N_("{path}: exercise {exercise} is not in mxlearn/exercises.toml. {known}")
    fix_says = N_("give it a title and hints there first, then mark the notebook")


class ExerciseCellTwice(InputError):
    says = N_(
        "{path}: cells {cells} are each the {role} cell of exercise {exercise}; nbgrader needs "
        "one grade_id per cell."
    )
    fix_says = N_("keep one {role} cell for the exercise, or number the other one anew")


class ExerciseWithoutCheck(InputError):
    says = N_("{path}: exercise {exercise} has an answer cell but no check cell to grade it.")
    fix_code = "# Check of exercise {exercise} (do not change)"


class CheckWithoutExercise(InputError):
    says = N_("{path}: a check cell of exercise {exercise}, but no answer cell for a student.")
    fix_code = "# Exercise {exercise}"


class PartsNotAsNamed(InputError):
    says = N_(
        "{path}: exercise {exercise} has check cells for parts {found}; mxlearn/exercises.toml "
        "names {named} parts for it."
    )
    fix_says = N_(
        "number its check cells 1, 2, ... as the parts its entry names ('# Check of exercise "
        "08.1, part 2 (do not change)'), or give its entry a parts = [...] list"
    )


class AlmostAFirstLine(InputError):
    says = N_(
        "{path}: cell {cell} starts with {line!r}, nearly an exercise's first line: it would "
        "not be marked, so neither graded nor hidden from students."
    )
    fix_says = N_(
        "write it exactly as '# Exercise 08.1' or '# Check of exercise 08.1 (do not change)' "
        "(the Chinese edition: '# 练习 08.1', '# 练习 08.1 的检查(请勿修改)')"
    )


def metadata(exercise: str, role: str, part: int = 1) -> dict:
    """Both metadata of the ``role`` ('answer' or 'check') cell of ``exercise`` (of its
    ``part``, for a check cell of an exercise graded in parts: a point each)."""
    check = role == "check"
    grade_id = "ex" + exercise.replace(".", "_") + ("" if check else "_answer")
    grade_id += f"_part{part}" if part > 1 else ""
    nbgrader = {"grade": check, "grade_id": grade_id, "locked": check}
    nbgrader |= {"schema_version": 3, "solution": not check, "task": False}
    ours = {"exercise": exercise, "role": role} | ({"part": part} if part > 1 else {})
    if check:
        nbgrader["points"] = 1
    return {"mxlearn": ours, "nbgrader": nbgrader}


def cell_role(source: str) -> tuple[str, str, int] | None:
    """(exercise, role, part) that a code cell's first line declares, or None."""
    first = source.split("\n", 1)[0].strip()
    for role, pattern in FIRST_LINES:
        found = pattern.match(first)
        if found:
            groups = found.groups()
            at = next(i for i, g in enumerate(groups) if g)  # the English or the Chinese form
            part = groups[at + 1] if role == "check" else None
            return groups[at], role, int(part or 1)
    return None


def mark(notebook, path: str = "notebook") -> tuple[list[tuple[str, str]], list[int]]:
    """Write the metadata of every exercise cell of ``notebook``, and take it off a cell that
    is no longer one: ((exercise, role) marked, indices of cells unmarked)."""
    roles = {}
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        roles[index] = cell_role(cell.source)
        first = cell.source.split("\n", 1)[0].strip()
        if roles[index] is None and ALMOST.match(first):
            raise AlmostAFirstLine(path=path, cell=index, line=first)
    _check_exercises(path, {i: r for i, r in roles.items() if r})
    marked, unmarked = [], []
    for index, found in roles.items():
        cell = notebook.cells[index]
        if found:
            cell.metadata.update(metadata(*found))
            marked.append(found[:2])
        elif {"mxlearn", "nbgrader"} & set(cell.metadata):
            cell.metadata.pop("mxlearn", None)
            cell.metadata.pop("nbgrader", None)
            unmarked.append(index)
    return marked, unmarked


def _check_exercises(path: str, roles: dict) -> None:
    known = catalogue()
    for exercise in sorted({exercise for exercise, _, _ in roles.values()}):
        if exercise not in known:
            raise NotInCatalogue(path=path, exercise=exercise, known=did_you_mean(exercise, known))
    for (exercise, role, _), count in Counter(roles.values()).items():
        if count > 1:
            cells = [i for i, found in roles.items() if found[:2] == (exercise, role)]
            raise ExerciseCellTwice(path=path, cells=cells, role=role, exercise=exercise)
    have = {found[:2] for found in roles.values()}
    for exercise, role in sorted(have):
        missing = "check" if role == "answer" else "answer"
        if (exercise, missing) not in have:
            kind = ExerciseWithoutCheck if role == "answer" else CheckWithoutExercise
            raise kind(path=path, exercise=exercise)
        parts = sorted(p for e, r, p in roles.values() if (e, r) == (exercise, "check"))
        named = len(parts_of(exercise)) or 1
        if role == "check" and parts != list(range(1, named + 1)):
            raise PartsNotAsNamed(path=path, exercise=exercise, found=parts, named=named)


def mark_files(paths) -> dict[str, tuple[list[tuple[str, str]], list[int]]]:
    """Every notebook checked first: one that is refused leaves all of them as they were."""
    notebooks = {str(p): read_teacher_notebook(p, "python -m mxlearn mark") for p in paths}
    done = {path: mark(notebook, path) for path, notebook in notebooks.items()}
    for path, notebook in notebooks.items():
        nbformat.write(notebook, path)
    return done
