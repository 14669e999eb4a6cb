"""When and what ``fit`` saves: the checkpoint policy; the files are :mod:`.files`."""

from __future__ import annotations

import json
import os

from .. import rules
from ..atomic_write import atomic_write_bytes
from ..boundary import public
from ..errors import N_, CheckpointExistsError, InputError
from ..language import say
from ..metrics.directions import check_name, improves
from ..training.callback import Callback, RunContext
from . import files, names, random_state
from .prefixes import check_writable_prefix

EXAMPLE = "Checkpoint(prefix, period=1, keep=3)"


class NotACheckpointSpec(InputError):
    says = N_("fit(checkpoint={spec!r}): give a prefix such as 'runs/mlp' or a mxlearn.Checkpoint.")
    fix_code = "mod.fit(..., checkpoint='runs/mlp')"


class BestNeedsValidation(InputError):
    says = N_(
        "{called} keeps the epoch with the best validation value, and this fit has no eval_data."
    )
    fix_code = "mod.fit(train_iter, eval_data=val_iter, checkpoint=mxlearn.Checkpoint(...))"


class WouldOverwrite(CheckpointExistsError):
    says = N_(
        "Checkpoint {which} of '{prefix}' exists already and verifies; this fit (epochs "
        "{first}..{last}) would write it again, and would refuse only after training an "
        "epoch."
    )
    fix_says = N_(
        "resume from them: mxlearn.resume({prefix!r}), or save under another prefix (or "
        "pass Checkpoint(..., overwrite=True))"
    )


class WouldOverwriteSeveral(WouldOverwrite):
    says = N_(
        "Checkpoints {which} of '{prefix}' exist already and verify; this fit (epochs "
        "{first}..{last}) would write them again, and would refuse only after training "
        "an epoch."
    )


class MXNetFilesInTheWay(WouldOverwrite):
    says = N_(
        "Epochs {which} of '{prefix}' have parameter files without mxlearn's manifest (MXNet's "
        "own checkpoint, as do_checkpoint and mod.save_checkpoint write, or a manifest "
        "removed); this fit (epochs {first}..{last}) would write over them, and would refuse "
        "only after training an epoch."
    )
    fix_says = N_(
        "save under another prefix, or pass Checkpoint(..., overwrite=True) to replace them"
    )


