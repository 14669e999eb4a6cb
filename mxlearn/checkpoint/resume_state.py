"""What ``mxlearn.resume(prefix)`` and ``fit(..., resume=prefix)`` continue from: the newest
complete checkpoint, loaded. The resumed run ends with the same parameters, byte for byte, as an
uninterrupted one (tests/test_resume_exact.py); what a checkpoint could not hold, ``explain`` names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .._compat import mx
from ..language import say, say_drawn, say_n, sentences
from ..metrics.history import MetricHistory
from . import files, names
from .prefixes import check_prefix
from .random_state import not_saved_by_hand


def _epochs_done(count: int) -> str:
    return say_n("{count} epoch is done", "{count} epochs are done", count)


@dataclass
class ResumeState:
    prefix: str
    epoch: int  # epochs completed = the begin_epoch to continue with
    manifest: dict
    arg_params: dict
    aux_params: dict
    optimizer_arrays: dict | None
    random_arrays: dict
    skipped: list = field(default_factory=list)  # (epoch, problem) of newer, damaged ones
    partial: list = field(default_factory=list)  # newer epochs whose save a kill cut short
    unmanifested: list = field(default_factory=list)  # newer .params without a manifest

    @property
    def optimizer(self) -> dict | None:
        return self.manifest.get("optimizer")

    def history(self) -> MetricHistory:
        saved = self.manifest.get("history")
        history = MetricHistory.from_dict(saved) if saved else MetricHistory()
        # drawn on the plot: Chinese only where a font can draw it
        history.mark(say_drawn("resumed at epoch {epoch}", epoch=self.epoch), epoch=self.epoch)
        return history

    @property
    def random(self) -> dict | None:
        """The data order and generator states (``random_state.capture``), if saved."""
        return self.manifest.get("random")

    @property
    def not_saved(self) -> list[str]:
        """What the checkpoint could not hold: a resumed run differs there."""
        random = [not_saved_by_hand()] if self.random is None else self.random["not_saved"]
        return [*(self.optimizer or {}).get("not_saved", []), *random]

    def explain(self) -> str:
        said = [
            say(
                "Resuming from checkpoint {epoch} of '{prefix}': {done} (epochs 0..{last}, as "
                "MXNet counts), so training goes on with epoch {epoch}, i.e. "
                "fit(..., begin_epoch={epoch}).",
                epoch=self.epoch,
                prefix=self.prefix,
                done=_epochs_done(self.epoch),
                last=self.epoch - 1,
            )
        ]
        for epoch, problem in self.skipped:
            said.append(
                say(
                    "The newer checkpoint {epoch} is damaged and was passed over ({problem}); "
                    "a fit from here that saves checkpoint {epoch} replaces it.",
                    epoch=epoch,
                    problem=problem,
                )
            )
        if self.partial:
            said.append(
                say(
                    "The save of epochs {epochs} was cut short (files without a manifest, the "
                    "run was killed): they count as unwritten, and the next save removes them.",
                    epochs=self.partial,
                )
            )
        if self.unmanifested:
            said.append(
                say(
                    "Epochs {epochs} have parameter files without a manifest, so not a complete "
                    "mxlearn checkpoint (MXNet's own, or a manifest removed): passed over; a fit "
                    "that would save these epochs refuses to write over them unless "
                    "Checkpoint(..., overwrite=True).",
                    epochs=self.unmanifested,
                )
            )
        if self.not_saved:
            said.append(
                say(
                    "Not in the checkpoint, so the resumed run will differ from an "
                    "uninterrupted one there: {items}.",
                    items=say("; ").join(self.not_saved),
                )
            )
        return sentences(*said)


def load_resume_state(prefix: str) -> ResumeState:
    called = f"resume({prefix!r})"
    prefix = check_prefix(prefix, called)
    epoch, manifest, skipped = files.latest_and_skipped(prefix, called)
    _, arg_params, aux_params = files.load_checkpoint(prefix, epoch)
    listed = manifest["files"]
    arrays = files.load_optimizer_arrays(prefix, epoch) if manifest.get("optimizer") else None
    # the data order's arrays: none when the iterator did not shuffle
    random_arrays = mx.nd.load(names.random_file(prefix, epoch)) if "random" in listed else {}
    partial = [e for e in names.partial_epochs(prefix) if e > epoch]
    unmanifested = [e for e in names.mxnet_epochs(prefix) if e > epoch]
    return ResumeState(
        prefix,
        epoch,
        manifest,
        arg_params,
        aux_params,
        arrays,
        random_arrays,
        skipped,
        partial,
        unmanifested,
    )
