"""Checkpoints that never lose work, under MXNet's names: ``prefix-symbol.json`` and
``prefix-NNNN.params`` (MXNet's own), ``.optimizer.params`` and ``.random.params`` (NDArray
files, no pickle), and ``prefix-NNNN.json``, the manifest (sizes and SHA-256 of every file,
optimizer, random state, history), written last: a checkpoint exists once its manifest does.
"""

from __future__ import annotations

import hashlib
import json
import os
import re

import numpy as np

from .._compat import mx
from ..atomic_write import (
    atomic_write,
    atomic_write_bytes,
    remove_stale_temporaries,
    writer_alive,
)
from ..boundary import public
from ..errors import (
    N_,
    CheckpointError,
    CheckpointExistsError,
    DamagedCheckpointError,
    InputError,
    NonFiniteError,
    closest,
)
from ..language import say, sentences
from . import optimizer_state
from .names import (
    FILE_NAMES,
    epoch_paths,
    epochs_with,
    manifest_file,
    manifested_epochs,
    marker_file,
    mxnet_epochs,
    optimizer_file,
    params_file,
    partial_epochs,
    prefixes_in,
    random_file,
    refuse_folders,
    saved_epochs,
    symbol_file,
)
from .ndarray_file import check_ndarray_file
from .prefixes import check_prefix, refuse_folder_of_checkpoints

MANIFEST_FORMAT = "mxlearn.checkpoint/1"


def _unlink(*paths: str) -> None:
    for path in paths:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _unlink_epoch(prefix: str, epoch: int) -> None:
    _unlink(*epoch_paths(prefix, epoch)[:-1])  # not the mark: a save removes it last


# ---------------------------------------------------------------- writing
class ParametersNotFinite(NonFiniteError):
    says = N_(
        "Checkpoint {epoch} was not saved: parameters {names} hold NaN or infinite values, "
        "so training has diverged (most often the learning rate is too high)."
    )
    fix_says = N_(
        "resume from the last good checkpoint with a smaller learning rate, e.g. "
        "optimizer_params={{'learning_rate': 0.01}}"
    )


class CheckpointExists(CheckpointExistsError):
    says = N_("Checkpoint {epoch} of '{prefix}' exists already; saving again would replace it.")
    fix_says = N_(
        "resume from it: mxlearn.resume({prefix!r}), or save under another prefix "
        "(or pass overwrite=True)"
    )


class OtherNetwork(CheckpointExistsError):
    says = N_("'{path}' holds another network; checkpoints of two networks cannot share a prefix.")
    fix_says = N_("choose a new prefix for this network")


def _digest(path: str) -> dict:
    with open(path, "rb") as f:
        sha256 = hashlib.file_digest(f, "sha256").hexdigest()
    return {"size": os.path.getsize(path), "sha256": sha256}


def save(
    module,
    prefix: str,
    epoch: int,
    *,
    history=None,
    optimizer_settings=None,
    random_state=None,
    overwrite: bool = False,
) -> str:
    """Write a complete checkpoint of ``module`` after ``epoch`` completed epochs (its
    ``random_state``: ``random_state.capture``'s); returns the manifest's path. Refuses to
    overwrite an existing epoch unless ``overwrite``, and to save parameters that are not finite.
    """
    if os.path.exists(manifest_file(prefix, epoch)) and not overwrite:
        raise CheckpointExists(epoch=epoch, prefix=prefix)
    arg_params, aux_params = module.get_params()
    # a label taken for a parameter (label_names=None) holds a batch's labels, not weights
    arg_params = {k: v for k, v in arg_params.items() if k not in module.label_inputs}
    bad = [n for n, a in {**arg_params, **aux_params}.items() if not np.isfinite(a.asnumpy()).all()]
    if bad:
        raise ParametersNotFinite(epoch=epoch, names=bad[:5])
    _begin_writing(module.symbol, prefix, epoch)
    files = {"symbol": symbol_file(prefix)}

    def write(role: str, path: str, arrays: dict) -> None:
        atomic_write(path, lambda p: mx.nd.save(p, arrays))
        files[role] = path

    params = {f"arg:{k}": v for k, v in arg_params.items()}
    params.update({f"aux:{k}": v for k, v in aux_params.items()})
    write("params", params_file(prefix, epoch), params)
    optimizer = random = None
    if module.optimizer_initialized:
        arrays, optimizer = optimizer_state.capture(module.updater, module.update_keys)
        write("optimizer", optimizer_file(prefix, epoch), arrays)
        optimizer["settings"] = optimizer_settings
        if optimizer_settings is None:  # an optimizer object: its settings are not JSON
            optimizer["not_saved"].append(say("the optimizer's settings"))
    if random_state is not None:
        arrays, random = random_state
        if arrays:  # the data order of a shuffled NDArrayIter
            write("random", random_file(prefix, epoch), arrays)
    manifest = {
        "format": MANIFEST_FORMAT,
        "epoch": epoch,
        "epochs_completed": epoch,
        "resume_with": {"begin_epoch": epoch},
        "files": {
            role: {"name": os.path.basename(path), **_digest(path)} for role, path in files.items()
        },
        "optimizer": optimizer,
        "random": random,
        "history": history.to_dict() if history is not None else None,
    }
    data = json.dumps(manifest, indent=1).encode()
    atomic_write_bytes(manifest_file(prefix, epoch), data)  # last: the commit point
    _unlink(marker_file(prefix, epoch))
    return manifest_file(prefix, epoch)


