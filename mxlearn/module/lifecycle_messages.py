"""The lifecycle errors that Module's own calls raise (module.py keeps the checks, the guards in
guards/lifecycle.py raise these kinds with the module's state)."""

from __future__ import annotations

from ..errors import N_, LifecycleError
from ..guards.lifecycle import NoOptimizerInstalled, NotBoundFor


class NoOptimizerToSave(NoOptimizerInstalled):
    says = N_(
        "mod.save_optimizer_states() saves the optimizer's state, and no optimizer is installed."
    )


class NoOptimizerToFill(NoOptimizerInstalled):
    says = N_(
        "mod.load_optimizer_states() fills the optimizer's state, and no optimizer is installed yet."
    )


class InitParamsBeforeBind(NotBoundFor):
    """Follows the call's name: 'mod.init_params() ...'."""

    says = N_(
        "was called before mod.bind(): the parameters' shapes come from the input shapes, which "
        "bind sets."
    )


class SetParamsBeforeBind(NotBoundFor):
    """Follows the call's name: 'mod.set_params() ...'."""

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
