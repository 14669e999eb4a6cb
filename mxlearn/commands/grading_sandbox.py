"""The sandbox a graded notebook's kernel runs in: bubblewrap (``bwrap``, Debian's package
``bubblewrap``), an existing tool, not ours. Inside it the kernel sees the system, its Python
and mxlearn read-only, its own temporary copy of the student's folder as the only writable
place (and an empty /tmp), the course data read-only, and nothing else: no network (its own
network namespace; the grader talks to it over Unix sockets), no teacher's folders, no other
student's copy, no results file, and its own PID namespace, so whatever it starts ends with it.

Without bubblewrap, or where it cannot make namespaces (a container without user namespaces),
the grader still runs, says which protections are off, and ``--sandbox`` refuses instead.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import N_, SetupError
from ..language import say

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# what Python, MXNet's libraries and Matplotlib read in /etc; not the rest (users, keys, hosts)
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "fonts", "mime.types")
ETC += ("passwd", "group", "nsswitch.conf", "alternatives")
# what each kind of protection is, for a grader that runs without one
PROTECTIONS = N_(
    "the package and the system read-only, no view of the teacher's or other students' files, "
    "no network, a results channel the notebook cannot write, nothing outliving its kernel"
)


class SandboxMissing(SetupError):
    says = N_("The grader was asked to sandbox each kernel, and {why}.")
    fix = N_(
        "Install bubblewrap (Debian and Ubuntu: apt install bubblewrap; Fedora: dnf install "
        "bubblewrap), or grade without --sandbox to run the kernels unprotected."
    )


@dataclass(frozen=True)
class Sandbox:
    """How to start a kernel in bubblewrap; ``binds``: the read-only paths every kernel sees."""

    bwrap: str
    binds: tuple[str, ...]

    def command(self, writable: list[str], tmp_mb: int) -> list[str]:
        """bwrap's arguments (before the kernel's command) for a kernel whose only writable
        paths are ``writable`` (its copy of the folder, its sockets) and a /tmp of ``tmp_mb``."""
        args = [self.bwrap, "--unshare-all", "--unshare-user", "--die-with-parent"]
        # no capability (a grader run as root would leave the kernel able to remount the
        # read-only binds writable), no user namespace of its own to get them back
        args += ["--cap-drop", "ALL", "--disable-userns", "--new-session"]
        args += ["--proc", "/proc", "--dev", "/dev", "--size", str(tmp_mb * 2**20)]
        args += ["--tmpfs", "/tmp", "--dir", "/tmp/home"]
        for path in SYSTEM:
            if os.path.islink(path):  # merged /usr: /bin -> usr/bin
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        args += [a for etc in ETC for a in ("--ro-bind-try", f"/etc/{etc}", f"/etc/{etc}")]
        for path in self.binds:
            args += ["--ro-bind", path, path]
        for path in writable:
            args += ["--bind", path, path]
        # no poller of a parent pid (ipykernel's, which a PID namespace would fool); the home
        # and temporary folder the kernel may write
        args += ["--unsetenv", "JPY_PARENT_PID", "--setenv", "HOME", "/tmp/home"]
        args += ["--setenv", "TMPDIR", "/tmp", "--setenv", "MPLCONFIGDIR", "/tmp/home/mpl"]
        return [*args, "--chdir", writable[0], "--"]


def _read_only_paths(package: str, env: dict[str, str]) -> tuple[str, ...]:
    """Python (the environment's and the one it was made from), mxlearn, and the course data."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, package}
    found.add(str(Path(sys.executable).resolve().parent.parent))
    if env.get("MXLEARN_DATA"):
        found.add(env["MXLEARN_DATA"])
    real = {os.path.realpath(p) for p in found if os.path.isdir(p)} | found
    kept = sorted(p for p in real if os.path.isdir(p) and not p.startswith(SYSTEM))
    # a path inside another is bound by it (the environment inside the project's folder is not:
    # only the package is, so binding the folder would show the teacher's notebooks)
    return tuple(p for p in kept if not any(p.startswith(q + os.sep) for q in kept if q != p))


@functools.cache
def _works(bwrap: str, binds: tuple[str, ...]) -> str:
    """'' when bubblewrap starts this Python in the sandbox, else what it said."""
    probe = Sandbox(bwrap, binds).command(["/tmp"], 1)
    try:
        done = subprocess.run(
            [*probe, sys.executable, "-c", "pass"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as failure:
        return str(failure)
    lines = done.stderr.strip().splitlines()
    return "" if done.returncode == 0 else (lines[-1] if lines else f"exit {done.returncode}")


def sandbox_for(package: str, env: dict[str, str], wanted: bool | None) -> tuple:
    """(a Sandbox, '') or (None, why there is none). ``wanted``: True refuses to grade without
    one, False grades without one, None uses one where it works."""
    if wanted is False:
        return None, say("--no-sandbox was given")
    bwrap = shutil.which("bwrap")
    binds = _read_only_paths(package, env)
    problem = _works(bwrap, binds) if bwrap else ""
    if bwrap is None:
        why = say("bubblewrap (bwrap) is not installed")
    elif problem:
        why = say("bubblewrap cannot make a sandbox here: {problem}", problem=problem)
    else:
        return Sandbox(bwrap, binds), ""
    if wanted:
        raise SandboxMissing(why=why)
    return None, why