class Checkpoint(Callback):
    """When and what ``fit`` saves: every ``period`` epochs, the last ``keep``, and the best
    by a validation metric (``best='accuracy'``, any name the metric factory takes, such as
    'acc'), which is never deleted. For a custom metric, say ``higher_is_better``. It is fit's
    callback too: ``fit(checkpoint=...)`` (a prefix or a Checkpoint) puts it among the run's.

    Examples
    --------
    >>> mod.fit(train_iter, eval_data=val_iter, num_epoch=20,
    ...         checkpoint=mxlearn.Checkpoint('runs/mlp', period=2, keep=3, best='accuracy'))
    ... # doctest: +SKIP
    """

    @public(
        "mxlearn.Checkpoint()",
        period=rules.whole(1, EXAMPLE),
        keep=rules.whole(1, EXAMPLE, optional=True),
        overwrite=rules.flag("Checkpoint(prefix, overwrite=True)"),
    )
    def __init__(
        self,
        prefix: str,
        period: int = 1,
        keep: int | None = None,
        best: str | None = None,
        overwrite: bool = False,
        higher_is_better: bool | None = None,
    ):
        check_name(best, "Checkpoint(best=...)")
        prefix = check_writable_prefix(prefix, f"Checkpoint({prefix!r})")
        self.prefix, self.period, self.keep, self.best = prefix, period, keep, best
        self.overwrite = overwrite
        self.higher_is_better = higher_is_better
        self.best_metric: str | None = None  # the run's name for ``best``, once known
        self.best_is_higher: bool | None = None
        self.best_value: float | None = None
        self.best_epoch: int | None = None
        self.saved: list[int] = []
        self.replaceable: set[int] = set()  # damaged checkpoints this run may write anew

    @classmethod
    def of(cls, spec) -> Checkpoint | None:
        if spec is None or isinstance(spec, Checkpoint):
            return spec
        if isinstance(spec, (str, os.PathLike)):
            return cls(os.fspath(spec))
        raise NotACheckpointSpec(spec=spec)

    # ------------------------------------------------------------------ as fit's callback
    # It saves once everything for an epoch is done (validation included), so the manifest
    # holds the epoch's validation values, and never while the watchdog finds the loss past its
    # limit: the last good checkpoint stays the newest.
    def on_train_begin(self, run: RunContext) -> None:
        self._check_way_is_clear(run.begin_epoch, run.num_epoch)
        if self.best is not None:
            called = f"Checkpoint(best='{self.best}')"
            if not run.validation_metrics:
                raise BestNeedsValidation(called=called)
            judged = run.judged_metric(self.best, self.higher_is_better, called)
            self.best_metric, self.best_is_higher = judged
        # The checkpoints this prefix holds up to the epoch this run starts from (a resumed
        # run's) count for ``keep``; the newest is what an interrupt before this run's first
        # save points to.
        self.saved = [e for e in names.manifested_epochs(self.prefix) if e <= run.begin_epoch]
        if self.saved:
            run.last_checkpoint = (self.prefix, self.saved[-1])
        if self.best_metric is None:
            return
        # the best of them, by the values in the history, stays the best until a better comes
        epochs, values = run.history.series(self.best_metric, "validation", "epoch")
        completed = {epoch + 1: value for epoch, value in zip(epochs, values)}
        for epoch in self.saved:
            value = completed.get(epoch)
            if value is not None and improves(self.best_is_higher, value, self.best_value):
                self.best_value, self.best_epoch = value, epoch

    def _check_way_is_clear(self, begin_epoch: int, num_epoch: int) -> None:
        """The checkpoints this run will write must not exist already, or be damaged ones (a
        resume passed over them), which it replaces."""
        # again: the working folder may have changed (os.chdir) since Checkpoint(...) was made
        check_writable_prefix(self.prefix, f"Checkpoint({self.prefix!r})")

        def planned(epoch: int) -> bool:  # a predicate: a run may plan a million epochs
            return begin_epoch < epoch <= num_epoch and epoch % self.period == 0

        best = [names.best_file(self.prefix)] if self.best else []
        names.refuse_folders(self.prefix, [names.symbol_file(self.prefix), *best], planned)
        # MXNet's own checkpoints (do_checkpoint, save_checkpoint) have a .params file only;
        # a save of mxlearn's that a kill cut short (files, no manifest) is no checkpoint
        manifested = set(names.manifested_epochs(self.prefix))
        existing = manifested | set(names.mxnet_epochs(self.prefix))
        clash = sorted(e for e in existing if planned(e))
        if not clash or self.overwrite:
            return
        intact = [e for e in clash if e not in manifested or files.verifies(self.prefix, e)]
        if intact:
            kind = WouldOverwrite if len(intact) == 1 else WouldOverwriteSeveral
            if not manifested.intersection(intact):
                kind = MXNetFilesInTheWay  # nothing of them verifies: there is no manifest
            which = ", ".join(str(e) for e in intact)
            raise kind(which=which, prefix=self.prefix, first=begin_epoch, last=num_epoch - 1)
        self.replaceable = set(clash)
        print(
            say(
                "Checkpoints {epochs} of '{prefix}' are damaged; this fit writes them anew.",
                epochs=clash,
                prefix=self.prefix,
            )
        )

    def on_epoch_done(self, run: RunContext, epoch: int) -> None:
        if run.weights_suspect:
            print(
                say(
                    "Checkpoint of epoch {epoch} not written: the training loss is past the "
                    "divergence limit (see the watchdog's message if training stops).",
                    epoch=epoch,
                )
            )
            return
        completed = epoch + 1
        if completed % self.period:
            return
        files.save(
            run.module,
            self.prefix,
            completed,
            history=run.history,
            optimizer_settings=run.module.optimizer_settings,
            random_state=random_state.capture(run.train_data, run.run_seed),
            overwrite=self.overwrite or completed in self.replaceable,
        )
        self.saved.append(completed)
        value = None if self.best is None else run.history.last(self.best_metric, "validation")
        if value is not None and improves(self.best_is_higher, value, self.best_value):
            self.best_value, self.best_epoch = value, completed
            pointer = {"epoch": completed, "metric": self.best_metric, "value": value}
            atomic_write_bytes(names.best_file(self.prefix), json.dumps(pointer).encode())
        if self.keep is not None:
            self._prune()
        run.last_checkpoint = (self.prefix, completed)

    def _prune(self) -> None:
        keep = set(self.saved[-self.keep :]) | {self.best_epoch}
        for epoch in [e for e in self.saved if e not in keep]:
            files.remove(self.prefix, epoch)
            self.saved.remove(epoch)
