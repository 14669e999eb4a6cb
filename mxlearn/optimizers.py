"""Checks on optimizer names and settings before MXNet sees them.

MXNet answers a misspelled optimizer with "Cannot find optimizer sgdd" and a misspelled setting
with "__init__() got an unexpected keyword argument"; both get the closest valid names here.
"""

from __future__ import annotations

import inspect

from ._compat import mx
from .errors import ArgumentTypeError, InputError, did_you_mean

# Names students bring from other frameworks, mapped to MXNet's.
_FAMILIAR_NAMES = {
    "lr": "learning_rate",
    "weight_decay": "wd",
    "beta_1": "beta1",
    "beta_2": "beta2",
    "eps": "epsilon",
    "clip_grad": "clip_gradient",
}


def optimizer_names() -> list[str]:
    return sorted(mx.optimizer.Optimizer.opt_registry)


def settings_dict(optimizer_params) -> dict:
    """``optimizer_params`` as a dict, whether given as a dict or as pairs (MXNet allows both)."""
    if optimizer_params is None:
        return {}
    try:
        return dict(optimizer_params)
    except (TypeError, ValueError):
        raise ArgumentTypeError(
            f"optimizer_params={optimizer_params!r} is neither a dict nor a sequence of "
            "(name, value) pairs.",
            fix="optimizer_params={'learning_rate': 0.1}  (or (('learning_rate', 0.1),))",
        ) from None


def _accepted_settings(cls) -> set[str]:
    names = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is not None:
            names |= {
                p.name
                for p in inspect.signature(init).parameters.values()
                if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and p.name != "self"
            }
    # Set by Module.init_optimizer itself, never by the user.
    return names - {"param_idx2name", "sym", "param_dict"}


def check_optimizer(optimizer, optimizer_params, called: str) -> None:
    """Raise InputError for an unknown optimizer name or setting, naming the closest ones."""
    if isinstance(optimizer, mx.optimizer.Optimizer):
        return
    if isinstance(optimizer, type) and issubclass(optimizer, mx.optimizer.Optimizer):
        raise ArgumentTypeError(
            f"{called}: optimizer={optimizer.__name__} is the optimizer class, not an optimizer.",
            fix=f"optimizer='{optimizer.__name__.lower()}' (a name) or "
            f"optimizer=mx.optimizer.{optimizer.__name__}(learning_rate=0.1) (an instance)",
        )
    if not isinstance(optimizer, str):
        raise ArgumentTypeError(
            f"{called}: optimizer={optimizer!r} is neither a name nor an mx.optimizer.Optimizer.",
            fix="optimizer='sgd'",
        )
    registry = mx.optimizer.Optimizer.opt_registry
    if optimizer.lower() not in registry:
        raise InputError(
            f"{called}: there is no optimizer named '{optimizer}'. "
            + did_you_mean(optimizer, optimizer_names()),
            fix="optimizer='sgd' (or 'adam', 'nag', 'rmsprop', ...)",
        )
    accepted = _accepted_settings(registry[optimizer.lower()])
    for name in settings_dict(optimizer_params):
        if name in accepted:
            continue
        hint = (
            f"Did you mean '{_FAMILIAR_NAMES[name]}'?"
            if _FAMILIAR_NAMES.get(name) in accepted
            else did_you_mean(name, accepted)
        )
        raise InputError(
            f"{called}: the optimizer '{optimizer}' has no setting '{name}'. {hint}",
            fix="optimizer_params={'learning_rate': 0.1}",
        )
