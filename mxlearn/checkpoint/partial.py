"""Checkpoints cut short by a kill, told apart from MXNet's own files and cleaned away.

A save marks its epoch (``prefix-NNNN.partial``, holding the writer's process id) before it
writes any file of it, and removes the mark once the manifest is written. A kill at any moment
leaves either a complete checkpoint (its manifest) or a marked one: files without a manifest
that count as unwritten, never as MXNet's own checkpoint (a ``.params`` file alone, which
``fit`` refuses to overwrite). The next save removes what earlier, killed writes left: the
marked epochs' files and the temporary files of every checkpoint file (issue #26).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable

from ..atomic_write import atomic_write_bytes, remove_stale_temporaries, writer_alive

SUFFIX = ".partial"


def marker_file(prefix: str, epoch: int) -> str:
    return f"{prefix}-{epoch:04d}{SUFFIX}"


def mark(prefix: str, epoch: int) -> None:
    """Before the first file of checkpoint ``epoch`` is written or removed."""
    atomic_write_bytes(marker_file(prefix, epoch), json.dumps({"pid": os.getpid()}).encode())


def unmark(prefix: str, epoch: int) -> None:
    """Once the manifest is written (or, pruning, every file is removed)."""
    try:
        os.unlink(marker_file(prefix, epoch))
    except FileNotFoundError:
        pass


def marked_epochs(prefix: str) -> list[int]:
    """Epochs whose save (or removal) began and did not finish, ascending; a marked epoch
    with a manifest was killed after its manifest, so it is complete."""
    pattern = re.compile(re.escape(os.path.basename(prefix)) + r"-(\d{4,})" + re.escape(SUFFIX))
    try:
        names = os.listdir(os.path.dirname(prefix) or ".")
    except OSError:
        return []
    return sorted(int(m.group(1)) for m in map(pattern.fullmatch, names) if m)


def _writer(prefix: str, epoch: int) -> int | None:
    try:
        with open(marker_file(prefix, epoch), "rb") as f:
            pid = json.loads(f.read().decode()).get("pid")
    except (OSError, ValueError, AttributeError):
        return None  # unreadable: not a save of a running process that could finish it
    return pid if isinstance(pid, int) and not isinstance(pid, bool) else None


def is_checkpoint_file(prefix: str) -> Callable[[str], bool]:
    """Whether a file name is one of the files a checkpoint of ``prefix`` writes."""
    kinds = (
        r"(symbol\.json|best\.json|\d{4,}\.(params|optimizer\.params|random\.params|json|partial))"
    )
    pattern = re.compile(re.escape(os.path.basename(prefix)) + "-" + kinds)
    return lambda name: pattern.fullmatch(name) is not None


def clean_earlier_writes(prefix: str, epoch_files: Callable[[int], list[str]], complete) -> None:
    """Remove what killed saves of ``prefix`` left: the files of each marked epoch that has no
    manifest (``complete(epoch)`` is false), the marks, and every stale temporary file. A save
    by a process still running (another kernel on the same prefix) is left alone."""
    for epoch in marked_epochs(prefix):
        pid = _writer(prefix, epoch)
        if pid is not None and writer_alive(pid):
            continue
        if not complete(epoch):
            for path in epoch_files(epoch):
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
        unmark(prefix, epoch)
    remove_stale_temporaries(os.path.dirname(os.path.abspath(prefix)), is_checkpoint_file(prefix))
