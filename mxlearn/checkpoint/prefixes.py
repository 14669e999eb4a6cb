"""Checkpoint prefixes (``runs/mlp`` writes ``runs/mlp-0001.params``, ...), checked before any
work: a prefix naming a folder would write ``runs/-0001.params`` that no one looks for, and a
folder that is a file, missing or read-only would fail only after an epoch of training.
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
    """``prefix`` as a string ('~' expanded), unless it names a folder or lies under a file."""
    if not isinstance(prefix, (str, os.PathLike)):
        raise PrefixNotAPath(called=called, kind=type(prefix).__name__)
    prefix = os.path.expanduser(os.fspath(prefix))
    if "\0" in prefix:
        raise NulInPrefix(called=called, prefix=prefix)
    if not os.path.basename(prefix) or os.path.isdir(prefix):
        inside = os.path.join(prefix.rstrip("/" + os.sep) or prefix, EXAMPLE_NAME)
        raise PrefixIsAFolder(called=called, prefix=prefix, inside=inside)
    path = os.path.dirname(os.path.abspath(prefix))  # to the first part of it that exists
    while path and not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    if path and os.path.exists(path) and not os.path.isdir(path):
        raise FileOnTheWay(called=called, blocking=path, prefix=prefix)
    return prefix


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
