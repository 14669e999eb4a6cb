"""MXNetCallbacks: fit's MXNet-style callback arguments as one callback of the list.

``batch_end_callback``, ``epoch_end_callback`` and ``eval_end_callback`` keep MXNet's meaning:
each function is called with MXNet's own arguments (a BatchEndParam, or epoch, symbol,
arg_params, aux_params), after mxlearn's recording, plot and watchdog have seen the same
moment, so that e.g. ``mx.callback.Speedometer`` and ``mx.callback.do_checkpoint`` work
unchanged.
"""

from __future__ import annotations

from ..errors import ArgumentTypeError
from ..guards.arguments import as_list
from ..language import say
from .callback import Callback, RunContext


def _check_function(function, argument: str) -> None:
    if isinstance(function, Callback):
        raise ArgumentTypeError(
            say(
                "mod.fit({argument}=...) got a {kind}, an mxlearn.Callback: MXNet's {argument} "
                "takes plain functions.",
                argument=argument,
                kind=type(function).__name__,
            ),
            fix=f"mod.fit(..., callbacks=[{type(function).__name__}(...)])",
        )
    if not callable(function):
        raise ArgumentTypeError(
            say(
                "mod.fit({argument}=...) takes functions; got {kind}.",
                argument=argument,
                kind=type(function).__name__,
            ),
            fix=f"mod.fit(..., {argument}=mx.callback.Speedometer(batch_size=32))",
        )


class MXNetCallbacks(Callback):
    def __init__(self, batch_end=None, epoch_end=None, eval_end=None) -> None:
        self.batch_end = as_list(batch_end)
        self.epoch_end = as_list(epoch_end)
        self.eval_end = as_list(eval_end)
        for slot, functions in (
            ("batch_end", batch_end),
            ("epoch_end", epoch_end),
            ("eval_end", eval_end),
        ):
            for function in as_list(functions):
                _check_function(function, f"{slot}_callback")

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
