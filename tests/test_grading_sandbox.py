"""A grader no submission controls: each kernel in bubblewrap's sandbox, results through a file
it cannot reach, mxlearn and the check cells as the teacher's, an honest classmate graded at the
same time keeping a right grade. Real kernels, real bubblewrap; nothing mocked."""

from __future__ import annotations

import hashlib
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

from mxlearn.commands.grade import PACKAGE, grade
from mxlearn.commands.grading_sandbox import SandboxMissing
from tests.test_grade import NOTEBOOK, TOKEN, _notebook, _nothing_left, _rows, _teacher

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed: .ci/run installs it"
)

FORGE = (  # its own results file and every classmate's: passes for itself, failures for them
    "import glob, json, os\n"
    "ok = [json.dumps({'cell': i, 'status': 'ok', 'sealed': 'x'}) for i in range(9)]\n"
    "bad = [json.dumps({'cell': i, 'status': 'error', 'ename': 'CheckFailed'}) for i in range(9)]\n"
    "for path in glob.glob('../*.jsonl') + glob.glob('/tmp/**/results.jsonl', recursive=True):\n"
    "    mine = os.path.samefile(os.path.dirname(path), '..')\n"
    "    with open(path, 'a') as f:\n"
    "        f.write('\\n'.join(ok if mine else bad) + '\\n')\n"
    "x = 0"
)
PATCH_FILE = "import mxlearn.checks\nopen(mxlearn.checks.__file__, 'a').write('raise SystemExit')\n"
PATCH_MEMORY = "import mxlearn.checks\nmxlearn.checks.learned = lambda *a, **k: print('OK')\nx = 0"
SHADOW = (  # the name the check cells call, rebound to something that says OK to everything
    "import types\n"
    "class _Yes:\n"
    "    def __getattr__(self, name):\n"
    "        return lambda *args, **kwargs: print('OK')\n"
    "mxlearn = types.SimpleNamespace(checks=_Yes())\n"
    "x = 0"
)
COMPILE = (  # Python's compile told to compile the seal as nothing, then a check replaced
    "import builtins, mxlearn.checks\n"
    "_compile = builtins.compile\n"
    "builtins.compile = lambda source, name, *a, **k: _compile(\n"
    "    'pass' if str(name).endswith('grading_seal.py') else source, name, *a, **k)\n"
    "mxlearn.checks.learned = lambda *args, **kwargs: print('OK')\n"
    "x = 0"
)
CLOSURE = (  # the function inside a check's wrappers replaced; __wrapped__ still the original
    "import mxlearn.checks\n"
    "outer = mxlearn.checks.learned\n"
    "inner = outer.__closure__[outer.__code__.co_freevars.index('check')].cell_contents\n"
    "cell = inner.__closure__[inner.__code__.co_freevars.index('function')]\n"
    "cell.cell_contents = lambda *args, **kwargs: print('OK')\n"
    "x = 0"
)
SWALLOW = (
    "get_ipython().transform_cell = lambda cell: 'pass\\n'  # every later cell: nothing\nx = 0"
)
DAEMON = (  # forks twice, leaves the kernel's session, waits, then writes where it can
    "import os, subprocess, sys\n"
    'later = \'import time; time.sleep(4); open(%r, "w").write("out")\' % {escaped!r}\n'
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    subprocess.Popen([sys.executable, '-c', later, '{token}'])\n"
    "    os._exit(0)\n"
    "x = 42"
)
NETWORK = (  # the grader's machine listens on PORT: the sandbox has its own network
    "import socket\n"
    "try:\n"
    "    socket.create_connection(('127.0.0.1', {port}), timeout=3).close()\n"
    "    x = 'connected'\n"
    "except OSError:\n"
    "    x = 42"
)
CHANGED = (
    "the notebook changed mxlearn in memory (mxlearn.checks.learned), so no check could trust it"
)
SHADOWED = "the notebook changed mxlearn in memory (mxlearn), so no check could trust it"
UNSEALED = (
    "check cell {} reported success without running to its end: the notebook changed how the "
    "kernel runs cells or reports errors"
)


def _digest(folder: str) -> str:
    files = sorted(Path(folder).rglob("*.py"))
    return hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()


def _listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.5)
    reached = []

    def accept():
        while server.fileno() != -1:
            try:
                reached.append(server.accept())
            except OSError:
                continue

    threading.Thread(target=accept, daemon=True).start()
    return server, reached


