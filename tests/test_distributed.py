"""mxlearn.distributed: MXNet's dist_sync on 127.0.0.1 (scheduler, server, workers) as one job
that finishes together or is stopped together, saying which process failed; a distributed
kvstore outside the launcher is refused, naming it."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import mxlearn
from mxlearn import mx
from mxlearn.cpu_share import SIZED, cpu_share
from mxlearn.distributed import (
    DistributedJobError,
    JobTimedOut,
    WorkerLeftEarly,
    job_environment,
    launch,
    relative_to,
)
from mxlearn.guards.arguments import NoLaunchedServers

WORKER_SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    import mxlearn
    from mxlearn import mx

    mxlearn.seed(0)
    X, y = mxlearn.datasets.synthetic_classification(num_samples=512, num_features=16,
                                                     num_classes=4, seed=1)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=16))

    def die_if_asked(param):
        if os.environ.get("DIE") == os.environ["MXLEARN_WORKER_INDEX"] and param.epoch == 1:
            open(os.path.join(sys.argv[1], "killed-at"), "w").write(repr(time.time()))
            os.kill(os.getpid(), 9)

    mod.fit(mx.io.NDArrayIter(X, y, 32), kvstore="dist_sync", num_epoch=3,
            optimizer_params={"learning_rate": 0.1}, batch_end_callback=die_if_asked)
    args, _ = mod.get_params()
    mx.nd.save(os.path.join(sys.argv[1], "worker%d.params" % mod._kvstore.rank), args)
    print("gradient scale:", mod._optimizer.rescale_grad)
    """
)


def _script(tmp_path, text=WORKER_SCRIPT) -> str:
    path = tmp_path / "train.py"
    path.write_text(text)
    return str(path)


def _gone(pid: int) -> bool:
    return not Path(f"/proc/{pid}").exists()


@pytest.mark.slow
def test_two_workers_and_a_server_reach_identical_weights(tmp_path):
    output = io.StringIO()
    result = launch(
        _script(tmp_path), [str(tmp_path)], workers=2, servers=1, timeout=120, output=output
    )
    first = mx.nd.load(str(tmp_path / "worker0.params"))
    second = mx.nd.load(str(tmp_path / "worker1.params"))
    assert sorted(first) == ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"]
    for name in first:
        assert first[name].asnumpy().tobytes() == second[name].asnumpy().tobytes(), name
    lines = output.getvalue().splitlines()
    assert any(line.startswith("[worker 0] Epoch[2] Train-accuracy") for line in lines)
    assert any(line.startswith("[worker 1] Epoch[2] Train-accuracy") for line in lines)
    # dist_sync sums the gradients of both workers: MXNet scales them by 1 / (32 x 2)
    assert "[worker 0] gradient scale: 0.015625" in lines
    assert all(_gone(pid) for pid in result.pids) and len(result.pids) == 4


REBATCH_SCRIPT = textwrap.dedent(
    """
    import sys, warnings
    import mxlearn
    from mxlearn import mx
    from mxlearn.guards.optimizer_settings import StepScaledOnServers

    X, y = mxlearn.datasets.synthetic_classification(num_samples=256, num_features=16,
                                                     num_classes=4, seed=1)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=16))
    first = mx.io.NDArrayIter(X, y, 32)
    mod.bind(first.provide_data, first.provide_label)
    mod.init_params()
    mod.init_optimizer(kvstore="dist_sync", optimizer_params={"learning_rate": 0.1})
    def said(seen):
        return [w.category.__name__ for w in seen if issubclass(w.category, StepScaledOnServers)]

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        mod.score(mx.io.NDArrayIter(X, y, 100), "acc")  # batches of 100, but no step
        mod.bind(first.provide_data, first.provide_label)  # back to 32: still nothing to say
        mod.fit(first, num_epoch=1, kvstore="dist_sync", optimizer_params={"learning_rate": 0.1})
        scored = said(seen)
        bigger = mx.io.NDArrayIter(X, y, 64)
        mod.bind(bigger.provide_data, bigger.provide_label)  # a second bind, batch 64
        for batch in bigger:  # steps at 64 rows, which the servers scale for 32
            mod.forward_backward(batch)
            mod.update()
    print("scored:", scored, "stepped:", said(seen), "scale:", mod._optimizer.rescale_grad)
    # freed here, not at the interpreter's exit: after the rebind, the exit hung in ps-lite's
    # shutdown in 1 run of 4 here (all four processes alive, every line printed), never so
    import gc
    del mod
    gc.collect()
    """
)


