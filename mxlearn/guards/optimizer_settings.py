"""Optimizer names and settings checked before MXNet sees them (which answers "Cannot find
optimizer sgdd" and "unexpected keyword argument"), and a second request."""

from __future__ import annotations

import inspect
import math
import numbers
from dataclasses import dataclass

from .._compat import mx
from ..boundary import warn
from ..errors import (
    N_,
    ArgumentTypeError,
    InputError,
    LifecycleError,
    TrainingWarning,
    did_you_mean,
)
from ..language import say


class NotSettings(ArgumentTypeError):
    says = N_(
        "optimizer_params={params!r} is neither a dict nor a sequence of (name, value) pairs."
    )
    fix_says = N_("optimizer_params={{'learning_rate': 0.1}}  (or (('learning_rate', 0.1),))")


class NoSuchOptimizer(InputError):
    says = N_("{called}: there is no optimizer named '{optimizer}'. {hint}")
    fix_says = N_("optimizer='sgd' (or 'adam', 'nag', 'rmsprop', ...)")


class NoSuchSetting(InputError):
    says = N_("{called}: the optimizer '{optimizer}' has no setting '{name}'. {hint}")
    fix_code = "{example}"


class OptimizerInstalled(LifecycleError):
    says = N_(
        "{called}: an optimizer is already installed ({installed}); this call asks for {asked}. "
        "MXNet would keep the old one and ignore the new settings."
    )
    fix_says = N_(
        "mod.init_optimizer(optimizer=..., optimizer_params=..., force_init=True) replaces it "
        "(momentum and other optimizer state start afresh); to continue with the installed one, "
        "pass the same settings"
    )


# Names students bring from other frameworks, mapped to MXNet's.
_FAMILIAR_NAMES = {
    "lr": "learning_rate",
    "weight_decay": "wd",
    "beta_1": "beta1",
    "beta_2": "beta2",
    "eps": "epsilon",
    "clip_grad": "clip_gradient",
}


def settings_dict(optimizer_params) -> dict:
    if optimizer_params is None:
        return {}
    try:
        return dict(optimizer_params)
    except (TypeError, ValueError):
        raise NotSettings(params=optimizer_params) from None


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


SETTINGS_EXAMPLE = "optimizer_params={'learning_rate': 0.1}"


def check_optimizer(optimizer, optimizer_params, called: str, example=SETTINGS_EXAMPLE) -> None:
    """Refuse an unknown optimizer name or setting; ``example``: the settings the fix shows
    (lr_find sets the learning rate itself)."""
    registry = mx.optimizer.Optimizer.opt_registry
    if isinstance(optimizer, mx.optimizer.Optimizer):
        return
    if optimizer.lower() not in registry:
        hint = did_you_mean(optimizer, sorted(registry))
        raise NoSuchOptimizer(called=called, optimizer=optimizer, hint=hint)
    accepted = _accepted_settings(registry[optimizer.lower()])
    for name in settings_dict(optimizer_params):
        if name in accepted:
            continue
        hint = (
            say("Did you mean {names}?", names=f"'{_FAMILIAR_NAMES[name]}'")
            if _FAMILIAR_NAMES.get(name) in accepted
            else did_you_mean(name, accepted)
        )
        facts = dict(called=called, optimizer=optimizer, name=name, hint=hint)
        raise NoSuchSetting(**facts, example=example)


def optimizer_text(optimizer, optimizer_params) -> str:
    if isinstance(optimizer, mx.optimizer.Optimizer):
        return say(
            "{kind} object (learning_rate={learning_rate})",
            kind=type(optimizer).__name__,
            learning_rate=optimizer.learning_rate,
        )
    settings = ", ".join(f"{k}={v!r}" for k, v in settings_dict(optimizer_params).items())
    return say(
        "'{optimizer}' with {settings}",
        optimizer=optimizer,
        settings=settings or say("default settings"),
    )


