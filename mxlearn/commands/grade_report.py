"""The HTML summary of a grade run, beside its CSV: one self-contained page (no script, style
sheet or font from elsewhere), every text that came from a submission HTML-escaped.
"""

from __future__ import annotations

import html
import re
from collections import Counter, defaultdict
from pathlib import Path

from ..atomic_write import atomic_write_bytes
from ..errors import N_
from ..language import current_language, say, spoken
from .grade_exercises import PASSED, STATUSES, exercise_key

MOST_COMMON = 15
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
MARK = '<meta name="generator" content="mxlearn grade">'  # what is_report looks for
STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.passed { background: #e3f5e1; } td.failed { background: #fde8e8; }
td.error { background: #fff1d6; } td.timeout { background: #e6e9fb; }
td.count { text-align: right; }
"""


# Each status as the page shows it (the CSV and the cells' classes keep the status itself)
STATUS_TITLES = {
    "passed": N_("passed"),
    "failed": N_("failed"),
    "error": N_("error"),
    "timeout": N_("timeout"),
    "tampered": N_("tampered"),
    "flagged": N_("flagged"),
}


def _status(status: str) -> str:
    return _e(say(STATUS_TITLES[status]) if status in STATUS_TITLES else status)


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _exercises(grades) -> list[tuple[str, str]]:
    """Each (notebook, exercise) graded, in the notebook's order of exercises."""
    return sorted(
        {(g.notebook, g.exercise) for g in grades}, key=lambda k: (k[0], exercise_key(k[1]))
    )


def _table_head(*heads: str) -> str:
    return "<table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in heads) + "</tr>"


def _exercise_title(notebook: str, exercise: str) -> str:
    return f"{_e(notebook)} — {_e(exercise)}" if exercise else _e(notebook)


def _overview(grades, csv_name: str) -> list[str]:
    counts = Counter(g.status for g in grades)
    students = len({g.student for g in grades})
    notebooks = len({(g.student, g.notebook) for g in grades})
    said = say(
        "{students} students, {notebooks} notebooks, {grades} grades (the same in {csv}).",
        students=students,
        notebooks=notebooks,
        grades=len(grades),
        csv=csv_name,
    )
    cells = "".join(f'<td class="{s} count">{counts.get(s, 0)}</td>' for s in STATUSES)
    heads = "".join(f"<th>{_status(s)}</th>" for s in STATUSES)
    return [f"<p>{_e(said)}</p>", f"<table><tr>{heads}</tr><tr>{cells}</tr></table>"]


def _cause(message: str) -> str:
    """A failure message with its numbers taken out: the same cause, whatever the values."""
    return NUMBER.sub("#", message)


def _causes(mine) -> list[str]:
    """The failures of one exercise grouped by cause, most frequent first (an example each)."""
    groups = defaultdict(list)
    for g in mine:
        if g.status != PASSED and g.message:
            groups[g.status, _cause(g.message)].append(g)
    if not groups:
        return []
    rows = [_table_head(say("students"), say("status"), say("message (one of them)"))]
    for (status, _), same in sorted(groups.items(), key=lambda item: -len(item[1])):
        rows.append(
            f'<tr><td class="count">{len({g.student for g in same})}</td>'
            f'<td class="{status}">{_status(status)}</td><td>{_e(same[0].message)}</td></tr>'
        )
    return [*rows, "</table>"]


def _per_exercise(grades, hints: dict) -> list[str]:
    title = say("Each exercise")
    parts = [f"<h2>{_e(title)}</h2>"]
    heads = _table_head(say("status"), say("students"), say("who"))
    for notebook, exercise in _exercises(grades):
        mine = [g for g in grades if (g.notebook, g.exercise) == (notebook, exercise)]
        passed = len({g.student for g in mine if g.status == PASSED})
        students = len({g.student for g in mine})
        asked = sum(exercise in hints.get((g.student, g.notebook), ()) for g in mine)
        rate = say(
            "passed by {passed} of {students} students ({percent:.0f}%); {asked} asked for "
            "hints (as their notebooks show)",
            passed=passed,
            students=students,
            percent=100 * passed / max(students, 1),
            asked=asked,
        )
        rows = []
        for status in STATUSES:
            names = sorted(g.student for g in mine if g.status == status)
            who = ", ".join(_e(name) for name in names) if status != PASSED else ""
            rows.append(
                f'<tr><td class="{status}">{_status(status)}</td>'
                f'<td class="count">{len(names)}</td><td>{who}</td></tr>'
            )
        parts += [
            f"<h3>{_exercise_title(notebook, exercise)}</h3>",
            f"<p>{_e(rate)}</p>",
            heads,
            *rows,
            "</table>",
            *_causes(mine),
        ]
    return parts


def _common_messages(grades) -> list[str]:
    counted = Counter((g.status, g.message) for g in grades if g.status != PASSED and g.message)
    title, none = say("The most common failure messages"), say("None: every exercise passed.")
    parts = [f"<h2>{_e(title)}</h2>"]
    if not counted:
        return parts + [f"<p>{_e(none)}</p>"]
    parts.append(_table_head(say("times"), say("status"), say("message"), say("exercises")))
    for (status, message), count in counted.most_common(MOST_COMMON):
        where = sorted(
            {(g.notebook, g.exercise) for g in grades if (g.status, g.message) == (status, message)}
        )
        named = ", ".join(_exercise_title(n, e) for n, e in where)
        parts.append(
            f'<tr><td class="count">{count}</td><td class="{status}">{_status(status)}</td>'
            f"<td>{_e(message)}</td><td>{named}</td></tr>"
        )
    return parts + ["</table>"]


def _grade_cell(grade) -> str:
    """A student's grade of an exercise: its status, its points where it has parts."""
    points = f" {grade.points}/{grade.out_of}" if grade.parts else ""
    title = _e("; ".join(t for t in (grade.message, grade.parts) if t))
    return f'<td class="{grade.status}" title="{title}">{_status(grade.status)}{_e(points)}</td>'


def _student_table(grades) -> list[str]:
    columns = _exercises(grades)
    by_cell = {(g.student, g.notebook, g.exercise): g for g in grades}
    heads = "".join(f"<th>{_exercise_title(n, e)}</th>" for n, e in columns)
    title, first = say("Every student and exercise"), say("student")
    parts = [f"<h2>{_e(title)}</h2>", f"<table><tr><th>{_e(first)}</th>{heads}</tr>"]
    for student in sorted({g.student for g in grades}):
        cells = []
        for notebook, exercise in columns:
            grade = by_cell.get((student, notebook, exercise))
            cells.append("<td></td>" if grade is None else _grade_cell(grade))
        parts.append(f"<tr><th>{_e(student)}</th>{''.join(cells)}</tr>")
    return parts + ["</table>"]


def report_page(
    grades, csv_name: str, hints: dict | None = None, language: str | None = None
) -> str:
    """The summary page of ``grades`` (objects with student, notebook, exercise, status and
    message) as one HTML text; ``hints``: {(student, notebook): exercises it asked hints of};
    ``language``: the page's ('zh': the editions graded were Chinese), None: mxlearn's now."""
    with spoken(language):
        return _page(grades, csv_name, hints or {})


def _page(grades, csv_name: str, hints: dict) -> str:
    title = _e(say("Grades: {csv}", csv=csv_name))
    body = [
        f"<h1>{title}</h1>",
        *_overview(grades, csv_name),
        *_common_messages(grades),
        *_per_exercise(grades, hints),
        *_student_table(grades),
    ]
    return (
        f'<!DOCTYPE html>\n<html lang="{current_language()}">\n<head>\n<meta charset="utf-8">\n'
        f"{MARK}\n"
        f"<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def is_report(path: Path) -> bool:
    """Whether ``path`` is a summary page this module wrote (and may be written over)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096).decode("utf-8", "replace")
    except OSError:
        return False
    return MARK in head


def write_report(
    path: Path, grades, csv_name: str, hints: dict | None = None, language: str | None = None
) -> None:
    page = report_page(grades, csv_name, hints, language)
    atomic_write_bytes(str(path), page.encode("utf-8"))
