"""Optimizer state without pickle: arrays in MXNet's NDArray file, structure and counters in JSON.

MXNet's ``.states`` files are Python pickles (a crafted one runs code when loaded) and hold only
the per-weight states: the update count and the learning-rate schedule would restart on resume.
"""

from __future__ import annotations

import io
import numbers
import pickle

from .._compat import mx
from ..errors import N_, DamagedCheckpointError, InputError, UntrustedFileError
from ..language import say
from .update_keys import UpdateKeys


class PickleAsksForClass(UntrustedFileError):
    says = N_(
        "The optimizer-state file asks to create {module}.{name}, which no optimizer "
        "state holds; it was refused, and nothing in the file ran."
    )
    fix_says = N_(
        "only load .states files you made yourself; mxlearn's own checkpoints "
        "(fit(checkpoint=...)) need no pickle at all"
    )


class UntrustedStates(UntrustedFileError):
    says = N_(
        "'{path}' was not loaded. MXNet's .states files are Python pickles: loading one "
        "can run any code its author put in it (a crafted file can delete files or "
        "install software)."
    )
    fix_says = N_(
        "if you made this file yourself: {call}; mxlearn's checkpoints "
        "(fit(checkpoint=...), mxlearn.resume) need no pickle"
    )


class UnreadableStates(DamagedCheckpointError):
    says = N_("'{path}' is not a readable optimizer-state file: {error}")


class NotPerWeightStates(DamagedCheckpointError):
    says = N_("'{path}' does not hold per-weight optimizer states.")


class StatesInKVStore(InputError):
    says = N_(
        "This module updates its weights inside a distributed kvstore; its optimizer "
        "state cannot be read from Python."
    )
    fix_says = N_("checkpoint parameters only: mod.save_checkpoint(prefix, epoch)")


class UnsavableState(InputError):
    says = N_("optimizer state of type {kind} cannot be saved")


class UnknownSchedule(InputError):
    says = N_("the checkpoint's learning-rate schedule {name} is unknown")


class _ArraysOnly(pickle.Unpickler):
    """Unpickles only what MXNet's optimizer states contain: NDArrays in plain containers."""

    ALLOWED = {("mxnet.ndarray.ndarray", "NDArray"), ("builtins", "bytearray")}

    def find_class(self, module, name):
        if (module, name) in self.ALLOWED:
            return super().find_class(module, name)
        raise PickleAsksForClass(module=module, name=name)


def read_pickled_states(path: str, trust: bool, trusted_call: str | None = None):
    """The per-weight states of an MXNet ``.states`` file, if the caller trusts the file
    (``trusted_call``: the caller's own call with trust=True, for the fix)."""
    if not trust:
        call = trusted_call or f"mod.load_optimizer_states({path!r}, trust=True)"
        raise UntrustedStates(path=path, call=call)
    with open(path, "rb") as f:
        data = f.read()
    try:
        states = _ArraysOnly(io.BytesIO(data)).load()
    except UntrustedFileError:
        raise
    except Exception as err:  # a damaged pickle raises many kinds of error
        raise UnreadableStates(path=path, error=err) from None
    if isinstance(states, tuple) and len(states) == 2:
        states = states[0]  # (states, optimizer): the optimizer part was refused above if present
    if not isinstance(states, dict):
        raise NotPerWeightStates(path=path)
    return states


def require_updater(updater) -> None:
    if updater is None:
        raise StatesInKVStore()


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
    if isinstance(state, dict) and all(isinstance(k, (int, str)) for k in state):
        return {
            "dict": {
                _index_key(k): _flatten(v, f"{key}.{_index_key(k)}", arrays)
                for k, v in state.items()
            }
        }
    raise UnsavableState(kind=type(state).__name__)


def _rebuild(structure, arrays: dict):
    if structure is None:
        return None
    if "array" in structure:
        return arrays[structure["array"]]
    if "tuple" in structure:
        return tuple(_rebuild(s, arrays) for s in structure["tuple"])
    if "dict" in structure:
        return {_index_value(k): _rebuild(v, arrays) for k, v in structure["dict"].items()}
    return [_rebuild(s, arrays) for s in structure["list"]]


