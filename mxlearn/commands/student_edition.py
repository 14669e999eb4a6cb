"""``python -m mxlearn course --student OUT``: the course as students get it.

The notebooks in ``notebooks/`` (English) and ``notebooks/zh/`` (Chinese) are the teacher's
edition. An exercise's answer sits between nbgrader's markers ``### BEGIN SOLUTION`` and
``### END SOLUTION``, in a cell that nbgrader's metadata marks as a solution, so a teacher who
uses nbgrader can grade with it. The student edition replaces each answer by nbgrader's stub
(``# YOUR CODE HERE`` and ``raise NotImplementedError()``, the comment in the notebook's
language; ``YOUR ANSWER HERE`` in a text cell) and keeps every other line (``answer_regions``).
It clears outputs, execution counts, saved widget state and the attachments an answer showed,
and tags each stubbed code cell and each check cell ``raises-exception``: they raise until the
student answers, and Run All then goes on past them instead of stopping at the first exercise.

Everything is made and searched (``answer_leaks``) before anything is written; the edition is
then written beside OUT and put in its place whole, so a refusal or a failed write leaves OUT
as it was, and a new edition never keeps a file of an older one.
"""

from __future__ import annotations

import copy
import os
import shutil
from pathlib import Path

import nbformat
from nbformat import ValidationError

from ..errors import N_, InputError
from ..language import say
from .answer_leaks import check_no_answer_left
from .answer_regions import CODE_STUB, TEXT_STUB, kept_attachments, student_cell

EDITION_MARK = ".mxlearn-student-edition"  # in OUT: a folder this command may replace
COURSE = "python -m mxlearn course --notebooks notebooks --student runs/student"


class UnknownEdition(InputError):
    says = N_(
        "mxlearn course --student: {folder} holds notebooks, but mxlearn has stubs "
        "only for English (the top folder) and these editions: {known}."
    )
    fix_says = N_("move those notebooks out of the course folder")


class NotANotebook(InputError):
    says = N_("{called}: {path} cannot be read as a notebook ({problem}).")
    fix_says = N_("open it in Jupyter and save it again, or restore it from version control")


class IntoTheTeachersEdition(InputError):
    says = N_(
        "mxlearn course --student {out}: that writes into the teacher's edition "
        "({folder}) and would replace the answers."
    )
    fix_code = COURSE


class OutIsAFile(InputError):
    says = N_("mxlearn course --student: {path} is a file, not a folder.")
    fix_says = N_("choose another OUT, e.g. --student runs/student")


class OutHoldsOtherFiles(InputError):
    says = N_(
        "mxlearn course --student {out}: that folder holds files and is not a student "
        "edition written by mxlearn; writing the edition there would mix or lose them."
    )
    fix_says = N_("choose a new folder, e.g. --student runs/student, or empty that one")


class EditionNotWritten(InputError):
    says = N_(
        "mxlearn course --student: could not write the edition in {out} ({problem}); "
        "nothing there was changed."
    )
    fix_says = N_("choose a folder you can write, e.g. --student runs/student")


class NoOutName(InputError):
    says = N_("mxlearn course --student: the folder name is empty.")
    fix_code = COURSE


class NoTeacherNotebooks(InputError):
    says = N_("mxlearn course --student: no notebooks in {folder}.")
    fix_code = COURSE


def teacher_notebooks(folder: Path) -> list[tuple[Path, str]]:
    """(notebook, language): ``folder/*.ipynb`` in English, ``folder/<language>/*.ipynb``."""
    found = [(path, "en") for path in sorted(folder.glob("*.ipynb"))]
    for edition in sorted(p for p in folder.iterdir() if p.is_dir()):
        notebooks = sorted(edition.glob("*.ipynb"))
        if edition.name.startswith(".") or not notebooks:  # .ipynb_checkpoints holds answers
            continue
        if edition.name not in CODE_STUB:
            known = ", ".join(sorted(set(CODE_STUB) - {"en"}))
            raise UnknownEdition(folder=str(edition), known=known)
        found += [(path, edition.name) for path in notebooks]
    return found


def read_teacher_notebook(path: Path, called: str = "python -m mxlearn course --student"):
    try:
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
    except (OSError, ValueError, AttributeError, TypeError, KeyError, ValidationError) as problem:
        # not JSON, not UTF-8, not a notebook (a list), or a notebook nbformat's schema refuses
        said = (str(problem).splitlines() or [type(problem).__name__])[0][:200]
        raise NotANotebook(called=called, path=str(path), problem=said) from None
    return notebook


