"""``kvstore='dist_sync'`` on this machine: MXNet's scheduler, servers and workers started
on 127.0.0.1 as one job (MXNet's ``tools/launch.py`` fails on Python 3.11, advertises the
external address, and leaves the others waiting forever when one dies), each output line
prefixed with its role, all stopped when one fails, naming it. Workers: ``$MXLEARN_WORKER_INDEX``.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from . import rules
from .boundary import public
from .errors import N_, InputError, MXLearnError
from .language import current_language, say

LOOPBACK = "127.0.0.1"
POLL_SECONDS = 0.1
STOP_GRACE_SECONDS = 3.0  # after SIGTERM, before SIGKILL
FINISH_GRACE_SECONDS = 15.0  # for servers and scheduler to exit once the workers are done


class DistributedJobError(MXLearnError, RuntimeError):
    """A process of a distributed job failed, or the job ran past its time limit."""

    says = N_(
        "The distributed job stopped: {what}. Every other process of the job was "
        "stopped too (in MXNet's parameter server the others would wait for it "
        "forever).{tail}"
    )
    fix_says = N_(
        "read the failing process's output above (lines prefixed with its role); a "
        "worker that was killed (SIGKILL) often ran out of memory"
    )


class JobTimedOut(DistributedJobError):
    fix_says = N_(
        "give the job more time (launch(..., timeout=...), or --timeout on the "
        "command line), or find in the output above the step each process "
        "stopped at"
    )


class NoSuchScript(InputError):
    says = N_("launch(): there is no script '{script}'.")
    fix_code = "python -m mxlearn launch -n 2 path/to/train.py"


def relative_to(line: str, folder: str) -> str:
    """``line`` with the paths in ``folder`` relative, as the job's script was given them
    (tracebacks and warnings name a script by its absolute path); only where a path begins,
    and never for the root folder, whose '/' begins every path and URL."""
    if folder == os.sep:
        return line
    return re.sub(r"(?<![\w/.~:-])" + re.escape(folder.rstrip(os.sep) + os.sep), "", line)


@dataclass
class JobProcess:
    role: str  # 'scheduler', 'server 0', 'worker 1', ...
    kind: str  # the DMLC role: scheduler, server or worker
    popen: subprocess.Popen
    last_lines: deque = field(default_factory=lambda: deque(maxlen=15))
    reader: threading.Thread | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid

    def ended_text(self) -> str:
        """'worker 1 (pid 4242) was killed by SIGKILL': the process, then how it ended."""
        code = self.popen.returncode
        if code is None:
            ended = say("is still running")
        elif code < 0:
            name = say("signal {number}", number=-code)
            with contextlib.suppress(ValueError):
                name = signal.Signals(-code).name
            ended = say("was killed by {signal}", signal=name)
        else:
            ended = say("exited with status {code}", code=code)
        return say("{role} (pid {pid}) {ended}", role=self.role, pid=self.pid, ended=ended)


@dataclass
class JobResult:
    seconds: float
    pids: list[int]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


def job_environment(workers: int, servers: int, port: int, base: dict | None = None) -> dict:
    """The environment every process of the job shares (its role is added per process)."""
    # ps-lite reads PORT as the node's own port: an exported one puts a server on the
    # scheduler's port. The DMLC_ variables of an earlier job would mix two jobs.
    base = os.environ if base is None else base
    env = {k: v for k, v in base.items() if not k.startswith("DMLC_") and k != "PORT"}
    env.update(
        DMLC_PS_ROOT_URI=LOOPBACK,
        DMLC_PS_ROOT_PORT=str(port),
        DMLC_NODE_HOST=LOOPBACK,  # else ps-lite advertises the machine's external address
        DMLC_NUM_WORKER=str(workers),
        DMLC_NUM_SERVER=str(servers),
        PYTHONUNBUFFERED="1",  # lines reach the launcher as they are printed
        # set_language's choice is the process's, not the environment's: the job inherits it
        MXLEARN_LANG=current_language(),
    )
    # the workers do the arithmetic: share the cores among them unless told otherwise
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // workers)))
    return env


@dataclass
class Job:
    script: str
    args: list
    workers: int
    servers: int
    timeout: float | None
    python: str
    output: object
    processes: list[JobProcess] = field(default_factory=list)
    print_lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        env = job_environment(self.workers, self.servers, free_port())
        # servers and scheduler: importing MXNet with their role runs their loop, then exits
        server_code = ["-c", "import mxlearn"]
        self._spawn("scheduler", "scheduler", server_code, env)
        for i in range(self.servers):
            self._spawn(f"server {i}", "server", server_code, env)
        for i in range(self.workers):
            argv, index = [self.script, *self.args], str(i)
            self._spawn(f"worker {i}", "worker", argv, env, MXLEARN_WORKER_INDEX=index)

    def _spawn(self, role: str, kind: str, argv, env: dict, **extra) -> None:
        popen = subprocess.Popen(
            [self.python, *argv],
            env={**env, "DMLC_ROLE": kind, **extra},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            start_new_session=True,  # its own process group: stopped with all it started
        )
        process = JobProcess(role, kind, popen)
        process.reader = threading.Thread(target=self._relay, args=(process,), daemon=True)
        process.reader.start()
        self.processes.append(process)

    def _relay(self, process: JobProcess) -> None:
        folder = os.getcwd()
        for line in process.popen.stdout:
            line = relative_to(line.rstrip("\n"), folder)
            process.last_lines.append(line)
            with self.print_lock:
                print(f"[{process.role}] {line}", file=self.output, flush=True)

    def watch(self) -> None:
        """Return when every worker succeeded; raise DistributedJobError otherwise."""
        started = time.monotonic()
        workers = [p for p in self.processes if p.kind == "worker"]
        others = [p for p in self.processes if p.kind != "worker"]
        servers_done_at = None
        while True:
            for process in self.processes:
                if process.popen.poll() not in (None, 0):
                    self._fail(process, process.ended_text())
            if all(p.popen.poll() == 0 for p in workers):
                break
            # Servers and the scheduler end (status 0) once every worker has said goodbye,
            # sometimes a moment before the workers themselves have exited.
            if servers_done_at is None and all(p.popen.poll() == 0 for p in others):
                servers_done_at = time.monotonic()
            late = servers_done_at and time.monotonic() - servers_done_at > FINISH_GRACE_SECONDS
            running = [p for p in workers if p.popen.poll() is None]
            if late and running:
                what = say(
                    "{role} (pid {pid}) was still running after the servers and the "
                    "scheduler had ended",
                    role=running[0].role,
                    pid=running[0].pid,
                )
                self._fail(running[0], what)
            if self.timeout is not None and time.monotonic() - started > self.timeout:
                running = ", ".join(p.role for p in self.processes if p.popen.poll() is None)
                what = say(
                    "the time limit of {seconds:g} s passed; still running: {running}",
                    seconds=self.timeout,
                    running=running,
                )
                self._fail(None, what, JobTimedOut)
            time.sleep(POLL_SECONDS)
        deadline = time.monotonic() + FINISH_GRACE_SECONDS
        while time.monotonic() < deadline and any(p.popen.poll() is None for p in others):
            time.sleep(POLL_SECONDS)
        self.stop()

    def _fail(self, culprit: JobProcess | None, what: str, kind=DistributedJobError) -> None:
        self.stop()
        tail = ""
        if culprit is not None and culprit.last_lines:
            tail = say(" Its last output:\n    {lines}", lines="\n    ".join(culprit.last_lines))
        raise kind(what=what, tail=tail)

    def stop(self) -> None:
        """Stop every process still running: SIGTERM to its group, then SIGKILL."""
        self._signal_all(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        while time.monotonic() < deadline and any(p.popen.poll() is None for p in self.processes):
            time.sleep(POLL_SECONDS)
        self._signal_all(signal.SIGKILL)
        for process in self.processes:
            process.popen.wait()
            if process.reader is not None:
                process.reader.join(timeout=5)

    def _signal_all(self, sig) -> None:
        for process in self.processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)  # the group: whatever the process started, too


@public(
    "mxlearn.distributed.launch()",
    script=rules.path("launch('train.py')"),
    workers=rules.whole(1, "launch('train.py', workers=2)"),
    servers=rules.whole(1, "launch('train.py', servers=1)"),
    timeout=rules.number("launch('train.py', timeout=600)", above=0, optional=True),
)
def launch(
    script: str,
    args=(),
    workers: int = 2,
    servers: int = 1,
    timeout: float | None = None,
    python: str = sys.executable,
    output=None,
) -> JobResult:
    """Run ``script`` as ``workers`` workers with ``servers`` servers and a scheduler, all on
    127.0.0.1; return when every worker has finished, or raise DistributedJobError.

    Examples
    --------
    >>> mxlearn.distributed.launch('train.py', ['--epochs', '3'], workers=2)  # doctest: +SKIP
    """
    if not os.path.isfile(script):
        raise NoSuchScript(script=script)
    job = Job(script, list(args), workers, servers, timeout, python, output or sys.stdout)
    started = time.monotonic()
    try:
        job.start()
        job.watch()
    except BaseException as error:  # KeyboardInterrupt included: never leave processes behind
        job.stop()
        if isinstance(error, MXLearnError):
            error.pids = [p.pid for p in job.processes]
        raise
    return JobResult(time.monotonic() - started, [p.pid for p in job.processes])
