"""One notebook's run for ``python -m mxlearn grade``: a process of its own, and its control.

The grader starts this file by path (``python -P grading_run.py NOTEBOOK FOLDER RESULTS
MEMORY_MB SETTINGS``: neither mxlearn nor MXNet is imported here) in a session of its own. It
runs each code cell in a fresh ``python3`` kernel, carrying on after errors, and appends one
JSON line per event to RESULTS, so that what ran is known even when the process is killed:

    {"kernel": PID, "pgid": PGID}   {"cell": I, "status": "ok" | "error" | "dead", ...}
    {"memory": MB, "cell": I}       {"cell": I, "sealed": NONCE}    {"done": true}
    {"cell": I, "shown_error": ENAME}  (an error the cell showed, even if its reply says ok)

SETTINGS (JSON, beside RESULTS, out of the kernel's sight): ``sandbox``, the command the kernel
starts under (bubblewrap's, from grading_sandbox) or null; ``sockets``, the folder of the
kernel's Unix sockets (a sandboxed kernel has no network); ``seal``, the nonce a check cell
shows when it ran to its end (grade_exercises.Seal).

Outputs are dropped as they arrive (a cell printing megabytes does not pile up in the grader).
A watchdog (psutil) kills the kernel's group past the memory limit; without psutil the kernel
gets RLIMIT_AS, much coarser: it counts reserved memory too (about 1 GB for a kernel that trained
with MXNet on 1 thread, 3.8 GB on 16). This file imports nothing that may be missing, so the
command line can refuse missing packages before it imports the rest of the grader.
"""

from __future__ import annotations

import collections
import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

DEFAULT_TIMEOUT = 600.0  # seconds per notebook: the course notebooks take 4-17 s on 2 CPU cores
DEFAULT_MEMORY_MB = 4096
# what a run imports (nbformat, nbclient) and the kernel it starts (ipykernel)
NEEDED = ("nbformat", "nbclient", "ipykernel")
KEPT_CHARS = 2000  # of an error's value
POLL_SECONDS = 0.1  # the memory watchdog's period
STDERR_KEPT = 16_000  # the last characters of the kernel's stderr, for a run that failed
SEAL_TYPE = "application/x-mxlearn-seal"  # grade_exercises.SEAL_TYPE (nothing imported here)


# ---------------------------------------------------------------------------------------------
# The grader's side: start a run, wait for it with a time limit, leave no process behind.


def refuse_missing_packages() -> None:
    """Refuse to grade where no run can start (every notebook would be an error row)."""
    missing = [name for name in NEEDED if importlib.util.find_spec(name) is None]
    if not missing:
        return
    # declared only here: run as a script, this file imports nothing of mxlearn
    from ..errors import N_, SetupError

    class PackagesMissing(SetupError):
        says = N_(
            "mxlearn grade needs {packages} to run the notebooks, and this Python ({python}) "
            "cannot import them."
        )

    pip = f"{sys.executable} -m pip install {' '.join(missing)}"
    raise PackagesMissing(packages=", ".join(missing), python=sys.executable, fix=pip)


@dataclass(eq=False)  # each run is itself: kept in a set of the runs going on
class Run:
    process: subprocess.Popen
    results: str
    started: float
    stderr_tail: collections.deque
    reader: threading.Thread


def start(notebook: str, folder: str, results: str, settings: dict, limits: tuple) -> Run:
    """Run ``notebook`` in ``folder``; ``limits``: (memory in MB, the kernel's environment)."""
    memory_mb, env = limits
    with open(os.path.join(os.path.dirname(results), "settings.json"), "w") as f:
        json.dump(settings, f)
    command = [sys.executable, "-P", os.path.abspath(__file__), notebook, folder, results]
    process = subprocess.Popen(
        [*command, str(memory_mb), f.name],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=folder,
        start_new_session=True,
    )
    tail: collections.deque = collections.deque()
    reader = threading.Thread(target=_keep_tail, args=(process.stderr, tail), daemon=True)
    reader.start()
    return Run(process, results, time.monotonic(), tail, reader)


