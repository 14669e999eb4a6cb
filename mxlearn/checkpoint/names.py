"""Where a checkpoint's files are, under MXNet's names (``prefix-symbol.json``,
``prefix-NNNN.params``) and mxlearn's beside them, and which epochs have them."""

from __future__ import annotations

import glob
import os
import re

from ..errors import N_, InputError

# the names of the files a checkpoint of a prefix writes, after "prefix-"
FILE_NAMES = (
    r"(symbol\.json|best\.json|\d{4,}\.(params|optimizer\.params|random\.params|json|partial))"
)


def symbol_file(prefix: str) -> str:
    return f"{prefix}-symbol.json"


def best_file(prefix: str) -> str:
    """The pointer to the best epoch (Checkpoint(best=...))."""
    return f"{prefix}-best.json"


# NNNN counts completed epochs: fit's epoch index 2, the third, is saved as 0003 and resumed
# with begin_epoch=3
def params_file(prefix: str, epoch: int) -> str:
    return f"{prefix}-{epoch:04d}.params"


def optimizer_file(prefix: str, epoch: int) -> str:
    return f"{prefix}-{epoch:04d}.optimizer.params"


def random_file(prefix: str, epoch: int) -> str:
    return f"{prefix}-{epoch:04d}.random.params"


def manifest_file(prefix: str, epoch: int) -> str:
    return f"{prefix}-{epoch:04d}.json"


def marker_file(prefix: str, epoch: int) -> str:
    return f"{prefix}-{epoch:04d}.partial"


def optimizer_states_file(prefix: str, epoch: int) -> str:
    """MXNet's pickled optimizer states (``save_optimizer_states=True``)."""
    return f"{prefix}-{epoch:04d}.states"


def epochs_with(prefix: str, suffix: str) -> list[int]:
    pattern = re.compile(re.escape(os.path.basename(prefix)) + r"-(\d{4,})" + re.escape(suffix))
    epochs = []
    for path in glob.glob(f"{glob.escape(prefix)}-*{suffix}"):
        found = pattern.fullmatch(os.path.basename(path))
        if found and os.path.isfile(path):  # a folder named like a checkpoint file is not one
            epochs.append(int(found.group(1)))
    return sorted(epochs)


def saved_under(prefix: str) -> bool:
    """Whether any file of a checkpoint of ``prefix`` exists, mxlearn's or MXNet's (its
    pickled ``.states`` too); a folder of the prefix's name is none of them."""
    ours = re.compile(re.escape(os.path.basename(prefix)) + "-(" + FILE_NAMES + r"|\d{4,}\.states)")
    found = glob.glob(f"{glob.escape(prefix)}-*")
    return any(ours.fullmatch(os.path.basename(p)) and os.path.isfile(p) for p in found)


def prefixes_in(folder: str) -> list[str]:
    """The checkpoint prefixes saved in ``folder`` (each has a ``-symbol.json`` file)."""
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return []
    suffix = "-symbol.json"
    paths = (os.path.join(folder, n[: -len(suffix)]) for n in names if n.endswith(suffix))
    return sorted(p for p in paths if os.path.isfile(symbol_file(p)))


def saved_epochs(prefix: str) -> list[int]:
    """Epoch numbers that have a parameter file for ``prefix``, ascending."""
    return epochs_with(prefix, ".params")


def manifested_epochs(prefix: str) -> list[int]:
    """Epoch numbers with a complete mxlearn checkpoint (a manifest), ascending."""
    return epochs_with(prefix, ".json")


def partial_epochs(prefix: str) -> list[int]:
    """Epochs whose save was cut short (a kill): marked, without a manifest; unwritten."""
    complete = set(manifested_epochs(prefix))
    return [e for e in epochs_with(prefix, ".partial") if e not in complete]


def mxnet_epochs(prefix: str) -> list[int]:
    """Epochs with MXNet's own checkpoint only (a parameter file, neither a manifest nor a
    save of mxlearn's cut short)."""
    ours = set(manifested_epochs(prefix)) | set(epochs_with(prefix, ".partial"))
    return [e for e in saved_epochs(prefix) if e not in ours]


def epoch_paths(prefix: str, epoch: int) -> list[str]:
    """Every file a checkpoint of ``epoch`` writes, the manifest first."""
    names = (manifest_file, params_file, optimizer_file, random_file, marker_file)
    return [name(prefix, epoch) for name in names]


class FolderInTheWay(InputError):
    says = N_("'{path}' is a folder, where a checkpoint of '{prefix}' keeps a file.")
    fix_says = N_("move or rename the folder, or save under another prefix")


def refuse_folders(prefix: str, paths, epochs=None) -> None:
    """Refuse a folder at one of ``paths``, or at a file of a checkpoint of an epoch for which
    ``epochs(epoch)`` is true. The epochs are found from the folder's entries (one listing),
    not by a look at every planned epoch's files: a run may plan a million."""
    for path in paths:
        if os.path.isdir(path):
            raise FolderInTheWay(path=path, prefix=prefix)
    if epochs is None:
        return
    named = re.compile(re.escape(os.path.basename(prefix)) + "-" + FILE_NAMES)
    for path in glob.glob(f"{glob.escape(prefix)}-*"):
        found = named.fullmatch(os.path.basename(path))
        number = found and re.match(r"\d+", found.group(1))
        if number and epochs(int(number.group())) and os.path.isdir(path):
            raise FolderInTheWay(path=path, prefix=prefix)
