"""mxlearn.distributed.launch(hosts=...): MXNet's dist_sync across three hosts, each a network
namespace of this machine (``ip netns``, a veth pair on a bridge, its own 10.x address, nothing
outside the machine), every role started through ``ip netns exec {host}`` as it would be through
ssh. The workers' weights agree with each other and with one process; the traffic crossed the
namespaces; a worker killed in one namespace stops the job on every host; a host that cannot
run the job is refused before anything starts.

Outside CI a machine where namespaces cannot be made (not root, no ``ip``) skips these tests
with the reason; in CI (CI=true) that is a failure.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from mxlearn import mx
from mxlearn.distributed import DistributedJobError, launch
from mxlearn.hosts import HostNotReady

pytestmark = pytest.mark.slow
SHELL = "ip netns exec {host}"
SUBNET = "10.77.0"  # each run has its own bridge: the same addresses never meet

TRAIN = textwrap.dedent(
    """
    import json, os, socket, struct, sys
    import mxlearn
    from mxlearn import mx

    out, kvstore, epochs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    mxlearn.seed(0)
    X, y = mxlearn.datasets.synthetic_classification(num_samples=512, num_features=16,
                                                     num_classes=4, seed=1)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=16))

    def started(param):
        if param.epoch == 0 and param.nbatch == 1:
            print("training, pid", os.getpid(), flush=True)

    mod.fit(mx.io.NDArrayIter(X, y, 32), kvstore=kvstore, num_epoch=epochs,
            optimizer_params={"learning_rate": 0.1}, batch_end_callback=started)
    args, _ = mod.get_params()
    # named by the launcher's index, which placed it (ps-lite's rank comes in connection order)
    name = "single" if kvstore == "local" else "worker" + os.environ["MXLEARN_WORKER_INDEX"]
    mx.nd.save(os.path.join(out, name + ".params"), args)

    def endpoint(text):  # /proc/net/tcp: little-endian hex address, hex port
        address, port = text.split(":")
        return socket.inet_ntoa(struct.pack("<I", int(address, 16))), int(port, 16)

    rows = [line.split() for line in open("/proc/self/net/tcp").read().splitlines()[1:]]
    report = {
        "env": {k: v for k, v in os.environ.items() if k.startswith("DMLC_")},
        "netns": os.stat("/proc/self/ns/net").st_ino,
        "connected": [[*endpoint(r[1]), *endpoint(r[2])] for r in rows if r[3] == "01"],
    }
    json.dump(report, open(os.path.join(out, name + ".json"), "w"))
    """
)


def _ip(*words: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *words], capture_output=True, text=True, check=check, timeout=30)


def _cannot(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"network namespaces cannot be made here: {reason}; CI runs as root")
    pytest.skip(f"network namespaces cannot be made here: {reason}")


@pytest.fixture(scope="module")
def hosts():
    """Three namespaces {name: address} on one bridge, deleted afterwards whatever happened."""
    if os.geteuid() != 0:
        _cannot("not root")
    if shutil.which("ip") is None:
        _cannot("no 'ip' (Debian's iproute2)")
    tag = f"mxl{os.getpid()}"
    bridge, names = f"{tag}b", [f"{tag}h{i}" for i in (1, 2, 3)]
    made: list[str] = []
    try:
        _ip("link", "add", bridge, "type", "bridge")
        made.append(bridge)
        _ip("link", "set", bridge, "up")
        for i, name in enumerate(names, 1):
            _ip("netns", "add", name)
            made.append(name)
            _ip("link", "add", f"{tag}v{i}", "type", "veth", "peer", "name", "eth0", "netns", name)
            _ip("link", "set", f"{tag}v{i}", "master", bridge, "up")
            _ip("-n", name, "addr", "add", f"{SUBNET}.{i}/24", "dev", "eth0")
            _ip("-n", name, "link", "set", "eth0", "up")
            _ip("-n", name, "link", "set", "lo", "up")
    except subprocess.CalledProcessError as error:
        _remove(made)
        _cannot(f"'{' '.join(error.cmd)}' said {error.stderr.strip()!r}")
    try:
        yield {name: f"{SUBNET}.{i}" for i, name in enumerate(names, 1)}
    finally:
        _remove(made)


def _remove(made: list[str]) -> None:
    for name in reversed(made):
        if name.endswith("b"):
            _ip("link", "del", name, check=False)
            continue
        for pid in _ip("netns", "pids", name, check=False).stdout.split():
            os.kill(int(pid), signal.SIGKILL)
        _ip("netns", "del", name, check=False)  # its veth end goes, and the pair with it


def _hostfile(tmp_path, lines: list[str]) -> str:
    path = tmp_path / "hostfile"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _script(tmp_path) -> str:
    path = tmp_path / "train.py"
    path.write_text(TRAIN)
    return str(path)


def _params(path) -> dict:
    return {name: value.asnumpy() for name, value in mx.nd.load(str(path)).items()}


def test_workers_in_three_namespaces_agree_with_one_process(tmp_path, hosts):
    names = list(hosts)
    output = io.StringIO()
    result = launch(
        _script(tmp_path),
        [str(tmp_path), "dist_sync", "3"],
        workers=2,
        servers=1,
        timeout=120,
        output=output,
        hosts=_hostfile(tmp_path, names),
        remote_shell=SHELL,
    )
    print(f"job across 3 namespaces: {result.seconds:.1f} s")
    lines = output.getvalue().splitlines()
    # the scheduler and the server on the first host, the workers on the others
    assert f"  {names[0]} ({hosts[names[0]]}): scheduler, server 0" in lines, lines
    assert f"[worker 1 on {names[2]}] Epoch[2] Train-accuracy=1.000000" in lines, lines

    subprocess.run(
        [sys.executable, _script(tmp_path), str(tmp_path), "local", "3"], check=True, timeout=120
    )
    first, second = _params(tmp_path / "worker0.params"), _params(tmp_path / "worker1.params")
    single = _params(tmp_path / "single.params")
    assert sorted(first) == ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"]
    for name in first:
        assert first[name].tobytes() == second[name].tobytes(), name
        np.testing.assert_allclose(first[name], single[name], rtol=1e-4, atol=1e-5, err_msg=name)

    scheduler = hosts[names[0]]
    for rank, host in ((0, names[1]), (1, names[2])):
        report = json.loads((tmp_path / f"worker{rank}.json").read_text())
        own = hosts[host]
        # ran in its host's namespace, told its host's address and the scheduler's
        assert report["netns"] == os.stat(f"/run/netns/{host}").st_ino
        assert report["env"]["DMLC_NODE_HOST"] == own and report["env"]["DMLC_INTERFACE"] == "eth0"
        assert report["env"]["DMLC_PS_ROOT_URI"] == scheduler
        port = int(report["env"]["DMLC_PS_ROOT_PORT"])
        # its TCP connections went from its own address to the first host's: the scheduler's
        # port and the server's; that address exists only in the first namespace, so the
        # packets crossed the bridge (and nothing of the job went through a loopback)
        remote = {(a, p) for la, lp, a, p in report["connected"] if la == own and a == scheduler}
        assert (scheduler, port) in remote and len(remote) >= 2, report["connected"]
        assert all(not la.startswith("127.") for la, *_ in report["connected"]), report
        assert scheduler not in _ip("-n", host, "-4", "addr").stdout


class Watched(io.StringIO):
    """The job's output, with an event when a line has come."""

    def __init__(self, prefix: str):
        super().__init__()
        self.prefix, self.seen, self.line = prefix, threading.Event(), ""

    def write(self, text: str) -> int:
        for line in text.splitlines():
            if line.startswith(self.prefix) and not self.seen.is_set():
                self.line = line
                self.seen.set()
        return super().write(text)


