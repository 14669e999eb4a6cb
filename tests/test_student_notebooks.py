"""The student edition of the real course: every notebook runs, each exercise's answer cell
stops at the stub and its check fails saying so (never passes silently), nothing else errors,
and no line of any answer is in any student file."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from mxlearn.commands.student_edition import student_cell, write_student_edition

ROOT = Path(__file__).resolve().parents[1] / "notebooks"
NAMES = [p.relative_to(ROOT) for p in sorted(ROOT.glob("*.ipynb"))]
NAMES += [p.relative_to(ROOT) for p in sorted((ROOT / "zh").glob("*.ipynb"))]


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("course") / "student"
    write_student_edition(ROOT, out)
    return out


def _answer_lines() -> set[str]:
    lines = set()
    for name in NAMES:
        for cell in nbformat.read(ROOT / name, as_version=4).cells:
            if cell.metadata.get("mxlearn", {}).get("role") == "answer":
                lines |= {x.strip() for x in student_cell(cell.source, ("#",), False, "").answer}
    return {line for line in lines if len(line) >= 8}


def test_no_answer_line_is_in_any_student_file(edition):
    answers = _answer_lines()
    assert len(answers) >= 30
    for name in NAMES:
        text = (edition / name).read_text(encoding="utf-8")
        for line in answers:
            assert line not in text and json.dumps(line)[1:-1] not in text, (name, line)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES, ids=str)
def test_a_student_notebook_runs_and_every_exercise_fails_its_check(edition, name, tmp_path):
    nb = nbformat.read(edition / name, as_version=4)
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        allow_errors=False,  # only cells tagged raises-exception may raise
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    errors = {}
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                errors[index] = output
    exercises = [c for c in nb.cells if "mxlearn" in c.metadata]
    assert len(exercises) >= 4
    for index, cell in enumerate(nb.cells):
        role = cell.metadata.get("mxlearn", {}).get("role")
        if role in ("answer", "check"):
            assert "raises-exception" in cell.metadata["tags"]
        if role == "answer":
            assert errors.pop(index).ename == "NotImplementedError", cell.source
        elif role == "check":
            error = errors.pop(index, None)
            assert error is not None, f"the check passed without an answer: {cell.source}"
            assert error.ename == "CheckFailed", (error.ename, error.evalue)
            exercise = cell.metadata["mxlearn"]["exercise"]
            named = (f"{exercise} (", f"{exercise}(", f"{exercise}（")  # zh: full-width
            assert any(n in error.evalue for n in named)
    assert errors == {}, {i: (e.ename, e.evalue) for i, e in errors.items()}
