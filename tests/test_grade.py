"""`python -m mxlearn grade`: every student's notebook run in a fresh kernel, in a copy of its
folder, each exercise graded by the teacher's check cell; real kernels, no mocks."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import nbformat
import pytest

from mxlearn.checkpoint.prefixes import FileOnTheWay
from mxlearn.commands.exercise_cells import metadata
from mxlearn.commands.grade import grade, kernel_environment
from mxlearn.commands.grade_exercises import prepare
from mxlearn.commands.grade_inputs import (
    EmptyTeacherFolder,
    FolderIsAFile,
    NoSubmissions,
    NoSubmissionsFolder,
    NoTeacherFolder,
    NoTeacherGiven,
    OutInsideSubmissions,
    OutIsAFolder,
    OutNotCSV,
    OutNotGrades,
    OutNotWritable,
    SettingNotFinite,
    SettingNotPositive,
    SummaryNotGrades,
    read_teacher,
    teacher_copy,
)
from mxlearn.commands.student_edition import NotANotebook

NOTEBOOK = "01_exercises.ipynb"
SETUP = "import os, subprocess, sys\nvalue = 1"
ANSWER_1 = "### BEGIN SOLUTION\nx = 6 * 7\n### END SOLUTION"
CHECK_1 = (
    "from mxlearn.errors import CheckFailed\n"
    "if x != 42:\n"
    "    raise CheckFailed('x should be 42', fix='x = 6 * 7')\n"
    "print('OK')"
)
ANSWER_2 = "def double(n):\n    ### BEGIN SOLUTION\n    return 2 * n\n    ### END SOLUTION"
CHECK_2 = (
    "from mxlearn.errors import CheckFailed\n"
    "if double(4) != 8:\n"
    "    raise CheckFailed('double(4) should be 8', fix='return 2 * n')"
)
STUB_1 = "# YOUR CODE HERE\nraise NotImplementedError()"
STUB_2 = "def double(n):\n    # YOUR CODE HERE\n    raise NotImplementedError()"
NOT_ANSWERED = "not answered: the code still raises NotImplementedError"
NO_CHECK = (
    "no check cell of this exercise is in the notebook (deleted, its metadata lost when cells "
    "were copied into a new notebook, or the notebook was handed out before this exercise "
    "existed)"
)
NOT_HANDED_IN = "not handed in"
EDITED = "a check cell of this exercise was edited; the teacher's check ran instead and gave: {}"
HEADER = ("student", "notebook", "exercise", "status", "message")
TOKEN = f"mxlearn-grade-test-{uuid.uuid4().hex}"  # in the command line of what a notebook starts
SPAWN = f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', '{TOKEN}'])\n"


def _cell(source, exercise=None, role=None):
    cell = nbformat.v4.new_code_cell(source)
    if exercise:
        cell.metadata.update(metadata(exercise, role))
    return cell


def _notebook(
    path,
    answer_1=ANSWER_1,
    check_1=CHECK_1,
    answer_2=ANSWER_2,
    check_2=CHECK_2,
    title="# Exercises",
):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell(title), _cell(SETUP)]
    notebook.cells += [_cell(answer_1, "01.1", "answer"), _cell(check_1, "01.1", "check")]
    notebook.cells += [_cell(answer_2, "01.2", "answer")]
    if check_2 is not None:
        notebook.cells.append(_cell(check_2, "01.2", "check"))
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


def _rows(path, columns=5):
    """The CSV's rows, their first ``columns`` (the points are tested apart)."""
    with open(path, newline="", encoding="utf-8") as f:
        return [tuple(row[:columns]) for row in csv.reader(f)]


def _processes_with(text):
    """Processes whose command line holds ``text`` (psutil if installed, else /proc)."""
    try:
        import psutil
    except ImportError:
        psutil = None
    found = []
    if psutil is not None:
        for process in psutil.process_iter(["cmdline"]):
            if text in " ".join(process.info["cmdline"] or []):
                found.append(process.pid)
        return [pid for pid in found if pid != os.getpid()]
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                line = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in line and int(name) != os.getpid():
            found.append(int(name))
    return found


def _teacher(tmp_path, **cells):
    """The teacher's folder, with the teacher's edition of NOTEBOOK."""
    return _notebook(tmp_path / "notebooks" / NOTEBOOK, **cells).parent


def _nothing_left(tmp_path):
    time.sleep(0.5)  # a killed process may take a moment to leave the process table
    assert _processes_with(str(tmp_path)) == []  # runners and kernels (their connection files)
    assert _processes_with(TOKEN) == []  # what a notebook started itself