# A save marks its epoch (``prefix-NNNN.partial``, holding the writer's process id) before it
# writes or removes any file of it, and unmarks it once the manifest is written: a kill at any
# moment leaves a complete checkpoint or files that count as unwritten, never as MXNet's own
# checkpoint (a .params file alone, which fit refuses to overwrite). Issue #26.
def _mark(prefix: str, epoch: int) -> None:
    atomic_write_bytes(marker_file(prefix, epoch), json.dumps({"pid": os.getpid()}).encode())


def remove(prefix: str, epoch: int) -> None:
    """Delete checkpoint ``epoch``: marked first, then the manifest (it stops existing before
    its files go), so a kill halfway leaves files that count as unwritten."""
    _mark(prefix, epoch)
    _unlink_epoch(prefix, epoch)
    _unlink(marker_file(prefix, epoch))


def _writer(prefix: str, epoch: int) -> int | None:
    try:
        with open(marker_file(prefix, epoch), "rb") as f:
            pid = json.loads(f.read().decode()).get("pid")
    except (OSError, ValueError, AttributeError):
        return None  # unreadable: not a save of a running process that could finish it
    return pid if isinstance(pid, int) and not isinstance(pid, bool) else None


def _begin_writing(symbol, prefix: str, epoch: int) -> None:
    """Remove what killed saves left (the files of each marked epoch without a manifest, the
    marks, stale temporaries; not a save by a process still running, another kernel's), write
    the network once (refusing another one), and mark ``epoch`` before any of its files."""
    for marked in epochs_with(prefix, ".partial"):
        pid = _writer(prefix, marked)
        if pid is not None and writer_alive(pid):
            continue
        if not os.path.exists(manifest_file(prefix, marked)):
            _unlink_epoch(prefix, marked)
        _unlink(marker_file(prefix, marked))
    is_ours = re.compile(re.escape(os.path.basename(prefix)) + "-" + FILE_NAMES).fullmatch
    remove_stale_temporaries(os.path.dirname(os.path.abspath(prefix)), is_ours)
    if not os.path.exists(symbol_file(prefix)):
        atomic_write(symbol_file(prefix), lambda p: symbol.save(p))
    else:
        with open(symbol_file(prefix)) as f:
            on_disk = f.read()
        if _canonical(on_disk) != _canonical(symbol.tojson()):
            raise OtherNetwork(path=symbol_file(prefix))
    _mark(prefix, epoch)
    _unlink_epoch(prefix, epoch)  # replaced (overwrite) or a killed save's


def _canonical(sym_json: str) -> str:
    try:
        return json.dumps(json.loads(sym_json), sort_keys=True)
    except ValueError:
        return sym_json


# ---------------------------------------------------------------- reading
class NoCheckpoint(CheckpointError):
    says = N_("There is no checkpoint {epoch} of '{prefix}' ({path}).")


class UnreadableManifest(DamagedCheckpointError):
    says = N_("'{path}' is not a readable manifest: {error}.")


class NotAManifest(DamagedCheckpointError):
    says = N_("'{path}' is not an mxlearn checkpoint manifest.")


class ListedFileMissing(DamagedCheckpointError):
    says = N_("checkpoint {epoch}: its {role} file '{file}' is missing.")


