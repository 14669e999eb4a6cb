"""A fingerprint of a set of weights: what a run started from, comparable with a checkpoint's
weights without keeping a copy of them."""

from __future__ import annotations

import hashlib


def weights_digest(arg_params: dict, aux_params: dict | None = None) -> str:
    """SHA-256 over every array's name, type, shape and bytes, parameters then auxiliary
    states, each in name order: equal exactly when the weights are."""
    digest = hashlib.sha256()
    for group in (arg_params, aux_params or {}):
        for name in sorted(group):
            values = group[name].asnumpy()
            digest.update(f"{name}:{values.dtype}:{values.shape};".encode())
            digest.update(values.tobytes())
        digest.update(b"|")
    return digest.hexdigest()