def student_notebook(notebook, language: str, name: str) -> tuple[object, list[str]]:
    """The student copy of ``notebook`` (an nbformat node), and every answer line it left out."""
    student, answers = copy.deepcopy(notebook), []
    student.metadata.pop("widgets", None)  # saved widget state holds outputs
    for index, cell in enumerate(student.cells, start=1):
        where = say("{name}, cell {index}", name=name, index=index)
        stub = CODE_STUB[language] if cell.cell_type == "code" else TEXT_STUB[language]
        whole = cell.metadata.get("nbgrader", {}).get("solution") is True
        made = student_cell(cell.source, stub, whole, where)
        if made.replaced:
            cell.source = made.source
            answers += made.answer
            if "attachments" in cell:
                cell.attachments = kept_attachments(cell.attachments, made.source)
                if not cell.attachments:
                    del cell["attachments"]
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            if made.replaced or cell.metadata.get("nbgrader", {}).get("grade") is True:
                _may_raise(cell)
    return student, [line for line in answers if line.strip()]


def _may_raise(cell) -> None:
    """Tag a cell that raises until the student answers (the stub, and the checks of its
    answer): Run All in Jupyter, and nbclient, then go on past its error to the next cell."""
    tags = cell.metadata.setdefault("tags", [])
    if "raises-exception" not in tags:
        tags.append("raises-exception")


def _refuse_unsafe_out(folder: Path, out: Path, targets: list[Path]) -> None:
    """OUT must not be (or lie in, or write through a link into) the teacher's folder, must be a
    folder, and may replace only an empty folder or an older student edition."""
    teacher = folder.resolve()
    places = [out.resolve(), *(t.resolve() for t in targets)]
    if any(p == teacher or teacher in p.parents for p in places):
        raise IntoTheTeachersEdition(out=str(out), folder=str(folder))
    for place in [out, *{t.parent for t in targets}]:
        if place.exists() and not place.is_dir():
            raise OutIsAFile(path=str(place))
    if out.is_dir() and not (out / EDITION_MARK).exists() and any(out.iterdir()):
        raise OutHoldsOtherFiles(out=str(out))


def _write_whole(out: Path, editions: list[tuple[Path, object]]) -> None:
    """Write the edition beside OUT, then swap it in: OUT is the old edition or the new one."""
    building = out.parent / f".{out.name}.{os.getpid()}.writing"
    replaced = out.parent / f".{out.name}.{os.getpid()}.old"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        for leftover in (building, replaced):
            shutil.rmtree(leftover, ignore_errors=True)
        building.mkdir()
        (building / EDITION_MARK).write_text(say("written by python -m mxlearn course --student\n"))
        for target, notebook in editions:
            path = building / target.relative_to(out)
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(notebook, path)
        if out.exists():
            out.rename(replaced)
        building.rename(out)
    except OSError as problem:
        shutil.rmtree(building, ignore_errors=True)
        if replaced.exists() and not out.exists():  # the old edition back where it was
            replaced.rename(out)
        said = f"{type(problem).__name__}: {problem.strerror or problem}"
        raise EditionNotWritten(out=str(out), problem=said) from None
    shutil.rmtree(replaced, ignore_errors=True)


def write_student_edition(notebooks: str | Path, out: str | Path) -> list[Path]:
    """Write the student edition of every notebook in ``notebooks`` and ``notebooks/zh``."""
    if not str(out).strip():
        raise NoOutName()
    folder, out = Path(notebooks), Path(out)
    sources = teacher_notebooks(folder) if folder.is_dir() else []
    if not sources:
        raise NoTeacherNotebooks(folder=str(notebooks))
    targets = [out / source.relative_to(folder) for source, _ in sources]
    _refuse_unsafe_out(folder, out, targets)
    editions, answers = [], []
    for (source, language), target in zip(sources, targets):
        teacher = read_teacher_notebook(source)
        student, lines = student_notebook(teacher, language, str(source))
        editions.append((target, student))
        answers += lines
    check_no_answer_left(editions, answers)  # every file, for the answers of all of them
    _write_whole(out, editions)
    return targets
