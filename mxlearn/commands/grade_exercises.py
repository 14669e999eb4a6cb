"""The exercises of a notebook (by mxlearn's cell metadata, else nbgrader's ``grade_id``: an
answer named only by nbgrader belongs to the next check), and each one's grade from a run.
Every check cell gets the teacher's source again before a run, and the last of them grade the
exercise, so neither an edited check nor a stale copy above a pasted one grades anything.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from ..exercises import parts_of
from ..language import LANGUAGES, say, spoken

PASSED, FAILED, ERROR, TIMEOUT = "passed", "failed", "error", "timeout"
TAMPERED = "tampered"  # not a notebook handed in as it should be: never run
FLAGGED = "flagged"  # not a grade: something the teacher should look at (a notebook twice)
STATUSES = (PASSED, FAILED, ERROR, TIMEOUT, TAMPERED, FLAGGED)
FAILED_CHECKS = {"AssertionError", "CheckFailed"}  # the names a failed check raises under
NOT_ANSWERED = "NotImplementedError"
MESSAGE_CHARS = 300
SEAL_TYPE = "application/x-mxlearn-seal"  # the MIME type of a check's last display
CHANGED = "ChecksChanged"  # what grading_seal raises
BUILTINS_CHANGED = "mxlearn seal: builtins changed"  # the KeyError a check cell raises then
SET_LANGUAGE = re.compile(r"""\bset_language\(\s*['"]([A-Za-z-]+)['"]\s*\)""")
HINT_CALL = re.compile(r"""\bhint\(\s*['"]([0-9]{2}\.[0-9]+)['"]""")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass(frozen=True)
class Seal:
    """What the grader adds around each check cell: the read-only package's ``grading_seal``
    first (mxlearn as its files say, or ChecksChanged), a display of ``nonce`` last (a kernel
    told to swallow the check's error does not show it)."""

    nonce: str
    seal_file: str

    def around(self, source: str) -> str:
        path = repr(self.seal_file)
        # Python's builtins through the import system (no name the notebook could rebind),
        # each one the seal needs a C function of its own name, else no seal at all
        real = (
            '[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "BuiltinImporter"]'
            '[0].find_spec.__func__.__globals__["__builtins__"]'
        )
        needed = '("exec", "compile", "open", "__import__", "globals")'
        genuine = (
            f"[n for n in {needed} if not (type(b[n]) is type(().__class__.__base__.__subclasses__)"
            " and b[n].__name__ == n)] == []"
        )
        space = f'{{"__builtins__": b, "__name__": "mxlearn_grading_seal", "__file__": {path}, '
        space += '"user": b["globals"]()}'
        first = f"_mxlearn_seal = (lambda b: {space} if {genuine} else {{}})({real})\n"
        first += f'_mxlearn_seal.get("__builtins__") or {{}}[{BUILTINS_CHANGED!r}]\n'
        run = '_mxlearn_seal["__builtins__"]'
        first += f'{run}["exec"]({run}["compile"]({run}["open"]({path}, encoding="utf-8").read(), '
        first += f'{path}, "exec"), _mxlearn_seal)'
        nonce = f'{self.nonce!r} if _mxlearn_seal.get("sealed") is True else ""'
        last = f'{run}["__import__"]("IPython.display").display.display({{{SEAL_TYPE!r}: '
        last += f"{nonce}}}, raw=True)"
        return f"{first}\n{source}\n{last}"


@dataclass
class Exercise:
    name: str
    answers: list[int] = field(default_factory=list)  # cell positions
    checks: list[int] = field(default_factory=list)
    points: list[float] = field(default_factory=list)  # of each check cell (the teacher's)
    parts: list[str] = field(default_factory=list)  # their names, for one graded in parts

    @property
    def cells(self) -> list[int]:
        return sorted(self.answers + self.checks)


@dataclass
class Prepared:
    """A submission ready to run: its notebook with the teacher's checks, and its exercises."""

    notebook: object
    exercises: list[Exercise]  # in the order of the notebook
    missing: dict[str, tuple[int, int]]  # exercise: (check cells found, the teacher's)
    edited: set[str] = field(default_factory=set)  # exercises whose check cell was changed
    seal: str = ""  # what a check cell shows when it ran to its end (grading_seal)
    language: str | None = None  # the edition's (edition_language); None: the grader's


def exercise_key(name: str) -> tuple:
    """Sort "03.10" after "03.2": numbers by value, the rest as text."""
    return tuple(
        (0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.findall(r"\d+|\D+", name)
    )


def _cell_role(cell) -> tuple[str | None, str | None, bool]:
    """(exercise, 'answer' | 'check', named by mxlearn's metadata?) of a code cell."""
    if cell.cell_type != "code":
        return None, None, False
    # a student's notebook may hold anything in its metadata: what is not a dict says nothing
    ours, nbgrader = (cell.metadata.get(key) for key in ("mxlearn", "nbgrader"))
    ours, nbgrader = (m if isinstance(m, dict) else {} for m in (ours, nbgrader))
    role, name = ours.get("role"), ours.get("exercise")
    if role not in ("answer", "check"):
        if nbgrader.get("solution"):
            role = "answer"
        elif nbgrader.get("grade"):
            role = "check"
        else:
            return None, None, False
    named = bool(name)
    name = name or nbgrader.get("grade_id")
    return (str(name) if name else None), role, named


def exercises_of(notebook, *, with_answers_only: bool = False) -> dict[str, Exercise]:
    """The exercises of ``notebook`` that have a check cell (and, with ``with_answers_only``,
    those whose answer cell says its exercise but whose check is gone), in notebook order."""
    found: dict[str, Exercise] = {}
    waiting: list[int] = []  # answers named only by nbgrader: they go to the next check
    for index, cell in enumerate(notebook.cells):
        name, role, named = _cell_role(cell)
        if role == "check" and name:
            exercise = found.setdefault(name, Exercise(name))
            exercise.checks.append(index)
            exercise.answers += waiting
            waiting = []
        elif role == "answer" and named:
            found.setdefault(name, Exercise(name)).answers.append(index)
        elif role == "answer":
            waiting.append(index)
    if with_answers_only:
        return found
    return {name: e for name, e in found.items() if e.checks}


def hints_asked(notebook) -> set[str]:
    """The exercises whose hints the student's own run of ``notebook`` showed: a cell calling
    ``hint('01.1')`` saved with its output (a notebook saved without outputs tells nothing)."""
    asked = set()
    for cell in notebook.cells if notebook is not None else []:
        if cell.cell_type == "code" and cell.get("outputs") and isinstance(cell.source, str):
            asked |= set(HINT_CALL.findall(cell.source))
    return asked


def edition_language(notebook) -> str | None:
    """The language a notebook's own code makes mxlearn speak (the Chinese edition calls
    ``mxlearn.set_language('zh')`` first), or None when it chooses none."""
    for cell in notebook.cells if notebook is not None else []:
        if cell.cell_type == "code" and isinstance(cell.source, str):
            chosen = SET_LANGUAGE.findall(cell.source)
            if chosen and chosen[0] in LANGUAGES:
                return chosen[0]
    return None


def read_notebook(path: Path):
    """The notebook at ``path``, or the reason it cannot be read as one."""
    try:
        return nbformat.read(path, as_version=4), None
    except Exception as problem:  # not JSON, not a notebook, not readable: all said the same
        text = str(problem).strip().splitlines()
        return None, f"{type(problem).__name__}: {text[0] if text else ''}".rstrip(": ")


def _points(check) -> float:
    """What a teacher's check cell is worth: nbgrader's points (1 when it says none)."""
    value = (check.metadata.get("nbgrader") or {}).get("points", 1)
    return float(value) if isinstance(value, (int, float)) and value >= 0 else 1.0


def _parts(name: str, total: int) -> list[str]:
    """The names of an exercise's parts (one check cell each): the catalogue's, else numbers."""
    if total < 2:
        return []
    named = parts_of(name)
    return named if len(named) == total else [say("check {n}", n=n) for n in range(1, total + 1)]


def _as_compared(source: str) -> str:
    """A cell's source as an edit is told from a save: trailing spaces and blank ends aside."""
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def prepare(submission, teacher, seal: Seal | None = None) -> Prepared:
    """``submission`` with the teacher's check sources, every cell's metadata and outputs gone
    (a tag could otherwise let nbclient skip a check or allow its error). With ``seal``, each
    check first verifies that mxlearn is unchanged and last shows the seal's nonce. Its words
    (the parts' names, and later its grades') are in the language of the teacher's edition."""
    language = edition_language(teacher)
    with spoken(language):
        prepared = _prepared(submission, teacher, seal)
    prepared.language = language
    return prepared


def _prepared(submission, teacher, seal: Seal | None) -> Prepared:
    notebook = copy.deepcopy(submission)
    mine = exercises_of(notebook, with_answers_only=True)
    exercises, missing, edited = [], {}, set()
    for name, theirs in exercises_of(teacher).items():
        own = mine.get(name, Exercise(name))
        total = len(theirs.checks)
        if len(own.checks) < total:
            missing[name] = (len(own.checks), total)
        for place, index in enumerate(own.checks):  # a stale copy above gets them too
            original = teacher.cells[theirs.checks[max(0, place - len(own.checks) + total)]]
            if len(own.checks) >= total and (
                _as_compared(notebook.cells[index].source) != _as_compared(original.source)
            ):  # with checks missing, which is which is not known: graded as missing only
                edited.add(name)
            notebook.cells[index].source = seal.around(original.source) if seal else original.source
        points = [_points(teacher.cells[i]) for i in theirs.checks]
        exercises.append(
            Exercise(name, own.answers, own.checks[-total:], points, _parts(name, total))
        )
    for cell in notebook.cells:
        cell.metadata = {}
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return Prepared(notebook, exercises, missing, edited, seal.nonce if seal else "")


def _missing_checks(found: int, total: int) -> str:
    if found == 0:
        return say(
            "no check cell of this exercise is in the notebook (deleted, its metadata lost when "
            "cells were copied into a new notebook, or the notebook was handed out before this "
            "exercise existed)"
        )
    return say(
        "only {found} of the {total} check cells of this exercise are in the notebook (deleted, "
        "their metadata lost when cells were copied into a new notebook, or the notebook handed "
        "out before the exercise was graded in parts)",
        found=found,
        total=total,
    )


def capped(text: str) -> str:
    line = " ".join(str(text).splitlines())
    return line if len(line) <= MESSAGE_CHARS else line[: MESSAGE_CHARS - 1] + "…"


def _first_lines(text: str) -> str:
    """The first meaningful line of an error's text (two, when the first leads into the next),
    on one line and capped."""
    lines = [line.strip() for line in ANSI.sub("", text).splitlines() if line.strip()]
    kept = lines[:2] if len(lines) > 1 and lines[0].endswith(":") else lines[:1]
    return capped(" ".join(kept))


def _from_error(event: dict) -> tuple[str, str]:
    name, value = event.get("ename", ""), _first_lines(event.get("evalue", ""))
    if name == CHANGED:
        return TAMPERED, say(
            "the notebook changed mxlearn in memory ({names}), so no check could trust it",
            names=value,
        )
    if name == "KeyError" and BUILTINS_CHANGED in value:
        return TAMPERED, say(
            "the notebook replaced Python's own exec, compile, open, __import__ or globals, so "
            "no check could trust it"
        )
    if name == NOT_ANSWERED:
        return FAILED, say("not answered: the code still raises NotImplementedError")
    if name in FAILED_CHECKS:
        return FAILED, value or say("{error} (with no message)", error=name)
    return ERROR, f"{name}: {value}" if value else name


def stop_of(events: list[dict], code_cells: list[int], timed_out: bool, limits: dict) -> tuple:
    """(status, message): why the run ended before its last cell, and in which cell (counted
    from 1); ('', '') when it ran to the end."""
    done = {e["cell"] for e in events if "status" in e and e["status"] != "dead"}
    unfinished = [index for index in code_cells if index not in done]
    cell = unfinished[0] + 1 if unfinished else 0
    memory = next((e for e in events if "memory" in e), None)
    if memory is not None:
        cell = memory["cell"] + 1 if memory.get("cell", -1) >= 0 else cell
        return ERROR, say(
            "the memory limit of {mb} MB was reached in cell {cell}; the kernel was stopped",
            mb=memory["memory"],
            cell=cell,
        )
    if any(e.get("status") == "dead" for e in events):
        return ERROR, say(
            "the kernel died in cell {cell} (the code exited, crashed or ran out of memory)",
            cell=cell,
        )
    if timed_out:
        return TIMEOUT, say(
            "the notebook's time limit of {seconds:g} s ran out in cell {cell}",
            seconds=limits["timeout"],
            cell=cell,
        )
    if unfinished:
        return ERROR, say("the notebook could not be run: {problem}", problem=limits["tail"])
    return "", ""


def grades_from_run(
    prepared: Prepared, events: list[dict], timed_out: bool, limits: dict
) -> dict[str, tuple[str, str]]:
    """{exercise: (status, message, (points, out of, parts))} from the events of a run of
    ``prepared.notebook``, said in the language of its edition (a Chinese notebook's "not
    answered" is Chinese, as its checks' messages are, whatever the grader speaks)."""
    with spoken(prepared.language):
        return _grades(prepared, events, timed_out, limits)


def _grades(prepared: Prepared, events: list[dict], timed_out: bool, limits: dict) -> dict:
    cells = prepared.notebook.cells
    code_cells = [i for i, cell in enumerate(cells) if cell.cell_type == "code"]
    results = {e["cell"]: e for e in events if e.get("status") in ("ok", "error")}
    stopped, why = stop_of(events, code_cells, timed_out, limits)
    sealed = {e["cell"] for e in events if e.get("sealed") == prepared.seal}
    # a check cell that showed an error and replied ok: a hook after the cell (IPython's
    # post_run_cell) cleared the error the check raised
    sealed -= {e["cell"] for e in events if "shown_error" in e}
    ran = {
        i for i, e in results.items() if e["status"] == "ok" and (not prepared.seal or i in sealed)
    }
    grades = {}
    for exercise in prepared.exercises:
        if exercise.name in prepared.missing:
            grade = (FAILED, _missing_checks(*prepared.missing[exercise.name]))
        elif all(results.get(i, {}).get("status") == "ok" for i in exercise.checks):
            unsealed = [i + 1 for i in exercise.checks if prepared.seal and i not in sealed]
            grade = (TAMPERED, _unsealed(unsealed)) if unsealed else (PASSED, "")
        elif all(index in results for index in exercise.cells):
            grade = _failure(exercise, results)
        else:
            grade = (stopped or ERROR, why)
        if exercise.name in prepared.edited:
            grade = _edited(*grade)
        grades[exercise.name] = (*grade, _credit(exercise, ran, grade[0], prepared.missing))
    return grades


def _credit(exercise: Exercise, ran: set, status: str, missing: dict) -> tuple[str, str, str]:
    """(points, out of, each part's points) of an exercise: a point value for each check cell
    that ran to its end without error; none for one tampered with or missing checks."""
    earned = [
        p if i in ran and status != TAMPERED and exercise.name not in missing else 0.0
        for i, p in zip(exercise.checks, exercise.points)
    ]
    earned += [0.0] * (len(exercise.points) - len(earned))
    parts = "; ".join(
        f"{name}: {got:g}/{worth:g}"
        for name, got, worth in zip(exercise.parts, earned, exercise.points)
    )
    return f"{sum(earned):g}", f"{sum(exercise.points):g}", parts


def _unsealed(cells: list[int]) -> str:
    return say(
        "check cell {cell} reported success without running to its end: the notebook changed "
        "how the kernel runs cells or reports errors",
        cell=cells[0],
    )


def _edited(status: str, message: str) -> tuple[str, str]:
    said = say("the teacher's check ran instead and gave: {status}", status=status)
    if message:
        said += f" ({message})"
    return TAMPERED, say("a check cell of this exercise was edited; {outcome}", outcome=said)


def _failure(exercise: Exercise, results: dict[int, dict]) -> tuple[str, str]:
    """The grade of an exercise whose check did not pass: "not answered" when one of its
    answer cells still raises NotImplementedError, else its first error."""
    errors = [results[i] for i in exercise.cells if results[i]["status"] == "error"]
    stubs = [e for e in errors if e["cell"] in exercise.answers and e.get("ename") == NOT_ANSWERED]
    changed = [  # the answer's error aside
        e
        for e in errors
        if e.get("ename") == CHANGED or BUILTINS_CHANGED in str(e.get("evalue", ""))
    ]
    return _from_error((changed or stubs or errors)[0])


def last_line(text: str) -> str:
    """The last meaningful line of a process's stderr, capped like a message."""
    lines = [line.strip() for line in ANSI.sub("", text).splitlines() if line.strip()]
    return _first_lines(lines[-1]) if lines else say("it ended without saying why")