def _keep_tail(stream, tail: collections.deque) -> None:
    """Read the run's stderr (its own and the kernel's) to the end, keeping only its tail."""
    kept = 0
    with stream:
        for chunk in iter(lambda: stream.read1(4096), b""):
            tail.append(chunk)
            kept += len(chunk)
            while kept > STDERR_KEPT and len(tail) > 1:
                kept -= len(tail.popleft())


def finish(run: Run, timeout: float) -> tuple[bool, str]:
    """Wait until the run ends or ``timeout`` seconds after its start; then stop every process
    it started. (timed out?, the tail of its stderr)."""
    timed_out = False
    try:
        run.process.wait(timeout=max(0.0, timeout - (time.monotonic() - run.started)))
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        stop_all(run)
    run.reader.join(timeout=5)
    return timed_out, b"".join(run.stderr_tail).decode("utf-8", "replace")


def stop_all(run: Run) -> None:
    """Kill the run's process group, the kernel's group and every process below them."""
    below = _descendants(run.process.pid)
    groups = {run.process.pid} | {e["pgid"] for e in read_events(run.results) if "pgid" in e}
    for group in groups:
        _kill_group(group)
    for pid in below:
        _kill_group(pid, group=False)
    run.process.wait()


def _kill_group(pid: int, group: bool = True) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        (os.killpg if group else os.kill)(pid, signal.SIGKILL)


