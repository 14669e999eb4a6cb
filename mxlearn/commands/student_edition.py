"""``python -m mxlearn course --student OUT``: the course as students get it.

The notebooks in ``notebooks/`` (English) and ``notebooks/zh/`` (Chinese) are the teacher's
edition. An exercise's answer sits between nbgrader's markers ``### BEGIN SOLUTION`` and
``### END SOLUTION``, in a cell that nbgrader's metadata marks as a solution, so a teacher who
uses nbgrader can grade with it. The student edition replaces each answer by nbgrader's stub
(``# YOUR CODE HERE`` and ``raise NotImplementedError()``, the comment in the notebook's
language; ``YOUR ANSWER HERE`` in a text cell) and keeps every other line. It clears outputs,
execution counts and saved widget state, and a solution cell's attachments, so no part of an
answer is left in the files. Each written file is then searched for every line of every answer.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat

from ..errors import InputError
from ..language import say

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
CODE_STUB = {
    "en": ("# YOUR CODE HERE", "raise NotImplementedError()"),
    "zh": ("# 在这里写你的代码", "raise NotImplementedError()"),
}
TEXT_STUB = {"en": "YOUR ANSWER HERE", "zh": "在这里写你的回答"}


def _stubbed(source: str, stub: tuple[str, ...], where: str) -> tuple[str, list[str]]:
    """``source`` with each answer region replaced by ``stub`` (indented like its BEGIN line),
    and the answer's lines."""
    kept, answer, indent = [], [], None
    for number, line in enumerate(source.splitlines(), start=1):
        marker = line.strip()
        if marker == BEGIN:
            if indent is not None:
                _refuse(where, number, say("a second {begin} before {end}", begin=BEGIN, end=END))
            indent = line[: len(line) - len(line.lstrip())]
            kept += [indent + part for part in stub]
        elif marker == END:
            if indent is None:
                _refuse(where, number, say("{end} without {begin}", begin=BEGIN, end=END))
            indent = None
        elif indent is None:
            kept.append(line)
        else:
            answer.append(line)
    if indent is not None:
        _refuse(where, len(source.splitlines()), say("{begin} is never closed", begin=BEGIN))
    return "\n".join(kept), answer


def _refuse(where: str, line: int, problem: str) -> None:
    raise InputError(
        say("{where}, line {line}: {problem}.", where=where, line=line, problem=problem),
        fix=say(
            "put each answer between a line '### BEGIN SOLUTION' and a line "
            "'### END SOLUTION', one region after another"
        ),
    )


def student_notebook(notebook, language: str, name: str) -> tuple[object, list[str]]:
    """The student copy of ``notebook`` (an nbformat node), and every answer line it left out."""
    student, answers = copy.deepcopy(notebook), []
    student.metadata.pop("widgets", None)  # saved widget state holds outputs
    for index, cell in enumerate(student.cells):
        where = say("{name}, cell {index}", name=name, index=index)
        stub = CODE_STUB[language] if cell.cell_type == "code" else (TEXT_STUB[language],)
        if BEGIN in cell.source or END in cell.source:
            cell.source, lines = _stubbed(cell.source, stub, where)
            answers += lines
            cell.pop("attachments", None)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return student, [line for line in answers if line.strip()]


def write_student_edition(notebooks: str | Path, out: str | Path) -> list[Path]:
    """Write the student edition of every notebook in ``notebooks`` and ``notebooks/zh``."""
    notebooks, out = Path(notebooks), Path(out)
    sources = [(p, "en") for p in sorted(notebooks.glob("*.ipynb"))]
    sources += [(p, "zh") for p in sorted((notebooks / "zh").glob("*.ipynb"))]
    if not sources:
        raise InputError(
            say("mxlearn course --student: no notebooks in {folder}.", folder=str(notebooks)),
            fix="python -m mxlearn course --notebooks notebooks --student runs/student",
        )
    if out.resolve() in (notebooks.resolve(), (notebooks / "zh").resolve()):
        raise InputError(
            say(
                "mxlearn course --student {out}: that is the teacher's edition; writing there "
                "would replace the answers.",
                out=str(out),
            ),
            fix="python -m mxlearn course --student runs/student",
        )
    editions = []  # all made and checked before any is written: a refusal leaves no half
    for source, language in sources:
        target = out / source.relative_to(notebooks)
        teacher = nbformat.read(source, as_version=4)
        student, answers = student_notebook(teacher, language, str(source))
        text = nbformat.writes(student)
        _check_no_answer_left(text, answers, target)
        editions.append((target, text))
    for target, text in editions:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return [target for target, _ in editions]


SHORTEST_SEARCHED = 8  # shorter answer lines (")", "pass") appear in any code


def _check_no_answer_left(text: str, answers: list[str], target: Path) -> None:
    """Every answer line is searched for, as written and as JSON writes it (escaped)."""
    for line in answers:
        body = line.strip()
        if len(body) < SHORTEST_SEARCHED:
            continue
        if body in text or json.dumps(body, ensure_ascii=False)[1:-1] in text:
            raise InputError(
                say(
                    "mxlearn course --student: the answer line {line!r} also appears outside "
                    "its solution region, so {target} would give it away.",
                    line=body,
                    target=str(target),
                ),
                fix=say("move that line into the solution region, or reword it outside"),
            )
