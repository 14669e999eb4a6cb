"""The feedback notebooks of a grade run, to hand back: each student's own notebook as handed in,
with a cell after each exercise's check that gives its grade, the check's message and the next
hint the student has not seen yet (never the teacher's answer). Written in ``<csv>-feedback/
<student>/<notebook>``; a file there that is not a feedback notebook is never replaced.
"""

from __future__ import annotations

import html
from pathlib import Path

import nbformat

from ..atomic_write import atomic_write
from ..exercises import catalogue
from ..language import say
from .grade_exercises import PASSED, exercises_of, read_notebook

MARK = {"feedback": True}  # in the notebook's metadata["mxlearn"]: a file this module wrote


def _text(text: str) -> str:
    """Text as Markdown shows it as written (a message with <tags> is no markup)."""
    return html.escape(text, quote=False)


def feedback_folder(csv: Path) -> Path:
    return csv.with_name(csv.stem + "-feedback")


def _shown(notebook) -> str:
    """Every text the student's saved outputs show (where the hints they read are)."""
    texts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            texts.append(str(output.get("text", "")))
            texts += [str(v) for v in output.get("data", {}).values()]
    return "\n".join(texts)


def _next_hint(exercise: str, shown: str) -> str:
    known = catalogue().get(exercise)
    if known is None:
        return ""
    unseen = [hint for hint in known[1] if hint not in shown]
    if not unseen:
        return say("every hint of this exercise is shown in your notebook: ask your teacher")
    return say("next hint: {hint}", hint=unseen[0])


def _said(grade, shown: str) -> str:
    title = catalogue().get(grade.exercise, ("",))[0]
    head = say(
        "Exercise {exercise}{title}: {status}",
        exercise=grade.exercise,
        title=f" ({title})" if title else "",
        status=grade.status,
    )
    lines = [f"**{_text(head)}**"]
    if grade.out_of:
        points = say("points: {points} of {out_of}", points=grade.points, out_of=grade.out_of)
        lines.append(_text(points + (f" ({grade.parts})" if grade.parts else "")))
    if grade.message:
        lines.append(f"> {_text(grade.message)}")
    if grade.status != PASSED:
        hint = _next_hint(grade.exercise, shown)
        lines += [_text(hint)] if hint else []
    return "\n\n".join(lines)


def feedback_notebook(notebook, grades: list):
    """``notebook`` (a student's) with each grade of ``grades`` after its exercise's check."""
    shown = _shown(notebook)
    cells = list(notebook.cells)
    places = exercises_of(notebook, with_answers_only=True)
    after: dict[int, list] = {}
    for grade in grades:
        place = places.get(grade.exercise)
        at = max(place.cells) if place and place.cells else len(cells) - 1
        after.setdefault(at, []).append(nbformat.v4.new_markdown_cell(_said(grade, shown)))
    passed = sum(g.status == PASSED for g in grades)
    summary = say(
        "Grading's feedback: {passed} of {total} exercises passed. Each exercise's grade is in "
        "the cell after its check.",
        passed=passed,
        total=len(grades),
    )
    out = [nbformat.v4.new_markdown_cell(f"**{_text(summary)}**")]
    for index, cell in enumerate(cells):
        out += [cell, *after.get(index, [])]
    out += after.get(-1, [])  # an empty notebook's grades
    result = nbformat.v4.new_notebook(cells=out, metadata=dict(notebook.metadata))
    result.metadata["mxlearn"] = dict(MARK)
    return result


def _ours(path: Path) -> bool:
    notebook, _ = read_notebook(path)
    mark = notebook.metadata.get("mxlearn") if notebook is not None else None
    return isinstance(mark, dict) and mark.get("feedback") is True


def write_feedback(folder: Path, submissions: list, grades: list) -> tuple[list[Path], list]:
    """One feedback notebook per graded submission: (written, [(path, why not)]): a file in
    the way that this module did not write is kept; a name the system refuses is said."""
    written, not_written = [], []
    for submission in submissions:
        key = (submission.student, submission.notebook)
        mine = [g for g in grades if (g.student, g.notebook) == key and g.exercise]
        notebook, _ = read_notebook(submission.path) if submission.linked_to is None else (None, 0)
        if notebook is None or not mine:
            continue
        path = folder / submission.student / submission.notebook
        if path.is_symlink() or (path.exists() and not _ours(path)):
            not_written.append((path, say("not a feedback notebook: kept")))
            continue
        try:
            made = feedback_notebook(notebook, mine)
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(str(path), lambda tmp, made=made: nbformat.write(made, tmp))
        except OSError as failure:  # a name too long for the temporary file, a full disk
            not_written.append((path, f"{type(failure).__name__}: {failure.strerror or failure}"))
            continue
        except Exception as failure:  # whatever one notebook holds, the others get theirs
            not_written.append((path, f"{type(failure).__name__}: {failure}"))
            continue
        written.append(path)
    return written, not_written
