"""``python -m mxlearn grade SUBMISSIONS --out grades.csv``: run every student's notebook and
grade each exercise by its check cell.

SUBMISSIONS holds ``<student>/<notebook>.ipynb`` (or ``<student>/<assignment>/<notebook>.ipynb``,
as nbgrader's ``submitted/`` folder does). Each notebook runs in a fresh kernel, in a temporary
copy of the folder it sits in (what it writes or deletes there touches nothing real), every
cell even after an error. Its check cells are first given the teacher's source again (the same
file name in ``--teacher`` or ``--teacher/zh``, the copy whose exercises match); when the
teacher has no such notebook, the submission's own check cells are run as they are.

Each exercise is then ``passed``, ``failed`` (its check failed, or it was not answered, or its
check cell was deleted), ``error`` (another exception; the kernel died or passed the memory
limit) or ``timeout`` (the notebook's time ran out before the exercise finished). The grades go
to a CSV (``student,notebook,exercise,status,message``) and an HTML summary beside it.

The copy protects the submission's folder, not the machine: a notebook runs with the grader's
rights, so grade only what you would run yourself.
"""

from __future__ import annotations

import csv
import os
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from ..atomic_write import atomic_write
from ..errors import InputError
from ..language import say
from . import grading_run
from .grade_exercises import (
    ERROR,
    PASSED,
    STATUSES,
    exercise_key,
    exercises_of,
    grades_from_run,
    last_line,
    prepare,
    read_notebook,
    teacher_copy,
)
from .grade_report import write_report

HEADER = ("student", "notebook", "exercise", "status", "message")
DEFAULT_TIMEOUT = 600.0  # seconds per notebook: the course notebooks take 4-13 s on 2 CPU cores
DEFAULT_MEMORY_MB = 4096
PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])


@dataclass(frozen=True)
class Grade:
    student: str
    notebook: str
    exercise: str
    status: str
    message: str


@dataclass
class Submission:
    student: str
    notebook: str  # its path under the student's folder, e.g. 03_predict.ipynb
    path: Path


@dataclass
class Grading:
    """What a grade run wrote, and each notebook's grades and seconds."""

    csv: Path
    html: Path
    grades: list[Grade]
    seconds: dict[tuple[str, str], float] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        return {status: sum(g.status == status for g in self.grades) for status in STATUSES}


def find_submissions(folder: Path) -> list[Submission]:
    """``<student>/<notebook>.ipynb`` and ``<student>/<assignment>/<notebook>.ipynb``."""
    found = []
    for student in sorted(p for p in folder.iterdir() if p.is_dir() and _shown(p)):
        paths = list(student.glob("*.ipynb")) + list(student.glob("*/*.ipynb"))
        for path in sorted(p for p in paths if _shown(p.parent) and _shown(p)):
            found.append(Submission(student.name, path.relative_to(student).as_posix(), path))
    return found


def _shown(path: Path) -> bool:
    return not path.name.startswith(".")  # .ipynb_checkpoints and other hidden copies


def _refuse_settings(submissions: Path, out: Path, settings: dict) -> list[Submission]:
    for name, value in settings.items():
        if not value > 0:
            raise InputError(
                say(
                    "mxlearn grade: --{name} {value} is not a positive number.",
                    name=name,
                    value=value,
                ),
                fix=say(
                    "python -m mxlearn grade {folder} --{name} N, with N > 0",
                    folder=str(submissions),
                    name=name,
                ),
            )
    if not submissions.is_dir():
        raise InputError(
            say("mxlearn grade: the folder {folder} does not exist.", folder=str(submissions)),
            fix=say("python -m mxlearn grade FOLDER, with FOLDER/<student>/<notebook>.ipynb"),
        )
    found = find_submissions(submissions)
    if not found:
        raise InputError(
            say(
                "mxlearn grade: {folder} holds no <student>/<notebook>.ipynb.",
                folder=str(submissions),
            ),
            fix=say(
                "put each student's notebooks in a folder of their own: "
                "{folder}/alice/03_predict.ipynb",
                folder=str(submissions),
            ),
        )
    if out.is_dir():
        raise InputError(
            say(
                "mxlearn grade: --out {out} is a folder; it names the CSV file to write.",
                out=str(out),
            ),
            fix=say(
                "name a file in that folder: "
                "python -m mxlearn grade {folder} --out {out}/grades.csv",
                folder=str(submissions),
                out=str(out),
            ),
        )
    return found


def _teacher_folder(teacher: str | Path | None) -> Path | None:
    if teacher is None:
        default = Path("notebooks")
        return default if default.is_dir() else None
    if not Path(teacher).is_dir():
        raise InputError(
            say(
                "mxlearn grade: the teacher's folder {folder} does not exist.", folder=str(teacher)
            ),
            fix=say(
                "name the folder of the teacher's edition: "
                "python -m mxlearn grade SUBMISSIONS --teacher notebooks"
            ),
        )
    return Path(teacher)


def kernel_environment(jobs: int) -> dict[str, str]:
    """The grader's environment, with a fair share of the CPUs for each of ``jobs`` kernels."""
    env = dict(os.environ)
    threads = str(max(1, (os.cpu_count() or 1) // jobs))
    env.update(OMP_NUM_THREADS=threads, MXNET_CPU_WORKER_NTHREADS=threads)
    env.setdefault("MPLBACKEND", "Agg")
    if env.get("MXLEARN_DATA"):  # the kernel runs in another folder
        env["MXLEARN_DATA"] = os.path.abspath(env["MXLEARN_DATA"])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_PARENT, env.get("PYTHONPATH")) if p)
    return env


