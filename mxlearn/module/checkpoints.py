"""Checkpoints, under MXNet's names: ``save_checkpoint``, ``Module.load``, ``load_params`` and
``load_optimizer_states``, with files checked before MXNet parses them and no pickle loaded
unless trusted. ``mxlearn.resume`` (beside ``Module.load``) continues mxlearn's own checkpoints.
"""

from __future__ import annotations

import os

from .._compat import mx
from ..boundary import public
from ..checkpoint import files, names, optimizer_state
from ..checkpoint.prefixes import check_writable_prefix
from ..checkpoint.resume_state import load_resume_state
from ..errors import N_, CheckpointExistsError
from ..guards import binding
from ..guards import lifecycle as life
from . import parameters as P


class CompleteCheckpointExists(CheckpointExistsError):
    says = N_(
        "mod.save_checkpoint(): checkpoint {epoch} of '{prefix}' exists already, a "
        "complete mxlearn checkpoint; new parameters in its place would make it fail "
        "its own check (its manifest records the old file's SHA-256)."
    )
    fix_says = N_("save under another prefix or epoch number")


class CheckpointAPI:
    """Mixed into :class:`mxlearn.Module`: saving and loading."""

    @public("mod.save_checkpoint()", **P.CHECKPOINT_FILES)
    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False, remove_amp_cast=True):
        life.require_params_to_save(self, "mod.save_checkpoint()", save_optimizer_states)
        check_writable_prefix(prefix, "mod.save_checkpoint()")
        if os.path.exists(names.manifest_file(prefix, epoch)):
            raise CompleteCheckpointExists(epoch=epoch, prefix=prefix)
        super().save_checkpoint(prefix, epoch, save_optimizer_states, remove_amp_cast)

    def save_params(self, fname):
        """MXNet's file, without a label taken for a parameter (label_names=None): it holds a
        batch's labels, not weights, and a module that reads its label could not load it."""
        arg_params, aux_params = self.get_params()
        taken = self._labels_taken_for_params()
        arrays = {f"arg:{k}": v for k, v in arg_params.items() if k not in taken}
        arrays.update({f"aux:{k}": v for k, v in aux_params.items()})
        mx.nd.save(fname, {k: v.as_in_context(mx.cpu()) for k, v in arrays.items()})

    @classmethod
    def load(cls, prefix, epoch, load_optimizer_states=False, trust=False, **kwargs):
        """Create a module from a checkpoint, as ``mx.mod.Module.load`` does, as an mxlearn.Module.

        The files are checked first; a missing epoch names the epochs that exist. MXNet's
        ``.states`` file is a pickle: ``load_optimizer_states=True`` needs ``trust=True``.
        """
        files.check_epoch(epoch, f"Module.load({prefix!r}, {epoch!r})")
        states = names.optimizer_states_file(prefix, epoch)
        if load_optimizer_states and not trust:
            trusted = f"Module.load({prefix!r}, {epoch}, load_optimizer_states=True, trust=True)"
            optimizer_state.read_pickled_states(states, trust=False, trusted_call=trusted)
        symbol, arg_params, aux_params = files.load_checkpoint(prefix, epoch)
        mod = cls(symbol=symbol, **kwargs)
        held = dict(states_file=states if load_optimizer_states else None)
        mod._hold_params(arg_params, aux_params, "Module.load()", **held)
        return mod

    def _hold_params(self, arg_params, aux_params, called, states_file=None, resume_state=None):
        """Parameters held before the module is bound, as MXNet's load leaves a module; the
        optimizer state (a trusted .states file, or a resume's) waits for init_optimizer."""
        # a label saved as a parameter (MXNet's own files of a label_names=None module) holds
        # the saving batch's labels, not weights: left out, as from mxlearn's files, it takes
        # the shape of whatever batch this module is bound for (a label_names=None module
        # takes it for a parameter: MXNet copies only the arrays given, and never reads it to
        # predict)
        taken = self._labels_taken_for_params()
        labels = set(taken) | set(self._label_names)
        arg_params = {k: v for k, v in arg_params.items() if k not in labels}
        weights = [n for n in self._param_names if n not in taken]
        binding.check_complete_params(arg_params, aux_params, weights, self._aux_names)
        self._arg_params, self._aux_params = arg_params, aux_params
        self.params_initialized = True
        self.weights_from = "given"
        if states_file is not None:
            self._preload_opt_states = self._trusted_states = states_file
        self._resume = resume_state

    def load_params(self, fname):
        """MXNet's ``load_params``, with the file checked before MXNet parses it."""
        arg_params, aux_params = files.load_params(fname)
        self.set_params(arg_params, aux_params)

    def load_optimizer_states(self, fname, trust=False):
        """MXNet's ``load_optimizer_states``, refusing to unpickle unless ``trust=True``, and then
        admitting only arrays in plain containers (no code runs from the file)."""
        trust = trust or fname == self._trusted_states
        states = optimizer_state.read_pickled_states(fname, trust)
        life.require_installed_optimizer(self, life.NoOptimizerToFill)
        updater = self.updater
        optimizer_state.require_updater(updater)
        updater.states = states
        updater.states_synced = dict.fromkeys(states, False)


def resume_checkpoint(module_class, prefix: str, context=None, **module_args):
    """``mxlearn.resume``: a ``module_class`` module holding the newest complete checkpoint
    under ``prefix``, whose next fit continues it (parameters, optimizer state, epoch)."""
    state = load_resume_state(prefix)
    context = context if context is not None else mx.cpu()
    mod = module_class(files.load_symbol(prefix), context=context, **module_args)
    mod._hold_params(state.arg_params, state.aux_params, "mxlearn.resume()", resume_state=state)
    print(state.explain())
    return mod
