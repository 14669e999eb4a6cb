"""fit's MXNet-style callback arguments as one callback of the list: each function is called with
MXNet's own arguments after mxlearn's recording, plot and watchdog have seen the same moment, so
``mx.callback.Speedometer`` and ``mx.callback.do_checkpoint`` work unchanged.
"""

from __future__ import annotations

from ..errors import N_, ArgumentTypeError
from ..guards.arguments import as_list
from .callback import Callback, RunContext


class CallbackObjectInSlot(ArgumentTypeError):
    says = N_(
        "mod.fit({argument}=...) got a {kind}, an mxlearn.Callback: MXNet's {argument} "
        "takes plain functions."
    )
    fix_code = "mod.fit(..., callbacks=[{kind}(...)])"


class MXNetCallbacks(Callback):
    def __init__(self, batch_end=None, epoch_end=None, eval_end=None) -> None:
        self.batch_end = as_list(batch_end)
        self.epoch_end = as_list(epoch_end)
        self.eval_end = as_list(eval_end)
        # fit's parameter rules let only functions and Callback objects through
        for slot, functions in (
            ("batch_end", self.batch_end),
            ("epoch_end", self.epoch_end),
            ("eval_end", self.eval_end),
        ):
            for function in functions:
                if isinstance(function, Callback):
                    kind = type(function).__name__
                    raise CallbackObjectInSlot(argument=f"{slot}_callback", kind=kind)

    def functions(self) -> list:
        return self.batch_end + self.epoch_end + self.eval_end

    def on_batch_end(self, run: RunContext, batch: int) -> None:
        for function in self.batch_end:
            function(*run.mxnet_args)

    def on_epoch_end(self, run: RunContext, epoch: int) -> None:
        for function in self.epoch_end:
            function(*run.mxnet_args)

    def on_validation_end(self, run: RunContext, epoch: int) -> None:
        for function in self.eval_end:
            function(*run.mxnet_args)
