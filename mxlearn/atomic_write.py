"""Writing a file so that a reader sees the old file or the whole new one, never half of it:
written to a temporary name in the same folder, fsynced, renamed over the final name, and the
folder fsynced so the rename survives a crash. A temporary's name carries its writer's process
id, so a later writer can tell one left by a killed writer from one still written (issue #26).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path


def atomic_write(path: str, write: Callable[[str], None]) -> None:
    """Let ``write(tmp_path)`` create the file, then give it its final name atomically."""
    folder = os.path.dirname(os.path.abspath(path))
    name = f".{os.path.basename(path)}.{os.getpid()}."
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=name, suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        mask = os.umask(0o022)  # setting the umask is the only way to read it
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # mkstemp makes 0600; a file written plainly is not
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: str, data: bytes) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_bytes(data))


_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[a-z0-9_]+\.tmp$")
_BEFORE_PIDS = re.compile(r"^\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp$")  # mxlearn before #26


def writer_alive(pid: int) -> bool:
    """Whether process ``pid`` (another one than this) still runs, so may still be writing."""
    if pid == os.getpid():
        return False  # this process writes one file at a time: its own are left over
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    try:  # killed but not yet reaped by its parent: it writes nothing more
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def remove_stale_temporaries(folder: str, is_target: Callable[[str], bool]) -> list[str]:
    """Remove the temporary files in ``folder`` that writers no longer running left behind,
    for the final names ``is_target`` accepts; returns the names removed."""
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return []
    removed = []
    for name in names:
        found = _TEMPORARY.match(name)
        if found and is_target(found["name"]):
            stale = not writer_alive(int(found["pid"]))
        else:  # no process id: from an mxlearn before #26 (which named no writer), left over
            found = _BEFORE_PIDS.match(name)
            stale = bool(found and is_target(found["name"]))
        path = os.path.join(folder, name)
        if not stale or os.path.isdir(path):  # a folder of that name is no file mxlearn wrote
            continue
        try:
            os.unlink(path)
        except FileNotFoundError:
            continue  # another process cleaned it at the same time
        removed.append(name)
    return removed
