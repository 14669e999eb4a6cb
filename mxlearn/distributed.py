"""``kvstore='dist_sync'`` as one job: MXNet's scheduler, servers and workers started on
127.0.0.1, or on the hosts of a hostfile through a remote shell (:mod:`mxlearn.hosts`), each
output line prefixed with its role (and host), all stopped when one fails, naming it (MXNet's
``tools/launch.py`` fails on Python 3.11, advertises the external address, and leaves the others
waiting forever when one dies). Workers: ``$MXLEARN_WORKER_INDEX``.
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

from . import role_guard, rules
from .boundary import public
from .cpu_share import POOL, SIZED, cpu_share
from .errors import N_, InputError, MXLearnError
from .hosts import (
    DEFAULT_REMOTE_SHELL,
    Host,
    NoSuchSchedulerHost,
    RemoteShell,
    ask_hosts,
    job_line,
    read_hostfile,
)
from .language import current_language, say

LOOPBACK = "127.0.0.1"
POLL_SECONDS = 0.1
STOP_GRACE_SECONDS = 3.0  # after SIGTERM, before SIGKILL
FINISH_GRACE_SECONDS = 15.0  # for servers and scheduler to exit once the workers are done
# what a role on another host is given of the launcher's environment (MXNet's ssh launcher
# passes OMP_NUM_THREADS, KMP_AFFINITY, LD_LIBRARY_PATH): the rest is that host's own
PASSED_ON = ("OMP_NUM_THREADS", "KMP_AFFINITY", "LD_LIBRARY_PATH", "PYTHONPATH")
PASSED_ON_PREFIXES = ("MXLEARN_", "MXNET_")


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


class WorkerLeftEarly(DistributedJobError):
    says = N_(
        "The distributed job stopped: {role} ended (status 0) while {running} still ran, "
        "{seconds:g} s later. A dist_sync worker waits at its end for every other worker "
        "(its kvstore's last barrier), so {role} never joined the job: it made no dist_sync "
        "kvstore, or its script ended before training; the others would have waited for it "
        "for ever. Every other process of the job was stopped too.{tail}"
    )
    fix_says = N_(
        "let every worker run the same training: {role}'s script must reach its "
        "fit(kvstore='dist_sync') as the others' do (its output is above)"
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
class Role:
    """One process of a job, as it is started: here, or through a remote shell."""

    name: str  # 'scheduler', 'server 0', 'worker 1', 'worker 1 on lab-pc-2', ...
    kind: str  # the DMLC role: scheduler, server or worker
    argv: list
    env: dict
    guarded: bool = False  # run by role_guard on another host: it listens to its stdin


@dataclass
class JobProcess:
    role: str
    kind: str
    popen: subprocess.Popen
    last_lines: deque = field(default_factory=lambda: deque(maxlen=15))
    reader: threading.Thread | None = None
    reported: int | None = None  # the status a role's guard reported, which ssh would lose

    @property
    def pid(self) -> int:
        return self.popen.pid

    def ended_text(self) -> str:
        """'worker 1 (pid 4242) was killed by SIGKILL': the process, then how it ended."""
        if self.reader is not None and self.popen.poll() is not None:
            self.reader.join(timeout=2)  # its guard's last line, read
        code = self.popen.returncode if self.reported is None else self.reported
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


def job_environment(
    workers: int,
    servers: int,
    port: int,
    base: dict | None = None,
    root: str = LOOPBACK,
    node: str = LOOPBACK,
) -> dict:
    """The environment every process of the job shares (its role is added per process):
    ``root`` is the scheduler's address, ``node`` the address of the process's own host."""
    # ps-lite reads PORT as the node's own port: an exported one puts a server on the
    # scheduler's port. The DMLC_ variables of an earlier job would mix two jobs.
    base = users_environment(os.environ if base is None else base)
    env = {k: v for k, v in base.items() if not k.startswith("DMLC_") and k != "PORT"}
    env.update(
        DMLC_PS_ROOT_URI=root,
        DMLC_PS_ROOT_PORT=str(port),
        DMLC_NODE_HOST=node,  # else ps-lite advertises the machine's external address
        DMLC_NUM_WORKER=str(workers),
        DMLC_NUM_SERVER=str(servers),
        PYTHONUNBUFFERED="1",  # lines reach the launcher as they are printed
        # set_language's choice is the process's, not the environment's: the job inherits it
        MXLEARN_LANG=current_language(),
    )
    # the workers do the arithmetic: share the cores among them unless told otherwise
    env.setdefault(POOL, str(max(1, cpu_share().cpus // workers)))
    return env


def users_environment(environ) -> dict:
    """``environ`` without the pool size importing mxlearn chose for this process (the
    launcher's own): a job's processes get theirs from the job, a value the user set is kept."""
    env = dict(environ)
    if env.get(SIZED) is not None and env.get(POOL) == env.get(SIZED):
        del env[POOL]
    env.pop(SIZED, None)
    return env


def local_roles(script: str, args: list, workers: int, servers: int, python: str) -> list[Role]:
    """The job on this machine: every process on 127.0.0.1."""
    env = job_environment(workers, servers, free_port())
    # servers and scheduler: importing MXNet with their role runs their loop, then exits
    roles = [Role("scheduler", "scheduler", [python, "-c", "import mxlearn"], env)]
    for i in range(servers):
        roles.append(Role(f"server {i}", "server", [python, "-c", "import mxlearn"], env))
    for i in range(workers):
        worker_env = {**env, "MXLEARN_WORKER_INDEX": str(i)}
        roles.append(Role(f"worker {i}", "worker", [python, script, *args], worker_env))
    return [Role(r.name, r.kind, r.argv, {**r.env, "DMLC_ROLE": r.kind}) for r in roles]


def placement(hosts: list[Host], scheduler: Host, workers: int, servers: int) -> list[tuple]:
    """(name, kind, host) of every role: the scheduler on its host, then the servers and the
    workers in turn over the hosts, from the first (several a host when there are more)."""
    kinds = [("server", i) for i in range(servers)] + [("worker", i) for i in range(workers)]
    placed = [("scheduler", "scheduler", scheduler)]
    for n, (kind, i) in enumerate(kinds):
        placed.append((f"{kind} {i}", kind, hosts[n % len(hosts)]))
    return placed


def remote_roles(
    script: str,
    args: list,
    workers: int,
    servers: int,
    python: str,
    hostfile: str,
    scheduler: str | None,
    shell: RemoteShell,
    output,
) -> list[Role]:
    """The job on the hosts of ``hostfile``: each role through the remote shell, in this folder,
    with this Python, told its host's address; every host asked before anything starts."""
    folder = os.getcwd()
    hosts = read_hostfile(hostfile)
    names = [h.name for h in hosts]
    chosen = names[0] if scheduler is None else scheduler
    if chosen not in names:
        raise NoSuchSchedulerHost(host=chosen, hosts=", ".join(names))
    hosts = ask_hosts(hosts, shell, python, folder)
    root = hosts[names.index(chosen)]
    placed = placement(hosts, root, workers, servers)
    _say_placement(placed, hosts, output)
    passed = {
        k: v
        for k, v in users_environment(os.environ).items()
        if k in PASSED_ON or k.startswith(PASSED_ON_PREFIXES)
    }
    # the remote shell's own environment: no DMLC_ of an earlier job (ip netns exec passes it on)
    here = {k: v for k, v in os.environ.items() if not k.startswith("DMLC_") and k != "PORT"}
    roles = []
    for name, kind, host in placed:
        on_host = sum(k == "worker" for _, k, h in placed if h is host)
        base = {"OMP_NUM_THREADS": str(max(1, host.cpus // max(1, on_host))), **passed}
        env = job_environment(workers, servers, root.port, base, root.address, host.address)
        env["DMLC_ROLE"] = kind
        if host.interface:
            env["DMLC_INTERFACE"] = host.interface
        argv = [python, "-c", "import mxlearn"]
        if kind == "worker":
            env["MXLEARN_WORKER_INDEX"] = name.split()[1]
            argv = [python, script, *args]
        guarded = [python, os.path.abspath(role_guard.__file__), *argv]
        command = shell.command(host.name, job_line(folder, env, guarded))
        where = say("{role} on {host}", role=name, host=host.name)
        roles.append(Role(where, kind, command, here, guarded=True))
    return roles


def _say_placement(placed: list[tuple], hosts: list[Host], output) -> None:
    lines = [
        say(
            "mxlearn launch: {count} processes on {hosts} hosts:",
            count=len(placed),
            hosts=len(hosts),
        )
    ]
    for host in hosts:
        runs = ", ".join(name for name, _, h in placed if h is host) or say("nothing")
        lines.append(f"  {host.name} ({host.address}): {runs}")
    print("\n".join(lines), file=output, flush=True)


@dataclass
class Job:
    roles: list[Role]
    timeout: float | None
    output: object
    processes: list[JobProcess] = field(default_factory=list)
    print_lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        for role in self.roles:
            self._spawn(role)

    def _spawn(self, role: Role) -> None:
        popen = subprocess.Popen(
            role.argv,
            env=role.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            # a guard on another host stops its role when this pipe closes
            stdin=subprocess.PIPE if role.guarded else subprocess.DEVNULL,
            text=True,
            errors="replace",
            start_new_session=True,  # its own process group: stopped with all it started
        )
        process = JobProcess(role.name, role.kind, popen)
        process.reader = threading.Thread(target=self._relay, args=(process,), daemon=True)
        process.reader.start()
        self.processes.append(process)

    def _relay(self, process: JobProcess) -> None:
        folder = os.getcwd()
        for line in process.popen.stdout:
            # the guard's last line; after a role's unfinished last line (a progress bar) it
            # is on that line
            shown, ended, status = line.partition(role_guard.ENDED)
            if ended:
                with contextlib.suppress(ValueError, IndexError):  # a line without a status
                    process.reported = int(status.split()[0])
                if not shown:
                    continue
            line = relative_to(shown.rstrip("\n"), folder)
            process.last_lines.append(line)
            with self.print_lock, contextlib.suppress(OSError, ValueError):
                # a closed output (| head, less quit) stops the printing, not the reading: a
                # role whose pipe fills up would wait for ever
                print(f"[{process.role}] {line}", file=self.output, flush=True)

    def watch(self) -> None:
        """Return when every worker succeeded; raise DistributedJobError otherwise."""
        started = time.monotonic()
        workers = [p for p in self.processes if p.kind == "worker"]
        others = [p for p in self.processes if p.kind != "worker"]
        servers_done_at = worker_done_at = None
        while True:
            for process in self.processes:
                if process.popen.poll() not in (None, 0):
                    self._fail(process, process.ended_text())
            if all(p.popen.poll() == 0 for p in workers):
                break
            done = [p for p in workers if p.popen.poll() == 0]
            if done and worker_done_at is None:
                worker_done_at = time.monotonic()
            if worker_done_at and time.monotonic() - worker_done_at > FINISH_GRACE_SECONDS:
                self._left_early(done[0], worker_done_at)
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
        raise kind(what=what, tail=self._tail(culprit))

    def _left_early(self, worker: JobProcess, ended_at: float) -> None:
        running = ", ".join(p.role for p in self.processes if p.popen.poll() is None)
        seconds = round(time.monotonic() - ended_at)
        self.stop()
        tail = self._tail(worker)
        raise WorkerLeftEarly(role=worker.role, running=running, seconds=seconds, tail=tail)

    @staticmethod
    def _tail(culprit: JobProcess | None) -> str:
        if culprit is None or not culprit.last_lines:
            return ""
        return say(" Its last output:\n    {lines}", lines="\n    ".join(culprit.last_lines))

    def stop(self) -> None:
        """Stop every process still running: its guard's stdin closed (for a role on another
        host), SIGTERM to its group, then SIGKILL."""
        for process in self.processes:
            if process.popen.stdin is not None:
                with contextlib.suppress(OSError):
                    process.popen.stdin.close()
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
    hosts=rules.path("launch('train.py', hosts='hostfile')", optional=True),
    scheduler=rules.text(
        "launch('train.py', hosts='hostfile', scheduler='lab-pc-1')", optional=True
    ),
    remote_shell=rules.text(
        "launch('train.py', hosts='hostfile', remote_shell='ssh {host} {command}')"
    ),
)
def launch(
    script: str,
    args=(),
    workers: int = 2,
    servers: int = 1,
    timeout: float | None = None,
    python: str = sys.executable,
    output=None,
    hosts: str | None = None,
    scheduler: str | None = None,
    remote_shell: str = DEFAULT_REMOTE_SHELL,
) -> JobResult:
    """Run ``script`` as ``workers`` workers with ``servers`` servers and a scheduler, all on
    127.0.0.1, or spread over the hosts of the hostfile ``hosts`` (lines ``HOST [ADDRESS]``),
    the scheduler on the first or on ``scheduler``, each started by ``remote_shell`` in this
    folder with this Python; return when every worker has finished, or raise
    DistributedJobError.

    Examples
    --------
    >>> mxlearn.distributed.launch('train.py', ['--epochs', '3'], workers=2)  # doctest: +SKIP
    >>> mxlearn.distributed.launch('train.py', hosts='hostfile', workers=4)  # doctest: +SKIP
    """
    if not os.path.isfile(script):
        raise NoSuchScript(script=script)
    output = output or sys.stdout
    if hosts is None:
        roles = local_roles(script, list(args), workers, servers, python)
    else:
        shell = RemoteShell(remote_shell)
        roles = remote_roles(
            script, list(args), workers, servers, python, hosts, scheduler, shell, output
        )
    job = Job(roles, timeout, output)
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
