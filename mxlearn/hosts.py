"""The hosts of a job across machines: the hostfile (lines ``HOST [ADDRESS]``), the remote shell
that runs a command on a host (``ssh`` by default, as MXNet's own ssh launcher does), and what
each host says of itself before anything starts (its addresses, its cores, a free port).

A remote shell is a template with ``{host}``. With ``{command}`` it takes the command as one
shell line (``ssh``, which hands its arguments to the other host's shell as one line); without
it, the command's words are appended (``ip netns exec {host}``, ``docker exec -i {host}``:
the remote shell must pass stdin on, which each role's guard watches).
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shlex
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from . import host_answer
from .errors import N_, InputError, MXLearnError
from .language import say

# BatchMode: a host without a key refuses at once instead of asking for a password nobody sees
DEFAULT_REMOTE_SHELL = "ssh -o BatchMode=yes -o ConnectTimeout=10 {host} {command}"
ASK_SECONDS = 30.0
WILDCARDS = ("0.0.0.0", "::", "[::]")


class HostfileError(InputError):
    fix_says = N_(
        "write one host a line, its address after it when ps-lite should use a given one:\n"
        "    lab-pc-1 192.168.1.11\n    lab-pc-2"
    )


class NoHostfile(HostfileError):
    says = N_("launch: there is no hostfile '{path}'.")


class EmptyHostfile(HostfileError):
    says = N_("launch: the hostfile '{path}' names no host.")


class HostNamedTwice(HostfileError):
    says = N_(
        "launch: the hostfile '{path}' names {host} twice (lines {first} and {second}); "
        "a host runs several roles when the job has more roles than hosts."
    )
    fix_says = N_("name each host once")


class BadHostLine(HostfileError):
    says = N_("launch: line {line} of the hostfile '{path}' is not 'HOST [ADDRESS]': {text!r}.")


class HostfileIsAFolder(HostfileError):
    says = N_("launch: '{path}' is a folder, not a hostfile.")


class HostfileNotText(HostfileError):
    says = N_("launch: line {line} of the hostfile '{path}' is not UTF-8 text.")
    fix_says = N_("save it as plain UTF-8 text, one host a line")


class MxnetHostfileSyntax(HostfileError):
    says = N_(
        "launch: line {line} of the hostfile '{path}' has {word!r}: MXNet's ssh launcher "
        "reads a port or slots there, mxlearn's hostfile does not."
    )
    fix_says = N_(
        "give ssh a host's port in ~/.ssh/config ('Host lab-pc-1', then 'Port 2222'), and "
        "leave slots out: a host takes several roles when the job has more roles than hosts"
    )


class WildcardAddress(HostfileError):
    says = N_(
        "launch: the hostfile gives {host} the address {address}, which stands for all of a "
        "host's addresses: the other hosts cannot reach it there."
    )
    fix_says = N_(
        "give {host}'s address on the network the hosts share, or none and the launcher asks it"
    )


class LoopbackAmongHosts(InputError):
    says = N_(
        "launch: {host}'s address {address} is its loopback, which only {host} itself "
        "reaches, and the job's other hosts are other machines ({others}). Nothing was started."
    )
    fix_says = N_(
        "give {host}'s address on the network the hosts share in the hostfile: {host} ADDRESS"
    )


class NoSuchSchedulerHost(InputError):
    says = N_("launch: the scheduler's host {host} is not in the hostfile ({hosts}).")
    fix_says = N_("give --scheduler one of the hostfile's hosts, or add {host} to it")


class RemoteShellWithoutHost(InputError):
    says = N_("launch: the remote shell '{template}' has no {{host}} to put the host's name in.")
    fix_code = "--remote-shell 'ssh {{host}} {{command}}'"


class HostNotReady(MXLearnError, RuntimeError):
    """A host did not answer through the remote shell, before anything of the job started."""

    says = N_(
        "launch: the host {host} did not answer: '{command}' {ended}. Nothing was started.{output}"
    )
    fix_says = N_(
        "check that the command works from this machine and that {host} has this folder "
        "and this Python ({python}); with ssh, that a key lets you in without a password "
        "(ssh-copy-id {host})"
    )


class AddressNotOnHost(InputError):
    says = N_(
        "launch: the hostfile gives {host} the address {address}, which is not one of "
        "its own ({addresses}); ps-lite there could not listen on it. Nothing was started."
    )
    fix_says = N_("give one of {host}'s addresses, or none and the launcher asks {host}")


class HostAddressUnclear(InputError):
    says = N_(
        "launch: {host} has {count} addresses ({addresses}); the launcher will not guess "
        "which one the other hosts reach. Nothing was started."
    )
    fix_says = N_("write the address after the host in the hostfile: {host} ADDRESS")


class RemoteShellNotWords(InputError):
    says = N_("launch: the remote shell '{template}' cannot be read as words: {reason}.")
    fix_code = "--remote-shell 'ssh -p 2222 {{host}} {{command}}'"


class NoRemoteShellProgram(InputError):
    says = N_(
        "launch: the remote shell '{template}' starts {program}, which this machine does not "
        "have. Nothing was started."
    )
    fix_says = N_("install {program}, or give --remote-shell a program this machine has")


class WrongFolderOnHost(InputError):
    says = N_(
        "launch: through the remote shell '{template}', {host} ran the command in {there}, "
        "not in the job's folder {folder}: the shell joins the command's words into one line "
        "(as ssh does). Nothing was started."
    )
    fix_says = N_("put {{command}} where the remote shell takes its command: '{fixed}'")


class NoStdinOnHost(InputError):
    says = N_(
        "launch: the remote shell '{template}' gives {host}'s commands no standard input; each "
        "role's guard reads it and stops the role when it closes, so every role would stop at "
        "its start. Nothing was started."
    )
    fix_says = N_(
        "let the remote shell pass standard input on: docker exec -i, kubectl exec -i, and "
        "ssh without -n"
    )


class SshWithoutCommand(InputError):
    says = N_(
        "launch: the remote shell '{template}' runs ssh without {{command}}: ssh joins the "
        "words it is given into one line for the other host's shell, which would split the "
        "job's command wrongly."
    )
    fix_says = N_("put {{command}} where ssh takes the command: '{fixed}'")


@dataclass
class Host:
    name: str
    address: str | None = None  # as the hostfile gives it, then as the host confirms it
    interface: str | None = None
    cpus: int = 1
    port: int | None = None  # a free port on the address, asked of the scheduler's host


def read_hostfile(path: str) -> list[Host]:
    """The hosts of ``path``: ``HOST [ADDRESS]`` a line; blank lines and ``#`` comments skipped."""
    if os.path.isdir(path):
        raise HostfileIsAFolder(path=path)
    if not os.path.isfile(path):
        raise NoHostfile(path=path)
    hosts: dict[str, tuple[int, Host]] = {}
    with open(path, "rb") as data:
        raw = data.read().splitlines()
    for number, line in enumerate(raw, 1):
        try:  # -sig: a byte-order mark (Notepad's) is no part of the first host's name
            text = line.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError:
            raise HostfileNotText(path=path, line=number) from None
        words = text.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) > 2:
            raise BadHostLine(path=path, line=number, text=text.strip())
        for word in words:
            if "=" in word or re.fullmatch(r"[^:]+:\d+", word):  # slots=2, lab-pc-1:2222
                raise MxnetHostfileSyntax(path=path, line=number, word=word)
        if len(words) == 2 and words[1] in WILDCARDS:
            raise WildcardAddress(path=path, host=words[0], address=words[1])
        if words[0] in hosts:
            first = hosts[words[0]][0]
            raise HostNamedTwice(path=path, host=words[0], first=first, second=number)
        hosts[words[0]] = (number, Host(*words))
    if not hosts:
        raise EmptyHostfile(path=path)
    return [host for _, host in hosts.values()]


