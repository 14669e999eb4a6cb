"""The answer regions of one teacher cell, as nbgrader reads them, and the cell without them.

nbgrader treats any line holding ``BEGIN SOLUTION`` as the start of an answer (``### BEGIN
SOLUTION`` in the course, but ``# BEGIN SOLUTION`` too) and replaces the region by a stub; a
cell marked as a solution without markers is replaced whole; ``### BEGIN HIDDEN TESTS`` regions
are removed. mxlearn does the same, and refuses what nbgrader would get wrong without a word:
code before a marker on the same line (nbgrader drops the line), and near-misses such as
``### begin solution`` (nbgrader leaves them, and the answer, in the student's copy).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import N_, InputError
from ..language import say

CODE_STUB = {
    "en": ("# YOUR CODE HERE", "raise NotImplementedError()"),
    "zh": ("# 在这里写你的代码", "raise NotImplementedError()"),
}
TEXT_STUB = {"en": ("YOUR ANSWER HERE",), "zh": ("在这里写你的回答",)}
STUB_LINES = {line for stub in (*CODE_STUB.values(), *TEXT_STUB.values()) for line in stub}

# kind -> (begin, end) as nbgrader finds them: the words anywhere in the line
REGIONS = {
    "solution": ("BEGIN SOLUTION", "END SOLUTION"),
    "hidden": ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS"),
}
# a marker mxlearn accepts: the words alone on the line after one or more '#'
ALONE = re.compile(r"#+\s*(BEGIN|END) (SOLUTION|HIDDEN TESTS)")
# what a teacher may have meant as a marker: any case, any spacing, in a comment
NEAR_MISS = re.compile(r"#.*\b(BEGIN|END)[\s_-]*(SOLUTION|HIDDEN[\s_-]*TESTS)\b", re.I)
IMAGE_LINK = re.compile(r"attachment:([^)\s\"'>]+)")


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
        if edge == "begin":
            if open_kind is not None:
                problem = say("a second BEGIN before the END of the region above")
                raise BadRegion(where=where, line=number, problem=problem)
            open_kind, indent, cell.replaced = kind, line[: len(line) - len(line.lstrip())], True
            ending = "\r" if line.endswith("\r") else ""
            if kind == "solution":
                kept += [indent + part + ending for part in stub]
        elif open_kind != kind:
            raise BadRegion(where=where, line=number, problem=say("an END without its BEGIN"))
        else:
            open_kind = None
    if open_kind is not None:
        problem = say("a BEGIN whose region is never closed")
        raise BadRegion(where=where, line=len(lines), problem=problem)
    cell.source = "\n".join(kept)
    cell.answer = [line.rstrip("\r") for line in cell.answer]
    return cell


def _marker(line: str, number: int, where: str) -> tuple[str, str] | None:
    """('solution' or 'hidden', 'begin' or 'end') for a marker line, None for any other line."""
    text = line.strip()
    for kind, (begin, end) in REGIONS.items():
        for edge, words in (("begin", begin), ("end", end)):
            if words in line:
                if not ALONE.fullmatch(text):
                    problem = say(
                        "{line!r} holds a marker beside other text (nbgrader would drop the whole line)",
                        line=text,
                    )
                    raise BadRegion(where=where, line=number, problem=problem)
                return kind, edge
    if NEAR_MISS.search(text):
        problem = say(
            "{line!r} looks like a marker but nbgrader would not see one, and would hand out the answer",
            line=text,
        )
        raise BadRegion(where=where, line=number, problem=problem)
    return None


def kept_attachments(attachments: dict, source: str) -> dict:
    """The attachments the kept text still shows (the others were part of an answer)."""
    shown = set(IMAGE_LINK.findall(source))
    return {name: data for name, data in attachments.items() if name in shown}
