"""The errors of checkpoint files (:mod:`.files`): what is wrong with a save or a load, in the
language mxlearn speaks, each with the call that fixes it (declared here, not beside the raises,
to keep files.py small)."""

from __future__ import annotations

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


# ---------------------------------------------------------------- saving
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


# ---------------------------------------------------------------- manifests
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
    over, ``mxnet_only``: the epochs that have MXNet's own files only."""

    says = N_("No complete mxlearn checkpoint under '{prefix}'.")
    fix_says = N_("train with mod.fit(..., checkpoint=prefix) to write resumable checkpoints")

    @classmethod
    def render_problem(cls, fields: dict) -> str:
        skipped = " / ".join(p.rstrip(".。") for p in fields.get("skipped", ()))  # ends once
        if not skipped:
            text = super().render_problem(fields)
        else:
            text = say(
                "No complete mxlearn checkpoint under '{prefix}'; skipped: {problems}.",
                prefix=fields["prefix"],
                problems=skipped,
            )
        if fields.get("mxnet_only"):
            more = say(
                "MXNet-only checkpoints (no manifest) exist for epochs {epochs}: load them with "
                "mx.model.load_checkpoint and fit(..., begin_epoch=N).",
                epochs=fields["mxnet_only"],
            )
            text = sentences(text, more)
        return text


# ---------------------------------------------------------------- parameter and network files
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