@pytest.mark.slow
def test_another_batch_size_under_an_optimizer_on_the_servers_is_said(tmp_path):
    output = io.StringIO()
    launch(_script(tmp_path, REBATCH_SCRIPT), workers=2, servers=1, timeout=120, output=output)
    lines = output.getvalue().splitlines()
    # the servers keep the optimizer MXNet sent them, scaled for 32 x 2 rows: said once, when
    # a step at another batch size comes; a score at another size takes no step
    said = "[worker 0] scored: [] stepped: ['StepScaledOnServers'] scale: 0.015625"
    assert said in lines, lines


@pytest.mark.slow
def test_a_killed_worker_ends_the_whole_job_with_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("DIE", "1")
    with pytest.raises(DistributedJobError) as info:
        launch(_script(tmp_path), [str(tmp_path)], timeout=120, output=io.StringIO())
    ended = time.time()
    killed_at = float((tmp_path / "killed-at").read_text())
    assert ended - killed_at < 30  # the others would otherwise wait forever
    assert type(info.value) is DistributedJobError  # a failure, not the time limit
    what = info.value.fields["what"]  # the failed process, named by its role
    assert "worker 1" in what and "SIGKILL" in what and "worker 0" not in what
    assert all(_gone(pid) for pid in info.value.pids) and len(info.value.pids) == 4


@pytest.mark.slow
def test_a_worker_that_ends_without_joining_ends_the_job_naming_it(tmp_path, monkeypatch):
    """A worker whose script returns before training (its host lacks the data) ends with status
    0, and the others wait for it at their kvstore for ever: the job is stopped, naming it."""
    monkeypatch.setattr(mxlearn.distributed, "FINISH_GRACE_SECONDS", 3.0)
    leaves = 'if os.environ["MXLEARN_WORKER_INDEX"] == "1":\n    sys.exit(print("no data here"))\n'
    script = _script(
        tmp_path, WORKER_SCRIPT.replace("import mxlearn\n", leaves + "import mxlearn\n", 1)
    )
    started = time.monotonic()
    with pytest.raises(WorkerLeftEarly) as info:
        launch(script, [str(tmp_path)], timeout=120, output=io.StringIO())
    assert time.monotonic() - started < 60
    assert info.value.fields["role"] == "worker 1" and "worker 0" in info.value.fields["running"]
    assert "no data here" in info.value.fields["tail"]
    assert all(_gone(pid) for pid in info.value.pids)


@pytest.mark.slow
def test_the_time_limit_stops_every_process(tmp_path):
    script = _script(tmp_path, "import time\ntime.sleep(600)\n")
    started = time.monotonic()
    with pytest.raises(JobTimedOut) as info:
        launch(script, workers=2, timeout=2, output=io.StringIO())
    assert time.monotonic() - started < 30
    assert type(info.value) is JobTimedOut
    assert "scheduler, server 0, worker 0, worker 1" in info.value.fields["what"]  # still running
    assert all(_gone(pid) for pid in info.value.pids)
    assert "SIGKILL" not in info.value.fix and "timeout=" in info.value.fix  # its own fix


@pytest.mark.slow
def test_paths_in_the_jobs_folder_are_shown_as_the_script_was_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "fail.py").write_text("raise ValueError('no data here')\n")
    output = io.StringIO()
    with pytest.raises(DistributedJobError) as info:
        launch("runs/fail.py", workers=1, timeout=60, output=output)
    shown = output.getvalue() + str(info.value)
    assert 'File "runs/fail.py", line 1' in shown and str(tmp_path) not in shown