def test_a_worker_killed_in_one_namespace_stops_the_job_on_every_host(tmp_path, hosts):
    names = list(hosts)
    output = Watched(f"[worker 1 on {names[2]}] training, pid ")
    raised: list[BaseException] = []

    def run():
        try:
            launch(
                _script(tmp_path),
                [str(tmp_path), "dist_sync", "1000"],
                timeout=150,
                output=output,
                hosts=_hostfile(tmp_path, names),
                remote_shell=SHELL,
            )
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            raised.append(error)

    job = threading.Thread(target=run)
    job.start()
    deadline = time.monotonic() + 120
    while job.is_alive() and time.monotonic() < deadline and not output.seen.wait(0.5):
        pass
    assert output.seen.is_set(), (raised, output.getvalue())
    pid = output.line.rsplit(" ", 1)[1]
    killed_at = time.monotonic()
    _ip("netns", "exec", names[2], "kill", "-KILL", pid)
    job.join(60)
    stopped_after = time.monotonic() - killed_at
    print(f"stopped {stopped_after:.1f} s after the kill")
    assert not job.is_alive() and stopped_after < 10
    assert len(raised) == 1 and type(raised[0]) is DistributedJobError, raised
    what = raised[0].fields["what"]
    assert f"worker 1 on {names[2]}" in what and "SIGKILL" in what, what
    assert "worker 0" not in what
    for name in names:  # nothing of the job is left on any host
        assert _ip("netns", "pids", name).stdout.split() == []


