"""CheckpointSaving: the callback that writes fit's checkpoints, by a Checkpoint policy.

It saves once everything for an epoch is done (validation included), so the manifest holds the
epoch's validation values, and never while the watchdog finds the loss past its limit: the last
good checkpoint stays the newest.
"""

from __future__ import annotations

from ..checkpoint import files, random_state
from ..checkpoint.policy import Checkpoint
from ..language import say
from ..metrics.directions import remember_stated
from .callback import Callback, RunContext


class CheckpointSaving(Callback):
    def __init__(self, policy: Checkpoint) -> None:
        self.policy = policy

    def on_train_begin(self, run: RunContext) -> None:
        self.policy.check_way_is_clear(run.begin_epoch, run.num_epoch)
        if self.policy.best is not None:
            self.policy.judge_best_by(run.validation_metrics)
            name = self.policy.best_metric
            remember_stated(
                run.history, name, run.validation_metrics[name], self.policy.best_is_higher
            )
        self.policy.continue_from(run.begin_epoch, run.history)
        # What an interrupt before this run's first save can point to: the newest complete
        # checkpoint on disk up to the epoch this run starts from (a resumed one, say).
        done = [e for e in files.manifested_epochs(self.policy.prefix) if e <= run.begin_epoch]
        if done:
            run.last_checkpoint = (self.policy.prefix, done[-1])

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
        if not self.policy.due(epoch + 1):
            return
        self.policy.after_epoch(
            run.module,
            epoch + 1,
            run.history,
            run.module.optimizer_settings,
            random_state=random_state.capture(run.train_data, run.run_seed),
        )
        run.last_checkpoint = (self.policy.prefix, epoch + 1)