@pytest.mark.slow
def test_the_command_line_reports_a_failing_script(tmp_path):
    script = _script(tmp_path, "raise ValueError('the data file is missing')\n")
    done = subprocess.run(
        [sys.executable, "-m", "mxlearn", "launch", "-n", "1", "--timeout", "60", script],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "worker 0 (pid" in done.stderr and "exited with status 1" in done.stderr
    assert "ValueError: the data file is missing" in done.stderr  # its last output, quoted


def test_job_environment_is_loopback_only_with_a_scrubbed_port():
    base = {"PORT": "9091", "DMLC_ROLE": "server", "DMLC_PS_ROOT_PORT": "1", "HOME": "/root"}
    env = job_environment(workers=2, servers=1, port=45678, base=base)
    assert "PORT" not in env and "DMLC_ROLE" not in env and env["HOME"] == "/root"
    assert env["DMLC_PS_ROOT_URI"] == env["DMLC_NODE_HOST"] == "127.0.0.1"
    assert env["DMLC_PS_ROOT_PORT"] == "45678"
    assert (env["DMLC_NUM_WORKER"], env["DMLC_NUM_SERVER"]) == ("2", "1")
    assert env["OMP_NUM_THREADS"] == str(max(1, cpu_share().cpus // 2))


def test_each_worker_gets_its_share_of_the_cores_not_the_launchers_own_sizing():
    """Importing mxlearn sizes the launcher's own pool (OMP_NUM_THREADS, marked as mxlearn's):
    that is no setting of the user's to pass on, or every worker would start a pool for all the
    cores. A value the user set is passed on as it is."""
    cores = cpu_share().cpus
    sized = {"OMP_NUM_THREADS": str(cores), SIZED: str(cores), "HOME": "/root"}
    env = job_environment(workers=2, servers=1, port=45678, base=sized)
    assert env["OMP_NUM_THREADS"] == str(max(1, cores // 2)) and SIZED not in env
    users = {"OMP_NUM_THREADS": "3", SIZED: str(cores)}
    assert job_environment(workers=2, servers=1, port=45678, base=users)["OMP_NUM_THREADS"] == "3"


def test_the_processes_of_a_job_speak_the_language_the_launcher_speaks():
    import mxlearn

    try:
        mxlearn.set_language("zh")  # as the Chinese notebooks do, with no MXLEARN_LANG set
        env = job_environment(workers=2, servers=1, port=45678, base={"HOME": "/root"})
        assert env["MXLEARN_LANG"] == "zh"
    finally:
        mxlearn.set_language("en")
    env = job_environment(workers=2, servers=1, port=45678, base={"MXLEARN_LANG": "zh"})
    assert env["MXLEARN_LANG"] == "en"  # the launcher's own choice wins


def test_a_distributed_kvstore_outside_a_launcher(small_iter, small_net, monkeypatch):
    for name in [n for n in os.environ if n.startswith("DMLC_")]:
        monkeypatch.delenv(name)
    mod = mxlearn.Module(small_net)
    with pytest.raises(NoLaunchedServers) as refused:
        mod.fit(small_iter, num_epoch=1, kvstore="dist_sync")
    assert refused.value.fields == {"called": "mod.fit()", "kvstore": "dist_sync"}
    assert "python -m mxlearn launch" in refused.value.fix  # the command the student runs
    assert mod.state == "created"


@pytest.mark.parametrize(
    "folder, line, shown",
    [
        ("/home/ana/course", 'File "/home/ana/course/train.py", line 3', 'File "train.py", line 3'),
        (
            "/home/ana/course",
            "saved /home/ana/course/runs/a-0001.params",
            "saved runs/a-0001.params",
        ),
        # the same letters inside another path or a URL stay as they are
        ("/tmp/a", "copied to /mnt/backup/tmp/a/runs/x", "copied to /mnt/backup/tmp/a/runs/x"),
        (
            "/",
            "see https://example.invalid/a and /etc/hosts",
            "see https://example.invalid/a and /etc/hosts",
        ),
    ],
)
def test_a_relayed_line_names_the_jobs_files_relative_to_its_folder(folder, line, shown):
    assert relative_to(line, folder) == shown


def _job_processes(marker: str) -> list[int]:
    """The pids of processes whose environment holds ``marker`` (every role of a local job)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.slow
@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGHUP"])
def test_a_launcher_stopped_by_a_signal_leaves_no_process_of_its_job(tmp_path, signal_name):
    import signal
    import uuid

    script = _script(tmp_path, "import time\nprint('started', flush=True)\ntime.sleep(300)\n")
    marker = f"MXLEARN_TEST_JOB={uuid.uuid4().hex}"
    env = {**os.environ, marker.split("=")[0]: marker.split("=")[1]}
    launcher = subprocess.Popen(
        [sys.executable, "-m", "mxlearn", "launch", "-n", "2", script],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    started = 0
    for line in launcher.stdout:
        started += "started" in line
        if started == 2:
            break
    assert len(_job_processes(marker)) >= 4  # scheduler, server, two workers (and the launcher)
    launcher.send_signal(getattr(signal, signal_name))
    launcher.wait(timeout=30)
    deadline = time.monotonic() + 15
    while _job_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _job_processes(marker) == []
    assert launcher.returncode == 130