@dataclass(frozen=True)
class OptimizerRequest:
    """What an init_optimizer (or fit) call asks for."""

    key: tuple
    text: str

    @classmethod
    def of(cls, kvstore, optimizer, optimizer_params) -> OptimizerRequest:
        # a kvstore by its kind: fit may make the one its name asks for (worker_batches)
        kvstore = getattr(kvstore, "type", kvstore)
        if isinstance(optimizer, mx.optimizer.Optimizer):
            key = (kvstore, optimizer)
        else:
            params = settings_dict(optimizer_params)
            key = (kvstore, optimizer.lower(), sorted(params.items(), key=lambda kv: kv[0]))
        return cls(key, optimizer_text(optimizer, optimizer_params))

    def settings(self) -> dict | None:
        """Name and plain settings for a checkpoint's manifest (None for an optimizer object)."""
        kvstore, optimizer, *rest = self.key
        if not isinstance(optimizer, str):
            return None
        params = {k: _plain(v) for k, v in rest[0] if _plain(v) is not _NOT_PLAIN}
        return {"optimizer": optimizer, "params": params}


_NOT_PLAIN = object()


def _plain(value):
    """A setting as JSON holds it (a NumPy number as Python's), or _NOT_PLAIN (a schedule)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return _NOT_PLAIN


def check_same_optimizer(
    installed: OptimizerRequest | None, asked: OptimizerRequest, called: str, state: str
) -> None:
    if installed is None or installed.key == asked.key:
        return
    facts = dict(called=called, installed=installed.text, asked=asked.text)
    raise OptimizerInstalled(**facts, state=state)


def check_rescale_grad(optimizer, expected: float, why: str) -> None:
    if math.isclose(optimizer.rescale_grad, expected, rel_tol=1e-6):
        return
    factor = optimizer.rescale_grad / expected
    warn(
        say(
            "The optimizer was made outside the module with rescale_grad={rescale_grad}. "
            "Gradients here are sums over the rows of a batch (over every device and worker), "
            "and MXNet scales them by {why} = {expected} so that a step follows the average; "
            "with {rescale_grad} each step is {factor} times that. Fix: make it with "
            "rescale_grad={expected}, or pass the optimizer by name (optimizer='sgd', "
            "optimizer_params={{...}}) and MXNet sets it.",
            rescale_grad=f"{optimizer.rescale_grad:g}",  # numbers formatted here, so that
            why=why,  # the template has plain fields
            expected=f"{expected:g}",
            factor=f"{factor:g}",
        ),
        TrainingWarning,
    )


def warn_rescale_kept(optimizer, expected: float, why: str) -> None:
    warn(
        say(
            "rescale_grad={rescale_grad} was set by hand, and the module's batches are now of "
            "another size: MXNet would scale them by {why} = {expected}, so each step is now "
            "{factor} times the average over a batch. Fix: make the optimizer again for this "
            "batch, mod.init_optimizer(optimizer=..., force_init=True) with "
            "rescale_grad={expected}, or pass it by name (optimizer='sgd') and mxlearn keeps "
            "rescale_grad at 1/batch.",
            rescale_grad=f"{optimizer.rescale_grad:g}",
            why=why,
            expected=f"{expected:g}",
            factor=f"{optimizer.rescale_grad / expected:g}",
        ),
        TrainingWarning,
    )


class StepScaledOnServers(TrainingWarning):
    """The servers of a distributed kvstore keep the optimizer MXNet sent them."""


def warn_step_on_servers(optimizer, expected: float, why: str, batch: int) -> None:
    """The batch size changed under an optimizer that runs on the kvstore's servers: MXNet
    pickled it to them at init_optimizer, so the rescale_grad they use cannot follow."""
    made_for = round(batch * expected / optimizer.rescale_grad)
    warn(
        say(
            "The module's batches now have {batch} rows, but its optimizer runs on the "
            "kvstore's servers, which keep the rescale_grad={rescale_grad} MXNet sent them for "
            "batches of {made_for}: these batches need {why} = {expected}, so each step is "
            "{factor} times the average over a batch. Fix: keep one batch size in a distributed "
            "run: bind (or fit) with batch_size={made_for}, the size the optimizer was made for.",
            batch=batch,
            made_for=made_for,
            rescale_grad=f"{optimizer.rescale_grad:g}",
            why=why,
            expected=f"{expected:g}",
            factor=f"{optimizer.rescale_grad / expected:g}",
        ),
        StepScaledOnServers,
    )
