"""mxlearn sizes MXNet's OpenMP pool, before MXNet starts, from the CPUs the process may use:
its affinity (taskset) and its cgroup's CPU quota (how container spawners limit a kernel), which
MXNet itself does not read; a value the user set wins."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from mxlearn.cpu_share import POOL, SIZED, CpuShare, cgroup_quota

CGROUP_V1_CPU = Path("/sys/fs/cgroup/cpu")
# Threads of the process after an operator ran: MXNet's engine threads plus the OpenMP team the
# operator used, so two runs of the same code differ by the difference of their pools.
THREADS = """
import re, sys
from mxlearn import mx
a = mx.nd.ones((400, 400)); mx.nd.dot(a, a).wait_to_read()
print(sys.modules['os'].environ['OMP_NUM_THREADS'],
      re.search(r'Threads:\\s+(\\d+)', open('/proc/self/status').read()).group(1))
"""


def _write(folder: Path, **files) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name.replace("_", ".", 1)).write_text(text)
    return folder


@pytest.mark.parametrize(
    "affinity, quota, cpus", [(32, 0.5, 1), (32, 1.5, 1), (32, None, 32), (2, 4.0, 2), (1, None, 1)]
)
def test_a_pool_has_the_whole_cpus_the_affinity_and_the_quota_allow(affinity, quota, cpus):
    assert CpuShare(affinity, quota).cpus == cpus


def test_cgroup_v1_quotas_count_the_smallest_of_the_group_and_its_parents(tmp_path):
    proc = tmp_path / "cgroup"
    proc.write_text("4:memory:/x\n2:cpu,cpuacct:/hub/alice\n")
    mount = tmp_path / "fs" / "cpu,cpuacct"
    _write(mount, cpu_cfs_quota_us="-1", cpu_cfs_period_us="100000")
    _write(mount / "hub", cpu_cfs_quota_us="100000", cpu_cfs_period_us="100000")
    _write(mount / "hub" / "alice", cpu_cfs_quota_us="200000", cpu_cfs_period_us="100000")
    assert cgroup_quota(str(proc), str(tmp_path / "fs")) == 1.0
    # in a container, the mount is the container's own group and the host's path is not below
    proc.write_text("2:cpu,cpuacct:/docker/0123abcd\n")
    (mount / "cpu.cfs_quota_us").write_text("50000")
    assert cgroup_quota(str(proc), str(tmp_path / "fs")) == 0.5


def test_cgroup_v2_reads_cpu_max(tmp_path):
    proc = tmp_path / "cgroup"
    proc.write_text("0::/user.slice/kernel\n")
    root = _write(tmp_path / "fs", cpu_max="max 100000")
    _write(root / "user.slice", cpu_max="max 100000")
    kernel = _write(root / "user.slice" / "kernel", cpu_max="max 100000")
    assert cgroup_quota(str(proc), str(root)) is None
    (kernel / "cpu.max").write_text("150000 100000\n")
    assert cgroup_quota(str(proc), str(root)) == 1.5
    assert cgroup_quota(str(tmp_path / "no-such-file"), str(root)) is None  # not Linux
    proc.write_text("\nnot a cgroup line\n0::/user.slice/kernel\n")  # read past, not fatal
    assert cgroup_quota(str(proc), str(root)) == 1.5


def _run(code: str, *, prefix=(), **env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in (POOL, SIZED)}
    done = subprocess.run(
        [*prefix, sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**clean, **env},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done


def _pool_and_threads(prefix=(), **env) -> tuple[int, int]:
    pool, threads = _run(THREADS, prefix=prefix, **env).stdout.split()
    return int(pool), int(threads)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("taskset") is None, reason="no taskset (util-linux)")
def test_a_process_pinned_to_one_cpu_gets_a_pool_of_one():
    assert _pool_and_threads(prefix=("taskset", "-c", "0"))[0] == 1


@pytest.fixture
def half_a_cpu():
    """A cgroup v1 group whose quota is half a CPU; a command started by ``sh -c`` joins it."""
    if os.geteuid() != 0 or not os.access(CGROUP_V1_CPU, os.W_OK):
        pytest.skip("needs root and a writable cgroup v1 cpu controller")
    group = CGROUP_V1_CPU / f"mxlearn-test-{uuid.uuid4().hex[:8]}"
    group.mkdir()
    (group / "cpu.cfs_period_us").write_text("100000")
    (group / "cpu.cfs_quota_us").write_text("50000")
    yield ("sh", "-c", f'echo $$ > {group}/cgroup.procs && exec "$0" "$@"')
    group.rmdir()  # its processes have ended


@pytest.mark.slow
def test_a_kernel_under_half_a_cpu_of_quota_gets_a_pool_of_one(half_a_cpu):
    sized = _pool_and_threads(prefix=half_a_cpu)
    one = _pool_and_threads(prefix=half_a_cpu, OMP_NUM_THREADS="1")
    two = _pool_and_threads(prefix=half_a_cpu, OMP_NUM_THREADS="2")
    assert sized == one and sized[0] == 1  # the same threads as a pool of 1 asked for
    # the user's value wins: MXNet (and NumPy's OpenBLAS, loaded after) start more threads
    assert two[0] == 2 and two[1] > sized[1]
    # MXNet by itself does not see the quota: without mxlearn it starts a pool for every CPU
    plain = THREADS.replace("from mxlearn import mx", "import mxnet as mx").replace(
        "sys.modules['os'].environ['OMP_NUM_THREADS']", "len(__import__('os').sched_getaffinity(0))"
    )
    cpus, threads = map(int, _run(plain, prefix=half_a_cpu).stdout.split())
    if cpus > 1:
        assert threads > int(_run(plain, prefix=half_a_cpu, OMP_NUM_THREADS="1").stdout.split()[1])
    doctor = _run("from mxlearn.__main__ import main; main(['doctor'])", prefix=half_a_cpu).stdout
    assert re.search(r"OMP_NUM_THREADS\s+1 \(the cgroup's CPU quota allows 0.5 CPUs", doctor)


@pytest.mark.slow
def test_a_child_sizes_its_pool_anew_but_keeps_a_users_value():
    # mxlearn's own value, inherited by a child pinned to one CPU, is sized again there
    inherited = {POOL: "2", SIZED: "2"}
    assert _pool_and_threads(prefix=("taskset", "-c", "0"), **inherited)[0] == 1
    assert _pool_and_threads(prefix=("taskset", "-c", "0"), OMP_NUM_THREADS="3")[0] == 3
