"""The training loop and its callbacks.

``Module.fit`` checks its arguments, :func:`plan_fit` lays out the run (its callbacks in order
and MXNet's own fit arguments) and :func:`run_fit` runs it inside MXNet's ``fit``. Every
participant is a :class:`Callback`: metric recording, the live plot, the divergence watchdog,
MXNet-style callbacks, checkpoint saving, epoch reports, early stopping, and the user's own.
"""

# Only the protocol here: importing it (a Checkpoint is a callback) must not import the
# callbacks, which read checkpoints.
from .callback import Callback, CallbackList, RunContext, StopTraining

__all__ = ["Callback", "CallbackList", "RunContext", "StopTraining"]
