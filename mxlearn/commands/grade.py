"""``python -m mxlearn grade SUBMISSIONS --out grades.csv``: run every student's notebook and
grade each exercise by the teacher's check cell (a CSV ``student,notebook,exercise,status,
message``, an HTML summary beside it, and a feedback notebook per submission in
``<csv>-feedback/``). Each notebook runs in a fresh kernel, in a temporary
copy of its folder, every cell even after an error, its check cells given the teacher's source
again; one the teacher has no copy of is not run (its own checks cannot be trusted). ``failed``:
the check failed, was not answered, is missing or was not handed in; ``error``: another
exception, a dead kernel, the memory limit, no teacher's copy; ``timeout``: the time ran out;
``tampered``: a symbolic link handed in as a notebook or a student's folder (never followed or
run), a check cell edited, mxlearn changed in memory, a check that reported success without
running to its end; ``flagged``: a note, not a grade (a linked folder inside, a notebook handed
in twice).

Each kernel runs in bubblewrap's sandbox (grading_sandbox): the system and the package
read-only, its copy the only writable place, no network, no view of anything else, nothing
outliving it; its results reach the grader through a file outside the sandbox. Without
bubblewrap the grader says so: the notebook then runs with the grader's rights.
"""

from __future__ import annotations

import contextlib
import csv
import os
import secrets
import shutil
import tempfile
import threading
import time
import unicodedata
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import astuple, dataclass, field
from pathlib import Path

import nbformat

from .. import cpu_share
from ..atomic_write import atomic_write, writer_alive
from ..errors import N_
from ..language import say
from . import grading_run, grading_sandbox
from .grade_exercises import (
    ERROR,
    FAILED,
    FLAGGED,
    PASSED,
    STATUSES,
    TAMPERED,
    Seal,
    capped,
    exercise_key,
    exercises_of,
    grades_from_run,
    hints_asked,
    last_line,
    prepare,
    read_notebook,
)
from .grade_feedback import feedback_folder, write_feedback
from .grade_inputs import (
    HEADER,
    Submission,
    Teacher,
    loose_notebooks,
    readable,
    refuse_out,
    refuse_settings,
    refuse_submissions,
    students,
    teacher_copy,
    teacher_folder,
)
from .grade_report import write_report
from .grading_run import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT

PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])
PACKAGE = str(Path(__file__).resolve().parents[1])
SEAL_FILE = str(Path(__file__).resolve().with_name("grading_seal.py"))
COPY_PREFIX = "mxlearn-grade-"  # then the grader's pid: a killed grader's copies are found
SOCKET_PATH_CHARS = 80  # of a kernel's socket folder: Unix allows 107 for the whole path


def _temporary_folders() -> list[Path]:
    """Where the grader's copies are, and its socket folders when that path is too long."""
    return [Path(tempfile.gettempdir()), *([Path("/tmp")] if os.path.isdir("/tmp") else [])]


def remove_dead_graders_copies() -> None:
    """The temporary copies a grader killed with -9 left (nothing ran its clean-up)."""
    copies = {c for folder in _temporary_folders() for c in folder.glob(COPY_PREFIX + "*-*")}
    for copy in sorted(copies):
        pid = copy.name[len(COPY_PREFIX) :].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():  # this grader's: still in use
            continue
        if copy.is_dir() and not copy.is_symlink() and not writer_alive(int(pid)):
            shutil.rmtree(copy, ignore_errors=True)


@dataclass(frozen=True)
class Grade:
    student: str
    notebook: str
    exercise: str
    status: str
    message: str
    points: str = ""  # earned, of out_of: blank where nothing ran (not handed in, flags)
    out_of: str = ""
    parts: str = ""  # each part's points, for an exercise graded in parts


@dataclass
class Grading:
    """What a grade run wrote, and each notebook's grades and seconds."""

    csv: Path
    html: Path
    grades: list[Grade]
    seconds: dict[tuple[str, str], float] = field(default_factory=dict)
    hints: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # exercises asked

    def counts(self) -> dict[str, int]:
        return {status: sum(g.status == status for g in self.grades) for status in STATUSES}