@pytest.mark.slow
def test_every_exercise_of_every_student_is_graded(temporary, capsys):
    tmp_path = temporary
    teacher, submitted = tmp_path / "notebooks", tmp_path / "submitted"
    _notebook(teacher / NOTEBOOK)
    wrong, stub = "x = 6 * 8", (STUB_1, STUB_2)
    _notebook(submitted / "alice" / NOTEBOOK)
    _notebook(submitted / "bob" / NOTEBOOK, answer_1=wrong)
    _notebook(submitted / "carol" / NOTEBOOK, answer_1=stub[0], answer_2=stub[1])
    _notebook(submitted / "dave" / NOTEBOOK, answer_2="while True:\n    pass")
    _notebook(submitted / "erin" / NOTEBOOK, answer_1="os._exit(1)")
    deleter = "os.remove('data.txt')\n" + SPAWN + "x = 42"
    _notebook(submitted / "frank" / NOTEBOOK, answer_1=deleter)
    (submitted / "frank" / "data.txt").write_text("keep me")
    _notebook(submitted / "grace" / NOTEBOOK, check_2=None)
    _notebook(submitted / "heidi" / NOTEBOOK, answer_1="x = 0", check_1="pass", answer_2=stub[1])
    (submitted / "ivan<script>").mkdir()
    (submitted / "ivan<script>" / NOTEBOOK).write_text('{"cells": [', encoding="utf-8")
    hog = (  # killed while it allocates or, at the latest, while it sleeps: in this cell
        "import time\nblocks = []\nfor _ in range(24):\n    blocks.append(b'x' * 2**27)\n"
        "time.sleep(60)\nx = 42"
    )
    _notebook(submitted / "judy" / NOTEBOOK, answer_1=hog)

    started = time.monotonic()
    out = tmp_path / "results" / "grades.csv"
    grading = grade(submitted, out, timeout=30, memory_mb=1024, jobs=3, teacher=teacher)
    took = time.monotonic() - started

    died = "the kernel died in cell 3 (the code exited, crashed or ran out of memory)"
    memory = "the memory limit of 1024 MB was reached in cell 3; the kernel was stopped"
    timeout = "the notebook's time limit of 30 s ran out in cell 5"
    unreadable = "not a readable notebook: NotJSONError: Notebook does not appear to be JSON: '{\"cells\": ['"
    rows = _rows(out)
    assert rows == [
        ("student", "notebook", "exercise", "status", "message"),
        ("alice", NOTEBOOK, "01.1", "passed", ""),
        ("alice", NOTEBOOK, "01.2", "passed", ""),
        ("bob", NOTEBOOK, "01.1", "failed", "x should be 42"),
        ("bob", NOTEBOOK, "01.2", "passed", ""),
        ("carol", NOTEBOOK, "01.1", "failed", NOT_ANSWERED),
        ("carol", NOTEBOOK, "01.2", "failed", NOT_ANSWERED),
        ("dave", NOTEBOOK, "01.1", "passed", ""),
        ("dave", NOTEBOOK, "01.2", "timeout", timeout),
        ("erin", NOTEBOOK, "01.1", "error", died),
        ("erin", NOTEBOOK, "01.2", "error", died),
        ("frank", NOTEBOOK, "01.1", "passed", ""),
        ("frank", NOTEBOOK, "01.2", "passed", ""),
        ("grace", NOTEBOOK, "01.1", "passed", ""),
        ("grace", NOTEBOOK, "01.2", "failed", NO_CHECK),
        ("heidi", NOTEBOOK, "01.1", "tampered", EDITED.format("failed (x should be 42)")),
        ("heidi", NOTEBOOK, "01.2", "failed", NOT_ANSWERED),
        ("ivan<script>", NOTEBOOK, "01.1", "error", unreadable),
        ("ivan<script>", NOTEBOOK, "01.2", "error", unreadable),
        ("judy", NOTEBOOK, "01.1", "error", memory),
        ("judy", NOTEBOOK, "01.2", "error", memory),
    ]
    assert (submitted / "frank" / "data.txt").read_text() == "keep me"  # only the copy lost it
    counts = {"passed": 7, "failed": 5, "error": 6, "timeout": 1, "tampered": 1, "flagged": 0}
    assert grading.counts() == counts
    assert grading.seconds[("dave", NOTEBOOK)] < 30 + 5
    assert took < 30 + 30  # the loop's 30 s, the others beside it
    _nothing_left(tmp_path)

    page = grading.html.read_text(encoding="utf-8")
    assert grading.html == tmp_path / "results" / "grades.html"
    for student in ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "judy"]:
        assert f"<th>{student}</th>" in page
    assert "ivan&lt;script&gt;" in page and "<script" not in page and "http" not in page
    common = page.split("The most common failure messages")[1].split("</tr>")[1]
    assert NOT_ANSWERED in common and '<td class="count">3</td>' in common
    printed = capsys.readouterr().out
    assert "dave/01_exercises.ipynb: 1 of 2 exercises passed" in printed
    assert "20 grades: 7 passed, 5 failed, 6 error, 1 timeout, 1 tampered; 0 flagged." in printed
    assert str(out.resolve()) in printed and str(grading.html.resolve()) in printed


