"""What one server needs for a class: each course notebook run in its own kernel, its peak memory,
CPU seconds and run time measured here; The Littlest JupyterHub's sizing rule applied to a class;
then several kernels run one notebook at once, and their measured memory is set against the rule's
prediction.

    .venv/bin/python benchmarks/classroom.py --students 40 --together 4

The rule (The Littlest JupyterHub's documentation): RAM = the users at once (40-60% of a class)
times each user's peak, plus about 128 MB for the hub itself. A user's peak here is the largest
kernel peak of the course plus the user's Jupyter server, measured as one `jupyter server`
process started here. Cores: a kernel running a cell keeps about CPU seconds / run time cores
busy; when everybody runs the same cell at once, each takes (users at once x that) / cores times
as long.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat
import psutil
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
HUB_MB = 128  # the hub and its proxy, as the rule counts them
MB = 1024 * 1024


class Sampler(threading.Thread):
    """The peak total memory (RSS) and the CPU seconds of this process's children (the kernels
    started here), sampled every ``every`` seconds until stopped."""

    def __init__(self, every: float = 0.05):
        super().__init__(daemon=True)
        self.every, self.peak, self.cpu = every, 0, {}
        self.stopping = threading.Event()

    def run(self) -> None:
        me = psutil.Process()
        while not self.stopping.is_set():
            total = 0
            for child in me.children(recursive=True):
                try:
                    total += child.memory_info().rss
                    times = child.cpu_times()
                    self.cpu[child.pid] = times.user + times.system
                except psutil.NoSuchProcess:
                    continue
            self.peak = max(self.peak, total)
            time.sleep(self.every)

    def stop(self) -> tuple[float, float]:
        """(peak MB, CPU seconds) of every child seen."""
        self.stopping.set()
        self.join()
        return self.peak / MB, sum(self.cpu.values())


def run(path: Path, folder: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=900, kernel_name="python3")
    client.resources = {"metadata": {"path": str(folder)}}
    client.execute()


def measured(paths: list[Path]) -> tuple[float, float, float]:
    """(peak MB, CPU seconds, run seconds) of the notebooks run at once, a kernel each."""
    sampler = Sampler()
    sampler.start()
    started = time.perf_counter()
    threads = [
        threading.Thread(target=run, args=(p, Path(tempfile.mkdtemp(prefix="classroom-"))))
        for p in paths
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - started
    peak, cpu = sampler.stop()
    return peak, cpu, seconds


def server_mb() -> float:
    """A user's Jupyter server with no kernel: its memory a few seconds after it started."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server", "--no-browser", f"--ServerApp.port={port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tempfile.mkdtemp(prefix="classroom-server-"),
    )
    try:
        time.sleep(8)
        if server.poll() is not None:
            raise SystemExit(f"the Jupyter server ended ({server.returncode}): nothing to measure")
        process = psutil.Process(server.pid)
        return sum(p.memory_info().rss for p in [process, *process.children(True)]) / MB
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--together", type=int, default=4, help="kernels run at once to check")
    parser.add_argument("--notebook", default="02_fit.ipynb", help="the one they run at once")
    args = parser.parse_args()
    os.environ.setdefault("MPLBACKEND", "Agg")
    print("| notebook | peak memory | CPU seconds | run time | cores busy |")
    print("|---|---:|---:|---:|---:|")
    peaks = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        peak, cpu, seconds = measured([path])
        peaks[path.name] = peak
        print(
            f"| {path.name} | {peak:.0f} MB | {cpu:.0f} s | {seconds:.0f} s | {cpu / seconds:.1f} |",
            flush=True,
        )
    server = server_mb()
    user = max(peaks.values()) + server
    low, high = round(args.students * 0.4), round(args.students * 0.6)
    print(f"\na user's Jupyter server: {server:.0f} MB; a user's peak: {user:.0f} MB")
    for users in (low, high):
        need = users * user + HUB_MB
        print(f"{users} users at once ({args.students} students): {need / 1024:.1f} GB")
    alone = measured([ROOT / "notebooks" / args.notebook])
    together = measured([ROOT / "notebooks" / args.notebook] * args.together)
    predicted = args.together * alone[0]
    print(
        f"\n{args.notebook}, one kernel: {alone[0]:.0f} MB, {alone[2]:.0f} s; {args.together} at "
        f"once: {together[0]:.0f} MB measured against {predicted:.0f} MB predicted "
        f"({together[0] / predicted:.0%}), {together[2]:.0f} s ({together[2] / alone[2]:.1f} "
        f"times one's time) on {psutil.cpu_count()} CPUs"
    )


if __name__ == "__main__":
    main()