class RemoteShell:
    def __init__(self, template: str = DEFAULT_REMOTE_SHELL):
        if "{host}" not in template:
            raise RemoteShellWithoutHost(template=template)
        self.template = template
        try:
            self.words = shlex.split(template)
        except ValueError as error:  # an unclosed quote
            raise RemoteShellNotWords(template=template, reason=str(error).lower()) from None
        if os.path.basename(self.words[0]) == "ssh" and "{command}" not in template:
            raise SshWithoutCommand(template=template, fixed=template + " {command}")

    def command(self, host: str, words: list[str]) -> list[str]:
        """The local command that runs ``words`` on ``host``."""
        line = shlex.join(words)
        argv = [w.replace("{host}", host).replace("{command}", line) for w in self.words]
        return argv if "{command}" in self.template else argv + words


def job_line(folder: str, env: dict, argv: list[str]) -> list[str]:
    """``sh -c 'cd FOLDER && exec env K=V ... ARGV'``: the job's folder and environment on a host
    (exec: the remote shell's process becomes the command, so its signals reach it)."""
    settings = [f"{k}={v}" for k, v in sorted(env.items())]
    line = f"cd {shlex.quote(folder)} && exec {shlex.join(['env', *settings, *argv])}"
    return ["sh", "-c", line]