@pytest.mark.slow
def test_no_attack_changes_a_grade_and_the_honest_classmates_stand(temporary):
    tmp_path = temporary
    teacher, submitted = _teacher(tmp_path), tmp_path / "submitted"
    escaped = tmp_path / "escaped.txt"
    server, reached = _listener()
    port = server.getsockname()[1]
    _notebook(submitted / "alice" / NOTEBOOK)
    _notebook(submitted / "bob" / NOTEBOOK)
    _notebook(submitted / "forger" / NOTEBOOK, answer_1=FORGE)
    _notebook(submitted / "patcher" / NOTEBOOK, answer_1=PATCH_FILE + "x = 42")
    _notebook(submitted / "monkey" / NOTEBOOK, answer_1=PATCH_MEMORY)
    _notebook(submitted / "swallower" / NOTEBOOK, answer_1=SWALLOW)
    daemon = DAEMON.format(escaped=str(escaped), token=TOKEN)
    _notebook(submitted / "daemon" / NOTEBOOK, answer_1=daemon)
    _notebook(submitted / "net" / NOTEBOOK, answer_1=NETWORK.format(port=port))
    _notebook(submitted / "shadow" / NOTEBOOK, answer_1=SHADOW)
    _notebook(submitted / "compiler" / NOTEBOOK, answer_1=COMPILE)
    _notebook(submitted / "closure" / NOTEBOOK, answer_1=CLOSURE)
    package = _digest(PACKAGE)

    grading = grade(submitted, tmp_path / "grades.csv", timeout=120, jobs=3, teacher=teacher)
    time.sleep(5)  # the daemon's wait, had it lived

    read_only = "OSError: [Errno 30] Read-only file system: '{}'".format(
        str(Path(PACKAGE) / "checks.py")
    )
    builtins = (
        "the notebook replaced Python's own exec, compile, open, __import__ or globals, so no "
        "check could trust it"
    )
    inner = "the notebook changed mxlearn in memory (mxlearn.checks.learned), so no check could trust it"
    assert _rows(grading.csv)[1:] == [
        ("alice", NOTEBOOK, "01.1", "passed", ""),
        ("alice", NOTEBOOK, "01.2", "passed", ""),
        ("bob", NOTEBOOK, "01.1", "passed", ""),
        ("bob", NOTEBOOK, "01.2", "passed", ""),
        ("closure", NOTEBOOK, "01.1", "tampered", inner),
        ("closure", NOTEBOOK, "01.2", "tampered", inner),
        ("compiler", NOTEBOOK, "01.1", "tampered", builtins),
        ("compiler", NOTEBOOK, "01.2", "tampered", builtins),
        ("daemon", NOTEBOOK, "01.1", "passed", ""),
        ("daemon", NOTEBOOK, "01.2", "passed", ""),
        ("forger", NOTEBOOK, "01.1", "failed", "x should be 42"),
        ("forger", NOTEBOOK, "01.2", "passed", ""),
        ("monkey", NOTEBOOK, "01.1", "tampered", CHANGED),
        ("monkey", NOTEBOOK, "01.2", "tampered", CHANGED),
        ("net", NOTEBOOK, "01.1", "passed", ""),
        ("net", NOTEBOOK, "01.2", "passed", ""),
        ("patcher", NOTEBOOK, "01.1", "error", read_only),
        ("patcher", NOTEBOOK, "01.2", "passed", ""),
        ("shadow", NOTEBOOK, "01.1", "tampered", SHADOWED),
        ("shadow", NOTEBOOK, "01.2", "tampered", SHADOWED),
        ("swallower", NOTEBOOK, "01.1", "tampered", UNSEALED.format(4)),
        ("swallower", NOTEBOOK, "01.2", "tampered", UNSEALED.format(6)),
    ]
    assert _digest(PACKAGE) == package  # the grader's own checks, as before
    assert not escaped.exists() and reached == []
    server.close()
    _nothing_left(tmp_path)


@pytest.mark.slow
def test_without_bubblewrap_the_grader_says_which_protections_are_off(
    temporary, monkeypatch, capsys
):
    tmp_path = temporary
    teacher, submitted = _teacher(tmp_path), tmp_path / "submitted"
    _notebook(submitted / "alice" / NOTEBOOK)
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))  # where no bwrap is
    with pytest.raises(SandboxMissing, match="bubblewrap \\(bwrap\\) is not installed"):
        grade(submitted, tmp_path / "grades.csv", teacher=teacher, sandbox=True)

    grading = grade(submitted, tmp_path / "grades.csv", timeout=60, teacher=teacher)

    assert grading.counts()["passed"] == 2  # graded all the same, and said so
    said = capsys.readouterr().out
    assert "no sandbox (bubblewrap (bwrap) is not installed): these protections are off: " in said
    assert "no network" in said and "nothing outliving its kernel" in said


REMOUNT = (  # as root, bubblewrap would keep its capabilities unless dropped
    "import os, subprocess, mxlearn\n"
    "package = os.path.dirname(mxlearn.__file__)\n"
    "subprocess.run(['mount', '-o', 'remount,rw,bind', package], capture_output=True)\n"
    "x = 'writable' if os.access(os.path.join(package, 'checks.py'), os.W_OK) else 42"
)
FILL_TMP = "with open('/tmp/filler', 'wb') as f:\n    for _ in range(64):\n        f.write(b'x' * 2**24)\nx = 42"


@pytest.mark.slow
def test_the_sandbox_keeps_no_capability_and_its_tmp_counts_as_memory(temporary):
    tmp_path = temporary
    teacher, submitted = _teacher(tmp_path), tmp_path / "submitted"
    _notebook(submitted / "alice" / NOTEBOOK)
    _notebook(submitted / "mounter" / NOTEBOOK, answer_1=REMOUNT)
    _notebook(submitted / "filler" / NOTEBOOK, answer_1=FILL_TMP)  # 1 GB into a tmpfs

    grading = grade(
        submitted, tmp_path / "grades.csv", timeout=90, memory_mb=512, jobs=3, teacher=teacher
    )

    rows = {(r[0], r[2]): r[3:5] for r in _rows(grading.csv)[1:]}
    assert rows["alice", "01.1"] == ("passed", "")
    assert rows["mounter", "01.1"] == ("passed", "")  # x = 42: the package stayed read-only
    # the tmpfs (as large as the limit) may fill before the watchdog looks; the cell then ends
    # over the limit, and is named all the same
    memory = "the memory limit of 512 MB was reached in cell 3; the kernel was stopped"
    assert rows["filler", "01.1"] == ("error", memory)
