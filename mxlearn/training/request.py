"""fit's arguments as one typed object: what the fit loop, its plan and a resume read.

Its fields are exactly fit's parameters (a test holds them together) and have no defaults:
fit's signature declares them once, and the request is made from the call's own values.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass
class FitRequest:
    train_data: object
    eval_data: object
    eval_metric: object
    epoch_end_callback: object
    batch_end_callback: object
    kvstore: object
    optimizer: object
    optimizer_params: object
    eval_end_callback: object
    eval_batch_end_callback: object
    initializer: object
    arg_params: dict | None
    aux_params: dict | None
    allow_missing: bool
    force_rebind: bool
    force_init: bool
    begin_epoch: int
    num_epoch: int | None
    validation_metric: object
    monitor: object
    sparse_row_id_fn: object
    live: object
    checkpoint: object
    resume: object
    early_stopping: object
    epoch_report_callback: object
    callbacks: list | None

    @classmethod
    def of(cls, values: dict) -> FitRequest:
        """The request of a call whose arguments are ``values`` by name (fit's ``locals()``)."""
        return cls(**{f.name: values[f.name] for f in fields(cls)})