def test_a_namespace_that_does_not_exist_is_refused_before_anything_starts(tmp_path, hosts):
    names = list(hosts)
    missing = f"{names[0]}x"
    started = time.monotonic()
    with pytest.raises(HostNotReady) as refused:
        launch(
            _script(tmp_path),
            [str(tmp_path), "dist_sync", "3"],
            timeout=60,
            output=io.StringIO(),
            hosts=_hostfile(tmp_path, [names[0], missing, names[2]]),
            remote_shell=SHELL,
        )
    assert time.monotonic() - started < 10
    assert refused.value.fields["host"] == missing
    assert missing in refused.value.fields["output"]  # what ip said: no such namespace
    assert not getattr(refused.value, "pids", None)  # nothing was started
    assert list(tmp_path.glob("*.params")) == []


def test_an_address_nothing_answers_on_is_refused_before_anything_starts(tmp_path, hosts):
    names = list(hosts)
    hostfile = _hostfile(tmp_path, [names[0], f"{names[1]} {SUBNET}.99", names[2]])
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mxlearn", "launch", "-n", "2", "--hosts", hostfile]
        + ["--remote-shell", SHELL, "--timeout", "60", _script(tmp_path), str(tmp_path)]
        + ["dist_sync", "3"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.monotonic() - started < 15  # a Python start, then the three hosts asked
    assert done.returncode == 1, done.stderr
    assert f"{names[1]} the address {SUBNET}.99" in done.stderr, done.stderr
    assert hosts[names[1]] in done.stderr  # its real address, named as the fix's choice
    assert "[worker" not in done.stdout and list(tmp_path.glob("*.params")) == []


def test_ctrl_c_stops_the_job_on_every_host(tmp_path, hosts):
    names = list(hosts)
    command = [sys.executable, "-m", "mxlearn", "launch", "--hosts", _hostfile(tmp_path, names)]
    command += ["--remote-shell", SHELL, "--timeout", "150", _script(tmp_path), str(tmp_path)]
    job = subprocess.Popen(
        [*command, "dist_sync", "1000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        for line in job.stdout:  # until a worker trains: every role has started
            if " training, pid " in line:
                break
        job.send_signal(signal.SIGINT)  # what Ctrl-C sends the launcher in a terminal
        interrupted_at = time.monotonic()
        _, err = job.communicate(timeout=60)
    finally:
        job.kill()
    print(f"stopped {time.monotonic() - interrupted_at:.1f} s after Ctrl-C")
    assert time.monotonic() - interrupted_at < 10
    assert job.returncode == 130 and "interrupted" in err, err
    for name in names:
        assert _ip("netns", "pids", name).stdout.split() == []
