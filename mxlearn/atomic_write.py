"""Writing a file so that a reader sees the old file or the whole new one, never half of it.

Checkpoints and saved histories both write this way: the data goes to a temporary name in the
same folder, is flushed to disk (fsync), and is renamed over the final name; the folder is
flushed too, so the rename itself survives a crash.

A writer killed mid-write (``kill -9``, a dead kernel) cannot remove its temporary file; the
temporary's name carries the writer's process id, so that a later writer can tell it from one
still being written (:func:`remove_stale_temporaries`, issue #26).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable


def _new_file_mode() -> int:
    """The mode open() gives a new file here: 0o666 less the process's umask (read back by
    setting it, which is the only way to read it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _fsync_folder(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


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
        os.chmod(tmp, _new_file_mode())  # mkstemp makes 0600; a file written plainly is not
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_folder(folder)


def atomic_write_bytes(path: str, data: bytes) -> None:
    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            f.write(data)

    atomic_write(path, write)


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
        if not stale:
            continue
        try:
            os.unlink(os.path.join(folder, name))
        except FileNotFoundError:
            continue  # another process cleaned it at the same time
        removed.append(name)
    return removed