# What a kernel sees of the grader's environment: what Python, Jupyter, MXNet and mxlearn read,
# never the rest (a token in the teacher's shell would come back in a grade's message).
KERNEL_VARIABLES = {"PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP"}
KERNEL_VARIABLES |= {"MXLEARN_LANG", "MXLEARN_DATA", "MPLBACKEND", "XDG_RUNTIME_DIR"}
KERNEL_PREFIXES = ("LC_", "MXNET_", "JUPYTER_")


def kernel_environment(jobs: int) -> dict[str, str]:
    """The grader's environment as a kernel may see it, with a fair share of the CPUs for each
    of ``jobs`` kernels."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k in KERNEL_VARIABLES or k.startswith(KERNEL_PREFIXES)
    }
    threads = str(max(1, cpu_share.cpu_share().cpus // jobs))  # a quota counts, as at import
    env.update(OMP_NUM_THREADS=threads, MXNET_CPU_WORKER_NTHREADS=threads)
    env.setdefault("MPLBACKEND", "Agg")
    if env.get("MXLEARN_DATA"):  # the kernel runs in another folder
        env["MXLEARN_DATA"] = os.path.abspath(env["MXLEARN_DATA"])
    elif (found := _letter_file()) is not None:
        # the grader's cached copy: a sandboxed kernel sees neither that cache nor the network
        env["MXLEARN_DATA"] = str(found.parent.resolve())
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_PARENT, env.get("PYTHONPATH")) if p)
    return env


def _letter_file():
    from .. import datasets  # MXNet's import, only for a grader that runs kernels

    return datasets.found_letter_file()


class _Grader:
    """Grades one notebook at a time per thread; keeps the runs going so that an interrupted
    grader stops them all."""

    def __init__(self, teacher: Teacher, limits: tuple, jobs: int, sandbox: bool | None):
        self.teacher, (self.timeout, self.memory_mb) = teacher, limits
        self.env = kernel_environment(jobs)
        self.sandbox, self.unprotected = grading_sandbox.sandbox_for(PACKAGE, self.env, sandbox)
        self.running: set = set()
        self.stopped = False
        self.lock = threading.Lock()

    def grade(self, submission: Submission) -> tuple[list[Grade], float, str | None]:
        """The submission's grades, seconds, and the file name of its teacher's copy."""
        started = time.monotonic()
        name, teacher = None, None
        if submission.linked_to is not None:
            return self._linked(submission), 0.0, None
        try:
            notebook, problem = read_notebook(submission.path)
            name, teacher = teacher_copy(self.teacher, submission.path.name, notebook)
            grades = self._grades(submission, notebook, problem, teacher)
        except Exception as failure:  # whatever one notebook holds, the others are graded
            said = say("the notebook could not be run: {problem}", problem=failure)
            names = exercises_of(teacher) if teacher is not None else [""]
            grades = dict.fromkeys(names or [""], (ERROR, said))
        rows = [  # a run's grades carry their points (credit), the others none
            Grade(submission.student, submission.notebook, e, s, capped(m), *sum(credit, ()))
            for e, (s, m, *credit) in grades.items()
        ]
        return rows, time.monotonic() - started, name

    def course_name(self, submission: Submission) -> str | None:
        """The file name of the teacher's copy of a notebook graded before (an interrupted
        run's), as grade() found it."""
        if submission.linked_to is not None:
            return None
        notebook, _ = read_notebook(submission.path)
        return teacher_copy(self.teacher, submission.path.name, notebook)[0] if notebook else None

    def _linked(self, submission: Submission) -> list[Grade]:
        """A symbolic link, to a notebook or a folder: neither followed nor run. A folder in a
        student's folder (a link to the data, often) is flagged: only a notebook or the whole
        folder linked hands in what the student did not write."""
        if submission.notebook and not submission.notebook.endswith(".ipynb"):
            message = say(
                "a symbolic link to {target}: links are not followed, so no notebook in it was "
                "graded",
                target=submission.linked_to,
            )
            return [Grade(submission.student, submission.notebook, "", FLAGGED, message)]
        _, teacher = teacher_copy(self.teacher, submission.path.name)
        names = list(exercises_of(teacher)) if teacher and submission.notebook else [""]
        message = say(
            "a symbolic link to {target}, not a file handed in: links are not followed, so it "
            "was not graded",
            target=submission.linked_to,
        )
        return [Grade(submission.student, submission.notebook, e, TAMPERED, message) for e in names]

    def _grades(self, submission, notebook, problem, teacher) -> dict[str, tuple[str, str]]:
        if notebook is None:
            names = list(exercises_of(teacher)) if teacher is not None else [""]
            message = say("not a readable notebook: {problem}", problem=problem)
        elif teacher is None:
            names = list(exercises_of(notebook, with_answers_only=True)) or [""]
            message = say(
                "no teacher's copy of {notebook} (none of that name or with its exercises in "
                "{teacher}): its own check cells cannot be trusted, so it was not run",
                notebook=submission.notebook,
                teacher=str(self.teacher.folder),
            )
        else:
            prepared = prepare(notebook, teacher, Seal(secrets.token_hex(16), SEAL_FILE))
            return self._run(submission, prepared) if prepared.exercises else {}
        return dict.fromkeys(names, (ERROR, message))

    def _run(self, submission: Submission, prepared) -> dict[str, tuple[str, str]]:
        with (
            tempfile.TemporaryDirectory(
                prefix=f"{COPY_PREFIX}{os.getpid()}-", ignore_cleanup_errors=True
            ) as tmp,
            self._sockets(tmp) as sockets,
        ):
            work, notebook = Path(tmp) / "work", Path(tmp) / "notebook.ipynb"
            shutil.copytree(submission.path.parent, work, symlinks=True)
            nbformat.write(prepared.notebook, notebook)
            results = str(Path(tmp) / "results.jsonl")  # outside the sandbox: not the kernel's
            writable = [str(work), sockets]  # and a /tmp within the memory limit
            sandbox = self.sandbox.command(writable, self.memory_mb) if self.sandbox else None
            settings = {"sandbox": sandbox, "sockets": sockets, "seal": prepared.seal}
            run = grading_run.start(
                str(notebook), str(work), results, settings, (self.memory_mb, self.env)
            )
            with self.lock:
                self.running.add(run)
                if self.stopped:  # the grader was interrupted while this run started
                    grading_run.stop_all(run)
            try:
                timed_out, tail = grading_run.finish(run, self.timeout)
            finally:
                with self.lock:
                    self.running.discard(run)
            events = grading_run.read_events(results)
        limits = {"timeout": self.timeout, "tail": last_line(tail)}
        return grades_from_run(prepared, events, timed_out, limits)

    @staticmethod
    def _sockets(tmp: str):
        """The kernel's socket folder: in its copy's folder, or in /tmp when that path would
        be too long for a Unix socket."""
        if len(tmp) <= SOCKET_PATH_CHARS:
            os.mkdir(Path(tmp) / "sockets")
            return contextlib.nullcontext(str(Path(tmp) / "sockets"))
        return tempfile.TemporaryDirectory(
            prefix=f"{COPY_PREFIX}{os.getpid()}-", dir="/tmp", ignore_cleanup_errors=True
        )

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
    sandbox: bool | None = None,
) -> Grading:
    """Grade every notebook in ``submissions``; write ``out`` (CSV) and its HTML summary.
    ``sandbox``: True refuses to grade without bubblewrap's sandbox, False grades without it,
    None (the default) uses it where it works and says when it does not."""
    grading_run.refuse_missing_packages()  # else every notebook would be an error row
    submissions, out = Path(submissions), Path(out)
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    refuse_settings(submissions, {"timeout": timeout, "memory-mb": memory_mb, "jobs": jobs})
    found = refuse_submissions(submissions)
    refuse_out(submissions, out)
    limits = (float(timeout), int(memory_mb))
    grader = _Grader(teacher_folder(teacher, submissions), limits, jobs, sandbox)
    if grader.unprotected:
        _tell(
            N_("no sandbox ({why}): these protections are off: {protections}"),
            why=grader.unprotected,
            protections=say(grading_sandbox.PROTECTIONS),
        )
    remove_dead_graders_copies()
    for loose in loose_notebooks(submissions):
        _tell(N_("{path} is not in a student's folder: not graded"), path=str(loose))
    grades, seconds, course = _graded_before(out, found, grader)
    rest = [s for s in found if (s.student, s.notebook) not in seconds]
    with ThreadPoolExecutor(max_workers=int(jobs)) as pool:
        futures = {pool.submit(grader.grade, s): s for s in rest}
        try:
            for future in as_completed(futures):
                submission = futures[future]
                key = (submission.student, submission.notebook)
                rows, seconds[key], name = future.result()
                grades += rows
                if name is not None:  # only a course notebook is missed by who lacks it
                    course[key] = name
                _write_csv(out, [*grades, _partial(len(seconds), len(found))])  # even a kill -9
                _print_notebook(submission, rows, seconds[key])  # said once it is written
        except BaseException:  # Ctrl-C, SIGTERM (the command line's): keep what is graded
            pool.shutdown(wait=False, cancel_futures=True)
            grader.stop_everything()
            stopped = [*grades, _partial(len(seconds), len(found))]
            _write(Grading(out, out.with_suffix(".html"), stopped, seconds))
            raise
    return _finished(submissions, out, found, (grades, seconds, course))


