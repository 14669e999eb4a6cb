"""fit's own arguments: epochs, iterators, callbacks, resuming, and the endings it explains."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..checkpoint import names
from ..errors import N_, ArgumentTypeError, InputError
from ..language import say
from .arguments import as_list
from .optimizer_settings import settings_dict

if TYPE_CHECKING:  # the request is the fit loop's: named here for its type only
    from ..training.request import FitRequest


class BeginEpochDiffers(InputError):
    says = N_(
        "mod.fit(begin_epoch={begin_epoch}) but checkpoint {epoch} of '{prefix}' has {epoch} "
        "epochs done, so training goes on with epoch {epoch}."
    )
    fix_says = N_("leave begin_epoch out (or begin_epoch={epoch})")


class OptimizerSettingsUnknown(InputError):
    says = N_(
        "The checkpoint's optimizer state is for '{kind}', made from an optimizer object whose "
        "settings could not be saved, so fit cannot make it again by itself."
    )
    fix_says = N_(
        "pass it again: mod.fit(..., optimizer='{kind}', optimizer_params={{'learning_rate': "
        "...}}) with the settings you trained with"
    )


class OtherOptimizerKind(InputError):
    says = N_(
        "The checkpoint's optimizer state is for '{kind}', and this fit asks for '{asked}': the "
        "state of one does not fit the other."
    )
    fix_says = N_(
        "resume with optimizer='{kind}' (or leave the optimizer out of fit), or train the new "
        "optimizer from fresh weights"
    )


class NoNumEpoch(InputError):
    says = N_(
        "mod.fit() needs num_epoch: the epoch number to stop before (epochs count from 0, so "
        "num_epoch=5 trains epochs 0..4)."
    )
    fix_code = "mod.fit(train_iter, num_epoch=5)"


class NothingToTrain(InputError):
    says = N_(
        "mod.fit(begin_epoch={begin_epoch}, num_epoch={num_epoch}) would train nothing: num_epoch "
        "is the epoch to stop before, not how many epochs to add."
    )
    fix_says = N_(
        "to train 3 more epochs: mod.fit(..., begin_epoch={begin_epoch}, num_epoch={stop})"
    )


class NotACallback(ArgumentTypeError):
    says = N_(
        "mod.fit(callbacks=[...]) takes mxlearn.Callback objects; got {what}. A plain function "
        "goes to MXNet's batch_end_callback or epoch_end_callback."
    )
    fix_says = N_(
        "class MyCallback(mxlearn.Callback): def on_epoch_done(self, run, epoch): ...; then "
        "mod.fit(..., callbacks=[MyCallback()])"
    )


class CallbackClass(NotACallback):
    says = N_(
        "mod.fit(callbacks=[...]) takes mxlearn.Callback objects; got {what} (the class itself, "
        "not an object of it). A plain function goes to MXNet's batch_end_callback or "
        "epoch_end_callback."
    )


class SameCallbackTwice(InputError):
    says = N_(
        "mod.fit(callbacks=[...]): the same {what} is given more than once. A callback keeps "
        "its own state (counts, samples, a best value), so it runs once at each step: twice, "
        "it would count everything twice."
    )
    fix_says = N_("give it once: callbacks=[...] with each callback in it one time")


class TrainDataWithoutLabels(InputError):
    says = N_(
        "mod.fit(): train_data gives no labels (its provide_label is empty), but {expects}: "
        "training compares the outputs with them."
    )
    fix_code = "train_iter = mx.io.NDArrayIter(X, y, batch_size=32)"


class EmptyTrainData(InputError):
    says = N_(
        "mod.fit(): train_data is empty: it yields no batch, even after reset() (fewer rows than "
        "one batch, with last_batch_handle='discard'?)."
    )
    fix_says = N_("give it at least batch_size rows, or a smaller batch_size")


class TrainDataNotReset(InputError):
    says = N_(
        "mod.fit(): train_data gave no batch at the start of an epoch: it had already been run to "
        "its end (e.g. by a manual training loop) and not reset, and MXNet's fit does not reset it "
        "before the first epoch. It has been reset now."
    )
    fix_code = "train_iter.reset(); mod.fit(train_iter, ...)"


class ParamsWouldBeIgnored(InputError):
    says = N_(
        "mod.fit(arg_params=...): this module's parameters are set already (by init_params, "
        "set_params, Module.load or an earlier fit), and MXNet would ignore the ones given here "
        "and train the module's own."
    )
    fix_says = N_(
        "mod.fit(..., arg_params=..., force_init=True) to train from the given ones, or leave "
        "arg_params out to go on from the module's own"
    )


def continue_from(state, request: FitRequest, params_initialized: bool) -> None:
    """Complete fit's arguments (``request``, by name) for continuing a ResumeState: its
    begin_epoch, parameters and optimizer. The optimizer's state waits for init_optimizer."""
    if request.begin_epoch not in (0, state.epoch):
        begin_epoch, epoch, prefix = request.begin_epoch, state.epoch, state.prefix
        raise BeginEpochDiffers(begin_epoch=begin_epoch, epoch=epoch, prefix=prefix)
    request.begin_epoch = state.epoch
    if request.arg_params is None and not params_initialized:
        request.arg_params, request.aux_params = state.arg_params, state.aux_params
    saved = state.optimizer or {}
    settings = saved.get("settings")
    optimizer, params = request.optimizer, settings_dict(request.optimizer_params)
    defaults = optimizer == "sgd" and params == {"learning_rate": 0.01}  # fit's own
    if defaults and settings:
        request.optimizer, request.optimizer_params = settings["optimizer"], settings["params"]
        print(
            say(
                "Continuing with the checkpoint's optimizer: '{optimizer}' with {params}.",
                optimizer=settings["optimizer"],
                params=settings["params"],
            )
        )
    elif settings and not defaults:
        _note_other_settings(settings, optimizer, params, state.epoch)
    _check_same_optimizer_kind(saved, request.optimizer, defaults and not settings)


