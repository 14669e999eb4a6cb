"""The last guard of the student edition: no telling answer line in any student file (lines of
8 characters or more that are code or a phrase; shorter ones appear in any code).

Every answer of every notebook (both languages hold the same code) is searched for in every
student notebook: in each cell's text, in the metadata of cells and notebook, and in text
attachments. The search reads the notebook's texts, not its JSON, so an answer that happens to
be one of nbformat's own words ("markdown") is not taken for a leak.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from pathlib import Path

from ..errors import N_, InputError
from ..language import say
from .answer_regions import STUB_LINES


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


def _decoded(mime: str, data) -> Iterator[str]:
    yield from _strings(data)
    if mime.startswith("text/") and isinstance(data, str):
        try:
            yield base64.b64decode(data, validate=True).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            pass


def notebook_texts(notebook) -> Iterator[tuple[str, str]]:
    """(where, text) for every text a student will see or could read in the file."""
    for index, cell in enumerate(notebook.cells, start=1):
        where = say("cell {index}", index=index)
        yield where, cell.source
        for text in _strings(dict(cell.metadata)):
            yield where, text
        for name, bundle in cell.get("attachments", {}).items():
            for mime, data in bundle.items():
                for text in _decoded(mime, data):
                    yield f"{where}, {name}", text
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