# What optimizers change as they train, beyond the Updater's per-weight states and the update
# counts (read from MXNet 1.9.1's optimizer/optimizer.py): saved beside them.
EVOLVING = {
    "nadam": ("m_schedule",),
    "lars": ("skip", "last_lr", "cur_lr"),
    "lbsgd": ("lbmult", "adaptive", "admult", "cumgrads"),
    "dcasgd": ("weight_previous",),
}


# An optimizer's attributes that are not settings of the run, or are saved elsewhere: the update
# counts, the schedule and the evolving state above; the parameters' names and arrays, which the
# module gives each optimizer it makes; rescale_grad, which the module sets from the batch size
# it binds; aggregate_num, which MXNet takes from the environment (MXNET_OPTIMIZER_AGGREGATION_SIZE).
NOT_SETTINGS = {
    "num_update",
    "begin_num_update",
    "_all_index_update_counts",
    "_index_update_count",
    "lr_scheduler",
    "idx2name",
    "sym_info",
    "param_dict",
    "rescale_grad",
    "aggregate_num",
}
PARAM_OF = {"lr": "learning_rate"}  # attribute -> the optimizer_params key that sets it


def _plain(value, exact: bool = True) -> bool:
    """What JSON writes back: numbers, text, and lists or string-keyed dicts of them; when
    ``exact``, as the same Python value (exact types, not NumPy's scalars)."""
    of = (lambda v, types: type(v) in types) if exact else isinstance
    if value is None or of(value, (bool, int, float, str) if exact else (numbers.Number, str)):
        return True
    if of(value, (list,)):
        return all(_plain(v, exact) for v in value)
    if of(value, (dict,)):
        return all(of(k, (str,)) and _plain(v, exact) for k, v in value.items())
    return False


def _settings_now(optimizer, not_saved: list) -> dict:
    """The optimizer's settings as they are now (a callback may have changed the rate, the
    weight decay, a multiplier during the run); what JSON cannot hold is named in
    ``not_saved``."""
    kind = type(optimizer).__name__.lower()
    now = {}
    for name, value in vars(optimizer).items():
        if name in NOT_SETTINGS or name in EVOLVING.get(kind, ()):
            continue
        if _plain(value):
            now[name] = value
        else:
            said = say(
                "the optimizer's {attribute} (a {kind})", attribute=name, kind=type(value).__name__
            )
            not_saved.append(said)
    return now


def _restore_settings(optimizer, saved_now: dict, requested: dict | None) -> tuple[list, list]:
    """Put back the settings the run changed while it trained, unless this fit asks for another
    value of that setting than the checkpoint's run did: (what was put back, what was not)."""
    restored, kept, defaults = [], [], None
    for name, value in saved_now.items():
        fresh = getattr(optimizer, name, None)
        if fresh == value:
            continue
        if requested is not None and name not in ("lr_mult", "wd_mult"):
            # the value the checkpoint's run asked for, or its optimizer's default (the
            # multipliers come from the network's attributes, as in the checkpoint's run)
            param = PARAM_OF.get(name, name)
            if param not in requested and defaults is None:
                defaults = vars(type(optimizer)())
            start = requested[param] if param in requested else defaults.get(name, fresh)
            if value == start:  # the run never changed it: this fit's request applies, unsaid
                continue
            if fresh != start:  # this fit asks for another value: its own choice
                kept.append(f"{name} {value!r} -> {fresh!r}")
                continue
        setattr(optimizer, name, value)
        restored.append(f"{name} {fresh!r} -> {value!r}")
    return restored, kept


def scheduler_state(scheduler, not_saved: list) -> dict | None:
    """Every attribute of a learning-rate schedule (counters, step lists); what JSON cannot hold
    is named in ``not_saved``."""
    if scheduler is None:
        return None
    kind = type(scheduler).__name__
    if getattr(mx.lr_scheduler, kind, None) is not type(scheduler):
        not_saved.append(
            say("the learning-rate schedule (a {kind}, not one of MXNet's)", kind=kind)
        )
        return None
    values = {}
    for name, value in vars(scheduler).items():
        if _plain(value, exact=False):
            values[name] = value
        else:
            not_saved.append(say("the learning-rate schedule's {name}", name=name))
    return {"class": type(scheduler).__name__, "state": values}


