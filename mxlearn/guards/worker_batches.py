"""Workers of a synchronous distributed job that would wait for each other for ever.

In ``dist_sync`` each batch's update waits for every worker's gradients: a worker whose epoch
has fewer batches starts its next epoch (or ends) while the others wait at their next push, and
ps-lite has no time limit, so the job hangs. Before training, each worker tells the others how
many batches an epoch it has, through the job's own kvstore, and every worker refuses the run
when they differ. What cannot be known is not checked: an iterator that does not say its length,
an asynchronous kvstore (nothing waits there), a kvstore whose servers already update what is
pushed (an earlier fit set its optimizer on them: the counts would come back changed).
"""

from __future__ import annotations

import itertools
import weakref

import numpy as np

from .._compat import mx
from ..errors import N_, InputError
from ..training.recording import batches_per_epoch

UNKNOWN = -1  # a worker whose iterator does not say its length
_exchanges = itertools.count()  # one key an exchange: every worker runs the same fits in order
_trained = weakref.WeakSet()  # kvstores a fit has used: their servers may hold an optimizer


class UnevenWorkerBatches(InputError):
    says = N_(
        "{called}: the workers have different numbers of batches an epoch ({counts}). With "
        "kvstore='{kvstore}' every batch waits for all the workers' gradients: at the end of "
        "the shorter epochs the others would wait for ever."
    )
    fix_says = N_(
        "give every worker as many rows: cut them to a multiple of the workers before "
        "splitting, keep = len(X) // kv.num_workers * kv.num_workers, then "
        "X[:keep][kv.rank::kv.num_workers] (and y the same)"
    )


def synchronous(kvstore) -> bool:
    kind = kvstore if isinstance(kvstore, str) else getattr(kvstore, "type", "")
    return "dist" in kind and "async" not in kind


def checked_kvstore(kvstore, train_data, called: str = "mod.fit()"):
    """The kvstore to train with: ``kvstore`` itself, or the one made here from its name (the
    check and the training must share it: a process's second distributed kvstore waits for ever
    at ps-lite's start, which the servers passed once); refused when the workers' epochs differ.
    For a fit that makes its module's kvstore (MXNet's fit makes none when the optimizer is
    there)."""
    if not synchronous(kvstore):
        return kvstore
    if isinstance(kvstore, str):
        kvstore = mx.kv.create(kvstore)
    if kvstore.num_workers < 2 or kvstore in _trained:
        return kvstore
    _trained.add(kvstore)
    counts = _exchanged(kvstore, told_batches(train_data))
    if counts is not None and UNKNOWN not in counts and len(set(counts)) > 1:
        shown = ", ".join(f"kv.rank {rank}: {count}" for rank, count in enumerate(counts))
        raise UnevenWorkerBatches(called=called, counts=shown, kvstore=kvstore.type)
    return kvstore


def told_batches(train_data) -> int | None:
    """The batches of each epoch, when the iterator says so: 'roll_over' carries rows into the
    next epoch, so its count changes from epoch to epoch and is not told."""
    if getattr(train_data, "last_batch_handle", None) == "roll_over":
        return None
    return batches_per_epoch(train_data)


def _exchanged(kvstore, mine: int | None) -> list[int] | None:
    """Every worker's count, in rank order: each pushes its own at its rank's place and the
    servers sum the pushes. None when what comes back is not counts."""
    key = f"mxlearn:batches-per-epoch:{next(_exchanges)}"
    size = (kvstore.num_workers,)
    kvstore.init(key, mx.nd.zeros(size))
    told = np.zeros(size)
    told[kvstore.rank] = UNKNOWN if mine is None else mine
    kvstore.push(key, mx.nd.array(told))
    summed = mx.nd.zeros(size)
    kvstore.pull(key, out=summed)
    counts = summed.asnumpy()
    if not (np.all(counts == np.round(counts)) and np.all(counts >= UNKNOWN)):
        return None  # an optimizer on the servers changed them
    return [int(count) for count in counts]
