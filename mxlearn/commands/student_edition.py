"""``python -m mxlearn course --student OUT``: the course as students get it.

Each answer (between nbgrader's ``### BEGIN SOLUTION`` / ``### END SOLUTION``, read as nbgrader
reads them; a solution cell without markers whole) becomes nbgrader's stub in the notebook's
language; hidden tests are removed; outputs, widget state and an answer's attachments cleared;
stubbed and check cells are tagged ``raises-exception``, so Run All goes on past them. What
nbgrader would get wrong without a word is refused: code beside a marker (it drops the line) and
near-misses such as ``### begin solution`` (it hands out the answer). The last guard: no telling
answer line is left in any student notebook's texts (not its JSON: "markdown" is nbformat's).
Everything is made and checked before anything is written, then put in OUT's place whole.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import copy
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import ValidationError

from ..errors import N_, InputError
from ..language import say

CODE_STUB = {
    "en": ("# YOUR CODE HERE", "raise NotImplementedError()"),
    "zh": ("# 在这里写你的代码", "raise NotImplementedError()"),
}
TEXT_STUB = {"en": ("YOUR ANSWER HERE",), "zh": ("在这里写你的回答",)}
STUB_LINES = {line for stub in (*CODE_STUB.values(), *TEXT_STUB.values()) for line in stub}

# a marker as nbgrader finds one: the words anywhere in the line
MARKER = re.compile(r"(BEGIN|END) (SOLUTION|HIDDEN TESTS)")
# a marker mxlearn accepts: the words alone on the line after one or more '#'
ALONE = re.compile(r"#+\s*(BEGIN|END) (SOLUTION|HIDDEN TESTS)")
# what a teacher may have meant as a marker: any case, any spacing, in a comment
NEAR_MISS = re.compile(r"#.*\b(BEGIN|END)[\s_-]*(SOLUTION|HIDDEN[\s_-]*TESTS)\b", re.I)
IMAGE_LINK = re.compile(r"attachment:([^)\s\"'>]+)")


EDITION_MARK = ".mxlearn-student-edition"  # in OUT: a folder this command may replace
COURSE = "python -m mxlearn course --notebooks notebooks --student runs/student"


class BadRegion(InputError):
    """A solution or hidden-test region nbgrader would read otherwise than its teacher meant."""

    says = N_("{where}, line {line}: {problem}.")
    fix_says = N_(
        "put each answer between a line '### BEGIN SOLUTION' and a line "
        "'### END SOLUTION', one region after another"
    )


@dataclass
class StudentCell:
    source: str
    answer: list[str] = field(default_factory=list)  # every line taken out
    replaced: bool = False


def _bad(where: str, number: int, problem: str, **fields) -> BadRegion:
    return BadRegion(where=where, line=number, problem=say(problem, **fields))


def student_cell(source: str, stub: tuple[str, ...], whole: bool, where: str) -> StudentCell:
    """The cell as the student gets it: each region replaced (a solution by ``stub``, a hidden
    test by nothing); ``whole`` (nbgrader's solution cell without markers) replaces it all."""
    lines = source.split("\n")  # not splitlines(): U+2028 and the like stay inside a line
    if whole and not any(_marker(line, n, where) for n, line in enumerate(lines, 1)):
        return StudentCell("\n".join(stub), [ln.rstrip("\r") for ln in lines], True)
    cell, open_kind, indent = StudentCell(source), None, ""
    kept = []
    for number, line in enumerate(lines, start=1):
        marker = _marker(line, number, where)
        if marker is None:
            (kept if open_kind is None else cell.answer).append(line)
            continue
        kind, edge = marker
        if edge == "BEGIN":
            if open_kind is not None:
                raise _bad(where, number, N_("a second BEGIN before the END of the region above"))
            open_kind, indent, cell.replaced = kind, line[: len(line) - len(line.lstrip())], True
            ending = "\r" if line.endswith("\r") else ""
            if kind == "SOLUTION":
                kept += [indent + part + ending for part in stub]
        elif open_kind != kind:
            raise _bad(where, number, N_("an END without its BEGIN"))
        else:
            open_kind = None
    if open_kind is not None:
        raise _bad(where, len(lines), N_("a BEGIN whose region is never closed"))
    cell.source = "\n".join(kept)
    cell.answer = [line.rstrip("\r") for line in cell.answer]
    return cell


def _marker(line: str, number: int, where: str) -> tuple[str, str] | None:
    """('SOLUTION' or 'HIDDEN TESTS', 'BEGIN' or 'END') for a marker line, None for another."""
    text = line.strip()
    if MARKER.search(line):
        alone = ALONE.fullmatch(text)
        if not alone:
            beside = N_(
                "{line!r} holds a marker beside other text (nbgrader would drop the whole line)"
            )
            raise _bad(where, number, beside, line=text)
        return alone[2], alone[1]
    if NEAR_MISS.search(text):
        missed = N_(
            "{line!r} looks like a marker but nbgrader would not see one, and would hand out "
            "the answer"
        )
        raise _bad(where, number, missed, line=text)
    return None


class AnswerLeaks(InputError):
    says = N_(
        "mxlearn course --student: the answer line {line!r} also appears "
        "outside its solution region ({target}, {where}), so the student "
        "edition would give it away."
    )
    fix_says = N_("move that line into the solution region, or reword it outside")


SHORTEST_SEARCHED = 8  # shorter lines (")", "pass", "x = 1") appear in any code
# a line giving something away: code (a call, an operator, a literal) or a phrase of 3+ words;
# a lone word such as "continue" or "markdown" would be found in any prose
TELLING = re.compile(r"[^\w\s]|\w+\s+\w+\s+\w+")


def _spaced(text: str) -> str:
    """Runs of spaces as one: an answer retyped with two spaces after a comma is the answer."""
    return " ".join(text.split())


def searched_lines(answers: list[str]) -> set[str]:
    """The answer lines worth searching for (the stub's own lines are in every edition)."""
    searched = set()
    for line in answers:
        body = _spaced(line)
        if len(body) < SHORTEST_SEARCHED or not TELLING.search(body):
            continue
        if not any(body in stub for stub in STUB_LINES):
            searched.add(body)
    return searched


def _strings(value) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def notebook_texts(notebook) -> Iterator[tuple[str, str]]:
    """(where, text) for every text a student will see or could read in the file."""
    for index, cell in enumerate(notebook.cells, start=1):
        where = say("cell {index}", index=index)
        yield where, cell.source
        for text in _strings(dict(cell.metadata)):
            yield where, text
        for name, bundle in cell.get("attachments", {}).items():
            for mime, data in bundle.items():
                texts = list(_strings(data))
                if mime.startswith("text/") and isinstance(data, str):
                    with contextlib.suppress(binascii.Error, ValueError):
                        texts.append(
                            base64.b64decode(data, validate=True).decode("utf-8", "replace")
                        )
                yield from ((f"{where}, {name}", text) for text in texts)
    for text in _strings(dict(notebook.metadata)):
        yield say("the notebook's metadata"), text


def check_no_answer_left(editions: list[tuple[Path, object]], answers: list[str]) -> None:
    """Refuse when any searched answer line is in any student notebook."""
    lines = searched_lines(answers)
    for target, notebook in editions:
        for where, text in notebook_texts(notebook):
            text = _spaced(text)
            for line in lines:
                if line in text:
                    raise AnswerLeaks(line=line, target=str(target), where=where)


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
            if "attachments" in cell:  # those the kept text no longer shows were an answer's
                shown = set(IMAGE_LINK.findall(made.source))
                cell.attachments = {n: d for n, d in cell.attachments.items() if n in shown}
                if not cell.attachments:
                    del cell["attachments"]
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            if made.replaced or cell.metadata.get("nbgrader", {}).get("grade") is True:
                # it raises until the student answers: Run All (and nbclient) go on past it
                tags = cell.metadata.setdefault("tags", [])
                if "raises-exception" not in tags:
                    tags.append("raises-exception")
    return student, [line for line in answers if line.strip()]


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
        written = [target.relative_to(out).as_posix() for target, _ in editions]
        said = say("written by python -m mxlearn course --student\n")
        (building / EDITION_MARK).write_text(said + "".join(f"{w}\n" for w in written))
        for target, notebook in editions:
            path = building / target.relative_to(out)
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(notebook, path)
        for added in _added_files(out, written):  # the teacher's own files in OUT stay
            (building / added).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(out / added, building / added, follow_symlinks=False)
            print(say("{out}: kept {file}, which the edition did not write", out=out, file=added))
        if out.exists():
            if (out / ".git").is_dir():  # a repository of the edition (--git) goes on
                (out / ".git").rename(building / ".git")
            out.rename(replaced)
        building.rename(out)
    except OSError as problem:
        if (building / ".git").is_dir() and out.is_dir() and not (out / ".git").exists():
            (building / ".git").rename(out / ".git")
        shutil.rmtree(building, ignore_errors=True)
        if replaced.exists() and not out.exists():  # the old edition back where it was
            replaced.rename(out)
        said = f"{type(problem).__name__}: {problem.strerror or problem}"
        raise EditionNotWritten(out=str(out), problem=said) from None
    shutil.rmtree(replaced, ignore_errors=True)


def _added_files(out: Path, writing: list[str]) -> list[str]:
    """Files in an older edition at OUT that no edition wrote (its mark lists what it wrote;
    a mark of before the list: its notebooks), and that this one does not write either."""
    if not (out / EDITION_MARK).is_file():
        return []
    listed = (out / EDITION_MARK).read_text(encoding="utf-8").splitlines()[1:]
    ours = {*listed, *writing, EDITION_MARK}
    found = (p.relative_to(out).as_posix() for p in out.rglob("*") if not p.is_dir())
    found = (f for f in found if f.split("/")[0] != ".git")  # the repository moves whole
    return sorted(f for f in found if f not in ours and (listed or not f.endswith(".ipynb")))


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
