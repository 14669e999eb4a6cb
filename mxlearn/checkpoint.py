"""Checkpoint files under MXNet's names (``prefix-symbol.json``, ``prefix-NNNN.params``).

The number in a file name counts completed epochs: ``mx.callback.do_checkpoint(prefix)`` after
the epoch with index 2 (the third) writes ``prefix-0003.params``, and training resumes from it
with ``fit(..., begin_epoch=3)``.
"""

from __future__ import annotations

import glob
import os
import re

from ._compat import mx
from .errors import CheckpointError


def symbol_file(prefix: str) -> str:
    return f"{prefix}-symbol.json"


def params_file(prefix: str, epoch: int) -> str:
    return f"{prefix}-{epoch:04d}.params"


def optimizer_states_file(prefix: str, epoch: int) -> str:
    return f"{prefix}-{epoch:04d}.states"


def saved_epochs(prefix: str) -> list[int]:
    """Epoch numbers that have a parameter file for ``prefix``, ascending."""
    pattern = re.compile(re.escape(os.path.basename(prefix)) + r"-(\d{4})\.params$")
    found = (
        pattern.match(os.path.basename(p)) for p in glob.glob(f"{glob.escape(prefix)}-*.params")
    )
    return sorted(int(m.group(1)) for m in found if m)


def load_checkpoint(prefix: str, epoch: int):
    """``mx.model.load_checkpoint`` with the missing file explained: (symbol, arg_params, aux_params).

    Examples
    --------
    >>> sym, arg_params, aux_params = load_checkpoint('runs/mx_mlp', 3)  # doctest: +SKIP
    """
    if not os.path.exists(symbol_file(prefix)):
        raise CheckpointError(
            f"load_checkpoint('{prefix}', {epoch}): there is no '{symbol_file(prefix)}', so no "
            "checkpoint was saved under this prefix.",
            fix="use the prefix given to mx.callback.do_checkpoint(prefix) or "
            "mod.save_checkpoint(prefix, epoch), including its folder",
        )
    if not os.path.exists(params_file(prefix, epoch)):
        epochs = saved_epochs(prefix)
        have = f"saved epochs: {epochs}" if epochs else "no parameter files were saved"
        raise CheckpointError(
            f"load_checkpoint('{prefix}', {epoch}): there is no '{params_file(prefix, epoch)}' "
            f"({have}). The number counts completed epochs: fit's epoch index 2 is saved as "
            f"{params_file(os.path.basename(prefix), 3)}.",
            fix=f"load_checkpoint('{prefix}', {epochs[-1]})" if epochs else "train and save first",
        )
    return mx.model.load_checkpoint(prefix, epoch)
