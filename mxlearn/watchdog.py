"""Stops fit when training diverges, instead of running to the end on NaN weights.

Checked on a schedule (every ``every`` batches and at each epoch end), with one small device
read per check: the sum of the parameters' norms, which is NaN or infinite as soon as any
weight is.
"""

from __future__ import annotations

import math

from ._compat import mx
from .errors import NonFiniteError


class DivergenceWatchdog:
    def __init__(self, module, every: int = 100):
        self.module = module
        self.every = every

    def _weights_finite(self) -> bool:
        arrays = [devices[0] for devices in self.module._exec_group.param_arrays]
        if not arrays:
            return True
        total = mx.nd.add_n(*[mx.nd.norm(a).reshape((1,)) for a in arrays])
        return math.isfinite(float(total.asscalar()))

    def check(self, epoch: int, batch: int | None) -> None:
        if self._weights_finite():
            return
        where = f"epoch {epoch}" + (f", batch {batch}" if batch is not None else "")
        optimizer = self.module._optimizer
        rate = getattr(optimizer, "learning_rate", None)
        lowered = f"{rate / 10:g}" if rate else "0.01"
        raise NonFiniteError(
            f"Training diverged: by {where} some weights are NaN or infinite, so every later "
            f"update would be meaningless. The usual cause is a learning rate too high for this "
            f"network (it is {rate:g} now); a NaN or infinity in the data is the other.",
            fix=f"train again (or resume the last checkpoint) with optimizer_params="
            f"{{'learning_rate': {lowered}}}",
        )

    def batch_end(self, param) -> None:
        if param.nbatch and param.nbatch % self.every == 0:
            self.check(param.epoch, param.nbatch)

    def epoch_end(self, epoch, *_) -> None:
        self.check(epoch, None)
