"""A module's lifecycle: MXNet's three flags read as one word (:func:`stage`), plus the step of
the batch cycle MXNet does not track (:class:`Step`), so that ``backward`` without a training
``forward``, or ``update`` without ``backward``, is explained instead of using stale values."""

from __future__ import annotations

import contextlib
import enum
from dataclasses import dataclass

from ..errors import N_, LifecycleError
from ..language import say

# The calls a student makes next: written once, used by errors and the summary alike.
BIND_CALL = "mod.bind(data_shapes=train_iter.provide_data, label_shapes=train_iter.provide_label)"
INIT_CALL = "mod.init_params(initializer=mx.init.Uniform(scale=0.1))"
OPTIMIZER_CALL = "mod.init_optimizer(optimizer='sgd', optimizer_params=(('learning_rate', 0.1),))"
TRAIN_STEP = "mod.forward(batch, is_train=True); mod.backward(); mod.update()"


class LoadedNotBound(LifecycleError):
    says = N_(
        "{called} was called on a module whose parameters are loaded but which is not bound yet: "
        "bind allocates the memory for the input shapes."
    )
    fix_says = N_(
        "{bind_call} to train on, or mod.bind(data_shapes=val_iter.provide_data, "
        "for_training=False) to predict (the loaded parameters are kept either way)"
    )


class NotBound(LifecycleError):
    says = N_(
        "{called} was called before the module was bound: bind allocates the memory for the input "
        "shapes."
    )
    fix_code = BIND_CALL


class ParamsNotInitialized(LifecycleError):
    says = N_("{called} needs the parameters, and they are not initialized yet.")
    fix_code = INIT_CALL


class BoundForPrediction(LifecycleError):
    says = N_(
        "{called}: the module is bound for prediction only (for_training=False), so it keeps no "
        "gradients and cannot train."
    )
    fix_says = N_(
        "mod.bind(data_shapes=train_iter.provide_data, label_shapes=train_iter.provide_label, "
        "for_training=True, force_rebind=True)  (the parameters are kept)"
    )


class NoOptimizer(LifecycleError):
    says = N_(
        "{called} needs an optimizer to turn gradients into new weights, and none is installed."
    )
    fix_code = OPTIMIZER_CALL


class NoParamsYet(LifecycleError):
    says = N_("{called} was called before the parameters exist.")
    fix_code = "{steps}"


class NoTrainingForward(LifecycleError):
    says = N_(
        "mod.backward() needs a training forward pass first, and there has been none since the "
        "last update (MXNet would compute gradients from stale or uninitialised values and corrupt "
        "the weights)."
    )
    fix_code = TRAIN_STEP


class NoGradients(LifecycleError):
    says = N_(
        "mod.update() needs gradients from mod.backward() since the last update (otherwise the "
        "previous gradients would be applied again)."
    )
    fix_code = TRAIN_STEP


class NestedFit(LifecycleError):
    says = N_(
        "mod.fit() was called while this module's fit is running (from one of its callbacks): the "
        "two runs would train the same weights in turn and each replace the other's history."
    )
    fix_says = N_(
        "raise mxlearn.StopTraining in the callback to end the running fit, then call mod.fit(...) "
        "again after it"
    )


class NoOptimizerToLend(LifecycleError):
    says = N_("mod.borrow_optimizer(shared_module): the shared module has no optimizer to lend.")
    fix_says = N_("shared_module.{optimizer_call}; then mod.borrow_optimizer(shared_module)")


class NoInputGrads(LifecycleError):
    says = N_("{called}: the module keeps no gradients for its inputs.")
    fix_code = "mod.bind(..., inputs_need_grad=True, force_rebind=True)"


class NoOptimizerInstalled(LifecycleError):  # saving or loading optimizer state
    fix_code = OPTIMIZER_CALL


class NotBoundFor(LifecycleError):  # init_params or set_params: says follows the call's name
    fix_code = BIND_CALL

    @classmethod
    def render_problem(cls, fields: dict) -> str:
        return f"{fields['called']} {super().render_problem(fields)}"


class NoOptimizerToSave(NoOptimizerInstalled):
    says = N_(
        "mod.save_optimizer_states() saves the optimizer's state, and no optimizer is installed."
    )


class NoOptimizerToFill(NoOptimizerInstalled):
    says = N_(
        "mod.load_optimizer_states() fills the optimizer's state, and no optimizer is installed yet."
    )


