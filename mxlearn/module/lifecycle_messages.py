"""The words of the lifecycle errors that Module's own calls raise (module.py keeps the checks).

Each is a function, so that the text is said in the language chosen when the error is raised.
"""

from __future__ import annotations

from ..guards import lifecycle as life
from ..language import say


def no_optimizer_to_save() -> str:
    return say(
        "mod.save_optimizer_states() saves the optimizer's state, and no optimizer is installed."
    )


def init_params_before_bind() -> str:
    """Follows the call's name: 'mod.init_params() ...'."""
    return say(
        "was called before mod.bind(): the parameters' shapes come from the input shapes, which "
        "bind sets."
    )


def set_params_before_bind() -> str:
    """Follows the call's name: 'mod.set_params() ...'."""
    return say("copies values into the module's memory, and the module is not bound yet.")


def set_params_fix() -> str:
    return say("{bind_call}; then mod.set_params(arg_params, aux_params)", bind_call=life.BIND_CALL)


def no_outputs_to_measure() -> str:
    return say(
        "mod.update_metric() compares the outputs of the last forward pass with the labels, and "
        "there has been no forward pass yet."
    )


def no_outputs_to_return() -> str:
    return say(
        "mod.get_outputs() returns the outputs of the last forward pass, and there has been none "
        "yet."
    )
