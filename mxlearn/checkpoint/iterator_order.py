"""The order a training iterator will serve its rows in: saved with a checkpoint, put back on
resume, so a shuffled run continues with the batches an uninterrupted one would see.

``mx.io.NDArrayIter(shuffle=True)`` shuffles at every reset by permuting its arrays in place
with NumPy's generator, so the next epoch's order depends on every earlier shuffle: a fresh
iterator built in a new process has another order. What is saved is the order itself, as a
permutation of the rows sorted by their bytes (identical rows are interchangeable), plus the
iterator's index array (NumPy shuffles it in place, so the next shuffle depends on it). On
resume the fresh iterator's rows are put in that order, after checking they are the same rows.
Other iterators keep their state where mxlearn cannot read it: that is recorded as not saved.
"""

from __future__ import annotations

import hashlib

import numpy as np

from .._compat import mx
from ..language import say


def _sources(iterator) -> list:
    return [array for _, array in [*iterator.data, *iterator.label]]


def _rows(iterator) -> np.ndarray:
    """Every row's bytes (its data and labels side by side): one row of uint8 per example."""
    count = iterator.num_data
    parts = [np.ascontiguousarray(a.asnumpy()).reshape(count, -1) for a in _sources(iterator)]
    return np.concatenate([p.view(np.uint8).reshape(count, -1) for p in parts], axis=1)


def _sorted_order(rows: np.ndarray) -> tuple[np.ndarray, str]:
    """The permutation that sorts the rows by their bytes, and the sorted rows' SHA-256."""
    keys = np.ascontiguousarray(rows).view(np.dtype((np.void, rows.shape[1]))).ravel()
    order = np.argsort(keys, kind="stable")
    return order, hashlib.sha256(rows[order].tobytes()).hexdigest()


def _not_saved_reason(iterator) -> str | None:
    kind = type(iterator).__name__
    if type(iterator) is not mx.io.NDArrayIter:
        return say(
            "the order of the training data (a {kind}: mxlearn saves the order of an "
            "mx.io.NDArrayIter only)",
            kind=kind,
        )
    if not all(isinstance(a, mx.nd.NDArray) for a in _sources(iterator)):
        return say("the order of the training data (an NDArrayIter over HDF5 or sparse arrays)")
    if iterator.last_batch_handle == "roll_over":
        return say("the rows a roll_over NDArrayIter carries into the next epoch")
    return None


def capture(iterator, arrays: dict, not_saved: list) -> dict | None:
    """The iterator's order before fit's reset (arrays go into ``arrays``), or None with the
    reason in ``not_saved``."""
    reason = _not_saved_reason(iterator)
    if reason is not None:
        not_saved.append(reason)
        return None
    if not iterator.shuffle:
        return {"class": "NDArrayIter", "shuffle": False}
    order, digest = _sorted_order(_rows(iterator))
    arrays["iterator:sorted_order"] = mx.nd.array(order, dtype="int64")
    arrays["iterator:idx"] = mx.nd.array(iterator.idx, dtype="int64")
    return {"class": "NDArrayIter", "shuffle": True, "rows_sha256": digest}


def _permuted(named_arrays: list, permutation: np.ndarray) -> list:
    return [
        (k, mx.nd.array(v.asnumpy()[permutation], v.context, dtype=v.dtype))
        for k, v in named_arrays
    ]


def restore(iterator, arrays: dict, saved: dict) -> str | None:
    """Put the saved order into ``iterator`` (before NumPy's saved state reshuffles it), or say
    why not."""
    if saved is None:
        return None
    reason = _not_saved_reason(iterator)
    if reason is not None:
        return say("{reason}; the checkpoint's order is not used", reason=reason)
    if iterator.shuffle != saved["shuffle"]:
        return say(
            "the training iterator's shuffle setting differs from the checkpoint's run "
            "(shuffle={shuffle} now), so its batches come in another order",
            shuffle=iterator.shuffle,
        )
    if not saved["shuffle"]:
        return None
    fresh_order, digest = _sorted_order(_rows(iterator))
    if digest != saved["rows_sha256"]:
        return say(
            "the training data holds other rows than the checkpoint's run trained on, so their "
            "order could not be restored"
        )
    saved_order = arrays["iterator:sorted_order"].asnumpy()
    # the saved order's i-th row in sorted position saved_order[i] is fresh_order's row there
    permutation = np.empty_like(fresh_order)
    permutation[saved_order] = fresh_order
    iterator.data = _permuted(iterator.data, permutation)
    iterator.label = _permuted(iterator.label, permutation)
    iterator.idx = arrays["iterator:idx"].asnumpy().astype(iterator.idx.dtype)
    return None
