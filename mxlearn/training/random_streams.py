"""RandomStreams: the callback that makes every epoch's random draws resumable.

A fresh run's first epoch draws from MXNet's generator as ``mx.mod.Module.fit`` does; from then
on MXNet is reseeded before each epoch from the run's seed (``checkpoint.random_state``), which
checkpoints save. A resumed run puts back the training data's order and NumPy's generator and
reseeds MXNet for its first epoch the same way, so its batches and Dropout masks are those of
an uninterrupted run.
"""

from __future__ import annotations

from ..checkpoint import random_state
from ..language import say
from .callback import Callback, RunContext


class RandomStreams(Callback):
    def __init__(self, resumed=None) -> None:
        self.resumed = resumed  # the ResumeState this run continues, or None

    def on_train_begin(self, run: RunContext) -> None:
        saved = self.resumed.random if self.resumed is not None else None
        if saved is None:
            return
        differs = random_state.restore(run.train_data, self.resumed.random_arrays, saved)
        if differs:
            print(
                say(
                    "Resumed, but this run will differ from an uninterrupted one: {differences}.",
                    differences=say("; ").join(differs),
                )
            )
        run.run_seed = saved["mxnet_run_seed"]
        if run.run_seed is not None:
            random_state.seed_epoch(run.run_seed, run.begin_epoch)

    def on_epoch_done(self, run: RunContext, epoch: int) -> None:
        if run.run_seed is None:
            run.run_seed = random_state.draw_run_seed()
        random_state.seed_epoch(run.run_seed, epoch + 1)
