"""Optimizer state without pickle: arrays in MXNet's NDArray file, structure and counters in JSON.

MXNet's ``.states`` files are Python pickles (a crafted one runs code when loaded) and hold only
the per-weight states: the update count and the learning-rate schedule restart on resume. Here
the state is split into plain arrays (saved with ``mx.nd.save``) and a JSON description: how the
arrays nest per weight, ``num_update``, the per-weight update counts, and the schedule's state.
"""

from __future__ import annotations

import io
import numbers
import pickle

from .._compat import mx
from ..errors import DamagedCheckpointError, InputError, UntrustedFileError

PICKLE_RISK = (
    "MXNet's .states files are Python pickles: loading one can run any code its author put in "
    "it (a crafted file can delete files or install software)."
)


class _ArraysOnly(pickle.Unpickler):
    """Unpickles only what MXNet's optimizer states contain: NDArrays in plain containers."""

    ALLOWED = {("mxnet.ndarray.ndarray", "NDArray"), ("builtins", "bytearray")}

    def find_class(self, module, name):
        if (module, name) in self.ALLOWED:
            return super().find_class(module, name)
        raise UntrustedFileError(
            f"The optimizer-state file asks to create {module}.{name}, which no optimizer state "
            "holds; it was refused, and nothing in the file ran.",
            fix="only load .states files you made yourself; mxlearn's own checkpoints "
            "(fit(checkpoint=...)) need no pickle at all",
        )


def read_pickled_states(path: str, trust: bool):
    """The per-weight states of an MXNet ``.states`` file, if the caller trusts the file."""
    if not trust:
        raise UntrustedFileError(
            f"'{path}' was not loaded. {PICKLE_RISK}",
            fix="if you made this file yourself, pass trust=True (e.g. "
            "mod.load_optimizer_states(path, trust=True)); mxlearn's checkpoints "
            "(fit(checkpoint=...), mxlearn.resume) need no pickle",
        )
    with open(path, "rb") as f:
        data = f.read()
    try:
        states = _ArraysOnly(io.BytesIO(data)).load()
    except UntrustedFileError:
        raise
    except Exception as err:  # a damaged pickle raises many kinds of error
        raise DamagedCheckpointError(
            f"'{path}' is not a readable optimizer-state file: {err}"
        ) from None
    if isinstance(states, tuple) and len(states) == 2:
        states = states[0]  # (states, optimizer): the optimizer part was refused above if present
    if not isinstance(states, dict):
        raise DamagedCheckpointError(f"'{path}' does not hold per-weight optimizer states.")
    return states


def require_updater(updater) -> None:
    if updater is None:
        raise InputError(
            "This module updates its weights inside a distributed kvstore; its optimizer state "
            "cannot be read from Python.",
            fix="checkpoint parameters only: mod.save_checkpoint(prefix, epoch)",
        )


def _index_key(index) -> str:
    return f"i{index}" if isinstance(index, int) else f"s{index}"


def _index_value(key: str):
    return int(key[1:]) if key[0] == "i" else key[1:]


def _flatten(state, key: str, arrays: dict):
    if state is None:
        return None
    if isinstance(state, mx.nd.NDArray):
        arrays[key] = state
        return {"array": key}
    if isinstance(state, (tuple, list)):
        items = [_flatten(s, f"{key}.{i}", arrays) for i, s in enumerate(state)]
        return {"tuple" if isinstance(state, tuple) else "list": items}
    raise InputError(f"optimizer state of type {type(state).__name__} cannot be saved")


def _rebuild(structure, arrays: dict):
    if structure is None:
        return None
    if "array" in structure:
        return arrays[structure["array"]]
    if "tuple" in structure:
        return tuple(_rebuild(s, arrays) for s in structure["tuple"])
    return [_rebuild(s, arrays) for s in structure["list"]]


def _plain(value) -> bool:
    return value is None or isinstance(value, (bool, numbers.Number, str))


def scheduler_state(scheduler) -> dict | None:
    if scheduler is None:
        return None
    values = {k: v for k, v in vars(scheduler).items() if _plain(v)}
    return {"class": type(scheduler).__name__, "state": values}


def make_scheduler(saved: dict | None):
    """The schedule as it was at the checkpoint (class and every counter)."""
    if saved is None:
        return None
    cls = getattr(mx.lr_scheduler, saved["class"], None)
    if cls is None:
        raise InputError(f"the checkpoint's learning-rate schedule {saved['class']} is unknown")
    scheduler = cls.__new__(cls)
    scheduler.__dict__.update(saved["state"])
    return scheduler


# MXNet keeps the per-weight update counts in private fields of its Optimizer and offers no
# accessor; this file is the one place in mxlearn that reads and writes them.
def capture(updater) -> tuple[dict, dict]:
    """(arrays, description) of the optimizer state an MXNet Updater holds (``mod.updater``)."""
    require_updater(updater)
    optimizer = updater.optimizer
    arrays: dict = {}
    states = {
        _index_key(index): _flatten(state, f"{_index_key(index)}", arrays)
        for index, state in updater.states.items()
    }
    description = {
        "optimizer": type(optimizer).__name__.lower(),
        "num_update": optimizer.num_update,
        # per device: MXNet keeps one count table per device and switches between them
        "index_update_counts": {
            str(device): {_index_key(i): c for i, c in counts.items()}
            for device, counts in optimizer._all_index_update_counts.items()
        },
        "learning_rate": optimizer.learning_rate,
        "lr_scheduler": scheduler_state(optimizer.lr_scheduler),
        "states": states,
    }
    return arrays, description


def restore(updater, arrays: dict, description: dict) -> None:
    """Put a captured state into a (freshly initialized) optimizer's Updater (``mod.updater``)."""
    require_updater(updater)
    optimizer = updater.optimizer
    saved_name = description["optimizer"]
    if type(optimizer).__name__.lower() != saved_name:
        raise InputError(
            f"the checkpoint's optimizer state is for '{saved_name}', but the module's optimizer "
            f"is '{type(optimizer).__name__.lower()}'.",
            fix=f"resume with optimizer='{saved_name}' (or leave the optimizer out of fit)",
        )
    updater.states = {
        _index_value(k): _rebuild(s, arrays) for k, s in description["states"].items()
    }
    # False: the Updater moves each state to its weight's device before the next update
    updater.states_synced = dict.fromkeys(updater.states, False)
    optimizer.num_update = description["num_update"]
    optimizer._all_index_update_counts = {
        int(device): {_index_value(k): c for k, c in counts.items()}
        for device, counts in description["index_update_counts"].items()
    }
    optimizer._index_update_count = optimizer._all_index_update_counts.setdefault(0, {})
    if description.get("lr_scheduler") is not None:
        optimizer.lr_scheduler = make_scheduler(description["lr_scheduler"])