class InitParamsBeforeBind(NotBoundFor):
    says = N_(
        "was called before mod.bind(): the parameters' shapes come from the input shapes, which "
        "bind sets."
    )


class SetParamsBeforeBind(NotBoundFor):
    says = N_("copies values into the module's memory, and the module is not bound yet.")
    fix_says = N_("{bind_call}; then mod.set_params(arg_params, aux_params)")


class NoOutputsToMeasure(LifecycleError):
    says = N_(
        "mod.update_metric() compares the outputs of the last forward pass with the labels, and "
        "there has been no forward pass yet."
    )
    fix_code = "mod.forward(batch, is_train=True); mod.update_metric(metric, batch.label)"


class NoOutputsToReturn(LifecycleError):
    says = N_(
        "mod.get_outputs() returns the outputs of the last forward pass, and there has been none "
        "yet."
    )
    fix_code = "mod.forward(batch, is_train=False); mod.get_outputs()"


class NothingToSave(LifecycleError):
    says = N_("{called} saves the parameters, and there are none yet.")
    fix_code = "{steps}"


class NoOptimizerStateToSave(LifecycleError):
    says = N_(
        "{called}(save_optimizer_states=True): no optimizer is installed, so there is no optimizer "
        "state to save."
    )
    fix_says = N_("{optimizer_call}, or save_optimizer_states=False")


def stage_words(stage_name: str) -> str:
    return {
        "created": say("created"),
        "loaded": say("loaded"),
        "bound": say("bound"),
        "initialized": say("initialized"),
        "ready": say("ready"),
    }[stage_name]


class Step(enum.Enum):  # where the module is in the batch cycle forward -> backward -> update
    NO_OUTPUTS = "no_outputs"
    INFERENCE = "inference"
    FORWARD = "forward"
    BACKWARD = "backward"
    UPDATED = "updated"

    def words(self) -> str:
        return {
            Step.NO_OUTPUTS: say("no forward pass since bind"),
            Step.INFERENCE: say("outputs of a forward pass that trains nothing"),
            Step.FORWARD: say("a training forward pass, waiting for backward"),
            Step.BACKWARD: say("gradients from backward, waiting for update"),
            Step.UPDATED: say("weights updated"),
        }[self]


# The steps after which backward may run: a training forward, or a backward already (a tuple:
# membership by identity, where a set would call Enum's hash in Python every batch).
TRAINING_FORWARD = (Step.FORWARD, Step.BACKWARD)


@dataclass
class Lifecycle:
    """What mxlearn tracks beyond MXNet's flags: the step, the high-level call running, and
    which first batches were checked."""

    step: Step = Step.NO_OUTPUTS
    # backward ran since the last update: update may apply its gradients, even after a forward
    # that only evaluates (MXNet keeps them in the gradient arrays until the next backward)
    gradients_pending: bool = False
    call: str | None = None  # 'fit', 'predict' or 'score' while one of them runs
    training_batch_checked: bool = False  # the first training batch's values were checked
    evaluation_batch_checked: bool = True  # score's first batch waits while False
    # fit or score over an iterator whose rows are not in memory: each batch queues its checks
    queued_checks: object = None  # a batch_values.QueuedValueChecks
    rows_checked: bool = False  # fit or score over an iterator whose every row was checked
    # NDArrayIter(last_batch_handle='roll_over') sets batch.pad to the rows it carried over
    # from the previous epoch: real rows, which metrics must count
    pad_is_real: bool = False

    def restart(self) -> None:  # after a (re)bind
        self.step = Step.NO_OUTPUTS
        self.gradients_pending = False
        self.training_batch_checked = False
        self.evaluation_batch_checked = True

    def describe(self) -> str:
        if self.gradients_pending and self.step is not Step.BACKWARD:
            return say("{step}; gradients from backward wait for update", step=self.step.words())
        return self.step.words()

    @contextlib.contextmanager
    def inside(self, call: str, rows_checked=False, queued_checks=None, pad_is_real=False):
        """While fit, predict or score runs. Score's first batch gets its values checked unless
        every row was (``rows_checked``) or each batch queues its checks (``queued_checks``)."""
        outer = self.call, self.queued_checks, self.rows_checked, self.pad_is_real
        self.call, self.queued_checks, self.rows_checked = call, queued_checks, rows_checked
        self.pad_is_real = pad_is_real
        self.evaluation_batch_checked = call != "score"
        if call == "fit":  # each fit's first batch gets its values checked
            self.training_batch_checked = False
        try:
            yield
        finally:  # fit's validation is a score inside fit: fit's settings come back
            self.call, self.queued_checks, self.rows_checked, self.pad_is_real = outer
            self.evaluation_batch_checked = True