@pytest.mark.slow
def test_the_whole_run_keeps_to_the_time_limit_and_leaves_no_process(temporary):
    tmp_path = temporary
    submitted = tmp_path / "submitted"
    _notebook(submitted / "spinning" / NOTEBOOK, answer_1=SPAWN + "while True:\n    pass")
    blocked = (
        "import signal, threading\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN); signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "lock = threading.Lock(); lock.acquire(); lock.acquire()"  # blocks in C, deaf to signals
    )
    _notebook(submitted / "blocked" / NOTEBOOK, answer_1=blocked)
    started = time.monotonic()
    teacher = _teacher(tmp_path)
    grading = grade(submitted, tmp_path / "grades.csv", timeout=6, jobs=2, teacher=teacher)
    assert time.monotonic() - started < 6 + 10
    assert {(g.student, g.status) for g in grading.grades} == {
        ("blocked", "timeout"),
        ("spinning", "timeout"),
    }
    assert all(
        g.message.startswith("the notebook's time limit of 6 s ran out") for g in grading.grades
    )
    _nothing_left(tmp_path)


@pytest.mark.slow
def test_mxnet_trains_under_the_default_memory_limit(temporary):
    tmp_path = temporary
    answer = (
        "import mxlearn\nfrom mxlearn import mx\n"
        "X, y = mxlearn.datasets.synthetic_classification(num_samples=256, num_classes=4)\n"
        "train = mx.io.NDArrayIter(X, y, batch_size=32)\n"
        "mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4), context=mx.cpu())\n"
        "mod.fit(train, num_epoch=2, optimizer_params={'learning_rate': 0.1})\n"
        "out = mod.predict(train).asnumpy()"
    )
    threads = str(max(1, (os.cpu_count() or 1) // 1))
    check = (
        "from mxlearn.errors import CheckFailed\n"
        "if out.shape != (256, 4):\n"
        "    raise CheckFailed(f'out has the shape {out.shape}')\n"
        f"assert os.environ['OMP_NUM_THREADS'] == '{threads}', os.environ['OMP_NUM_THREADS']\n"
        f"assert os.environ['MXLEARN_DATA'] == {os.environ.get('MXLEARN_DATA', '')!r}\n"
    )
    submitted = tmp_path / "submitted"
    _notebook(submitted / "alice" / NOTEBOOK, answer_1=answer, check_1=check, check_2=None)
    teacher = _teacher(tmp_path, answer_1=answer, check_1=check, check_2=None)
    grading = grade(submitted, tmp_path / "grades.csv", jobs=1, teacher=teacher)
    assert [(g.exercise, g.status, g.message) for g in grading.grades] == [("01.1", "passed", "")]


def test_the_teachers_copy_is_the_edition_the_submission_matches(tmp_path):
    teacher, chinese = tmp_path / "notebooks", CHECK_1.replace("x should be 42", "x 应该是 42")
    _notebook(teacher / NOTEBOOK)
    _notebook(teacher / "zh" / NOTEBOOK, check_1=chinese, title="# 练习")
    student = nbformat.read(
        _notebook(tmp_path / "s" / NOTEBOOK, check_1="pass", title="# 练习"), as_version=4
    )
    name, chosen = teacher_copy(read_teacher(teacher), NOTEBOOK, student)
    assert name == NOTEBOOK and chosen.cells[0].source == "# 练习"
    prepared = prepare(student, chosen)
    assert prepared.notebook.cells[3].source == chinese  # the student's "pass" is gone
    assert [e.name for e in prepared.exercises] == ["01.1", "01.2"]
    assert all(cell.metadata == {} for cell in prepared.notebook.cells)


@pytest.mark.parametrize(
    "settings, kind, name",
    [
        ({"timeout": 0}, SettingNotPositive, "timeout"),
        ({"memory_mb": -1}, SettingNotPositive, "memory-mb"),
        ({"jobs": 0}, SettingNotPositive, "jobs"),
        ({"timeout": float("inf")}, SettingNotFinite, "timeout"),
    ],
)
def test_settings_that_cannot_work_are_refused(tmp_path, settings, kind, name):
    _notebook(tmp_path / "submitted" / "alice" / NOTEBOOK)
    with pytest.raises(kind) as refused:
        grade(
            tmp_path / "submitted", tmp_path / "grades.csv", teacher=_teacher(tmp_path), **settings
        )
    assert type(refused.value) is kind
    assert refused.value.fields["name"] == name
    assert refused.value.fields["value"] == next(iter(settings.values()))
    assert refused.value.fix and not (tmp_path / "grades.csv").exists()


def test_a_missing_or_empty_submissions_folder_is_refused(tmp_path):
    with pytest.raises(NoSubmissionsFolder) as refused:
        grade(tmp_path / "nowhere", tmp_path / "grades.csv")
    assert Path(refused.value.fields["folder"]) == tmp_path / "nowhere"
    assert refused.value.fix
    (tmp_path / "a_file.ipynb").write_text("{}")
    with pytest.raises(FolderIsAFile) as refused:
        grade(tmp_path / "a_file.ipynb", tmp_path / "grades.csv")
    assert type(refused.value) is FolderIsAFile  # the submissions, not the teacher's folder
    assert Path(refused.value.fields["path"]) == tmp_path / "a_file.ipynb"
    (tmp_path / "submitted" / "alice").mkdir(parents=True)
    (tmp_path / "submitted" / "loose.ipynb").write_text("{}")  # not in a student's folder
    with pytest.raises(NoSubmissions) as refused:
        grade(tmp_path / "submitted", tmp_path / "grades.csv")
    assert Path(refused.value.fields["folder"]) == tmp_path / "submitted"
    assert refused.value.fields["folder"] in refused.value.fix  # where each student's folder goes
    _notebook(tmp_path / "submitted" / "alice" / NOTEBOOK)
    with pytest.raises(NoTeacherFolder) as refused:
        grade(tmp_path / "submitted", tmp_path / "grades.csv", teacher=tmp_path / "nowhere")
    assert Path(refused.value.fields["folder"]) == tmp_path / "nowhere"
    with pytest.raises(OutIsAFolder) as refused:
        grade(tmp_path / "submitted", tmp_path, teacher=_teacher(tmp_path))
    assert Path(refused.value.fields["out"]) == tmp_path


def test_without_the_teachers_edition_nothing_is_graded(tmp_path, monkeypatch):
    _notebook(tmp_path / "submitted" / "alice" / NOTEBOOK)
    monkeypatch.chdir(tmp_path)  # no notebooks/ here
    with pytest.raises(NoTeacherGiven) as refused:
        grade("submitted", "grades.csv")
    assert Path(refused.value.fields["here"]) == tmp_path
    assert "--teacher" in refused.value.fix
    (tmp_path / "notebooks").mkdir()
    with pytest.raises(EmptyTeacherFolder) as refused:
        grade("submitted", "grades.csv")
    assert Path(refused.value.fields["folder"]).resolve() == tmp_path / "notebooks"
    assert not (tmp_path / "grades.csv").exists()


def test_an_out_that_could_destroy_a_file_is_refused(tmp_path):
    teacher, submitted = _teacher(tmp_path), tmp_path / "submitted"
    handed_in = _notebook(submitted / "alice" / NOTEBOOK)
    before = handed_in.read_bytes()
    notes, page = tmp_path / "notes.csv", tmp_path / "g.html"
    notes.write_text("name,score\nalice,10\n")
    page.write_text("<p>my own page</p>")
    cases = [
        (handed_in, OutInsideSubmissions),
        (submitted / "grades.csv", OutInsideSubmissions),
        (tmp_path / "grades.txt", OutNotCSV),
        (notes, OutNotGrades),
        (tmp_path / "g.csv", SummaryNotGrades),
    ]
    for out, kind in cases:
        with pytest.raises(kind) as refused:
            grade(submitted, out, teacher=teacher)
        assert type(refused.value) is kind and Path(refused.value.fields["out"]) == out
        assert refused.value.fix
    assert Path(refused.value.fields["html"]) == page  # the summary that would be lost
    assert handed_in.read_bytes() == before and not (submitted / "grades.csv").exists()
    assert notes.read_text() == "name,score\nalice,10\n"
    assert page.read_text() == "<p>my own page</p>"


@pytest.mark.slow
def test_no_notebook_grades_itself_and_nobody_goes_missing(temporary, capsys):
    tmp_path = temporary
    teacher, submitted = _teacher(tmp_path), tmp_path / "submitted"
    rewrite = (  # the sandbox shows no teacher's folder: nothing to rewrite
        "import nbformat\n"
        f"path = {str(teacher / NOTEBOOK)!r}\n"
        "nb = nbformat.read(path, as_version=4)\n"
        "for cell in nb.cells:\n"
        "    if cell.metadata.get('mxlearn', {}).get('role') == 'check':\n"
        "        cell.source = 'pass'\n"
        "nbformat.write(nb, path)\n"
        "x = 42"
    )
    _notebook(submitted / "aaron" / NOTEBOOK, answer_1=rewrite)
    _notebook(submitted / "bob" / NOTEBOOK, answer_1="x = 0")
    renamed = "01_exercises (1).ipynb"  # a browser's download name
    _notebook(submitted / "carol" / renamed, answer_1="x = 0", check_1="pass")
    stale = _notebook(submitted / "dan" / NOTEBOOK)
    notebook = nbformat.read(stale, as_version=4)
    stale_cells = [_cell(STUB_1, "01.1", "answer"), _cell(CHECK_1, "01.1", "check")]
    notebook.cells[2:2] = stale_cells  # left above a pasted copy: they fail, the copy passes
    nbformat.write(notebook, stale)
    _notebook(submitted / "erin" / NOTEBOOK, check_2=None)
    (submitted / "frank").mkdir()
    _notebook(submitted / "grace" / ".ipynb_checkpoints" / "01_exercises-checkpoint.ipynb")
    _notebook(submitted / "heidi" / NOTEBOOK)
    (submitted / "heidi" / "data").symlink_to("/usr/share")  # a link to data: not followed
    _notebook(submitted / "ivan" / "week1" / NOTEBOOK)  # nbgrader's layout: handed in too
    _notebook(submitted / ".hidden" / NOTEBOOK)
    _notebook(submitted / "stray.ipynb")

    grading = grade(submitted, tmp_path / "grades.csv", timeout=60, jobs=1, teacher=teacher)

    kept = nbformat.read(teacher / NOTEBOOK, as_version=4)
    assert [c.source for c in kept.cells if "role" in str(c.metadata)][1::2] == [CHECK_1, CHECK_2]
    rows = _rows(grading.csv)
    unseen = f"FileNotFoundError: [Errno 2] No such file or directory: '{teacher / NOTEBOOK}'"
    assert rows.pop(1) == ("aaron", NOTEBOOK, "01.1", "error", unseen)
    assert rows == [
        HEADER,
        ("aaron", NOTEBOOK, "01.2", "passed", ""),
        ("bob", NOTEBOOK, "01.1", "failed", "x should be 42"),
        ("bob", NOTEBOOK, "01.2", "passed", ""),
        ("carol", renamed, "01.1", "tampered", EDITED.format("failed (x should be 42)")),
        ("carol", renamed, "01.2", "passed", ""),
        ("dan", NOTEBOOK, "01.1", "passed", ""),
        ("dan", NOTEBOOK, "01.2", "passed", ""),
        ("erin", NOTEBOOK, "01.1", "passed", ""),
        ("erin", NOTEBOOK, "01.2", "failed", NO_CHECK),
        ("frank", NOTEBOOK, "01.1", "failed", NOT_HANDED_IN),
        ("frank", NOTEBOOK, "01.2", "failed", NOT_HANDED_IN),
        ("grace", NOTEBOOK, "01.1", "failed", NOT_HANDED_IN),
        ("grace", NOTEBOOK, "01.2", "failed", NOT_HANDED_IN),
        ("heidi", NOTEBOOK, "01.1", "passed", ""),
        ("heidi", NOTEBOOK, "01.2", "passed", ""),
        ("heidi", "data", "", "flagged", FOLDER_LINKED.format("/usr/share")),
        ("ivan", f"week1/{NOTEBOOK}", "01.1", "passed", ""),
        ("ivan", f"week1/{NOTEBOOK}", "01.2", "passed", ""),
    ]
    printed = capsys.readouterr().out
    assert f"{submitted / 'stray.ipynb'} is not in a student's folder: not graded" in printed


def _other_notebook(path):
    """A notebook whose exercise (09.1) the teacher does not have; its own check passes."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [_cell("x = 0", "09.1", "answer"), _cell("pass", "09.1", "check")]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)


def test_a_notebook_the_teacher_does_not_have_is_not_run(tmp_path, capsys):
    teacher, submitted = _teacher(tmp_path), tmp_path / "submitted"
    long = "n" * 240 + ".ipynb"
    _other_notebook(submitted / "alice" / "notes.ipynb")
    _other_notebook(submitted / "bob" / long)
    grade(submitted, tmp_path / "grades.csv", teacher=teacher)
    # a name the system refuses for the feedback's temporary file: said, not a crash
    said = capsys.readouterr().out
    assert f"{tmp_path / 'grades-feedback' / 'bob' / long}: no feedback written (OSError" in said
    rows = _rows(tmp_path / "grades.csv")
    untrusted = (
        f"no teacher's copy of notes.ipynb (none of that name or with its exercises in "
        f"{teacher}): its own check cells cannot be trusted, so it was not run"
    )
    # notebooks of no teacher's copy are scratch: nobody else is missing them
    assert rows[1:2] == [("alice", "notes.ipynb", "09.1", "error", untrusted)]
    assert rows[2][:4] == ("bob", long, "09.1", "error")
    assert rows[2][4].startswith(f"no teacher's copy of {long[:100]}")
    assert len(rows[2][4]) == 300 and rows[2][4].endswith("…")
    assert len(rows) == 3


LINKED = "a symbolic link to {}, not a file handed in: links are not followed, so it was not graded"
FOLDER_LINKED = "a symbolic link to {}: links are not followed, so no notebook in it was graded"


def test_a_linked_notebook_or_folder_is_tampered_not_the_teachers_grades(tmp_path):
    teacher = _teacher(tmp_path)
    submitted = tmp_path / "submitted"
    (submitted / "alice").mkdir(parents=True)
    target = os.path.relpath(teacher / NOTEBOOK, submitted / "alice")  # the guide's layout
    (submitted / "alice" / NOTEBOOK).symlink_to(target)
    (submitted / "bob").symlink_to(os.path.relpath(teacher, submitted))
    (submitted / "=HYPERLINK(x)").mkdir()
    (submitted / "=HYPERLINK(x)" / NOTEBOOK).symlink_to("/etc/hostname")
    grading = grade(submitted, tmp_path / "grades.csv", teacher=teacher)
    rows = _rows(tmp_path / "grades.csv")[1:]
    assert ("alice", NOTEBOOK, "01.1", "tampered", LINKED.format(target)) in rows
    assert ("alice", NOTEBOOK, "01.2", "tampered", LINKED.format(target)) in rows
    assert ("bob", "", "", "tampered", LINKED.format(os.path.relpath(teacher, submitted))) in rows
    assert ("'=HYPERLINK(x)", NOTEBOOK, "01.1", "tampered", LINKED.format("/etc/hostname")) in rows
    assert not [g for g in grading.grades if g.status == "passed"]


def test_a_notebook_handed_in_twice_and_names_one_when_normalised_are_flagged(tmp_path):
    teacher, submitted = _teacher(tmp_path), tmp_path / "submitted"
    _other_notebook(submitted / "alice" / "notes.ipynb")
    _other_notebook(submitted / "alice" / "week1" / "notes.ipynb")
    composed, decomposed = "Jos\u00e9", "Jose\u0301"  # as a macOS zip writes the second
    _other_notebook(submitted / composed / "notes.ipynb")
    _other_notebook(submitted / decomposed / "notes.ipynb")
    grade(submitted, tmp_path / "grades.csv", teacher=teacher)
    flagged = [row for row in _rows(tmp_path / "grades.csv")[1:] if row[3] == "flagged"]
    twice = [row for row in flagged if row[0] == "alice"]
    assert [row[:4] for row in twice] == [("alice", "notes.ipynb", "", "flagged")]
    assert "week1/notes.ipynb" in twice[0][4] and "each is graded" in twice[0][4]
    one_name = [row for row in flagged if row[0] != "alice"]
    assert sorted(row[0] for row in one_name) == sorted([composed, decomposed])
    assert all("one name once normalised" in row[4] for row in one_name)
    assert "flagged" in (tmp_path / "grades.html").read_text()


@pytest.mark.slow
@pytest.mark.parametrize(
    "stop", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=["SIGTERM", "Ctrl-C", "kill -9"]
)
def test_an_interrupted_run_keeps_its_grades_and_a_rerun_grades_the_rest(temporary, stop):
    teacher, submitted = _teacher(temporary), temporary / "submitted"
    slow = "import time\ntime.sleep(4)\n" + ANSWER_1  # long enough to be interrupted
    for student in ("alice", "bob", "carol"):
        _notebook(submitted / student / NOTEBOOK, answer_1=slow)
    out = temporary / "grades.csv"
    command = [sys.executable, "-m", "mxlearn", "grade", str(submitted), "--out", str(out)]
    command += ["--teacher", str(teacher), "--jobs", "1"]
    run = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    first = ""
    while "exercises passed" not in first:  # the first notebook is graded
        first = run.stdout.readline()
    run.send_signal(stop)
    assert run.wait(timeout=60) == (-9 if stop == signal.SIGKILL else 130)
    rows = _rows(out)[1:]
    graded = {row[0] for row in rows if row[0]}
    assert len(graded) == 1 and rows[-1][:4] == ("", "", "", "flagged")
    assert "had 1 of 3 notebooks graded" in rows[-1][4]
    if stop == signal.SIGKILL:  # nothing can clean up after a kill -9: its kernel goes on
        for pid in _processes_with(str(temporary)):
            os.kill(pid, signal.SIGKILL)
    _nothing_left(temporary)
    copies = list((temporary / "tmp").glob("mxlearn-grade-*"))
    assert len(copies) == (1 if stop == signal.SIGKILL else 0)  # a kill -9 leaves its copy
    again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "1 notebooks graded before the interruption: kept" in again.stdout
    assert graded.pop() + "/" not in again.stdout.replace("interruption", "")
    assert not list((temporary / "tmp").glob("mxlearn-grade-*"))  # the rerun removed it
    final = _rows(out)[1:]
    assert sorted({row[0] for row in final}) == ["alice", "bob", "carol"]
    assert all(row[3] == "passed" for row in final)


@pytest.mark.slow
def test_a_kernel_sees_none_of_the_graders_secrets(temporary, monkeypatch):
    monkeypatch.setenv("GRADER_TOKEN", "s3cret")
    teacher, submitted = _teacher(temporary), temporary / "submitted"
    peek = "x = 0 if any('s3cret' in v for v in os.environ.values()) else 6 * 7"
    _notebook(submitted / "mallory" / NOTEBOOK, answer_1=peek)
    grade(submitted, temporary / "grades.csv", teacher=teacher)
    rows = _rows(temporary / "grades.csv")[1:]
    assert rows[0][:4] == ("mallory", NOTEBOOK, "01.1", "passed")  # the token was not there


@pytest.mark.slow
def test_nbgraders_assignment_folders_are_read_too(tmp_path):
    teacher = _notebook(tmp_path / "notebooks" / NOTEBOOK)
    _notebook(tmp_path / "submitted" / "alice" / "week1" / NOTEBOOK)
    _notebook(tmp_path / "submitted" / "bob" / "unzipped" / "week1" / NOTEBOOK)  # any depth
    (tmp_path / "submitted" / "alice" / "linked").symlink_to("week1")  # not an assignment
    out = tmp_path / "grades.csv"
    out.write_text(",".join(HEADER) + "\nold,grades,,,\n")  # a CSV of grades: replaced
    umask = os.umask(0o027)
    try:
        grade(tmp_path / "submitted", out, teacher=teacher.parent)
    finally:
        os.umask(umask)
    assert _rows(out)[1:] == [
        ("alice", "linked", "", "flagged", FOLDER_LINKED.format("week1")),
        ("alice", f"week1/{NOTEBOOK}", "01.1", "passed", ""),
        ("alice", f"week1/{NOTEBOOK}", "01.2", "passed", ""),
        ("bob", f"unzipped/week1/{NOTEBOOK}", "01.1", "passed", ""),
        ("bob", f"unzipped/week1/{NOTEBOOK}", "01.2", "passed", ""),
    ]
    assert os.stat(out).st_mode & 0o777 == 0o640  # as any file the teacher writes
    assert os.stat(tmp_path / "grades.html").st_mode & 0o777 == 0o640


@pytest.mark.slow
def test_odd_metadata_in_one_notebook_costs_only_that_notebook(tmp_path):
    teacher = _notebook(tmp_path / "notebooks" / NOTEBOOK)
    _notebook(tmp_path / "submitted" / "alice" / NOTEBOOK)
    odd = nbformat.read(teacher, as_version=4)
    odd.cells[2].metadata["mxlearn"] = "01.1"  # not a dict: says nothing about a role
    odd.cells[3].metadata["nbgrader"] = ["grade"]
    (tmp_path / "submitted" / "bob").mkdir()
    nbformat.write(odd, tmp_path / "submitted" / "bob" / NOTEBOOK)
    grade(tmp_path / "submitted", tmp_path / "grades.csv", teacher=teacher.parent)
    rows = _rows(tmp_path / "grades.csv")
    assert [r[:4] for r in rows[1:3]] == [
        ("alice", NOTEBOOK, "01.1", "passed"),
        ("alice", NOTEBOOK, "01.2", "passed"),
    ]
    assert [r[0] for r in rows[3:]] == ["bob", "bob"]


def test_an_out_that_cannot_be_written_is_refused_before_any_notebook_runs(tmp_path, capsys):
    teacher = _notebook(tmp_path / "notebooks" / NOTEBOOK)
    _notebook(tmp_path / "submitted" / "alice" / NOTEBOOK)
    (tmp_path / "afile").write_text("x")
    with pytest.raises(FileOnTheWay) as refused:
        grade(tmp_path / "submitted", tmp_path / "afile" / "grades.csv", teacher=teacher.parent)
    assert Path(refused.value.fields["blocking"]) == tmp_path / "afile"
    with pytest.raises(OutNotWritable) as refused:
        grade(tmp_path / "submitted", "/proc/grades.csv", teacher=teacher.parent)
    assert refused.value.fields["out"] == "/proc/grades.csv"
    assert "alice" not in capsys.readouterr().out  # nothing ran


def test_a_damaged_teacher_notebook_is_named_not_skipped(tmp_path):
    teacher = _notebook(tmp_path / "notebooks" / NOTEBOOK)
    (teacher.parent / "02_damaged.ipynb").write_text("{not json")
    _notebook(tmp_path / "submitted" / "alice" / NOTEBOOK)
    with pytest.raises(NotANotebook) as refused:
        grade(tmp_path / "submitted", tmp_path / "grades.csv", teacher=teacher.parent)
    assert Path(refused.value.fields["path"]) == teacher.parent / "02_damaged.ipynb"


@pytest.mark.slow
def test_a_notebook_that_prints_megabytes_is_graded_as_any_other(tmp_path):
    teacher = _notebook(tmp_path / "notebooks" / NOTEBOOK)
    loud = "for _ in range(50):\n    print('x' * 1_000_000)\n" + ANSWER_1  # 50 MB of output
    _notebook(tmp_path / "submitted" / "alice" / NOTEBOOK, answer_1=loud)
    grade(tmp_path / "submitted", tmp_path / "grades.csv", teacher=teacher.parent)
    assert [r[3] for r in _rows(tmp_path / "grades.csv")[1:]] == ["passed", "passed"]


def test_only_the_copies_of_graders_no_longer_running_are_removed(tmp_path, monkeypatch):
    from mxlearn.commands.grade import COPY_PREFIX, remove_dead_graders_copies

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    copies = {
        name: tmp_path / f"{COPY_PREFIX}{pid}-x"
        for name, pid in (("mine", os.getpid()), ("dead", dead.pid), ("parent", os.getppid()))
    }
    for copy in copies.values():
        copy.mkdir()
    remove_dead_graders_copies()  # as a second grade() in the same process does
    assert {name for name, copy in copies.items() if copy.exists()} == {"mine", "parent"}


@pytest.mark.slow
def test_names_no_system_can_print_and_odd_cells_cost_only_their_notebook(tmp_path, capsys):
    teacher, submitted = _teacher(tmp_path), tmp_path / "submitted"
    bad_folder = os.fsdecode(b"bad\xffname")  # a zip made on another system: not UTF-8
    bad_notebook = os.fsdecode(b"01_exercises\xe9.ipynb")
    _notebook(submitted / bad_folder / NOTEBOOK)
    _notebook(submitted / "alice" / bad_notebook)
    odd = _notebook(submitted / "bob" / NOTEBOOK)
    raw = json.loads(odd.read_text(encoding="utf-8"))
    raw["cells"][1]["source"] = 5  # a code cell whose source is a number, saved with an output
    raw["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "5"}]
    odd.write_text(json.dumps(raw), encoding="utf-8")

    grading = grade(submitted, tmp_path / "grades.csv", timeout=60, jobs=2, teacher=teacher)

    rows = _rows(grading.csv)
    assert ("bad\\xffname", NOTEBOOK, "01.1", "passed", "") in rows
    assert ("alice", "01_exercises\\xe9.ipynb", "01.1", "passed", "") in rows
    assert any(r[0] == "bob" for r in rows)  # graded as whatever it is, the others stand
    assert "bad\\xffname" in capsys.readouterr().out


def test_a_kernel_is_given_the_graders_cached_letter_data(tmp_path, monkeypatch):
    import shutil

    from mxlearn import datasets

    cache = tmp_path / "cache"
    (cache / "mxlearn").mkdir(parents=True)
    shutil.copy(datasets.letter_file(), cache / "mxlearn")
    monkeypatch.delenv("MXLEARN_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    # a sandboxed kernel sees neither the grader's cache nor the network: it is told the folder
    assert kernel_environment(1)["MXLEARN_DATA"] == str((cache / "mxlearn").resolve())
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty"))
    assert "MXLEARN_DATA" not in kernel_environment(1)  # no copy: nothing to point at
    monkeypatch.setenv("MXLEARN_DATA", "relative/data")  # the teacher's own setting wins
    assert kernel_environment(1)["MXLEARN_DATA"] == os.path.abspath("relative/data")
