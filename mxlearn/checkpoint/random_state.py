"""Where a run's next random draws come from, saved with each checkpoint of ``fit``.

Three things decide them: the training iterator's order (``iterator_order``), NumPy's global
generator (the next shuffle) and MXNet's generator (Dropout and other random operators).
NumPy's state can be read and set. MXNet 1.9 offers no way to read its generator's state, so
fit reseeds MXNet at the start of every epoch after the run's first from a seed drawn once per
run (``epoch_seed``) and saves that seed: a resumed run reseeds the same way. The first epoch of
a fresh run draws from MXNet's generator as ``mx.mod.Module.fit`` does (initializers included).
"""

from __future__ import annotations

import base64

import numpy as np

from .._compat import mx
from ..language import say
from . import iterator_order


def not_saved_by_hand() -> str:
    """What a checkpoint that fit did not write (``save_checkpoint``, ``files.save``) lacks."""
    return say(
        "the training data's order and the random generators' states (only checkpoints that "
        "fit(checkpoint=...) writes hold them)"
    )


def draw_run_seed() -> int:
    """A seed for a run's later epochs, drawn from MXNet's generator (so ``mxlearn.seed`` or
    ``mx.random.seed`` decides it); one read of one number, at an epoch's end."""
    return int(mx.nd.random.randint(0, 2**31 - 1, shape=(1,), ctx=mx.cpu()).asscalar())


def epoch_seed(run_seed: int, epoch: int) -> int:
    """The seed MXNet's generator gets before ``epoch`` trains."""
    return (run_seed * 1_000_003 + epoch) % (2**31 - 1)


def seed_epoch(run_seed: int, epoch: int) -> None:
    mx.random.seed(epoch_seed(run_seed, epoch))


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
        "iterator": iterator_order.capture(train_data, arrays, not_saved),
        "numpy": _numpy_state(),
        "mxnet_run_seed": run_seed,
        "not_saved": not_saved,
    }
    return arrays, description


def restore(train_data, arrays: dict, saved: dict) -> list[str]:
    """Put the saved state back before the resumed run's first batch; returns what differs."""
    differs = [_other_batches(saved.get("batches"), _batches(train_data))]
    problem = iterator_order.restore(train_data, arrays, saved["iterator"])
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