def _finished(submissions: Path, out: Path, found: list[Submission], graded: tuple) -> Grading:
    """Every grade, with those of who handed nothing in and the flags; written with its HTML
    summary and the feedback notebooks, and said."""
    grades, seconds, course = graded
    everyone = [readable(p.name) for p in students(submissions)]
    grades += _not_handed_in(everyone, grades, course)
    grades += _ambiguous(found, everyone)
    grades.sort(key=lambda g: (g.student, g.notebook, exercise_key(g.exercise)))
    hints = {(s.student, s.notebook): _hints_of(s) for s in found if s.linked_to is None}
    grading = Grading(out, out.with_suffix(".html"), grades, seconds, hints)
    _write(grading)
    written, not_written = write_feedback(feedback_folder(out), found, grades)
    for path, why in not_written:
        _tell(N_("{path}: no feedback written ({why})"), path=path, why=why)
    _print_summary(grading)
    if written:
        _tell(
            N_("feedback notebooks to hand back: {count} in {folder}"),
            count=len(written),
            folder=feedback_folder(out).resolve(),
        )
    return grading


def _not_handed_in(everyone: list[str], grades: list[Grade], course: dict) -> list[Grade]:
    """A ``failed`` row for each exercise of each course notebook someone handed in and a
    student did not (an empty folder, a checkpoint's copy only). ``course``: {(student,
    notebook): the file name of its teacher's copy}; one handed in in any folder is handed in."""
    exercises: dict[str, dict] = {}  # per teacher's file name, in order
    for g in grades:
        if (g.student, g.notebook) in course:
            worth = exercises.setdefault(course[g.student, g.notebook], {})
            worth[g.exercise] = worth.get(g.exercise) or g.out_of
    rows = []
    for name in sorted(set(course.values())):
        # who handed it in where (week1/01_exercises.ipynb); shown where most students put it
        placed = {
            (s, Path(nb).with_name(name).as_posix()) for (s, nb), n in course.items() if n == name
        }
        places = Counter(place for _, place in placed)
        shown = min(places, key=lambda place: (-places[place], place))
        for student in sorted(set(everyone) - {student for student, _ in placed}):
            _tell(N_("{student}/{notebook}: not handed in"), student=student, notebook=shown)
            rows += [
                Grade(
                    student, shown, e, FAILED, say("not handed in"), "0" if out_of else "", out_of
                )
                for e, out_of in exercises.get(name, {}).items()
            ]
    return rows


