"""Checkpoints: the files (``mxlearn.checkpoint.save``, ``latest``, ``load_checkpoint``, ...)
and the saving policy that ``fit(checkpoint=...)`` takes (``mxlearn.Checkpoint``, capital C).
"""

from .files import (
    CheckpointParams,
    latest,
    load_checkpoint,
    load_optimizer_arrays,
    load_params,
    load_symbol,
    read_manifest,
    save,
    verifies,
)
from .names import (
    manifest_file,
    manifested_epochs,
    mxnet_epochs,
    optimizer_file,
    optimizer_states_file,
    params_file,
    partial_epochs,
    prefixes_in,
    saved_epochs,
    symbol_file,
)
from .ndarray_file import check_ndarray_file
from .policy import Checkpoint

__all__ = [
    "Checkpoint",
    "CheckpointParams",
    "check_ndarray_file",
    "latest",
    "load_checkpoint",
    "load_optimizer_arrays",
    "load_params",
    "load_symbol",
    "manifest_file",
    "manifested_epochs",
    "mxnet_epochs",
    "optimizer_file",
    "optimizer_states_file",
    "params_file",
    "partial_epochs",
    "prefixes_in",
    "read_manifest",
    "save",
    "saved_epochs",
    "symbol_file",
    "verifies",
]
