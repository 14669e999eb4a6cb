"""Checkpoint prefixes: what names the files of a checkpoint, checked alike for saving and
loading, before any work.

A prefix is a folder and a name: ``runs/mlp`` writes ``runs/mlp-symbol.json``,
``runs/mlp-0001.params``, ... A prefix that names a folder (``runs/``, or ``runs`` when that is
a folder) would write files named ``runs/-0001.params`` that no one looks for; a file where
the folder should be, a folder that does not exist or cannot be written would fail only after
an epoch of training. All are refused here, with the prefix that works.
"""

from __future__ import annotations

import os
import tempfile

from ..errors import N_, ArgumentTypeError, InputError

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


class PrefixIsAFolder(InputError):
    says = N_(
        "{called}: '{prefix}' names a folder; a checkpoint prefix names the files inside "
        "it: '{inside}' writes '{inside}-symbol.json', '{inside}-0001.params', ..."
    )
    fix_says = N_("use the prefix '{inside}' (any name after the folder)")


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
    """``prefix`` as a string ('~' expanded), refused when it names a folder or lies under a
    file."""
    if not isinstance(prefix, (str, os.PathLike)):
        raise PrefixNotAPath(called=called, kind=type(prefix).__name__)
    prefix = os.path.expanduser(os.fspath(prefix))
    if "\0" in prefix:
        raise NulInPrefix(called=called, prefix=prefix)
    if not os.path.basename(prefix) or os.path.isdir(prefix):
        inside = os.path.join(prefix.rstrip("/" + os.sep) or prefix, EXAMPLE_NAME)
        raise PrefixIsAFolder(called=called, prefix=prefix, inside=inside)
    folder = os.path.dirname(os.path.abspath(prefix))
    blocking = _file_on_the_way(folder)
    if blocking is not None:
        raise FileOnTheWay(called=called, blocking=blocking, prefix=prefix)
    return prefix


def _file_on_the_way(folder: str) -> str | None:
    """The first path on the way to ``folder`` that exists and is not a folder."""
    path = folder
    while path and not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent
    return path if path and not os.path.isdir(path) else None


def check_writable_prefix(prefix, called: str) -> str:
    """As :func:`check_prefix`, and its folder exists and takes new files (tried, not guessed:
    permissions, a read-only disk and a full one all show when a file is made)."""
    prefix = check_prefix(prefix, called)
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
