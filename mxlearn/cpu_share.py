"""How many CPUs this process may use, and MXNet's thread pool sized to them before MXNet starts.

A process may run on the CPUs of its affinity (``taskset``) and, in a cgroup with a CPU quota
(how Docker, Kubernetes and so JupyterHub's spawners limit a container), on ``quota / period``
CPUs' worth of time. MXNet sizes its OpenMP pool (``OMP_NUM_THREADS``, as MXNet documents it:
the threads of one operator) from the affinity only: a kernel allowed 1 CPU of a 32-core hub
would start 32 threads that the quota then throttles. MXNet reads the variable once, at import,
so :func:`size_thread_pool` runs before MXNet is imported; a value the user set is kept.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

POOL = "OMP_NUM_THREADS"  # MXNet's OpenMP pool (OpenBLAS reads it too)
# The value mxlearn set, which a child process inherits with it: there it is sized anew (the
# child may run on other CPUs), where a value of the user's is kept.
SIZED = "MXLEARN_SIZED_OMP_NUM_THREADS"
WORKERS = "MXNET_CPU_WORKER_NTHREADS"  # operators run at once: MXNet's default of 1 is kept


@dataclass(frozen=True)
class CpuShare:
    affinity: int  # CPUs the process may run on
    quota: float | None  # CPUs' worth of time its cgroup allows (None: no quota)

    @property
    def cpus(self) -> int:
        """Whole CPUs to size a pool for: at least 1, a fraction rounded down (1.5 CPUs of time
        keep 1 thread busy without being throttled)."""
        allowed = self.affinity if self.quota is None else min(self.affinity, self.quota)
        return max(1, math.floor(allowed))


@dataclass(frozen=True)
class PoolSize:
    threads: str  # OMP_NUM_THREADS as MXNet reads it
    share: CpuShare
    user_set: bool  # the user's own value, kept


CHOSEN: PoolSize | None = None  # what size_thread_pool chose at mxlearn's import (the doctor says)


def affinity() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS has no affinity: every CPU
        return os.cpu_count() or 1


def cgroup_quota(proc: str = "/proc/self/cgroup", root: str = "/sys/fs/cgroup") -> float | None:
    """The smallest CPU quota, in CPUs, of this process's cgroup and its parents (cgroup v2's
    ``cpu.max``, v1's ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``); None when none is set."""
    try:
        lines = Path(proc).read_text().splitlines()
    except OSError:  # not Linux, or no /proc
        return None
    quotas = []
    for line in lines:
        fields = line.split(":", 2)
        if len(fields) != 3:  # not a cgroup line: nothing it could limit
            continue
        _, controllers, path = fields
        if controllers == "":  # v2: one hierarchy
            quotas += _quotas(Path(root), path, _v2_quota)
        elif "cpu" in controllers.split(","):  # v1: the cpu controller's own hierarchy
            for mount in (Path(root) / "cpu", Path(root) / "cpu,cpuacct"):
                quotas += _quotas(mount, path, _v1_quota)
    return min(quotas) if quotas else None


def _quotas(mount: Path, path: str, read) -> list[float]:
    """The quotas of the group at ``path`` under ``mount`` and of its parents up to the mount.
    In a container the mount is often the container's own group, and ``path`` (the host's
    name for it) is not found below it: the mount's own quota counts then."""
    if not mount.is_dir():
        return []
    parts = [p for p in path.strip("/").split("/") if p]
    folders = [mount.joinpath(*parts[:depth]) for depth in range(len(parts), -1, -1)]
    return [q for q in (read(f) for f in folders if f.is_dir()) if q is not None]


def _v2_quota(folder: Path) -> float | None:
    try:
        quota, period = (folder / "cpu.max").read_text().split()
    except (OSError, ValueError):
        return None
    return None if quota == "max" else int(quota) / int(period)


def _v1_quota(folder: Path) -> float | None:
    try:
        quota = int((folder / "cpu.cfs_quota_us").read_text())
        period = int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return None if quota <= 0 or period <= 0 else quota / period


def cpu_share() -> CpuShare:
    return CpuShare(affinity(), cgroup_quota())


def size_thread_pool(environ=os.environ) -> PoolSize:
    """Set ``OMP_NUM_THREADS`` to the CPUs this process may use, unless the user set it."""
    global CHOSEN
    share = cpu_share()
    user_set = bool(environ.get(POOL)) and environ.get(POOL) != environ.get(SIZED)
    if not user_set:
        environ[POOL] = environ[SIZED] = str(share.cpus)
    CHOSEN = PoolSize(environ[POOL], share, user_set)
    return CHOSEN