def _note_other_settings(settings: dict, optimizer, params: dict, epoch: int) -> None:
    """Settings other than the checkpoint's are the user's to choose; the run differs then."""
    if not isinstance(optimizer, str) or optimizer.lower() != settings["optimizer"]:
        return  # another kind of optimizer: refused just below
    plain = (bool, int, float, str)
    asked = {k: v for k, v in params.items() if isinstance(v, plain)}
    saved = {k: v for k, v in settings["params"].items() if isinstance(v, plain)}
    if asked != saved:
        print(
            say(
                "Note: this fit asks for '{optimizer}' with {asked}; the checkpoint's run used "
                "{saved}. The new settings apply from epoch {epoch}, so from there the run "
                "differs from an uninterrupted one (leave optimizer_params out to continue as "
                "it was).",
                optimizer=optimizer,
                asked=asked,
                saved=saved,
                epoch=epoch,
            )
        )


def _check_same_optimizer_kind(saved: dict, optimizer, settings_unknown: bool) -> None:
    """The checkpoint's optimizer state fits only an optimizer of its kind: refused now, before
    an optimizer is installed that a corrected call would find in its way."""
    kind = saved.get("optimizer")
    asked = optimizer if isinstance(optimizer, str) else type(optimizer).__name__
    if kind is None or asked.lower() == kind:
        return
    if settings_unknown:
        raise OptimizerSettingsUnknown(kind=kind)
    raise OtherOptimizerKind(kind=kind, asked=asked.lower())


def check_epochs_and_params(request: FitRequest, resumed: bool, params_initialized: bool) -> None:
    """fit's epochs, and (unless resuming) a note on begin_epoch=0 and given parameters."""
    begin_epoch, num_epoch, arg_params = request.begin_epoch, request.num_epoch, request.arg_params
    if num_epoch is None:
        raise NoNumEpoch()
    note = not resumed and begin_epoch_note(arg_params, begin_epoch, request.epoch_end_callback)
    if note:
        print(note)
    if begin_epoch >= num_epoch:
        stop = begin_epoch + 3
        raise NothingToTrain(begin_epoch=begin_epoch, num_epoch=num_epoch, stop=stop)
    # MXNet's fit ignores arg_params given to a module whose parameters are set already (its
    # init_params returns at once without force_init): the run would train other weights than
    # the ones handed in.
    if not resumed and arg_params is not None and not request.force_init and params_initialized:
        raise ParamsWouldBeIgnored()


def check_callbacks(callbacks, callback_class) -> list:
    """``fit(callbacks=[...])``: instances of mxlearn.Callback (subclasses)."""
    given = as_list(callbacks)
    for item in given:
        if not isinstance(item, callback_class):
            if isinstance(item, type):
                raise CallbackClass(what=item.__name__)
            raise NotACallback(what=type(item).__name__)
    for place, item in enumerate(given):
        if any(item is earlier for earlier in given[:place]):
            raise SameCallbackTwice(what=type(item).__name__)
    return given


def no_batch_error(train_data, state: str) -> InputError:
    """Tell an exhausted iterator (reset it) from an empty one (give it data)."""
    train_data.reset()
    try:
        next(iter(train_data))
    except StopIteration:
        return EmptyTrainData(state=state)
    train_data.reset()
    return TrainDataNotReset(state=state)


def begin_epoch_note(arg_params, begin_epoch: int, epoch_end_callbacks) -> str | None:
    """What a student should hear when ``fit`` gets parameters and begin_epoch=0: the seed
    tutorial's classic is resuming a checkpoint without begin_epoch, which numbers the epochs
    from 0 again and overwrites the early checkpoints."""
    if arg_params is None or begin_epoch != 0:
        return None
    saved_from = getattr(arg_params, "epoch", None)
    overwrites = []
    for callback in as_list(epoch_end_callbacks):  # mx.callback.do_checkpoint(prefix)'s prefix
        code = getattr(callback, "__code__", None)
        if code is None or "do_checkpoint" not in getattr(callback, "__qualname__", ""):
            continue
        cell = dict(zip(code.co_freevars, callback.__closure__ or ())).get("prefix")
        prefix = getattr(cell, "cell_contents", None)
        if prefix and names.saved_epochs(prefix):
            overwrites.append(f"'{names.params_file(prefix, 1)}'")
    if saved_from is None and not overwrites:
        return None
    if saved_from:
        origin = say(
            "the parameters of checkpoint {epoch} of '{prefix}'",
            epoch=saved_from,
            prefix=arg_params.prefix,
        )
        continue_with = f"begin_epoch={saved_from}"
    else:
        origin, continue_with = say("parameters"), say("begin_epoch=<that number>")
    if overwrites:
        return say(
            "Note: fit() got {origin} and begin_epoch=0, so epochs are counted from 0 again, "
            "and do_checkpoint will write {files} again over the saved one. To continue after a "
            "checkpoint, pass its number: {continue_with} (for fine-tuning from other weights, "
            "0 is right).",
            origin=origin,
            files=", ".join(overwrites),
            continue_with=continue_with,
        )
    return say(
        "Note: fit() got {origin} and begin_epoch=0, so epochs are counted from 0 again. To "
        "continue after a checkpoint, pass its number: {continue_with} (for fine-tuning from "
        "other weights, 0 is right).",
        origin=origin,
        continue_with=continue_with,
    )
