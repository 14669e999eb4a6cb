"""What ``python -m mxlearn grade`` reads and refuses before any notebook runs.

Submissions are ``<student>/<notebook>.ipynb`` or ``<student>/<assignment>/<notebook>.ipynb``
(nbgrader's ``submitted/``), never hidden, in a symlinked folder or at the top of SUBMISSIONS.
The teacher's edition (``--teacher`` and its ``zh/``) is read once before the first run: a
notebook run without the sandbox has the grader's rights and could rewrite the teacher's files,
but not the checks already read. A submission gets the teacher's notebook of its file name, else (a browser's
download name, ``01_fit (1).ipynb``) the one sharing the most exercises with it. An ``--out``
that could destroy a file the grader did not write is refused.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..checkpoint.prefixes import check_prefix
from ..errors import N_, InputError
from .grade_exercises import exercises_of
from .grade_report import is_report
from .student_edition import read_teacher_notebook

HEADER = ("student", "notebook", "exercise", "status", "message", "points", "out_of", "parts")
EARLIER_HEADER = HEADER[:5]  # of a grades.csv written before partial credit: still ours
ELSEWHERE = N_("write the grades elsewhere: python -m mxlearn grade {folder} --out grades.csv")
SUBMISSIONS_FIX = N_("python -m mxlearn grade FOLDER, with FOLDER/<student>/<notebook>.ipynb")
TEACHER_FIX = N_(
    "name the folder of the teacher's edition: "
    "python -m mxlearn grade SUBMISSIONS --teacher notebooks"
)


class SettingNotPositive(InputError):
    says = N_("mxlearn grade: --{name} {value:g} is not a positive number.")
    fix_says = N_("python -m mxlearn grade {folder} --{name} N, with N > 0")


class SettingNotFinite(SettingNotPositive):
    says = N_("mxlearn grade: --{name} {value:g} is not a finite number.")


class NoSubmissionsFolder(InputError):
    says = N_("mxlearn grade: the folder {folder} does not exist.")
    fix_says = SUBMISSIONS_FIX


class FolderIsAFile(InputError):
    says = N_("mxlearn grade: {path} is a file, not a folder.")
    fix_says = SUBMISSIONS_FIX


class NoSubmissions(InputError):
    says = N_("mxlearn grade: {folder} holds no <student>/<notebook>.ipynb.")
    fix_says = N_(
        "put each student's notebooks in a folder of their own: "
        "{folder}/alice/01_module_step_by_step.ipynb"
    )


class OutIsAFolder(InputError):
    says = N_("mxlearn grade: --out {out} is a folder; it names the CSV file to write.")
    fix_says = N_(
        "name a file in that folder: python -m mxlearn grade {folder} --out {out}/grades.csv"
    )


class OutInsideSubmissions(InputError):
    says = N_(
        "mxlearn grade: --out {out} is inside SUBMISSIONS ({folder}); the grades are "
        "not written among the notebooks they grade."
    )
    fix_says = ELSEWHERE


class OutNotCSV(InputError):
    says = N_(
        "mxlearn grade: --out {out} does not end in .csv; it names the CSV file to "
        "write (and the .html summary beside it)."
    )
    fix_code = "python -m mxlearn grade {folder} --out {csv}"


class OutNotGrades(InputError):
    says = N_(
        "mxlearn grade: --out {out} exists and is not a CSV of grades (its first line "
        "is not {header}); it is left as it is."
    )
    fix_says = ELSEWHERE


class SummaryNotGrades(InputError):
    says = N_(
        "mxlearn grade: {html}, where the summary of --out {out} goes, exists and is "
        "not a summary of grades; it is left as it is."
    )
    fix_says = ELSEWHERE


class OutNotWritable(InputError):
    says = N_("mxlearn grade: --out {out} cannot be written ({problem}).")
    fix_says = N_("choose a folder you can write, e.g. --out grades.csv")


class NoTeacherGiven(InputError):
    says = N_(
        "mxlearn grade: give --teacher DIR, the teacher's edition whose check cells are "
        "run: there is no notebooks folder in {here}, and a submission's own check "
        "cells cannot be trusted."
    )
    fix_code = "python -m mxlearn grade {submissions} --teacher DIR"


class NoTeacherFolder(InputError):
    says = N_("mxlearn grade: the teacher's folder {folder} does not exist.")
    fix_says = TEACHER_FIX


class TeacherIsAFile(FolderIsAFile):
    fix_says = TEACHER_FIX


class EmptyTeacherFolder(InputError):
    says = N_(
        "mxlearn grade: the teacher's folder {folder} holds no notebook, so no check can be run."
    )
    fix_says = TEACHER_FIX


@dataclass
class Submission:
    student: str
    notebook: str  # its path under the student's folder, e.g. week1/02_fit.ipynb
    path: Path
    linked_to: str | None = None  # a symbolic link's target: never followed, never run


@dataclass
class Teacher:
    """The teacher's edition as it was read at the start: each file name's notebooks (the
    English edition first, then the Chinese one)."""

    folder: Path
    editions: dict[str, list]


def readable(name: str) -> str:
    """A file name as text: bytes that are no UTF-8 (a zip made elsewhere) written \\xe9, not
    kept as the surrogates that no CSV, terminal or page can encode."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def shown(path: Path) -> bool:
    return not path.name.startswith(".")  # .ipynb_checkpoints and other hidden copies


def students(folder: Path) -> list[Path]:
    """Every student's folder, with or without a notebook in it."""
    return sorted(p for p in folder.iterdir() if p.is_dir() and shown(p))