def _descendants(pid: int) -> list[int]:
    try:
        import psutil
    except ImportError:
        return _descendants_from_proc(pid)
    try:
        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def _descendants_from_proc(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
        try:
            with open(f"/proc/{name}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def read_events(path: str) -> list[dict]:
    """The events a run wrote (a line cut short by a kill is left out)."""
    events = []
    with contextlib.suppress(OSError), open(path, encoding="utf-8") as f:
        for line in f:
            with contextlib.suppress(ValueError):
                events.append(json.loads(line))
    return events


# ---------------------------------------------------------------------------------------------
# The run itself (this file as a script): every code cell, one after another, in a fresh kernel.


class _Events:
    def __init__(self, path: str):
        self.file = open(path, "a", encoding="utf-8")
        self.lock = threading.Lock()

    def write(self, **event) -> None:
        with self.lock:
            self.file.write(json.dumps(event, ensure_ascii=False) + "\n")
            self.file.flush()


def _client_class(settings: dict, events: _Events):
    from jupyter_client import AsyncKernelManager
    from nbclient import NotebookClient

    class SandboxedKernelManager(AsyncKernelManager):
        """A kernel started under the sandbox's command, talking over Unix sockets."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.transport, self.ip = "ipc", os.path.join(settings["sockets"], "kernel")
            self.connection_file = os.path.join(settings["sockets"], "kernel.json")

        def format_kernel_cmd(self, extra_arguments=None):
            return [*settings["sandbox"], *super().format_kernel_cmd(extra_arguments)]

    class OutputlessClient(NotebookClient):
        """Drops every output and widget message: the grade needs only the errors, and the
        seal a check cell shows at its end."""

        if settings.get("sandbox"):
            kernel_manager_class = SandboxedKernelManager

        def output(self, outs, msg, display_id, cell_index):
            shown = msg["content"].get("data", {}) if msg["msg_type"] == "display_data" else {}
            if settings.get("seal") and shown.get(SEAL_TYPE) == settings["seal"]:
                events.write(cell=cell_index, sealed=settings["seal"])
            if msg["msg_type"] == "error":  # shown, whatever the cell's reply says after it
                events.write(cell=cell_index, shown_error=msg["content"].get("ename", ""))
            return None

        def handle_comm_msg(self, outs, msg, cell_index):
            return None

    return OutputlessClient


def run(notebook_path: str, folder: str, results: str, memory_mb: int, settings: dict) -> None:
    import nbformat
    from nbclient.exceptions import CellExecutionError, DeadKernelError

    notebook = nbformat.read(notebook_path, as_version=4)
    events = _Events(results)
    client = _client_class(settings, events)(
        notebook, timeout=None, kernel_name="python3", resources={"metadata": {"path": folder}}
    )
    with client.setup_kernel():
        kernel = client.km.provisioner
        events.write(kernel=kernel.pid, pgid=kernel.pgid or kernel.pid)
        memory = _MemoryWatch(kernel.pid, memory_mb, events)
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type != "code":
                continue
            memory.starting(index)
            try:
                client.execute_cell(cell, index)
            except CellExecutionError as failed:
                value = str(failed.evalue)[:KEPT_CHARS]
                events.write(cell=index, status="error", ename=failed.ename, evalue=value)
            except DeadKernelError:
                events.write(cell=index, status="dead")
                break
            else:
                events.write(cell=index, status="ok")
            if memory.stopped_over():
                break
        else:
            events.write(done=True)
        leftovers = _descendants(kernel.pid)
    for pid in leftovers:  # what the notebook started and left running
        _kill_group(pid, group=False)


class _MemoryWatch:
    """Kills the kernel's group past the memory limit. A thread polls; each cell's end is
    measured once more before the next cell starts, so that a cell ending over the limit between
    two polls (a busy machine) is the one named, not the cell after it."""

    def __init__(self, kernel_pid: int, memory_mb: int, events: _Events):
        self.memory_mb, self.events, self.cell = memory_mb, events, -1
        self.lock, self.stopped, self.kernel = threading.Lock(), False, None
        try:
            import psutil
        except ImportError:
            return  # the address-space limit set before the kernel started stands instead
        self.gone = psutil.Error
        try:
            self.kernel = psutil.Process(kernel_pid)
        except psutil.Error:
            return  # gone already: its first cell finds it dead
        threading.Thread(target=self._poll, daemon=True).start()

    def starting(self, cell: int) -> None:
        """The cell the kernel runs next. Set under the lock: a measurement taken before it
        started is named after the cell before."""
        with self.lock:
            self.cell = cell

    def _poll(self) -> None:
        with contextlib.suppress(self.gone):  # the kernel is gone
            while not self._stop_if_over():
                time.sleep(POLL_SECONDS)

    def stopped_over(self) -> bool:
        """At a cell's end: whether the kernel is (now, or was already) stopped for its memory."""
        if self.kernel is None:
            return False
        with contextlib.suppress(self.gone):
            return self._stop_if_over()
        return self.stopped

    def _stop_if_over(self) -> bool:
        with self.lock:
            if not self.stopped and self._used() > self.memory_mb * 2**20:
                self.events.write(memory=self.memory_mb, cell=self.cell)
                _kill_group(self.kernel.pid)
                self.stopped = True
            return self.stopped

    def _used(self) -> int:
        below = self.kernel.children(recursive=True)
        used = self.kernel.memory_info().rss + _tmpfs_used(below)
        return used + sum(_rss(child) for child in below)


def _tmpfs_used(processes) -> int:
    """What a sandboxed kernel wrote to its /tmp, a tmpfs of its own: memory no RSS counts.
    Read from outside through a sandboxed process's root (0 for a kernel without sandbox,
    whose /tmp is the grader's)."""
    try:
        ours = os.stat("/tmp").st_dev
    except OSError:
        return 0
    for process in processes:
        path = f"/proc/{process.pid}/root/tmp"
        try:
            if os.stat(path).st_dev != ours:
                stats = os.statvfs(path)
                return (stats.f_blocks - stats.f_bfree) * stats.f_frsize
        except OSError:
            continue
    return 0


def _rss(process) -> int:
    try:
        return process.memory_info().rss
    except Exception:  # it ended between the listing and the reading
        return 0


def main(argv: list[str]) -> None:
    notebook, folder, results, memory_mb = argv[0], argv[1], argv[2], int(argv[3])
    with open(argv[4], encoding="utf-8") as f:
        settings = json.load(f)
    if importlib.util.find_spec("psutil") is None:  # with it, the watchdog measures the use
        import resource

        limit = memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    run(notebook, folder, results, memory_mb, settings)


if __name__ == "__main__":
    main(sys.argv[1:])
