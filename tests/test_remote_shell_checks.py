"""What the launcher checks of the remote shell on each host before a job starts there: that
the command runs in the job's folder (a shell that joins the command's words, as ssh does, runs
it in the home folder), and that it passes standard input on (each role's guard watches it:
`docker exec` without -i gives none, and every role would stop at its start)."""

from __future__ import annotations

import os
import sys

import pytest

from mxlearn.hosts import (
    Host,
    NoRemoteShellProgram,
    NoStdinOnHost,
    RemoteShell,
    RemoteShellNotWords,
    WrongFolderOnHost,
    ask_hosts,
)


def _fake_shell(tmp_path, body: str) -> str:
    path = tmp_path / "fake-remote-shell"
    path.write_text("#!/bin/sh\nhost=$1; shift\n" + body + "\n")
    path.chmod(0o755)
    return f"{path} {{host}}"


def _ask(tmp_path, template: str):
    folder = tmp_path / "course"
    folder.mkdir()
    return ask_hosts(
        [Host("localhost", "127.0.0.1")], RemoteShell(template), sys.executable, str(folder)
    )


def test_a_remote_shell_that_passes_the_words_and_stdin_is_accepted(tmp_path):
    (host,) = _ask(tmp_path, _fake_shell(tmp_path, 'exec "$@"'))
    assert host.port is not None and host.cpus >= 1


def test_a_remote_shell_that_joins_the_words_into_one_line_is_refused(tmp_path):
    # ssh-like: the words as one line, run by the shell in the home folder
    joined = _fake_shell(tmp_path, 'cd "$HOME" && exec sh -c "$*"')
    with pytest.raises(WrongFolderOnHost) as refused:
        _ask(tmp_path, joined)
    assert refused.value.fields["there"] == os.path.realpath(os.path.expanduser("~"))
    assert "{command}" in refused.value.fix
    # the fix, followed: the template it gives runs the command in the job's folder
    fixed = refused.value.fields["fixed"]
    assert fixed == joined + " {command}"
    (host,) = ask_hosts(
        [Host("localhost", "127.0.0.1")],
        RemoteShell(fixed),
        sys.executable,
        str(tmp_path / "course"),
    )
    assert host.port is not None


def test_a_remote_shell_that_gives_no_stdin_is_refused(tmp_path):
    closed = _fake_shell(tmp_path, 'exec "$@" </dev/null')  # as docker exec without -i
    with pytest.raises(NoStdinOnHost) as refused:
        _ask(tmp_path, closed)
    assert refused.value.fields["host"] == "localhost" and "-i" in refused.value.fix


def test_a_remote_shell_that_is_not_words_or_not_installed_is_refused(tmp_path):
    with pytest.raises(RemoteShellNotWords) as refused:
        RemoteShell("ssh '{host} {command}")
    assert "quotation" in refused.value.fields["reason"]
    with pytest.raises(NoRemoteShellProgram) as refused:
        _ask(tmp_path, "no-such-remote-shell {host}")
    assert refused.value.fields["program"] == "no-such-remote-shell"