class _Grader:
    """Grades one notebook at a time per thread; keeps the runs going so that an interrupted
    grader stops them all."""

    def __init__(self, teacher: Path | None, timeout: float, memory_mb: int, jobs: int):
        self.teacher, self.timeout, self.memory_mb = teacher, timeout, memory_mb
        self.env = kernel_environment(jobs)
        self.running: set = set()
        self.stopped = False
        self.lock = threading.Lock()

    def grade(self, submission: Submission) -> tuple[list[Grade], float]:
        started = time.monotonic()
        notebook, problem = read_notebook(submission.path)
        name = submission.path.name
        if notebook is None:
            teacher = teacher_copy(self.teacher, name)
            names = list(exercises_of(teacher)) if teacher is not None else [""]
            message = say("not a readable notebook: {problem}", problem=problem)
            grades = {exercise: (ERROR, message) for exercise in names}
        else:
            prepared = prepare(notebook, teacher_copy(self.teacher, name, notebook))
            try:
                grades = self._run(submission, prepared) if prepared.exercises else {}
            except OSError as problem:  # e.g. a file in the folder that cannot be copied
                said = say("the notebook could not be run: {problem}", problem=problem)
                grades = {exercise.name: (ERROR, said) for exercise in prepared.exercises}
        rows = [
            Grade(submission.student, submission.notebook, e, s, m) for e, (s, m) in grades.items()
        ]
        return rows, time.monotonic() - started

    def _run(self, submission: Submission, prepared) -> dict[str, tuple[str, str]]:
        with tempfile.TemporaryDirectory(
            prefix="mxlearn-grade-", ignore_cleanup_errors=True
        ) as tmp:
            work, notebook = Path(tmp) / "work", Path(tmp) / "notebook.ipynb"
            shutil.copytree(
                submission.path.parent, work, symlinks=False, ignore_dangling_symlinks=True
            )
            nbformat.write(prepared.notebook, notebook)
            results = str(Path(tmp) / "results.jsonl")
            run = grading_run.start(str(notebook), str(work), results, self.memory_mb, self.env)
            with self.lock:
                self.running.add(run)
                if self.stopped:  # the grader was interrupted while this run started
                    grading_run.stop_all(run)
            try:
                timed_out, _, tail = grading_run.finish(run, self.timeout)
            finally:
                with self.lock:
                    self.running.discard(run)
            events = grading_run.read_events(results)
        limits = {"timeout": self.timeout, "tail": last_line(tail)}
        return grades_from_run(prepared, events, timed_out, limits)

    def stop_everything(self) -> None:
        with self.lock:
            self.stopped = True
            runs = list(self.running)
        for run in runs:
            grading_run.stop_all(run)


def grade(
    submissions: str | Path,
    out: str | Path = "grades.csv",
    *,
    timeout: float = DEFAULT_TIMEOUT,
    memory_mb: int = DEFAULT_MEMORY_MB,
    jobs: int | None = None,
    teacher: str | Path | None = None,
) -> Grading:
    """Grade every notebook in ``submissions``; write ``out`` (CSV) and its HTML summary."""
    submissions, out = Path(submissions), Path(out)
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    settings = {"timeout": timeout, "memory-mb": memory_mb, "jobs": jobs}
    found = _refuse_settings(submissions, out, settings)
    grader = _Grader(_teacher_folder(teacher), float(timeout), int(memory_mb), int(jobs))
    grades, seconds = [], {}
    with ThreadPoolExecutor(max_workers=int(jobs)) as pool:
        futures = {pool.submit(grader.grade, s): s for s in found}
        try:
            for future in as_completed(futures):
                submission = futures[future]
                rows, took = future.result()
                grades += rows
                seconds[(submission.student, submission.notebook)] = took
                _print_notebook(submission, rows, took)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            grader.stop_everything()
            raise
    grades.sort(key=lambda g: (g.student, g.notebook, exercise_key(g.exercise)))
    grading = Grading(out, out.with_suffix(".html"), grades, seconds)
    _write(grading)
    _print_summary(grading)
    return grading


def _write(grading: Grading) -> None:
    grading.csv.parent.mkdir(parents=True, exist_ok=True)

    def write(tmp: str) -> None:
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(HEADER)
            for g in grading.grades:
                writer.writerow([g.student, g.notebook, g.exercise, g.status, g.message])

    atomic_write(str(grading.csv), write)
    write_report(grading.html, grading.grades, grading.csv.name)


def _print_notebook(submission: Submission, rows: list[Grade], seconds: float) -> None:
    if not rows:
        line = say(
            "{student}/{notebook}: no exercises",
            student=submission.student,
            notebook=submission.notebook,
        )
    else:
        line = say(
            "{student}/{notebook}: {passed} of {total} exercises passed ({seconds:.0f} s)",
            student=submission.student,
            notebook=submission.notebook,
            passed=sum(r.status == PASSED for r in rows),
            total=len(rows),
            seconds=seconds,
        )
    print(f"  {line}", flush=True)


def _print_summary(grading: Grading) -> None:
    counts = grading.counts()
    print(
        say(
            "{total} grades: {passed} passed, {failed} failed, {error} error, {timeout} timeout."
            "\n  CSV: {csv}\n  HTML summary: {html}",
            total=len(grading.grades),
            **counts,
            csv=grading.csv.resolve(),
            html=grading.html.resolve(),
        ),
        file=sys.stdout,
        flush=True,
    )