class ListedFileDamaged(DamagedCheckpointError):
    says = N_(
        "checkpoint {epoch}: '{file}' is damaged: {size} bytes with SHA-256 {sha256}..., "
        "the manifest says {listed_size} bytes, {listed_sha256}...."
    )


class ManifestOfAnotherEpoch(DamagedCheckpointError):
    says = N_(
        "'{path}' is the manifest of checkpoint {listed}, not of {epoch}: copied or linked under "
        "another epoch's name."
    )


class IncompleteManifest(DamagedCheckpointError):
    says = N_(
        "'{path}' is not a complete manifest: its 'files' list, with each file's name, size "
        "and sha256, is missing or incomplete (edited by hand?)."
    )
    fix_says = N_(
        "use another checkpoint (mxlearn.checkpoint.latest(prefix) finds the newest "
        "good one), or save again"
    )


class NoCompleteCheckpoint(CheckpointError):
    """No checkpoint under ``prefix`` verifies; ``skipped``: what is wrong with the ones passed
    over, ``mxnet_only``: the epochs that have MXNet's own files only, ``partial``: the epochs
    whose save a kill cut short."""

    says = N_("No complete mxlearn checkpoint under '{prefix}'.")
    fix_says = N_("train with mod.fit(..., checkpoint=prefix) to write resumable checkpoints")

    # said after the problem for the epochs that have files and no complete checkpoint
    MORE = {
        "partial": N_(
            "Saves of epochs {epochs} were cut short (files without a manifest): they count "
            "as unwritten."
        ),
        "mxnet_only": N_(
            "MXNet-only checkpoints (no manifest) exist for epochs {epochs}: load them with "
            "mx.model.load_checkpoint and fit(..., begin_epoch=N)."
        ),
    }

    @classmethod
    def render_problem(cls, fields: dict) -> str:
        skipped = " / ".join(p.rstrip(".。") for p in fields.get("skipped", ()))  # ends once
        said = [super().render_problem(fields)]
        if skipped:
            said = [
                say(
                    "No complete mxlearn checkpoint under '{prefix}'; skipped: {problems}.",
                    prefix=fields["prefix"],
                    problems=skipped,
                )
            ]
        said += [say(more, epochs=fields[k]) for k, more in cls.MORE.items() if fields.get(k)]
        if fields.get("near"):
            said.append(say("Did you mean '{prefix}'?", prefix=fields["near"]))
        return sentences(*said)


def read_manifest(prefix: str, epoch: int) -> dict:
    """The manifest of checkpoint ``epoch``, after checking every file it lists."""
    path = manifest_file(prefix, epoch)
    try:
        with open(path, "rb") as f:
            manifest = json.loads(f.read().decode())
    except FileNotFoundError:
        raise NoCheckpoint(epoch=epoch, prefix=prefix, path=path) from None
    except IsADirectoryError:
        raise NotAManifest(path=path) from None
    except (UnicodeDecodeError, ValueError) as err:
        raise UnreadableManifest(path=path, error=err) from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise NotAManifest(path=path)
    if manifest.get("epoch") != epoch:
        raise ManifestOfAnotherEpoch(path=path, epoch=epoch, listed=manifest.get("epoch"))
    listed = manifest.get("files")  # a hand-edited manifest may lack any part of an entry
    if not isinstance(listed, dict) or not all(
        isinstance(e, dict) and all(k in e for k in ("name", "size", "sha256"))
        for e in listed.values()
    ):
        raise IncompleteManifest(path=path)
    folder = os.path.dirname(prefix)  # as the prefix was given: messages name files as so
    for role, entry in listed.items():
        file = os.path.join(folder, entry["name"])
        if not os.path.exists(file):
            raise ListedFileMissing(epoch=epoch, role=role, file=file)
        refuse_folders(prefix, [file])
        got = _digest(file)
        if got["size"] != entry["size"] or got["sha256"] != entry["sha256"]:
            sizes = {"size": got["size"], "listed_size": entry["size"]}
            hashes = {"sha256": got["sha256"][:16], "listed_sha256": entry["sha256"][:16]}
            raise ListedFileDamaged(epoch=epoch, file=file, **sizes, **hashes)
    return manifest


def latest(prefix: str) -> tuple[int, dict]:
    """The newest checkpoint whose files all verify, and its manifest."""
    epoch, manifest, _ = latest_and_skipped(prefix)
    return epoch, manifest


