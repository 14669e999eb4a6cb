"""The guard of one role of a job on another host: run by its path through the remote shell
(``python .../mxlearn/role_guard.py python train.py ...``), it starts the role and ends it when
the launcher goes away.

Killing ``ssh`` on the launcher's machine does not stop what it started on the other host
(MXNet's own ssh launcher leaves its roles there); the guard does: when its standard input
closes (the launcher stopped the job, died, or lost the connection) it stops its process group,
which holds the role and whatever the role started. Its last line tells the launcher how the
role ended (``ssh`` reports a remote death by signal only as status 255), and it ends the same
way, so a remote shell that execs (``ip netns exec``) passes the exact status on.

Standard library only: it runs with the role's ``DMLC_ROLE`` set, and importing MXNet there
would start a server.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

ENDED = "@mxlearn-role-ended"  # the last line: "@mxlearn-role-ended -9"
GRACE_SECONDS = 2.0  # after SIGTERM, before SIGKILL; less than the launcher's own grace


def _watch_input() -> None:
    """On the end of stdin: SIGTERM to the group (the guard outlives it to report the role's
    end), then SIGKILL to whatever of the group is left."""
    while os.read(0, 4096):
        pass
    os.killpg(0, signal.SIGTERM)
    time.sleep(GRACE_SECONDS)
    os.killpg(0, signal.SIGKILL)


def main(argv: list[str]) -> None:
    with contextlib.suppress(OSError):  # already its group's leader when the shell exec'd it
        os.setsid()
    # a handler, not SIG_IGN: the role starts with SIGTERM's default again (exec resets it)
    signal.signal(signal.SIGTERM, lambda number, frame: None)
    role = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
    threading.Thread(target=_watch_input, daemon=True).start()
    code = role.wait()
    print(ENDED, code, flush=True)
    if code < 0:
        with contextlib.suppress(OSError, ValueError):  # SIGKILL's cannot be set, nor need be
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
