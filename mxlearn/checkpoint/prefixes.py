"""Checkpoint prefixes (``runs/mlp`` writes ``runs/mlp-0001.params``, ...), checked before any
work. A prefix is a file-name stem, as in MXNet: a folder ``runs/mlp/`` beside the files is no
obstacle. A prefix without a name (``runs/``) is refused for saving (its files would be named
``-0001.params``), a folder that is a file, missing or read-only before an epoch of training;
a prefix with nothing saved under it that names a folder of checkpoints gets their prefixes.
"""

from __future__ import annotations

import os
import tempfile

from ..errors import N_, ArgumentTypeError, CheckpointError, InputError
from .names import prefixes_in, saved_under, symbol_file

EXAMPLE_NAME = "mlp"


class PrefixNotAPath(ArgumentTypeError):
    says = N_(
        "{called}: a checkpoint prefix is a path such as 'runs/mlp' (a folder and a "
        "name for the files); got {kind}."
    )
    fix_says = N_("pass the prefix as a string, e.g. 'runs/mlp'")


class NulInPrefix(InputError):
    says = N_("{called}: the prefix {prefix!r} holds a NUL character, which no file name can.")
    fix_says = N_("use letters, digits, '-' and '_', e.g. 'runs/mlp'")


class PrefixHasNoName(InputError):
    says = N_(
        "{called}: the prefix '{prefix}' ends in a folder separator, so it has no name: its "
        "files would be '{prefix}-symbol.json', '{prefix}-0001.params', ...; a checkpoint "
        "prefix is a folder and a name: '{inside}' writes '{inside}-symbol.json', ..."
    )
    fix_says = N_("use the prefix '{inside}' (any name after the folder)")


class CheckpointsInsideFolder(CheckpointError):
    """Nothing is saved under the prefix, which names a folder holding one checkpoint:
    ``inside``, the prefixes found there (their ``-symbol.json`` files)."""

    says = N_(
        "{called}: nothing is saved under the prefix '{prefix}' (there is no '{file}'); "
        "'{prefix}' is a folder, and the checkpoint in it has the prefix {listed}: a prefix "
        "is a folder and the name before '-symbol.json'."
    )
    fix_says = N_("use the prefix {listed}")


class SeveralCheckpointsInsideFolder(CheckpointsInsideFolder):
    says = N_(
        "{called}: nothing is saved under the prefix '{prefix}' (there is no '{file}'); "
        "'{prefix}' is a folder, and the checkpoints in it have the prefixes {listed}: a "
        "prefix is a folder and the name before '-symbol.json'."
    )
    fix_says = N_("use the prefix of the checkpoint you mean: one of {listed}")


class FileOnTheWay(InputError):
    says = N_(
        "{called}: '{blocking}' is a file, not a folder, so nothing can be saved or found "
        "under '{prefix}'."
    )
    fix_says = N_("choose a prefix in a folder, e.g. 'runs/mlp', or move the file away")


class NoPrefixFolder(InputError):
    says = N_("{called}: the folder '{folder}' for prefix '{prefix}' does not exist.")
    fix_code = "os.makedirs({folder!r}, exist_ok=True)"


class PrefixTooLong(InputError):
    says = N_(
        "{called}: the name '{name}' is too long: the files it names ('{longest}') "
        "exceed the {limit} bytes a file name may have here."
    )
    fix_says = N_("choose a shorter name, e.g. 'runs/mlp'")


class FolderNotWritable(InputError):
    says = N_(
        "{called}: cannot write into '{folder}' ({reason}), so no checkpoint could be "
        "saved there; training would have run an epoch before finding out."
    )
    fix_says = N_(
        "choose a folder you can write to, e.g. checkpoint='runs/mlp' beside your notebook"
    )


def check_prefix(prefix, called: str) -> str:
    """``prefix`` as a string ('~' expanded), unless it lies under a file."""
    if not isinstance(prefix, (str, os.PathLike)):
        raise PrefixNotAPath(called=called, kind=type(prefix).__name__)
    prefix = os.path.expanduser(os.fspath(prefix))
    if "\0" in prefix:
        raise NulInPrefix(called=called, prefix=prefix)
    path = os.path.dirname(os.path.abspath(prefix))  # to the first part of it that exists
    while path and not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    if path and os.path.exists(path) and not os.path.isdir(path):
        raise FileOnTheWay(called=called, blocking=path, prefix=prefix)
    return prefix


def check_writable_prefix(prefix, called: str) -> str:
    """As :func:`check_prefix`, with a name, and its folder exists and takes new files (tried, not guessed:
    permissions, a read-only disk and a full one all show when a file is made)."""
    prefix = check_prefix(prefix, called)
    if not os.path.basename(prefix):
        inside = os.path.join(prefix.rstrip("/" + os.sep) or prefix, EXAMPLE_NAME)
        raise PrefixHasNoName(called=called, prefix=prefix, inside=inside)
    folder = os.path.dirname(os.path.abspath(prefix))
    if not os.path.isdir(folder):
        raise NoPrefixFolder(called=called, folder=folder, prefix=prefix)
    longest = os.path.basename(prefix) + "-0000.optimizer.params"  # the longest name saved
    limit = os.pathconf(folder, "PC_NAME_MAX") if hasattr(os, "pathconf") else 255
    if len(os.fsencode(longest)) > limit:
        name = os.path.basename(prefix)
        raise PrefixTooLong(called=called, name=name, longest=longest, limit=limit)
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
        raise FolderNotWritable(called=called, folder=folder, reason=err.strerror) from None
    return prefix


def refuse_folder_of_checkpoints(prefix: str, called: str) -> None:
    """When nothing is saved under ``prefix`` and ``prefix`` is a folder holding checkpoints,
    the prefix meant was one of theirs: name them, as found on disk."""
    if not os.path.isdir(prefix) or saved_under(prefix):
        return
    inside = prefixes_in(prefix)
    listed = ", ".join(f"'{p}'" for p in inside)
    kind = CheckpointsInsideFolder if len(inside) == 1 else SeveralCheckpointsInsideFolder
    if inside:
        raise kind(
            called=called, prefix=prefix, file=symbol_file(prefix), inside=inside, listed=listed
        )
