"""The errors of checkpoint files (:mod:`.files`): what is wrong with a save or a load, in the
language mxlearn speaks, each with the call that fixes it."""

from __future__ import annotations

from ..errors import (
    CheckpointError,
    CheckpointExistsError,
    DamagedCheckpointError,
    InputError,
    NonFiniteError,
    closest,
)
from ..language import say, sentences


# ---------------------------------------------------------------- saving
def not_finite(bad: list, epoch: int) -> NonFiniteError:
    return NonFiniteError(
        say(
            "Checkpoint {epoch} was not saved: parameters {names} hold NaN or infinite values, "
            "so training has diverged (most often the learning rate is too high).",
            epoch=epoch,
            names=bad[:5],
        ),
        fix=say(
            "resume from the last good checkpoint with a smaller learning rate, e.g. "
            "optimizer_params={{'learning_rate': 0.01}}"
        ),
    )


def exists_already(prefix: str, epoch: int) -> CheckpointExistsError:
    return CheckpointExistsError(
        say(
            "Checkpoint {epoch} of '{prefix}' exists already; saving again would replace it.",
            epoch=epoch,
            prefix=prefix,
        ),
        fix=say(
            "resume from it: mxlearn.resume({prefix!r}), or save under another prefix "
            "(or pass overwrite=True)",
            prefix=prefix,
        ),
    )


def other_network(path: str) -> CheckpointExistsError:
    return CheckpointExistsError(
        say(
            "'{path}' holds another network; checkpoints of two networks cannot share a prefix.",
            path=path,
        ),
        fix=say("choose a new prefix for this network"),
    )


# ---------------------------------------------------------------- manifests
def no_checkpoint(prefix: str, epoch: int, path: str) -> CheckpointError:
    return CheckpointError(
        say(
            "There is no checkpoint {epoch} of '{prefix}' ({path}).",
            epoch=epoch,
            prefix=prefix,
            path=path,
        )
    )


def unreadable_manifest(path: str, err: Exception) -> DamagedCheckpointError:
    return DamagedCheckpointError(
        say("'{path}' is not a readable manifest: {error}.", path=path, error=err)
    )


def not_a_manifest(path: str) -> DamagedCheckpointError:
    return DamagedCheckpointError(say("'{path}' is not an mxlearn checkpoint manifest.", path=path))


def missing_file(epoch: int, role: str, file: str) -> DamagedCheckpointError:
    return DamagedCheckpointError(
        say(
            "checkpoint {epoch}: its {role} file '{file}' is missing.",
            epoch=epoch,
            role=role,
            file=file,
        )
    )


def damaged_file(epoch: int, file: str, got: dict, entry: dict) -> DamagedCheckpointError:
    return DamagedCheckpointError(
        say(
            "checkpoint {epoch}: '{file}' is damaged: {size} bytes with SHA-256 {sha256}..., "
            "the manifest says {listed_size} bytes, {listed_sha256}....",
            epoch=epoch,
            file=file,
            size=got["size"],
            sha256=got["sha256"][:16],
            listed_size=entry["size"],
            listed_sha256=entry["sha256"][:16],
        )
    )


def incomplete_manifest(path: str) -> DamagedCheckpointError:
    return DamagedCheckpointError(
        say(
            "'{path}' is not a complete manifest: its 'files' list, with each file's name, size "
            "and sha256, is missing or incomplete (edited by hand?).",
            path=path,
        ),
        fix=say(
            "use another checkpoint (mxlearn.checkpoint.latest(prefix) finds the newest "
            "good one), or save again"
        ),
    )


