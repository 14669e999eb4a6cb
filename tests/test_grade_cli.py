"""`python -m mxlearn grade` as a teacher types it: the exit code, the CSV, the refusals of
arguments that cannot work (exit 2, the fix named, no traceback), and a grader without its
packages refused before anything runs. Submissions are built with test_grade's helpers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_grade import HEADER, NOTEBOOK, _notebook, _rows, _teacher

from mxlearn.__main__ import main

ROOT = Path(__file__).resolve().parents[1]


def _class(tmp_path):
    """(teacher's folder, submissions): alice answers both exercises, bob gets 01.1 wrong."""
    teacher, submitted = _teacher(tmp_path), tmp_path / "submitted"
    _notebook(submitted / "alice" / NOTEBOOK)
    _notebook(submitted / "bob" / NOTEBOOK, answer_1="x = 0")
    return teacher, submitted


@pytest.mark.slow
def test_the_command_grades_every_student_and_exits_0(tmp_path, capsys):
    teacher, submitted = _class(tmp_path)
    out = tmp_path / "grades.csv"
    arguments = ["grade", str(submitted), "--out", str(out), "--teacher", str(teacher)]
    assert main([*arguments, "--timeout", "60", "--jobs", "2"]) == 0
    assert _rows(out) == [
        HEADER,
        ("alice", NOTEBOOK, "01.1", "passed", ""),
        ("alice", NOTEBOOK, "01.2", "passed", ""),
        ("bob", NOTEBOOK, "01.1", "failed", "x should be 42"),
        ("bob", NOTEBOOK, "01.2", "passed", ""),
    ]
    assert (
        "4 grades: 3 passed, 1 failed, 0 error, 0 timeout, 0 tampered; 0 flagged."
        in capsys.readouterr().out
    )
    with pytest.raises(SystemExit) as shown:  # the defaults shown are the grader's own
        main(["grade", "--help"])
    assert shown.value.code == 0
    helped = " ".join(capsys.readouterr().out.split())
    assert "seconds per notebook (600)" in helped and "in MB (4096)" in helped


@pytest.mark.parametrize(
    "arguments, problem, fix",
    [
        (["--timeout", "0"], "--timeout 0 is not a positive number", "--timeout N, with N > 0"),
        (["--timeout", "nan"], "--timeout nan is not a positive number", "--timeout N"),
        (["--timeout", "inf"], "--timeout inf is not a finite number", "--timeout N"),
        (["--memory-mb", "0"], "--memory-mb 0 is not a positive number", "--memory-mb N"),
        (["--jobs", "-1"], "--jobs -1 is not a positive number", "--jobs N"),
        (["--out", "grades.txt"], "does not end in .csv", "--out grades.csv"),
        (["--timeout", "soon"], "invalid float value: 'soon'", "usage:"),  # argparse's own
    ],
)
def test_arguments_that_cannot_work_exit_2_with_the_fix(
    tmp_path, monkeypatch, capsys, arguments, problem, fix
):
    teacher, submitted = _class(tmp_path)
    monkeypatch.chdir(tmp_path)
    try:
        code = main(["grade", str(submitted), "--teacher", str(teacher), *arguments])
    except SystemExit as refused:
        code = refused.code
    said = capsys.readouterr()
    assert code == 2
    assert problem in said.err and fix in said.err and "Traceback" not in said.err
    assert not said.out and not list(tmp_path.glob("grades.*"))  # nothing ran, nothing written


@pytest.mark.slow
def test_without_nbclient_the_command_names_what_to_install_and_runs_nothing(tmp_path):
    teacher, submitted = _class(tmp_path)
    out = tmp_path / "grades.csv"
    without_nbclient = (
        "import sys\n"
        "sys.modules['nbclient'] = None  # import nbclient now fails, as if not installed\n"
        "from mxlearn.__main__ import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    command = [sys.executable, "-c", without_nbclient, "grade", str(submitted)]
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    ran = subprocess.run(
        [*command, "--out", str(out), "--teacher", str(teacher)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=path),
        timeout=120,
    )
    assert ran.returncode == 1, ran.stderr
    assert "mxlearn grade needs nbclient to run the notebooks" in ran.stderr
    assert f"Fix: {sys.executable} -m pip install nbclient\n" in ran.stderr
    assert "Traceback" not in ran.stderr and "alice" not in ran.stdout
    assert not out.exists()
