"""Checkpointing from fit, and one-call resume.

``mod.fit(..., checkpoint='runs/mlp')`` saves a complete checkpoint after every epoch (after
validation, when there is one); ``Checkpoint(prefix, period=N, keep=K, best='accuracy')`` saves
every N epochs, keeps the last K and the best one. ``mxlearn.resume(prefix)`` (or
``fit(..., resume=prefix)``) finds the newest checkpoint whose files verify and continues from it:
parameters, optimizer state, update count and learning-rate schedule, metric history and epoch
number, so the resumed run computes exactly what the uninterrupted one would have.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from . import checkpoint as files
from .errors import InputError
from .history import MetricHistory
from .metrics import improves


@dataclass
class ResumeState:
    prefix: str
    epoch: int  # epochs completed = the begin_epoch to continue with
    manifest: dict
    arg_params: dict
    aux_params: dict
    optimizer_arrays: dict | None

    @property
    def optimizer(self) -> dict | None:
        return self.manifest.get("optimizer")

    def history(self) -> MetricHistory:
        saved = self.manifest.get("history")
        history = MetricHistory.from_dict(saved) if saved else MetricHistory()
        history.mark(f"resumed at epoch {self.epoch}", epoch=self.epoch)
        return history

    def explain(self) -> str:
        return (
            f"Resuming from checkpoint {self.epoch} of '{self.prefix}': {self.epoch} epochs are "
            f"done (epochs 0..{self.epoch - 1}, as MXNet counts), so training goes on with epoch "
            f"{self.epoch}, i.e. fit(..., begin_epoch={self.epoch})."
        )


def load_resume_state(prefix: str) -> ResumeState:
    epoch, manifest = files.latest(prefix)
    _, arg_params, aux_params = files.load_checkpoint(prefix, epoch)
    arrays = None
    if manifest.get("optimizer") is not None:
        arrays = files.load_optimizer_arrays(prefix, epoch)
    return ResumeState(prefix, epoch, manifest, arg_params, aux_params, arrays)


def resume(prefix: str, context=None, **module_args):
    """A Module ready to continue the newest complete checkpoint under ``prefix``.

    ``mod.fit(train_iter, num_epoch=N, checkpoint=prefix)`` then goes on from the saved epoch
    with the saved optimizer state.

    Examples
    --------
    >>> mod = mxlearn.resume('runs/mlp', context=mx.cpu())  # doctest: +SKIP
    >>> mod.fit(train_iter, num_epoch=10, checkpoint='runs/mlp')  # doctest: +SKIP
    """
    from ._compat import mx
    from .module import Module

    state = load_resume_state(prefix)
    symbol = files.load_symbol(prefix)
    mod = Module(symbol, context=context if context is not None else mx.cpu(), **module_args)
    mod._arg_params, mod._aux_params = state.arg_params, state.aux_params
    mod.params_initialized = True
    mod._resume = state
    print(state.explain())
    return mod


class Checkpoint:
    """When and what ``fit`` saves: every ``period`` epochs, the last ``keep``, and the best
    by a validation metric (``best='accuracy'``), which is never deleted.

    Examples
    --------
    >>> mod.fit(train_iter, eval_data=val_iter, num_epoch=20,
    ...         checkpoint=mxlearn.Checkpoint('runs/mlp', period=2, keep=3, best='accuracy'))
    ... # doctest: +SKIP
    """

    def __init__(
        self,
        prefix: str,
        period: int = 1,
        keep: int | None = None,
        best: str | None = None,
        overwrite: bool = False,
    ):
        if period < 1 or (keep is not None and keep < 1):
            raise InputError(
                f"Checkpoint(period={period}, keep={keep}): both count epochs and must be >= 1.",
                fix="Checkpoint(prefix, period=1, keep=3)",
            )
        folder = os.path.dirname(os.path.abspath(prefix))
        if not os.path.isdir(folder):
            raise InputError(
                f"Checkpoint('{prefix}'): the folder '{folder}' does not exist.",
                fix=f"os.makedirs({folder!r}, exist_ok=True)",
            )
        self.prefix, self.period, self.keep, self.best = prefix, period, keep, best
        self.overwrite = overwrite
        self.best_value: float | None = None
        self.best_epoch: int | None = None
        self.saved: list[int] = []

    @classmethod
    def of(cls, spec) -> Checkpoint | None:
        if spec is None or isinstance(spec, Checkpoint):
            return spec
        if isinstance(spec, (str, os.PathLike)):
            return cls(os.fspath(spec))
        raise InputError(
            f"fit(checkpoint={spec!r}): give a prefix such as 'runs/mlp' or a mxlearn.Checkpoint.",
            fix="mod.fit(..., checkpoint='runs/mlp')",
        )

    def after_epoch(self, module, epochs_completed: int, history, settings) -> None:
        if epochs_completed % self.period:
            return
        files.save(
            module,
            self.prefix,
            epochs_completed,
            history=history,
            optimizer_settings=settings,
            overwrite=self.overwrite,
        )
        self.saved.append(epochs_completed)
        if self.best is not None:
            self._track_best(history, epochs_completed)
        if self.keep is not None:
            self._prune()

    def _track_best(self, history, epochs_completed: int) -> None:
        value = history.last(self.best, "validation") if history is not None else None
        if value is None:
            return
        if improves(self.best, value, self.best_value):
            self.best_value, self.best_epoch = value, epochs_completed
            pointer = {"epoch": epochs_completed, "metric": self.best, "value": value}
            files.atomic_write_bytes(f"{self.prefix}-best.json", json.dumps(pointer).encode())

    def _prune(self) -> None:
        keep = set(self.saved[-self.keep :]) | {self.best_epoch}
        for epoch in [e for e in self.saved if e not in keep]:
            # the manifest first: the checkpoint stops existing before its files go
            for path in (
                files.manifest_file(self.prefix, epoch),
                files.params_file(self.prefix, epoch),
                files.optimizer_file(self.prefix, epoch),
            ):
                if os.path.exists(path):
                    os.unlink(path)
            self.saved.remove(epoch)


def _checkpoint_callback_prefix(callback) -> str | None:
    """The prefix of an ``mx.callback.do_checkpoint(prefix)`` callback, else None."""
    code = getattr(callback, "__code__", None)
    if code is None or "do_checkpoint" not in getattr(callback, "__qualname__", ""):
        return None
    cells = dict(zip(code.co_freevars, callback.__closure__ or ()))
    cell = cells.get("prefix")
    return cell.cell_contents if cell is not None else None


def begin_epoch_note(arg_params, begin_epoch: int, epoch_end_callbacks) -> str | None:
    """What a student should hear when ``fit`` gets parameters and begin_epoch=0: the seed
    tutorial's classic is resuming a checkpoint without begin_epoch, which numbers the epochs
    from 0 again and overwrites the early checkpoints."""
    if arg_params is None or begin_epoch != 0:
        return None
    saved_from = getattr(arg_params, "epoch", None)
    overwrites = []
    for callback in epoch_end_callbacks:
        prefix = _checkpoint_callback_prefix(callback)
        if prefix and files.saved_epochs(prefix):
            overwrites.append(f"'{files.params_file(prefix, 1)}'")
    if saved_from is None and not overwrites:
        return None
    origin = (
        f"the parameters of checkpoint {saved_from} of '{arg_params.prefix}'"
        if saved_from
        else "parameters"
    )
    text = f"Note: fit() got {origin} and begin_epoch=0, so epochs are counted from 0 again"
    if overwrites:
        text += f", and do_checkpoint will write {', '.join(overwrites)} again over the saved one"
    continue_with = f"begin_epoch={saved_from}" if saved_from else "begin_epoch=<that number>"
    return (
        text + f". To continue after a checkpoint, pass its number: {continue_with} (for "
        "fine-tuning from other weights, 0 is right)."
    )