def _evolving_state(optimizer, arrays: dict, not_saved: list) -> dict:
    name = type(optimizer).__name__.lower()
    saved = {}
    for attribute in EVOLVING.get(name, ()):
        value = getattr(optimizer, attribute, None)
        if _plain(value, exact=False):
            saved[attribute] = {"value": value}
            continue
        try:
            saved[attribute] = {"arrays": _flatten(value, f"evolving.{attribute}", arrays)}
        except InputError:
            not_saved.append(say("the optimizer's {attribute}", attribute=attribute))
    return saved


# MXNet keeps the per-weight update counts in private fields of its Optimizer and offers no
# accessor; this file is the one place in mxlearn that reads and writes them.
def capture(updater, keys: UpdateKeys) -> tuple[dict, dict]:
    """(arrays, description) of the optimizer state an MXNet Updater holds (``mod.updater``),
    each weight's state and update count under its parameter's name (``keys``: the module's
    ``update_keys``)."""
    require_updater(updater)
    optimizer, rate = updater.optimizer, updater.optimizer.learning_rate
    arrays: dict = {}
    not_saved: list[str] = []
    states = {
        keys.canonical(index): _flatten(state, f"state:{keys.canonical(index)}", arrays)
        for index, state in updater.states.items()
    }
    counts: dict = {}  # MXNet keeps one count table per device; a weight's count is its largest
    for table in optimizer._all_index_update_counts.values():
        for index, count in table.items():
            name = keys.canonical(index)
            counts[name] = max(count, counts.get(name, 0))
    description = {
        "optimizer": type(optimizer).__name__.lower(),
        "num_update": optimizer.num_update,
        "update_counts": counts,
        # for the reader of the manifest (a callback may have set a NumPy number)
        "learning_rate": float(rate) if isinstance(rate, numbers.Real) else None,
        "lr_scheduler": scheduler_state(optimizer.lr_scheduler, not_saved),
        "evolving": _evolving_state(optimizer, arrays, not_saved),
        "settings_now": _settings_now(optimizer, not_saved),
        "states": states,
        "not_saved": not_saved,  # what a resume cannot restore: its run will differ there
    }
    return arrays, description


def restore(updater, arrays: dict, description: dict, keys: UpdateKeys) -> None:
    """Put a captured state into a (freshly initialized) optimizer's Updater (``mod.updater``),
    under the keys this module's updates use (``keys``), whatever devices it was saved on.
    fit refused an optimizer of another kind before training (``fit_arguments``)."""
    require_updater(updater)
    optimizer = updater.optimizer
    structures = keys.live(description["states"])
    updater.states = {key: _rebuild(s, arrays) for key, s in structures.items()}
    # False: the Updater moves each state to its weight's device before the next update
    updater.states_synced = dict.fromkeys(updater.states, False)
    optimizer.num_update = description["num_update"]
    counts = keys.live(description["update_counts"])
    # every device's table gets every count: each device reads only its own keys
    optimizer._all_index_update_counts = {d: dict(counts) for d in {0, *keys.device_ids}}
    optimizer._index_update_count = optimizer._all_index_update_counts[0]
    schedule = description.get("lr_scheduler")
    if schedule is not None:  # as it was at the checkpoint: its class and every counter
        cls = getattr(mx.lr_scheduler, schedule["class"], None)
        if cls is None:
            raise UnknownSchedule(name=schedule["class"])
        optimizer.lr_scheduler = cls.__new__(cls)
        optimizer.lr_scheduler.__dict__.update(schedule["state"])
    for attribute, saved in description.get("evolving", {}).items():
        value = saved["value"] if "value" in saved else _rebuild(saved["arrays"], arrays)
        setattr(optimizer, attribute, value)
    requested = (description.get("settings") or {}).get("params")
    restored, kept = _restore_settings(optimizer, description.get("settings_now", {}), requested)
    if restored:
        print(
            say(
                "The checkpoint's run changed its optimizer's settings while it trained; the "
                "resumed run goes on with them, as an uninterrupted one would: {changes} (pass "
                "other optimizer_params to choose otherwise).",
                changes="; ".join(restored),
            )
        )
    if kept:
        print(
            say(
                "The checkpoint's run had changed these settings while it trained, and this fit "
                "asks for other values, which apply: {changes}.",
                changes="; ".join(kept),
            )
        )
