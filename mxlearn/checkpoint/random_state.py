"""Where a run's next random draws come from, saved with each checkpoint of ``fit``: the training
iterator's order, NumPy's global generator (the next shuffle) and MXNet's (Dropout and other
random operators), which MXNet 1.9 cannot read: fit reseeds it before every epoch after a run's
first from a seed drawn once per run, and saves that seed (a first epoch draws as
``mx.mod.Module.fit`` does, initializers included).

``mx.io.NDArrayIter(shuffle=True)`` permutes its arrays in place at every reset, so an order
depends on every earlier shuffle. What is saved is the order itself, as a permutation of the rows
sorted by their bytes (identical rows are interchangeable), and the iterator's index array (the
next shuffle permutes it); a resume checks that the fresh iterator holds the same rows.
"""

from __future__ import annotations

import base64
import hashlib

import numpy as np

from .._compat import mx
from ..language import say
from ..training.callback import Callback, RunContext


def not_saved_by_hand() -> str:
    """What a checkpoint that fit did not write (``save_checkpoint``, ``files.save``) lacks."""
    return say(
        "the training data's order and the random generators' states (only checkpoints that "
        "fit(checkpoint=...) writes hold them)"
    )


def seed_epoch(run_seed: int, epoch: int) -> None:
    """Seed MXNet's generator before ``epoch`` trains."""
    mx.random.seed((run_seed * 1_000_003 + epoch) % (2**31 - 1))


def _numpy_state() -> dict:
    kind, keys, position, has_gauss, cached = np.random.get_state()
    return {
        "kind": kind,
        "keys": base64.b64encode(keys.astype("<u4").tobytes()).decode("ascii"),
        "position": int(position),
        "has_gauss": int(has_gauss),
        "cached_gaussian": float(cached),
    }


def _set_numpy_state(saved: dict) -> None:
    keys = np.frombuffer(base64.b64decode(saved["keys"]), dtype="<u4").astype(np.uint32)
    np.random.set_state(
        (saved["kind"], keys, saved["position"], saved["has_gauss"], saved["cached_gaussian"])
    )


def capture(train_data, run_seed: int | None) -> tuple[dict, dict]:
    """(arrays, description) of what decides the next epoch's batches and random draws, read
    when an epoch is done and before fit resets the iterator."""
    arrays: dict = {}
    not_saved: list[str] = []
    description = {
        "batches": _batches(train_data),
        "iterator": _capture_order(train_data, arrays, not_saved),
        "numpy": _numpy_state(),
        "mxnet_run_seed": run_seed,
        "not_saved": not_saved,
    }
    return arrays, description


def restore(train_data, arrays: dict, saved: dict) -> list[str]:
    """Put the saved state back before the resumed run's first batch; returns what differs."""
    differs = [_other_batches(saved.get("batches"), _batches(train_data))]
    problem = _restore_order(train_data, arrays, saved["iterator"])
    _set_numpy_state(saved["numpy"])
    if saved["iterator"] is not None and saved["iterator"]["shuffle"] and problem is None:
        train_data.reset()  # the shuffle the uninterrupted run did after this epoch
    return [text for text in (*differs, problem) if text]


def _batches(train_data) -> dict:
    """How the training data is cut into batches: rows per batch, and the last batch's fate."""
    return {
        "rows": train_data.provide_data[0].shape[0] if train_data.provide_data else None,
        "last_batch_handle": getattr(train_data, "last_batch_handle", None),
    }


def _other_batches(saved: dict | None, now: dict) -> str | None:
    if saved is None or saved == now:
        return None
    return say(
        "the training batches are cut differently ({rows} rows, last batch '{last}') than in "
        "the checkpoint's run ({saved_rows} rows, '{saved_last}'), so every step and the update "
        "count differ",
        rows=now["rows"],
        last=now["last_batch_handle"],
        saved_rows=saved["rows"],
        saved_last=saved["last_batch_handle"],
    )


class RandomStreams(Callback):
    """fit's callback: a resumed run puts back the training data's order and NumPy's
    generator and reseeds MXNet for its first epoch as the uninterrupted run did; every run
    reseeds MXNet before each later epoch."""

    def __init__(self, resumed=None) -> None:
        self.resumed = resumed  # the ResumeState this run continues, or None

    def on_train_begin(self, run: RunContext) -> None:
        saved = self.resumed.random if self.resumed is not None else None
        if saved is None:
            return
        differs = restore(run.train_data, self.resumed.random_arrays, saved)
        if differs:
            print(
                say(
                    "Resumed, but this run will differ from an uninterrupted one: {differences}.",
                    differences=say("; ").join(differs),
                )
            )
        run.run_seed = saved["mxnet_run_seed"]
        if run.run_seed is not None:
            seed_epoch(run.run_seed, run.begin_epoch)

    def on_epoch_done(self, run: RunContext, epoch: int) -> None:
        if run.run_seed is None:  # from MXNet's generator: mxlearn.seed or mx.random.seed decides
            seed = mx.nd.random.randint(0, 2**31 - 1, shape=(1,), ctx=mx.cpu())
            run.run_seed = int(seed.asscalar())
        seed_epoch(run.run_seed, epoch + 1)


# ---------------------------------------------------------------- the training data's order
def _sources(iterator) -> list:
    return [array for _, array in [*iterator.data, *iterator.label]]


def _sorted_order(iterator) -> tuple[np.ndarray, str]:
    """The permutation that sorts the rows by their bytes (each row's data and labels side by
    side), and the sorted rows' SHA-256."""
    count = iterator.num_data
    parts = [np.ascontiguousarray(a.asnumpy()).reshape(count, -1) for a in _sources(iterator)]
    rows = np.concatenate([p.view(np.uint8).reshape(count, -1) for p in parts], axis=1)
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


def _capture_order(iterator, arrays: dict, not_saved: list) -> dict | None:
    """The iterator's order before fit's reset (arrays go into ``arrays``), or None with the
    reason in ``not_saved``."""
    reason = _not_saved_reason(iterator)
    if reason is not None:
        not_saved.append(reason)
        return None
    if not iterator.shuffle:
        return {"class": "NDArrayIter", "shuffle": False}
    order, digest = _sorted_order(iterator)
    arrays["iterator:sorted_order"] = mx.nd.array(order, dtype="int64")
    arrays["iterator:idx"] = mx.nd.array(iterator.idx, dtype="int64")
    return {"class": "NDArrayIter", "shuffle": True, "rows_sha256": digest}


def _permuted(named_arrays: list, permutation: np.ndarray) -> list:
    return [
        (k, mx.nd.array(v.asnumpy()[permutation], v.context, dtype=v.dtype))
        for k, v in named_arrays
    ]


def _restore_order(iterator, arrays: dict, saved: dict) -> str | None:
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
    fresh_order, digest = _sorted_order(iterator)
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
