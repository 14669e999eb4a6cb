"""What a module shows of itself: its state, read-only views for mxlearn's other parts, the
summary (``repr`` and Jupyter's HTML), and misspelled attributes explained.

MXNet keeps the executor group, the optimizer and the updater in private fields; the properties
here are the one way mxlearn's callbacks, checks and checkpoints read them.
"""

from __future__ import annotations

from ..checkpoint.update_keys import UpdateKeys
from ..errors import N_, UnknownAttributeError, closest, did_you_mean
from ..guards import lifecycle as life
from ..language import say
from .summary import ModuleFacts, summary_html, summary_text


class NoSuchAttribute(UnknownAttributeError):
    says = N_("mxlearn.Module has no attribute '{name}'. {suggestion}")


class ModuleInspection:
    """Mixed into :class:`mxlearn.Module`: reading, never changing, the module."""

    @property
    def state(self) -> str:
        """One word: 'created', 'loaded', 'bound', 'initialized' or 'ready'."""
        return life.stage(self)

    def state_text(self) -> str:
        """The state and the call that comes next, as errors show it."""
        return life.state_text(self)

    @property
    def backward_ran(self) -> bool:
        """Whether ``backward`` ran after the last training forward pass (its gradients are
        in the gradient arrays, updated or not)."""
        return self._lifecycle.step in (life.Step.BACKWARD, life.Step.UPDATED)

    @property
    def contexts(self) -> list:
        """The devices the module computes on."""
        return list(self._context)

    @property
    def executor_group(self):
        """MXNet's executor group in use: its arrays on each device (for checks and plots)."""
        life.require_bound(self, "mod.executor_group")
        return self._exec_group

    @property
    def optimizer(self):
        """The installed MXNet optimizer (None before init_optimizer)."""
        return self._optimizer if self.optimizer_initialized else None

    @property
    def updater(self):
        """The Updater holding the optimizer's state: the module's own, or its kvstore's (None
        when a distributed kvstore updates on the servers)."""
        if self._updater is not None:
            return self._updater
        # MXNet's KVStore keeps the updater it was given in a private field, with no accessor.
        return getattr(self._kvstore, "_updater", None)

    @property
    def update_keys(self) -> UpdateKeys:
        """How the optimizer's Updater names the weights here (checkpoints translate them)."""
        life.require_bound(self, "mod.update_keys")
        return UpdateKeys(
            tuple(self._exec_group.param_names),
            len(self._context),
            bool(self._update_on_kvstore),
            tuple(c.device_id for c in self._context),
        )

    @property
    def label_inputs(self) -> dict:
        """Label name -> the loss layer that reads it (a network.LabelInput)."""
        return dict(self._label_inputs)

    @property
    def kvstore_type(self) -> str | None:
        """The kind of kvstore that sums the gradients ('local', 'device', ...), None without."""
        kvstore = getattr(self, "_kvstore", None)
        return kvstore.type if kvstore is not None else None

    @property
    def optimizer_settings(self) -> dict | None:
        """The optimizer's name and plain settings, as a checkpoint records them."""
        return self._optimizer_request.settings() if self._optimizer_request else None

    def gradient_scale(self) -> tuple[float, str]:
        """The rescale_grad MXNet gives an optimizer made from a name, and why."""
        batch = self._exec_group.batch_size
        kvstore = self._kvstore
        workers = kvstore.num_workers if kvstore and "dist" in kvstore.type else 1
        synchronous = kvstore is not None and "_sync" in kvstore.type and workers > 1
        rows = batch * workers if synchronous else batch
        if synchronous:
            how = say("batch {batch} x {workers} workers", batch=batch, workers=workers)
        else:
            how = say("batch {batch}", batch=batch)
        return 1.0 / rows, f"1/{rows} (1 / ({how}))"

    def _facts(self) -> ModuleFacts:
        facts = ModuleFacts(
            type(self).__name__,
            self.state,
            list(self._context),
            list(self._data_names),
            list(self._label_names),
            list(self._param_names),
            life.next_step(self),
            extra_rows=self._extra_summary_rows(),
        )
        if self.binded:
            facts.for_training, facts.step = self.for_training, self._lifecycle.describe()
            facts.data_shapes, facts.label_shapes = self._data_shapes, self._label_shapes
            facts.output_shapes = self.output_shapes
            if len(self._context) > 1:
                kvstore = self._kvstore.type if self._kvstore is not None else "local"
                group = self._exec_group
                facts.batch_split = (group.batch_size, group.slices, kvstore)
        if self._arg_params:
            facts.param_shapes = {n: tuple(a.shape) for n, a in self._arg_params.items()}
            facts.params_initialized = self.params_initialized
        if self.optimizer_initialized and self._optimizer_request is not None:
            facts.optimizer = self._optimizer_request.text
            facts.gradient_scale = (self._optimizer.rescale_grad, *self.gradient_scale())
        return facts

    def _extra_summary_rows(self) -> list[tuple[str, str]]:
        """Rows a subclass adds to the summary (MutableModule: its shapes)."""
        return []

    def __repr__(self) -> str:
        return summary_text(self._facts())

    def _repr_html_(self) -> str:
        return summary_html(self._facts())

    def __getattr__(self, name):
        # Only reached when normal lookup failed. Private and special names (IPython probes many)
        # get the plain error at once.
        if name.startswith("_"):
            raise AttributeError(name)
        public = [n for n in dir(self) if not n.startswith("_")]
        near = closest(name, public)
        fix = f"mod.{near[0]}" if near else say("dir(mod) lists what a module has")
        raise NoSuchAttribute(name=name, suggestion=did_you_mean(name, public), fix=fix)