def none_complete(prefix: str, problems: list[str], mxnet_only: list[int]) -> CheckpointError:
    """No checkpoint under ``prefix`` verifies; ``problems`` of the ones passed over, and the
    epochs that have MXNet's own files only."""
    if problems:
        text = say(
            "No complete mxlearn checkpoint under '{prefix}'; skipped: {problems}.",
            prefix=prefix,
            problems=" / ".join(p.rstrip(".。") for p in problems),  # the sentence ends once
        )
    else:
        text = say("No complete mxlearn checkpoint under '{prefix}'.", prefix=prefix)
    if mxnet_only:
        text = sentences(
            text,
            say(
                "MXNet-only checkpoints (no manifest) exist for epochs {epochs}: load them with "
                "mx.model.load_checkpoint and fit(..., begin_epoch=N).",
                epochs=mxnet_only,
            ),
        )
    return CheckpointError(
        text,
        fix=say("train with mod.fit(..., checkpoint=prefix) to write resumable checkpoints"),
    )


# ---------------------------------------------------------------- parameter and network files
def no_params_file(path: str) -> CheckpointError:
    return CheckpointError(say("There is no parameter file '{path}'.", path=path))


def params_is_folder(path: str) -> InputError:
    return InputError(
        say("'{path}' is a folder, not a parameter file.", path=path),
        fix=say("name the .params file itself, e.g. 'runs/mlp-0003.params'"),
    )


def params_not_as_listed(path: str) -> DamagedCheckpointError:
    return DamagedCheckpointError(say("'{path}' does not match its manifest (damaged).", path=path))


def mxnet_cannot_read(path: str, err: Exception) -> DamagedCheckpointError:
    text = say("MXNet cannot read '{path}': {error}", path=path, error=err)
    return DamagedCheckpointError(text.splitlines()[0])


def unnamed_arrays(path: str) -> DamagedCheckpointError:
    return DamagedCheckpointError(
        say("'{path}' holds unnamed arrays, not named parameters.", path=path)
    )


def not_an_epoch(called: str, epoch, example) -> InputError:
    return InputError(
        say(
            "{called}: the epoch is {kind} {epoch!r}; a checkpoint's number is a whole number "
            "of completed epochs (the 0003 of 'prefix-0003.params').",
            called=called,
            kind=type(epoch).__name__,
            epoch=epoch,
        ),
        fix=say("pass it as a whole number, e.g. {example}", example=example),
    )


def no_symbol_file(called: str, file: str, folder: str, saved: list[str], prefix: str):
    """``load_checkpoint`` of a prefix without a network file: the prefixes saved in its
    folder, and the one meant if one is close."""
    where = folder or say("this folder")
    said = [
        say(
            "{called}: there is no '{file}', so no checkpoint was saved under this prefix.",
            called=called,
            file=file,
        )
    ]
    if saved:
        listed = ", ".join(f"'{p}'" for p in saved)
        said.append(say("Saved in {folder}: {prefixes}.", folder=where, prefixes=listed))
    else:
        said.append(say("Saved in {folder}: none.", folder=where))
    near = closest(prefix, saved, n=1)
    if near:
        said.append(say("Did you mean '{prefix}'?", prefix=near[0]))
    return CheckpointError(
        sentences(*said),
        fix=say(
            "use the prefix given to mx.callback.do_checkpoint(prefix) or "
            "mod.save_checkpoint(prefix, epoch), including its folder (a variable named "
            "module_prefix in one cell and model_prefix in another is a classic)"
        ),
    )


def no_params_for_epoch(called: str, file: str, epochs: list[int], example: str, fix: str):
    """``load_checkpoint`` of an epoch without a parameter file: the epochs saved."""
    if epochs:
        have = say("saved epochs: {epochs}", epochs=epochs)
    else:
        have = say("no parameter files were saved")
    return CheckpointError(
        say(
            "{called}: there is no '{file}' ({saved}). The number counts completed epochs: "
            "fit's epoch index 2 is saved as {example}.",
            called=called,
            file=file,
            saved=have,
            example=example,
        ),
        fix=fix or say("train and save first"),
    )


def damaged_symbol(path: str, err: Exception) -> DamagedCheckpointError:
    return DamagedCheckpointError(
        say(
            "'{path}' is not valid JSON ({error}): the network file is damaged or was cut short.",
            path=path,
            error=err,
        ),
        fix=say("save the network again: mod.symbol.save(path), or train again with checkpoints"),
    )