def _partial(done: int, total: int) -> Grade:
    """The last row of a CSV written before the run ended (it is running, or was stopped)."""
    said = say(
        "grading had {done} of {total} notebooks graded when this was written: these grades are "
        "partial; if the run stopped, the same command grades the rest",
        done=done,
        total=total,
    )
    return Grade("", "", "", FLAGGED, said)


def _graded_before(out: Path, found: list[Submission], grader: _Grader) -> tuple:
    """An interrupted run's grades (its CSV ends with the _partial row): kept, and their
    notebooks not run again. (grades, {(student, notebook): 0.0}, course) as grade() keeps them."""
    rows = _read_csv(out)
    if not rows or rows[-1].status != FLAGGED or rows[-1].student:
        return [], {}, {}
    handed_in = {(s.student, s.notebook): s for s in found}
    kept = [g for g in rows[:-1] if (g.student, g.notebook) in handed_in]
    seconds = dict.fromkeys({(g.student, g.notebook) for g in kept}, 0.0)
    course = {}
    for key in seconds:
        name = grader.course_name(handed_in[key])
        if name is not None:
            course[key] = name
    _tell(N_("{count} notebooks graded before the interruption: kept"), count=len(seconds))
    return kept, seconds, course


def _read_csv(path: Path) -> list[Grade]:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error):
        return []
    if not rows or tuple(rows[0]) != HEADER:  # an older grader's: graded again
        return []
    return [Grade(*map(_as_written, row)) for row in rows[1:] if len(row) == len(HEADER)]


