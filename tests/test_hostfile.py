"""The hostfile of a job across hosts (lines ``HOST [ADDRESS]``), the remote shell's command
line, and where each role goes: read and refused before any host is asked."""

from __future__ import annotations

import shlex

import pytest

from mxlearn.__main__ import main
from mxlearn.distributed import launch, placement
from mxlearn.hosts import (
    BadHostLine,
    EmptyHostfile,
    Host,
    HostNamedTwice,
    NoHostfile,
    NoSuchSchedulerHost,
    RemoteShell,
    RemoteShellWithoutHost,
    SshWithoutCommand,
    job_line,
    read_hostfile,
)


def _hostfile(tmp_path, text: str) -> str:
    path = tmp_path / "hostfile"
    path.write_text(text)
    return str(path)


def test_a_hostfile_names_hosts_and_their_addresses(tmp_path):
    path = _hostfile(tmp_path, "# the lab\nlab-pc-1 192.168.1.11\n\nlab-pc-2  # asked\n")
    hosts = read_hostfile(path)
    assert [(h.name, h.address) for h in hosts] == [
        ("lab-pc-1", "192.168.1.11"),
        ("lab-pc-2", None),
    ]


@pytest.mark.parametrize(
    "text, kind, fields",
    [
        ("", EmptyHostfile, {}),
        ("# only a comment\n\n", EmptyHostfile, {}),
        ("a\nb 10.0.0.2\na 10.0.0.3\n", HostNamedTwice, {"host": "a", "first": 1, "second": 3}),
        ("a\nb 10.0.0.2 slots=2\n", BadHostLine, {"line": 2, "text": "b 10.0.0.2 slots=2"}),
    ],
)
def test_a_hostfile_that_cannot_be_read_is_refused(tmp_path, text, kind, fields):
    path = _hostfile(tmp_path, text)
    with pytest.raises(kind) as refused:
        read_hostfile(path)
    assert type(refused.value) is kind and isinstance(refused.value, ValueError)
    assert refused.value.fields == {"path": path, **fields}
    assert "lab-pc-1 192.168.1.11" in refused.value.fix or kind is HostNamedTwice


def test_a_missing_hostfile_is_refused_before_any_host_is_asked(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("")
    with pytest.raises(NoHostfile) as refused:
        launch(str(script), hosts=str(tmp_path / "nowhere"), remote_shell="false {host}")
    assert refused.value.fields == {"path": str(tmp_path / "nowhere")}


def test_a_scheduler_host_outside_the_hostfile_is_refused(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("")
    hostfile = _hostfile(tmp_path, "a\nb\n")
    with pytest.raises(NoSuchSchedulerHost) as refused:
        launch(str(script), hosts=hostfile, scheduler="c", remote_shell="false {host}")
    assert refused.value.fields == {"host": "c", "hosts": "a, b"}


def test_a_remote_shell_takes_the_command_as_words_or_as_one_line():
    words = job_line("/home/ana/my course", {"DMLC_ROLE": "worker"}, ["python", "train.py"])
    assert words[:2] == ["sh", "-c"]
    assert words[2] == "cd '/home/ana/my course' && exec env DMLC_ROLE=worker python train.py"
    # ip netns exec runs the words as they are; ssh hands one line to the other host's shell
    assert RemoteShell("ip netns exec {host}").command("h2", words) == [
        "ip",
        "netns",
        "exec",
        "h2",
        *words,
    ]
    ssh = RemoteShell("ssh -o BatchMode=yes {host} {command}").command("h2", words)
    assert ssh[:4] == ["ssh", "-o", "BatchMode=yes", "h2"] and len(ssh) == 5
    assert shlex.split(ssh[4]) == words  # what the other host's shell reads back
    with pytest.raises(RemoteShellWithoutHost):
        RemoteShell("ssh lab-pc-1")
    with pytest.raises(SshWithoutCommand) as refused:  # its words would be joined, unquoted
        RemoteShell("/usr/bin/ssh -p 2222 {host}")
    assert refused.value.fields["fixed"] == "/usr/bin/ssh -p 2222 {host} {command}"


def test_more_roles_than_hosts_share_the_hosts_in_turn():
    a, b = Host("a", "10.0.0.1"), Host("b", "10.0.0.2")
    placed = [(name, host.name) for name, _, host in placement([a, b], b, 3, 2)]
    assert placed == [
        ("scheduler", "b"),
        ("server 0", "a"),
        ("server 1", "b"),
        ("worker 0", "a"),
        ("worker 1", "b"),
        ("worker 2", "a"),
    ]


def test_host_options_without_hosts_are_refused_on_the_command_line(tmp_path, capsys):
    script = tmp_path / "train.py"
    script.write_text("")
    assert main(["launch", "--scheduler", "a", str(script)]) == 1
    assert "--scheduler" in capsys.readouterr().err
