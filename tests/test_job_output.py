"""A job's output as the launcher relays it: the guard's status line found after a role's
unfinished last line, and a closed output (| head) that stops the printing but not the reading."""

from __future__ import annotations

import io
import os
import sys

import pytest

from mxlearn import role_guard
from mxlearn.distributed import Job, Role


def _run(code: str, output) -> Job:
    job = Job(
        [Role("worker 0", "worker", [sys.executable, "-c", code], dict(os.environ))], None, output
    )
    job.start()
    (process,) = job.processes
    process.popen.wait(timeout=30)
    process.reader.join(timeout=30)
    assert not process.reader.is_alive()
    return job


def test_the_guards_status_after_an_unfinished_line_is_read_and_the_line_kept():
    code = f"print('37/100', end=''); print({role_guard.ENDED!r}, -9)"
    output = io.StringIO()
    (process,) = _run(code, output).processes
    assert process.reported == -9
    assert list(process.last_lines) == ["37/100"]
    assert output.getvalue() == "[worker 0] 37/100\n"


class _Closed(io.StringIO):
    """An output whose reader has gone: `| head` after its lines, a quit `less`."""

    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_output_does_not_stop_the_roles():
    # 400 KB: several times what a pipe holds, so an unread role would wait for ever
    code = "for i in range(20000): print('line', i, 'x' * 12)"
    (process,) = _run(code, _Closed()).processes
    assert process.popen.returncode == 0
    assert process.last_lines[-1].startswith("line 19999")


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
def test_the_guards_marker_without_a_status_does_not_stop_the_relay():
    output = io.StringIO()
    (process,) = _run(f"print({role_guard.ENDED!r}); print('after')", output).processes
    assert process.reported is None
    assert output.getvalue() == "[worker 0] after\n"
