"""Writing a file so that a reader sees the old file or the whole new one, never half of it.

Checkpoints and saved histories both write this way: the data goes to a temporary name in the
same folder, is flushed to disk (fsync), and is renamed over the final name; the folder is
flushed too, so the rename itself survives a crash.
"""

from __future__ import annotations

import os
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
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
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