def stage(mod) -> str:
    if not mod.binded:
        return "loaded" if mod.params_initialized else "created"
    if not mod.params_initialized:
        return "bound"
    return "ready" if mod.optimizer_initialized else "initialized"


def next_step(mod) -> str:
    current = stage(mod)
    if current == "initialized" and not mod.for_training:
        return say("mod.predict(val_iter) or mod.score(val_iter, 'acc')")
    if current == "loaded":
        return say(
            "mod.predict(val_iter) (binds for prediction), or mod.fit(train_iter, ...) to train on"
        )
    if current == "ready":
        return say("mod.forward(batch, is_train=True), or mod.fit(train_iter, num_epoch=5)")
    return {"created": BIND_CALL, "bound": INIT_CALL, "initialized": OPTIMIZER_CALL}[current]


def state_text(mod) -> str:
    return say("{stage}; next: {call}", stage=stage_words(stage(mod)), call=next_step(mod))


def require_bound(mod, called: str) -> None:
    if mod.binded:
        return
    kind = LoadedNotBound if mod.params_initialized else NotBound
    raise kind(called=called, bind_call=BIND_CALL, state=state_text(mod))


def require_params(mod, called: str) -> None:
    require_bound(mod, called)
    if not mod.params_initialized:
        raise ParamsNotInitialized(called=called, state=state_text(mod))


def require_training(mod, called: str) -> None:
    if not mod.for_training:
        raise BoundForPrediction(called=called, state=state_text(mod))


def _steps_to_params(mod) -> str:
    return INIT_CALL if mod.binded else f"{BIND_CALL}; {INIT_CALL}"


def require_initialized_params(mod, called: str) -> None:  # a loaded module has them unbound
    if not mod.params_initialized:
        raise NoParamsYet(called=called, steps=_steps_to_params(mod), state=state_text(mod))


def require_training_forward(mod) -> None:  # called when the step is not a training forward
    require_params(mod, "mod.backward()")
    require_training(mod, "mod.backward()")
    raise NoTrainingForward(state=state_text(mod))


def require_gradients(mod, gradients_pending: bool) -> None:
    if not mod.optimizer_initialized:
        require_params(mod, "mod.update()")
        require_training(mod, "mod.update()")
        raise NoOptimizer(called="mod.update()", state=state_text(mod))
    if not gradients_pending:
        raise NoGradients(state=state_text(mod))


def refuse_nested_fit(mod, lifecycle: Lifecycle) -> None:
    if lifecycle.call == "fit":
        raise NestedFit(state=state_text(mod))


def require_lender(shared_module) -> None:
    if not getattr(shared_module, "optimizer_initialized", False):
        raise NoOptimizerToLend(optimizer_call=OPTIMIZER_CALL.removeprefix("mod."))


def require_outputs(mod, step: Step, kind: type[LifecycleError]) -> None:
    if step is Step.NO_OUTPUTS:
        raise kind(state=state_text(mod))


def require_input_grads(mod, called: str) -> None:
    require_params(mod, called)
    if not mod.inputs_need_grad:
        raise NoInputGrads(called=called, state=state_text(mod))


def require_installed_optimizer(mod, kind: type[NoOptimizerInstalled]) -> None:
    if not mod.optimizer_initialized:
        raise kind(state=state_text(mod))


def require_bound_for(mod, called: str, kind: type[NotBoundFor]) -> None:
    if not mod.binded:
        raise kind(called=called, bind_call=BIND_CALL, state=state_text(mod))


def require_params_to_save(mod, called: str, save_optimizer_states: bool) -> None:
    if not mod.params_initialized:
        raise NothingToSave(called=called, steps=_steps_to_params(mod), state=state_text(mod))
    if save_optimizer_states and not mod.optimizer_initialized:
        state = state_text(mod)
        raise NoOptimizerStateToSave(called=called, optimizer_call=OPTIMIZER_CALL, state=state)