def verifies(prefix: str, epoch: int) -> bool:
    """Checkpoint ``epoch`` exists and every file it lists matches its manifest."""
    try:
        read_manifest(prefix, epoch)
    except (DamagedCheckpointError, CheckpointError):
        return False
    return True


def latest_and_skipped(
    prefix: str, called: str | None = None
) -> tuple[int, dict, list[tuple[int, str]]]:
    """:func:`latest`, and the newer checkpoints it passed over: (epoch, what is wrong)."""
    called = called or f"latest({prefix!r})"
    prefix = check_prefix(prefix, called)
    skipped = []
    for epoch in reversed(manifested_epochs(prefix)):
        try:
            return epoch, read_manifest(prefix, epoch), skipped
        except (DamagedCheckpointError, CheckpointError) as err:
            skipped.append((epoch, err.problem))
    # parameter files without a manifest: MXNet's own (a damaged mxlearn one is in skipped),
    # or a save of mxlearn's that a kill cut short
    found, cut = mxnet_epochs(prefix), partial_epochs(prefix)
    problems = [problem for _, problem in skipped]
    near = None
    if not (skipped or found or cut):  # nothing under this prefix: a typo, or a file's name?
        refuse_folder_of_checkpoints(prefix, called)  # or the folder of the checkpoints
        saved = {os.path.basename(p): p for p in prefixes_in(os.path.dirname(prefix))}
        given = re.sub("-" + FILE_NAMES + "$", "", os.path.basename(prefix))  # a file's name
        near = next((saved[n] for n in closest(given, saved, n=1)), None)
    facts = dict(skipped=problems, mxnet_only=found, partial=cut, near=near)
    raise NoCompleteCheckpoint(prefix=prefix, **facts)


class NoParamsFile(CheckpointError):
    says = N_("There is no parameter file '{path}'.")


class ParamsIsFolder(InputError):
    says = N_("'{path}' is a folder, not a parameter file.")
    fix_says = N_("name the .params file itself, e.g. 'runs/mlp-0003.params'")


class ParamsNotAsListed(DamagedCheckpointError):
    says = N_("'{path}' does not match its manifest (damaged).")


class MXNetCannotRead(DamagedCheckpointError):
    says = N_("MXNet cannot read '{path}': {error}")

    @classmethod
    def render_problem(cls, fields: dict) -> str:
        return super().render_problem(fields).splitlines()[0]  # not MXNet's stack trace


class UnnamedArrays(DamagedCheckpointError):
    says = N_("'{path}' holds unnamed arrays, not named parameters.")


class NotAnEpoch(InputError):
    says = N_(
        "{called}: the epoch is {kind} {epoch!r}; a checkpoint's number is a whole number "
        "of completed epochs (the 0003 of 'prefix-0003.params')."
    )
    fix_says = N_("pass it as a whole number, e.g. {example}")


class NoSymbolFile(CheckpointError):
    """``load_checkpoint`` of a prefix without a network file: the prefixes ``saved`` in its
    ``folder``, and the one meant if one is close to ``prefix``."""

    says = N_("{called}: there is no '{file}', so no checkpoint was saved under this prefix.")
    fix_says = N_(
        "use the prefix given to mx.callback.do_checkpoint(prefix) or "
        "mod.save_checkpoint(prefix, epoch), including its folder (a variable named "
        "module_prefix in one cell and model_prefix in another is a classic)"
    )

    @classmethod
    def render_problem(cls, fields: dict) -> str:
        said, saved = [super().render_problem(fields)], fields.get("saved", [])
        where = fields.get("folder") or say("this folder")
        if saved:
            listed = ", ".join(f"'{p}'" for p in saved)
            said.append(say("Saved in {folder}: {prefixes}.", folder=where, prefixes=listed))
        else:
            said.append(say("Saved in {folder}: none.", folder=where))
        near = closest(fields.get("prefix", ""), saved, n=1)
        if near:
            said.append(say("Did you mean '{prefix}'?", prefix=near[0]))
        return sentences(*said)


class NoParamsForEpoch(CheckpointError):
    """``load_checkpoint`` of an epoch without a parameter file: ``saved`` says the epochs."""

    says = N_(
        "{called}: there is no '{file}' ({saved}). The number counts completed epochs: "
        "fit's epoch index 2 is saved as {example}."
    )
    fix_says = N_("train and save first")