def find_submissions(folder: Path) -> list[Submission]:
    """Every ``.ipynb`` in a student's folder, at any depth (nbgrader's ``<assignment>/``, an
    unpacked zip's folders); a symbolic link, to a notebook or a folder, is listed as one and
    not followed: a link could hand in the teacher's notebook."""
    found = []
    for student in students(folder):
        if student.is_symlink():
            found.append(Submission(readable(student.name), "", student, _target(student)))
            continue
        for place, folders, names in os.walk(student):
            here = Path(place)
            folders[:] = sorted(f for f in folders if shown(here / f))
            for name in [*folders, *sorted(names)]:
                path = here / name
                notebook = readable(path.relative_to(student).as_posix())
                if path.is_symlink() and (name in folders or name.endswith(".ipynb")):
                    found.append(Submission(readable(student.name), notebook, path, _target(path)))
                elif name.endswith(".ipynb") and shown(path) and path.is_file():
                    found.append(Submission(readable(student.name), notebook, path))
            folders[:] = [f for f in folders if not (here / f).is_symlink()]
    return found


def _target(link: Path) -> str:
    return readable(os.readlink(link))


def loose_notebooks(folder: Path) -> list[Path]:
    """Notebooks at the top of SUBMISSIONS, in no student's folder."""
    return sorted(p for p in folder.glob("*.ipynb") if shown(p))


def read_teacher(folder: Path) -> Teacher:
    """Every notebook of the teacher's edition, read once; a damaged one is refused by name
    (grading against it would call every submission of it ungradable)."""
    editions: dict[str, list] = {}
    for place in (folder, folder / "zh"):
        for path in filter(shown, sorted(place.glob("*.ipynb")) if place.is_dir() else []):
            editions.setdefault(path.name, []).append(
                read_teacher_notebook(path, "python -m mxlearn grade")
            )
    return Teacher(folder, editions)


def teacher_copy(teacher: Teacher, name: str, submission=None) -> tuple[str | None, object]:
    """(file name, notebook) of the teacher's edition for a submission named ``name``: the
    notebook of that name, else the one sharing the most exercises with ``submission``; of its
    editions, the one whose exercises and cells best match. (None, None) when there is none."""
    names = set(exercises_of(submission, with_answers_only=True)) if submission else set()
    if name not in teacher.editions:
        shared = {
            file: max(len(names & set(exercises_of(edition))) for edition in editions)
            for file, editions in teacher.editions.items()
        }
        best = max(shared, key=shared.__getitem__, default=None)
        if best is None or shared[best] == 0:
            return None, None
        name = best
    candidates = teacher.editions[name]
    if submission is None:
        return name, candidates[0]
    sources = {cell.source for cell in submission.cells}

    def score(candidate) -> tuple[int, int]:
        shared = len(names & set(exercises_of(candidate)))
        return shared, sum(cell.source in sources for cell in candidate.cells)

    return name, max(candidates, key=score)  # the first (English) one on a tie


def refuse_settings(submissions: Path, settings: dict) -> None:
    for name, value in settings.items():
        if not value > 0:
            raise SettingNotPositive(name=name, value=value, folder=str(submissions))
        if not math.isfinite(value):
            raise SettingNotFinite(name=name, value=value, folder=str(submissions))


def refuse_submissions(submissions: Path) -> list[Submission]:
    if not submissions.exists():
        raise NoSubmissionsFolder(folder=str(submissions))
    if not submissions.is_dir():
        raise FolderIsAFile(path=str(submissions))
    found = find_submissions(submissions)
    if not found:
        raise NoSubmissions(folder=str(submissions))
    return found


def _is_grades_csv(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            first = f.readline(200)
    except OSError:
        return False
    return first.rstrip(b"\r\n") in (",".join(h).encode() for h in (HEADER, EARLIER_HEADER))


def refuse_out(submissions: Path, out: Path) -> None:
    """Refuse an ``--out`` whose writing could destroy a file that is not a grader's."""
    folder, html = str(submissions), out.with_suffix(".html")
    if out.is_dir():
        raise OutIsAFolder(out=str(out), folder=folder)
    real, inside = out.resolve(), submissions.resolve()
    if real == inside or inside in real.parents:
        raise OutInsideSubmissions(out=str(out), folder=folder)
    if out.suffix.lower() != ".csv":
        raise OutNotCSV(out=str(out), folder=folder, csv=out.with_suffix(".csv"))
    if (out.exists() or out.is_symlink()) and not _is_grades_csv(out):
        raise OutNotGrades(out=str(out), header=",".join(HEADER), folder=folder)
    # --out's folder made now and tried with a file: found before any notebook runs, not after
    check_prefix(str(out), "mxlearn grade --out")  # a file on the way is named
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out.parent):
            pass
    except OSError as problem:
        raise OutNotWritable(out=str(out), problem=problem.strerror or problem) from None
    if (html.exists() or html.is_symlink()) and not is_report(html):
        raise SummaryNotGrades(html=str(html), out=str(out), folder=folder)


def teacher_folder(teacher: str | Path | None, submissions: Path) -> Teacher:
    """The teacher's edition (``--teacher``, else ``notebooks``), read now, once."""
    if teacher is None and not Path("notebooks").is_dir():
        raise NoTeacherGiven(here=os.getcwd(), submissions=submissions)
    folder = Path("notebooks" if teacher is None else teacher)
    if not folder.exists():
        raise NoTeacherFolder(folder=str(folder))
    if not folder.is_dir():
        raise TeacherIsAFile(path=str(folder))
    read = read_teacher(folder)
    if not read.editions:
        raise EmptyTeacherFolder(folder=str(folder))
    return read
