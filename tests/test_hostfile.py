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
    HostfileIsAFolder,
    HostfileNotText,
    HostNamedTwice,
    LoopbackAmongHosts,
    MxnetHostfileSyntax,
    NoHostfile,
    NoSuchSchedulerHost,
    RemoteShell,
    RemoteShellWithoutHost,
    SshWithoutCommand,
    WildcardAddress,
    job_line,
    read_hostfile,
    refuse_loopback_among_others,
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


def test_a_hostfile_saved_with_a_byte_order_mark_reads_as_its_text(tmp_path):
    path = tmp_path / "hostfile"
    path.write_bytes("\ufefflab-pc-1 192.168.1.11\r\nlab-pc-2\r\n".encode())  # Notepad's
    assert [h.name for h in read_hostfile(str(path))] == ["lab-pc-1", "lab-pc-2"]


def test_a_hostfile_that_is_not_text_or_is_a_folder_is_refused_as_such(tmp_path):
    path = tmp_path / "hostfile"
    path.write_bytes(b"lab-pc-1 \xe9\xff\n")
    with pytest.raises(HostfileNotText) as refused:
        read_hostfile(str(path))
    assert refused.value.fields["line"] == 1 and "UTF-8" in str(refused.value)
    with pytest.raises(HostfileIsAFolder):
        read_hostfile(str(tmp_path))


@pytest.mark.parametrize(
    "line, word",
    [
        ("lab-pc-1:2222", "lab-pc-1:2222"),
        ("lab-pc-1 slots=2", "slots=2"),
        ("10.0.0.5:22 x", "10.0.0.5:22"),
    ],
)
def test_mxnets_own_hostfile_words_are_refused_with_where_they_go(tmp_path, line, word):
    """MXNet's ssh launcher reads HOST:PORT and slots=N; here a port goes to ssh's own settings
    and a host takes several roles by itself."""
    with pytest.raises(MxnetHostfileSyntax) as refused:
        read_hostfile(_hostfile(tmp_path, line + "\n"))
    assert refused.value.fields["word"] == word
    assert "~/.ssh/config" in refused.value.fix


def test_ipv6_addresses_are_not_taken_for_ports(tmp_path):
    hosts = read_hostfile(_hostfile(tmp_path, "lab-pc-1 fe80::1\nfd00::2\n"))
    assert [(h.name, h.address) for h in hosts] == [("lab-pc-1", "fe80::1"), ("fd00::2", None)]


@pytest.mark.parametrize("address", ["0.0.0.0", "::"])
def test_a_wildcard_address_is_refused(tmp_path, address):
    with pytest.raises(WildcardAddress):
        read_hostfile(_hostfile(tmp_path, f"lab-pc-1 {address}\nlab-pc-2\n"))


def test_a_loopback_address_beside_other_machines_is_refused():
    lab = [Host("lab-pc-1", "192.168.1.11"), Host("lab-pc-2", "127.0.1.1")]
    with pytest.raises(LoopbackAmongHosts) as refused:
        refuse_loopback_among_others(lab)
    assert refused.value.fields["host"] == "lab-pc-2"
    assert "lab-pc-1 192.168.1.11" in refused.value.fields["others"]
    # every host this machine (a job tried out on one computer): loopback is right
    refuse_loopback_among_others([Host("localhost", "127.0.0.1"), Host("me", "127.0.1.1")])


def test_an_address_given_as_a_name_is_not_taken_for_an_ip_address():
    # a hostfile may give a name the host can bind to ("lab-pc-2.lan"): not known as loopback
    refuse_loopback_among_others(
        [Host("lab-pc-1", "192.168.1.11"), Host("lab-pc-2", "lab-pc-2.lan")]
    )