class DamagedSymbol(DamagedCheckpointError):
    says = N_("'{path}' is not valid JSON ({error}): the network file is damaged or was cut short.")
    fix_says = N_("save the network again: mod.symbol.save(path), or train again with checkpoints")


def load_params(path: str, expected: dict | None = None) -> tuple[dict, dict]:
    """``(arg_params, aux_params)`` from an MXNet ``.params`` file, checked before MXNet parses
    it (against ``expected`` = {'size', 'sha256'} when a manifest gives them)."""
    if not os.path.exists(path):
        raise NoParamsFile(path=path)
    if os.path.isdir(path):
        raise ParamsIsFolder(path=path)
    if expected is not None:
        got = _digest(path)
        if (got["size"], got["sha256"]) != (expected["size"], expected["sha256"]):
            raise ParamsNotAsListed(path=path)
    check_ndarray_file(path)
    try:
        loaded = mx.nd.load(path)
    except mx.base.MXNetError as err:
        raise MXNetCannotRead(path=path, error=err) from None
    if not isinstance(loaded, dict):
        raise UnnamedArrays(path=path)
    arg_params, aux_params = {}, {}
    for key, value in loaded.items():
        kind, _, name = key.partition(":")
        if kind == "arg":
            arg_params[name] = value
        elif kind == "aux":
            aux_params[name] = value
    return arg_params, aux_params


class CheckpointParams(dict):
    """A parameter dict that remembers the checkpoint it came from (prefix, epoch), so that
    ``fit`` can tell which ``begin_epoch`` continues it."""

    prefix: str | None = None
    epoch: int | None = None


def check_epoch(epoch, called: str) -> None:
    """A checkpoint number: the whole number of completed epochs in ``prefix-NNNN.params``."""
    if isinstance(epoch, bool) or not isinstance(epoch, (int, np.integer)) or epoch < 0:
        try:
            example = max(int(epoch), 1)  # a negative number's example would be itself
        except (TypeError, ValueError):
            example = 1
        raise NotAnEpoch(called=called, kind=type(epoch).__name__, epoch=epoch, example=example)


@public("mxlearn.load_checkpoint()")
def load_checkpoint(prefix: str, epoch: int):
    """``mx.model.load_checkpoint`` with the missing file explained: (symbol, arg_params, aux_params).

    Examples
    --------
    >>> sym, arg_params, aux_params = load_checkpoint('runs/mx_mlp', 3)  # doctest: +SKIP
    """
    called = f"load_checkpoint({prefix!r}, {epoch!r})"
    check_epoch(epoch, called)
    prefix = check_prefix(prefix, called)
    loading = f"load_checkpoint({prefix!r}, {epoch})"  # the prefix with '~' expanded
    if not os.path.exists(symbol_file(prefix)):
        refuse_folder_of_checkpoints(prefix, loading)
        folder, file = os.path.dirname(prefix), symbol_file(prefix)
        saved = prefixes_in(folder)
        raise NoSymbolFile(called=loading, file=file, folder=folder, saved=saved, prefix=prefix)
    if not os.path.exists(params_file(prefix, epoch)):
        epochs = saved_epochs(prefix)
        saved = say("saved epochs: {epochs}", epochs=epochs)
        if not epochs:
            saved = say("no parameter files were saved")
        fix = f"load_checkpoint({prefix!r}, {epochs[-1]})" if epochs else None
        file, example = params_file(prefix, epoch), params_file(os.path.basename(prefix), 3)
        raise NoParamsForEpoch(called=loading, file=file, saved=saved, example=example, fix=fix)
    expected = None
    if os.path.exists(manifest_file(prefix, epoch)):
        expected = read_manifest(prefix, epoch)["files"]["params"]
    symbol = load_symbol(prefix)
    loaded = [CheckpointParams(p) for p in load_params(params_file(prefix, epoch), expected)]
    for params in loaded:
        params.prefix, params.epoch = prefix, epoch
    return symbol, *loaded


def load_symbol(prefix: str):
    """The network of ``prefix``; a damaged or truncated file is explained, not a decode error."""
    path = symbol_file(prefix)
    refuse_folders(prefix, [path])
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        json.loads(text)
    except (UnicodeDecodeError, ValueError) as err:
        raise DamagedSymbol(path=path, error=err) from None
    return mx.sym.load_json(text)


def load_optimizer_arrays(prefix: str, epoch: int) -> dict:
    return mx.nd.load(optimizer_file(prefix, epoch))
