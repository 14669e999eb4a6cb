"""`python -m mxlearn grade`: every student's notebook run in a fresh kernel, in a copy of its
folder, each exercise graded by the teacher's check cell; real kernels, no mocks."""

from __future__ import annotations

import csv
import os
import tempfile
import time
import uuid

import nbformat
import pytest

from mxlearn.commands.grade import grade
from mxlearn.commands.grade_exercises import prepare, teacher_copy
from mxlearn.errors import InputError

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
TOKEN = f"mxlearn-grade-test-{uuid.uuid4().hex}"  # in the command line of what a notebook starts
SPAWN = f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', '{TOKEN}'])\n"


def _cell(source, exercise=None, role=None):
    cell = nbformat.v4.new_code_cell(source)
    if exercise:
        grade_id = "ex" + exercise.replace(".", "_")
        cell.metadata["nbgrader"] = {
            "grade": role == "check",
            "solution": role == "answer",
            "locked": role == "check",
            "grade_id": grade_id if role == "check" else grade_id + "_answer",
            "schema_version": 3,
        }
        if role == "check":
            cell.metadata["nbgrader"]["points"] = 1
        cell.metadata["mxlearn"] = {"exercise": exercise, "role": role}
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


def _rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return [tuple(row) for row in csv.reader(f)]


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


@pytest.fixture
def temporary(tmp_path, monkeypatch):
    """Every temporary folder of the grader under tmp_path, so its processes can be found."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))  # the grader's own
    monkeypatch.setenv("TMPDIR", str(folder))  # the runner's: the kernel's connection file
    return tmp_path


def _empty(tmp_path):
    """A teacher's folder without the notebook: the submissions' own checks run."""
    (tmp_path / "notebooks").mkdir()
    return tmp_path / "notebooks"


def _nothing_left(tmp_path):
    time.sleep(0.5)  # a killed process may take a moment to leave the process table
    assert _processes_with(str(tmp_path)) == []  # runners and kernels (their connection files)
    assert _processes_with(TOKEN) == []  # what a notebook started itself


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
    deleted = "the check cell of this exercise was deleted from the notebook"
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
        ("grace", NOTEBOOK, "01.2", "failed", deleted),
        ("heidi", NOTEBOOK, "01.1", "failed", "x should be 42"),  # its edited check restored
        ("heidi", NOTEBOOK, "01.2", "failed", NOT_ANSWERED),
        ("ivan<script>", NOTEBOOK, "01.1", "error", unreadable),
        ("ivan<script>", NOTEBOOK, "01.2", "error", unreadable),
        ("judy", NOTEBOOK, "01.1", "error", memory),
        ("judy", NOTEBOOK, "01.2", "error", memory),
    ]
    assert (submitted / "frank" / "data.txt").read_text() == "keep me"  # only the copy lost it
    assert grading.counts() == {"passed": 7, "failed": 6, "error": 6, "timeout": 1}
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
    assert "20 grades: 7 passed, 6 failed, 6 error, 1 timeout." in printed
    assert str(out.resolve()) in printed and str(grading.html.resolve()) in printed


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
    grading = grade(submitted, tmp_path / "grades.csv", timeout=6, jobs=2, teacher=_empty(tmp_path))
    assert time.monotonic() - started < 6 + 10
    assert {(g.student, g.status) for g in grading.grades} == {
        ("blocked", "timeout"),
        ("spinning", "timeout"),
    }
    assert all(
        g.message.startswith("the notebook's time limit of 6 s ran out") for g in grading.grades
    )
    _nothing_left(tmp_path)


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
    grading = grade(submitted, tmp_path / "grades.csv", jobs=1, teacher=_empty(tmp_path))
    # no teacher's copy: the submission's own checks, and its exercises (01.2 has no check)
    assert [(g.exercise, g.status, g.message) for g in grading.grades] == [
        ("01.1", "passed", ""),
        ("01.2", "failed", "the check cell of this exercise was deleted from the notebook"),
    ]


def test_the_teachers_copy_is_the_edition_the_submission_matches(tmp_path):
    teacher, chinese = tmp_path / "notebooks", CHECK_1.replace("x should be 42", "x 应该是 42")
    _notebook(teacher / NOTEBOOK)
    _notebook(teacher / "zh" / NOTEBOOK, check_1=chinese, title="# 练习")
    student = nbformat.read(
        _notebook(tmp_path / "s" / NOTEBOOK, check_1="pass", title="# 练习"), as_version=4
    )
    chosen = teacher_copy(teacher, NOTEBOOK, student)
    assert chosen.cells[0].source == "# 练习"
    prepared = prepare(student, chosen)
    assert prepared.notebook.cells[3].source == chinese  # the student's "pass" is gone
    assert [e.name for e in prepared.exercises] == ["01.1", "01.2"]
    assert all(cell.metadata == {} for cell in prepared.notebook.cells)


@pytest.mark.parametrize(
    "settings, words",
    [
        ({"timeout": 0}, "--timeout 0 is not a positive number"),
        ({"memory_mb": -1}, "--memory-mb -1 is not a positive number"),
        ({"jobs": 0}, "--jobs 0 is not a positive number"),
    ],
)
def test_settings_that_cannot_work_are_refused(tmp_path, settings, words):
    _notebook(tmp_path / "submitted" / "alice" / NOTEBOOK)
    with pytest.raises(InputError, match=words) as refused:
        grade(tmp_path / "submitted", tmp_path / "grades.csv", **settings)
    assert refused.value.fix and not (tmp_path / "grades.csv").exists()


def test_a_missing_or_empty_submissions_folder_is_refused(tmp_path):
    with pytest.raises(InputError, match="does not exist") as refused:
        grade(tmp_path / "nowhere", tmp_path / "grades.csv")
    assert refused.value.fix
    (tmp_path / "submitted" / "alice").mkdir(parents=True)
    (tmp_path / "submitted" / "loose.ipynb").write_text("{}")  # not in a student's folder
    with pytest.raises(InputError, match=r"holds no <student>/<notebook>\.ipynb") as refused:
        grade(tmp_path / "submitted", tmp_path / "grades.csv")
    assert "alice/03_predict.ipynb" in refused.value.fix
    _notebook(tmp_path / "submitted" / "alice" / NOTEBOOK)
    with pytest.raises(InputError, match="teacher's folder"):
        grade(tmp_path / "submitted", tmp_path / "grades.csv", teacher=tmp_path / "nowhere")
    with pytest.raises(InputError, match="is a folder"):
        grade(tmp_path / "submitted", tmp_path)


def test_nbgraders_assignment_folders_are_read_too(tmp_path):
    teacher = _notebook(tmp_path / "notebooks" / NOTEBOOK)
    _notebook(tmp_path / "submitted" / "alice" / "week1" / NOTEBOOK)
    grade(tmp_path / "submitted", tmp_path / "grades.csv", teacher=teacher.parent)
    assert _rows(tmp_path / "grades.csv")[1:] == [
        ("alice", f"week1/{NOTEBOOK}", "01.1", "passed", ""),
        ("alice", f"week1/{NOTEBOOK}", "01.2", "passed", ""),
    ]