def _ask(shell: RemoteShell, host: Host, python: str, folder: str) -> Host:
    asked = os.path.abspath(host_answer.__file__)
    words = job_line(folder, {}, [python, asked, host.address or ""])
    command = shell.command(host.name, words)
    shown = shell.template.replace("{host}", host.name).replace(" {command}", "")
    try:
        done = subprocess.run(
            command,
            input=host_answer.STDIN_LINE + "\n",
            capture_output=True,
            text=True,
            timeout=ASK_SECONDS,
        )
    except FileNotFoundError:
        raise NoRemoteShellProgram(template=shell.template, program=command[0]) from None
    except subprocess.TimeoutExpired:
        ended = say("gave no answer in {seconds:g} s", seconds=ASK_SECONDS)
        raise HostNotReady(
            host=host.name, command=shown, ended=ended, output="", python=python
        ) from None
    try:
        told = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        told = None
    if done.returncode != 0 or told is None:
        text = (done.stderr + done.stdout).strip()
        output = say(" It said:\n    {lines}", lines="\n    ".join(text.splitlines()[-8:]))
        ended = say("exited with status {code}", code=done.returncode)
        output = output if text else ""
        raise HostNotReady(host=host.name, command=shown, ended=ended, output=output, python=python)
    template = shell.template
    if os.path.realpath(told["folder"]) != os.path.realpath(folder):
        fixed = template if "{command}" in template else template + " {command}"
        raise WrongFolderOnHost(
            template=template, host=host.name, there=told["folder"], folder=folder, fixed=fixed
        )
    if not told["stdin"]:
        raise NoStdinOnHost(template=template, host=host.name)
    return _confirmed(host, told)


def _confirmed(host: Host, told: dict) -> Host:
    addresses = {address: name for name, address in told["addresses"]}
    listed = ", ".join(sorted(addresses)) or say("none but its loopback")
    if host.address is not None and told["port"] is None:
        raise AddressNotOnHost(host=host.name, address=host.address, addresses=listed)
    if host.address is None:
        if len(addresses) != 1:
            raise HostAddressUnclear(host=host.name, count=len(addresses), addresses=listed)
        host.address = next(iter(addresses))
    host.interface, host.cpus, host.port = addresses.get(host.address), told["cpus"], told["port"]
    return host


def ask_hosts(hosts: list[Host], shell: RemoteShell, python: str, folder: str) -> list[Host]:
    """Each host's address, interface, cores and a free port, asked through the remote shell
    (all at once); the first host that does not answer, or answers wrongly, is refused."""
    with ThreadPoolExecutor(max_workers=len(hosts)) as pool:
        answers = [pool.submit(_ask, shell, host, python, folder) for host in hosts]
        hosts = [answer.result() for answer in answers]
    refuse_loopback_among_others(hosts)
    return hosts


def refuse_loopback_among_others(hosts: list[Host]) -> None:
    """A loopback address (127.0.1.1 is what Debian's `hostname -i` gives) reaches only its own
    host: fine when every host is this machine, not beside other machines' addresses."""
    loopback = [h for h in hosts if _is_loopback(h.address)]
    others = [h for h in hosts if h not in loopback]
    if loopback and others:
        host = loopback[0]
        names = ", ".join(f"{h.name} {h.address}" for h in others)
        raise LoopbackAmongHosts(host=host.name, address=host.address, others=names)


def _is_loopback(address: str) -> bool:
    """Only an IP address is known to be one; a name is resolved by its own host, not here."""
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False