def _ambiguous(found: list[Submission], everyone: list[str]) -> list[Grade]:
    """A ``flagged`` row for a notebook handed in twice by one student (both are graded), and
    for folders whose names are one after Unicode normalisation (a zip made on macOS writes
    'José' decomposed): graded apart, though they may be one student."""
    rows = []
    places = defaultdict(list)
    for s in found:
        places[s.student, Path(s.notebook).name].append(s.notebook)
    for (student, name), where in sorted(places.items()):
        if len(where) > 1:
            message = say(
                "handed in {count} times: {places}; each is graded",
                count=len(where),
                places=", ".join(where),
            )
            rows.append(Grade(student, name, "", FLAGGED, message))
    names = defaultdict(list)
    for student in everyone:
        names[unicodedata.normalize("NFC", student)].append(student)
    for same in (folders for folders in names.values() if len(folders) > 1):
        forms = ", ".join(ascii(folder) for folder in same)
        message = say("folders {forms} are one name once normalised: graded apart", forms=forms)
        rows += [Grade(student, "", "", FLAGGED, message) for student in same]
    for row in rows:
        _tell(N_("{student}/{notebook}: {message}"), **vars(row))
    return rows


def _hints_of(submission: Submission) -> set[str]:
    try:
        return hints_asked(read_notebook(submission.path)[0])
    except Exception:  # whatever one notebook holds (a cell's source a number), the rest stand
        return set()


def _write(grading: Grading) -> None:
    _write_csv(grading.csv, grading.grades)
    write_report(grading.html, grading.grades, grading.csv.name, grading.hints)


def _write_csv(path: Path, grades: list[Grade]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)

    def write(tmp: str) -> None:
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(HEADER)
            for grade in grades:  # a Grade's fields are HEADER's
                writer.writerow(map(_inert, astuple(grade)))

    atomic_write(str(path), write)


def _inert(cell: str) -> str:
    """A cell a spreadsheet would run as a formula (a folder named '=HYPERLINK(...)'), as text."""
    return "'" + cell if cell[:1] in ("=", "+", "-", "@", "\t", "\r") else cell


def _as_written(cell: str) -> str:
    return cell[1:] if cell[:1] == "'" and _inert(cell[1:]) == cell else cell


def _tell(template: str, **fields) -> None:
    print("  " + readable(say(template, **fields)), flush=True)


def _print_notebook(submission: Submission, rows: list[Grade], seconds: float) -> None:
    template = N_("{student}/{notebook}: {passed} of {total} exercises passed ({seconds:.0f} s)")
    if not rows:
        template = N_("{student}/{notebook}: no exercises")
    _tell(
        template,
        student=submission.student,
        notebook=submission.notebook,
        passed=sum(r.status == PASSED for r in rows),
        total=len(rows),
        seconds=seconds,
    )


def _print_summary(grading: Grading) -> None:
    counts = grading.counts()
    print(
        say(
            "{total} grades: {passed} passed, {failed} failed, {error} error, {timeout} timeout, "
            "{tampered} tampered; {flagged} flagged.\n  CSV: {csv}\n  HTML summary: {html}",
            total=len(grading.grades) - counts[FLAGGED],  # a flag is no grade
            **counts,
            csv=grading.csv.resolve(),
            html=grading.html.resolve(),
        ),
        flush=True,
    )
