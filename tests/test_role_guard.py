"""mxlearn/role_guard.py: a role on another host ends when the launcher goes away (its stdin
closes, as when ssh's connection ends), and the launcher learns how the role ended."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from mxlearn import role_guard

GUARD = role_guard.__file__


def _guarded(code: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, GUARD, sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


@pytest.mark.slow
def test_a_role_ends_when_the_launcher_closes_its_guards_input():
    guard = _guarded("import os, time; print(os.getpid(), flush=True); time.sleep(120)")
    role = int(guard.stdout.readline())
    started = time.monotonic()
    guard.stdin.close()  # what ssh's end does to the remote command
    guard.wait(timeout=10)
    assert time.monotonic() - started < role_guard.GRACE_SECONDS + 2
    assert not Path(f"/proc/{role}").exists()  # the role too, not the guard alone
    assert guard.stdout.read().split() == [role_guard.ENDED, "-15"]  # SIGTERM, said
    assert guard.returncode == -15


@pytest.mark.slow
def test_a_guard_ends_as_its_role_did():
    killed = _guarded("import os; os.kill(os.getpid(), 9)")
    assert killed.wait(timeout=30) == -9  # ip netns exec passes the signal on as it is
    assert killed.stdout.read().split() == [role_guard.ENDED, "-9"]  # what ssh would lose
    failed = _guarded("raise SystemExit(3)")
    assert failed.wait(timeout=30) == 3
