"""mxlearn.Module: MXNet's own Module, with every precondition checked first and explained.

Each mirrored method keeps MXNet's name, signature and defaults; its body is the guards (in
:mod:`mxlearn.guards`), then MXNet's own implementation through ``super()``, so valid use gives
bit-identical results to ``mx.mod.Module``, with one deliberate difference: ``predict`` on an
array runs in inference mode (MXNet's runs it in the module's training mode, Dropout on).
``fit`` checks its arguments and hands the run to the fit loop (:mod:`mxlearn.training`).
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import math
import warnings
from functools import partial

from .. import batch_axes, network
from .._compat import mx
from ..boundary import guard_methods, public
from ..checkpoint import optimizer_state
from ..checkpoint.resume_state import ResumeState
from ..devices import check_context
from ..guards import arguments, batches, binding, rows
from ..guards import lifecycle as life
from ..guards.optimizer_settings import (
    OptimizerRequest,
    check_optimizer,
    check_rescale_grad,
    check_same_optimizer,
    warn_rescale_kept,
    warn_step_on_servers,
)
from ..metrics.deferred import DeferredMetric
from ..metrics.padding import update_without_padding
from ..states import WeightsFrom
from ..weights_digest import weights_digest
from . import parameters as P
from .checkpoints import CheckpointAPI
from .high_level import HighLevelAPI
from .inspection import ModuleInspection
from .update_count import UpdateCount


class Module(ModuleInspection, HighLevelAPI, CheckpointAPI, mx.mod.Module):
    """MXNet's ``mx.mod.Module`` with explained errors, a readable state and a summary.

    Same constructor, methods, signatures and defaults as ``mx.mod.Module`` (see its
    documentation); misuse raises a subclass of :class:`mxlearn.errors.MXLearnError` that names
    the missing step and the call that fixes it.

    Examples
    --------
    >>> import mxlearn
    >>> from mxlearn import mx
    >>> mod = mxlearn.Module(mxlearn.models.mlp(), context=mx.cpu())
    >>> mod.state
    'created'
    """

    @public("mxlearn.Module()", **P.MODULE)
    def __init__(
        self,
        symbol,
        data_names=("data",),
        label_names=("softmax_label",),
        logger=logging,
        context=mx.cpu(),
        work_load_list=None,
        fixed_param_names=None,
        state_names=None,
        group2ctxs=None,
        compression_params=None,
    ):
        contexts = check_context(context)
        arguments.check_names(symbol, data_names, label_names, state_names, fixed_param_names)
        arguments.check_work_load(work_load_list, contexts)
        # Names were checked above; MXNet's own warnings would repeat them with colour codes.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            super().__init__(
                symbol,
                data_names,
                label_names,
                logger,
                context,
                work_load_list,
                fixed_param_names,
                state_names,
                group2ctxs,
                compression_params,
            )
        self._label_inputs = {li.name: li for li in network.label_inputs(symbol)}
        self._lifecycle = life.Lifecycle()
        self._optimizer_request: OptimizerRequest | None = None
        self._auto_bound = False  # bound by predict/score after Module.load, for inference
        self._batch_pad = 0  # padded rows in the last forward's batch
        self._resume: ResumeState | None = None  # from mxlearn.resume, for the next fit
        self._pending_optimizer_state = None  # (arrays, description) for init_optimizer
        self._rescale_follows_batch = False  # rescale_grad set by MXNet: 1/batch, kept so
        self._rescale_said_for: float | None = None  # a hand-set one: said for this 1/batch
        self._said_at_update = None  # a warning that waits for the first step at a batch size
        self._trusted_states: str | None = None  # a .states file Module.load was told to trust
        self.history = None  # the MetricHistory of the last fit
        # where the weights come from: None (none yet), 'initializer', 'given' (set_params,
        # arg_params, a checkpoint) or 'trained' (updated): a fit from weights that are not
        # fresh must not read its first batch as the network before training
        self.weights_from: WeightsFrom | None = None
        self.updates = UpdateCount()

    # ------------------------------------------------------------------ MXNet's asserts, explained
    # MXNet guards these with a bare `assert self.binded` (and the like); same checks, in life.
    @property
    def data_shapes(self):
        life.require_bound(self, "mod.data_shapes")
        return super().data_shapes

    @property
    def label_shapes(self):
        life.require_bound(self, "mod.label_shapes")
        return super().label_shapes

    @property
    def output_shapes(self):
        life.require_bound(self, "mod.output_shapes")
        return super().output_shapes

    @public("mod.reshape()", **P.RESHAPE)
    def reshape(self, data_shapes, label_shapes=None):
        life.require_bound(self, "mod.reshape()")
        data = arguments.as_descs(data_shapes, "data_shapes", "mod.reshape()")
        self._reshape(data, _label_descs(label_shapes, "mod.reshape()"), "mod.reshape()")

    def _reshape(self, data, labels, called: str) -> None:
        # the data only: the bound labels at its rows; bound without labels, the labels the
        # executors hold as the network infers them (MXNet: "Shape of unspecified arg changed")
        inferred = not (labels := labels or rows.labels_at_rows(data, self._label_shapes))
        if inferred:
            labels = batch_axes.label_descs(self._symbol, data, self._label_names)
        self._check_shapes(data, labels, called)
        with (
            _binding_kept(self, self._exec_group),
            arguments.engine_errors_explained(self._symbol, data, labels, self._context, called),
        ):
            super().reshape(data, labels)
        if inferred:
            self._label_shapes = None  # still bound without labels: forward reads none
        self._step_for_batch()

    def get_input_grads(self, merge_multi_context=True):
        life.require_input_grads(self, "mod.get_input_grads()")
        return super().get_input_grads(merge_multi_context)

    def get_states(self, merge_multi_context=True):
        life.require_params(self, "mod.get_states()")
        return super().get_states(merge_multi_context)

    def set_states(self, states=None, value=None):
        life.require_params(self, "mod.set_states()")
        super().set_states(states, value)

    def install_monitor(self, mon):
        life.require_bound(self, "mod.install_monitor()")
        super().install_monitor(mon)

    def save_optimizer_states(self, fname):
        life.require_installed_optimizer(self, life.NoOptimizerToSave)
        super().save_optimizer_states(fname)

    # ------------------------------------------------------------------ bind
    @public("mod.bind()", **P.BIND)
    def bind(
        self,
        data_shapes,
        label_shapes=None,
        for_training=True,
        inputs_need_grad=False,
        force_rebind=False,
        shared_module=None,
        grad_req="write",
        **unknown,
    ):
        arguments.refuse_unknown("mod.bind()", unknown, Module.bind)
        data_descs = arguments.as_descs(data_shapes, "data_shapes")
        label_descs = _label_descs(label_shapes, "mod.bind()")
        asked = binding.Binding(data_descs, label_descs, for_training, inputs_need_grad, grad_req)
        rest = (for_training, inputs_need_grad, force_rebind, shared_module, grad_req)
        if self.binded and not force_rebind:
            flags = (self.for_training, self.inputs_need_grad, self._grad_req)
            now = binding.Binding(self._data_shapes, self._label_shapes, *flags)
            binding.check_same_binding(now, asked, self.state_text())
            if asked.data != now.data or (asked.label and asked.label != now.label):
                # another batch size only (MXNet would keep the old one): the same binding,
                # reshaped for it
                return self._reshape(asked.data, asked.label, "mod.bind()")
            return super().bind(data_shapes, label_shapes, *rest)
        asked = self._binding_to_make(asked)
        self._check_binding(asked, shared_module)
        with (
            warnings.catch_warnings(),
            arguments.engine_errors_explained(self._symbol, asked.data, asked.label, self._context),
        ):
            # MXNet warns that an inference binding has no label shapes: not a problem.
            warnings.filterwarnings("ignore", message="Data provided by label_shapes")
            super().bind(asked.data, asked.label, *rest)
        self._after_bind()

    def _binding_to_make(self, asked: binding.Binding) -> binding.Binding:
        return asked  # MutableModule binds at the largest shapes instead

    def _after_bind(self) -> None:
        """After a new binding (MutableModule keeps its executors from here)."""
        for name in set(self._labels_taken_for_params()) - set(self._arg_params):  # made anew
            self._arg_params[name] = mx.nd.zeros(self._exec_group.execs[0].arg_dict[name].shape)
        self._lifecycle.restart()
        self._auto_bound = False
        self._step_for_batch()

    def _step_for_batch(self) -> None:
        """Keep a step a mean over the batch: MXNet sets rescale_grad to 1/batch once, and a
        rebinding to another batch size would scale later steps by old/new without a word. A
        rescale_grad the student set is kept and said once a batch size; so is one on a dist
        kvstore's servers (a local change cannot reach them), at the first update of the size."""
        if not self.optimizer_initialized:
            return
        expected, why = self.gradient_scale()
        on_servers = self._update_on_kvstore and "dist" in self._kvstore.type
        if self._rescale_follows_batch and not on_servers:
            self._optimizer.rescale_grad = expected
        elif expected != self._rescale_said_for:
            self._rescale_said_for, self._said_at_update = expected, None
            if math.isclose(self._optimizer.rescale_grad, expected, rel_tol=1e-6):
                return  # back at the batch size it was made for
            if on_servers:  # said if a step comes: a score or a predict takes none
                step = (self._optimizer, expected, why, self._exec_group.batch_size)
                self._said_at_update = partial(warn_step_on_servers, *step)
            else:
                warn_rescale_kept(self._optimizer, expected, why)

    def _check_binding(self, asked: binding.Binding, shared_module) -> None:
        binding.check_request(asked)
        binding.check_input_names(self, asked.data, asked.label)
        binding.check_labels_given(self, asked)
        self._check_shapes(asked.data, asked.label, "mod.bind()", rebinding=True)
        binding.check_shared_module(shared_module)

    def _check_shapes(self, data_descs, label_descs, called: str, rebinding=False) -> None:
        """New shapes, from bind, reshape or a batch: what MXNet can slice over the devices,
        the labels the network expects, inputs the parameters fit."""
        work_load = self._work_load_list or [1] * len(self._context)
        labels = (label_descs, self._label_names, self._label_inputs)
        binding.check_batch_shapes(self._symbol, data_descs, *labels, work_load, called)
        if self.params_initialized:
            self._check_params_fit(data_descs, called, rebinding)

    def _check_params_fit(self, data_descs, called: str, rebinding=False) -> None:
        shapes = {n: tuple(a.shape) for n, a in self._arg_params.items()}
        facts = (self._data_shapes, called, self.state_text(), self._labels_taken_for_params())
        binding.check_params_fit(self._symbol, shapes, data_descs, *facts, rebinding)

    def _reset_bind(self):
        # MXNet's rebinding copies _arg_params: first what only the devices hold (after update,
        # set_params(allow_missing=True)); a label taken for a parameter is a batch's: made anew
        if self.binded and self.params_initialized and self._params_dirty:
            self._sync_params_from_devices()
        for name in self._labels_taken_for_params() if self._arg_params else ():
            self._arg_params.pop(name, None)
        super()._reset_bind()
        self._lifecycle.restart()  # the memory is gone: nothing computed, nothing checked

    # ------------------------------------------------------------------ params
    @public("mod.init_params()", **P.INIT_PARAMS)
    def init_params(
        self,
        initializer=mx.init.Uniform(0.01),
        arg_params=None,
        aux_params=None,
        allow_missing=False,
        force_init=False,
        allow_extra=False,
        **unknown,
    ):
        arguments.refuse_unknown("mod.init_params()", unknown, Module.init_params)
        mxnet_args = (initializer, arg_params, aux_params, allow_missing, force_init, allow_extra)
        if self.params_initialized and not force_init:
            if self._lifecycle.call == "fit":
                return None  # fit continues from the weights it has: MXNet's warning is noise
            return super().init_params(*mxnet_args)
        life.require_bound_for(self, "mod.init_params()", life.InitParamsBeforeBind)
        arguments.check_initializer(initializer)
        given = arg_params is not None or aux_params is not None
        if given:
            self._check_given(arg_params, aux_params, allow_missing, "mod.init_params()")
        taken = [
            li for n, li in self._labels_taken_for_params().items() if n not in (arg_params or {})
        ]
        if taken and initializer is not None:  # MXNet's initializers know no pattern for a label
            layer = f"{taken[0].op} '{taken[0].layer}'"
            raise binding.LabelNotInitializable(name=taken[0].name, layer=layer)
        super().init_params(*mxnet_args)
        loaded = given or _loads_weights(initializer)  # mx.init.Load: weights given too
        self.weights_from = WeightsFrom.GIVEN if loaded else WeightsFrom.INITIALIZER
        in_fit = self._lifecycle.call == "fit"
        if not (in_fit and given):  # inside fit, given weights are fit's own, put back
            self.updates.restart(self.weights_from)
        if in_fit and not given:  # the weights fit starts from: made now
            self.history.fresh_start(weights_digest(*self.get_params()))

    @public("mod.set_params()", **P.SET_PARAMS)
    def set_params(
        self, arg_params, aux_params, allow_missing=False, force_init=True, allow_extra=False
    ):
        life.require_bound_for(self, "mod.set_params()", life.SetParamsBeforeBind)
        self._check_given(arg_params, aux_params, allow_missing, "mod.set_params()")
        if allow_missing and not self.params_initialized:
            binding.refuse_missing_left_as_zeros(
                arg_params, aux_params, self._arg_params, self._labels_taken_for_params()
            )
        before = self.weights_from
        super().set_params(arg_params, aux_params, allow_missing, force_init, allow_extra)
        # (MXNet's set_params goes through init_params.) fit puts its own trained weights back
        # each epoch: they stay what they were
        self.weights_from = before if self._lifecycle.call == "fit" else WeightsFrom.GIVEN
        if self._lifecycle.call != "fit":
            self.updates.restart(self.weights_from)

    def _check_given(self, arg_params, aux_params, allow_missing, called) -> None:
        binding.check_given_params(
            arg_params,
            aux_params,
            self._arg_params,
            self._aux_params,
            allow_missing,
            called,
            self.state_text(),
            self._labels_taken_for_params(),
        )

    def _labels_taken_for_params(self) -> dict:
        """Loss layers' labels MXNet made parameters (Module(net, label_names=None))."""
        return {n: li for n, li in self._label_inputs.items() if n in self._param_names}

    def get_params(self):
        life.require_initialized_params(self, "mod.get_params()")
        return super().get_params()

    def _sync_params_from_devices(self):
        labels = self._labels_taken_for_params()
        if _synced_without(labels, self._exec_group, self._arg_params, self._aux_params):
            self._params_dirty = False
        else:
            super()._sync_params_from_devices()

    # ------------------------------------------------------------------ optimizer
    @public("mod.init_optimizer()", **P.INIT_OPTIMIZER)
    def init_optimizer(
        self,
        kvstore="local",
        optimizer="sgd",
        optimizer_params=(("learning_rate", 0.01),),
        force_init=False,
        **unknown,
    ):
        arguments.refuse_unknown("mod.init_optimizer()", unknown, Module.init_optimizer)
        called = "mod.init_optimizer()"
        arguments.check_kvstore(kvstore, called)
        life.require_params(self, called)
        life.require_training(self, called)
        asked = self._check_optimizer_request(
            kvstore, optimizer, optimizer_params, called, replacing=force_init
        )
        if self.optimizer_initialized and not force_init:
            return super().init_optimizer(kvstore, optimizer, optimizer_params, force_init)
        with warnings.catch_warnings():
            # MXNet's "rescale_grad is not normalized ... Is this intended?": explained below
            warnings.filterwarnings("ignore", message="Optimizer created manually")
            super().init_optimizer(kvstore, optimizer, optimizer_params, force_init)
        self._optimizer_request = asked
        by_name = not isinstance(optimizer, mx.optimizer.Optimizer)
        self._rescale_follows_batch = by_name and "rescale_grad" not in dict(optimizer_params)
        self._rescale_said_for = self.gradient_scale()[0]
        if isinstance(optimizer, mx.optimizer.Optimizer):
            check_rescale_grad(optimizer, *self.gradient_scale())
        if self._pending_optimizer_state is not None:  # resuming: the checkpoint's state
            arrays, description = self._pending_optimizer_state
            self._pending_optimizer_state = None
            optimizer_state.restore(self.updater, arrays, description, self.update_keys)

    def borrow_optimizer(self, shared_module):
        life.require_lender(shared_module)
        super().borrow_optimizer(shared_module)

    def _check_optimizer_request(
        self, kvstore, optimizer, optimizer_params, called, replacing=False
    ) -> OptimizerRequest:
        check_optimizer(optimizer, optimizer_params, called)
        asked = OptimizerRequest.of(kvstore, optimizer, optimizer_params)
        if self.optimizer_initialized and not replacing:
            check_same_optimizer(self._optimizer_request, asked, called, self.state_text())
        return asked

    # ------------------------------------------------------------------ computation
    @public("mod.forward()", **P.FORWARD)
    def forward(self, data_batch, is_train=None):
        if not (self.binded and self.params_initialized):
            life.require_params(self, "mod.forward()")
        training = self.for_training if is_train is None else bool(is_train)
        if training and not self.for_training:
            life.require_training(self, "mod.forward(batch, is_train=True)")
        if isinstance(data_batch, list):  # MXNet's batches already sliced, one per device
            for part in data_batch:
                if not isinstance(getattr(part, "data", None), (list, tuple)):
                    raise batches.ListOfNonBatches(kind=type(part).__name__)
        else:
            self._check_batch(data_batch, training)
            if batches.has_labels(data_batch) != bool(self._label_shapes):  # not as bound
                data_batch = _as_bound(data_batch, self._data_shapes, self._label_shapes)
        super().forward(data_batch, is_train)
        self._lifecycle.step = life.Step.FORWARD if training else life.Step.INFERENCE
        # rows an iterator added to fill the last batch: metrics must not count them
        padded = not (isinstance(data_batch, list) or self._lifecycle.pad_is_real)
        self._batch_pad = int(data_batch.pad or 0) if padded else 0

    def _check_batch(self, batch, training: bool) -> None:
        # Every batch: attribute reads only. The first batch's values: one device read.
        batches.check_labels(batch, self._label_shapes)
        state = self._lifecycle
        shapes = binding.new_shapes(batch, self._data_shapes, self._label_shapes, self._data_names)
        if shapes is not None:
            self._check_shapes(*shapes, "mod.forward()")
        unlabelled = self._label_shapes is not None and not batches.has_labels(batch)
        if training and unlabelled and self._label_names:
            raise batches.UnlabelledTrainingBatch()
        if state.queued_checks is not None:
            state.queued_checks.queue(batch, self._bound_label_names())
        checked = state.training_batch_checked if training else state.evaluation_batch_checked
        if not (checked or state.rows_checked) and batch.label:
            batches.check_values(self, batch, "training" if training else "evaluation")
            if training:
                state.training_batch_checked = True
            else:
                state.evaluation_batch_checked = True

    def _bound_label_names(self) -> list[str]:
        # batch.label is in the bound label shapes' order (the iterator's), which may differ
        # from label_names': MXNet feeds each to its input by that order
        return [d.name for d in self._label_shapes] if self._label_shapes else []

    # forward, backward, update and update_metric run every batch: their guards are called only
    # when a cheap test fails, so a correct step costs no extra call.
    def backward(self, out_grads=None):
        if self._lifecycle.step not in life.TRAINING_FORWARD:
            life.require_training_forward(self)
        super().backward(out_grads)
        self._lifecycle.step, self._lifecycle.gradients_pending = life.Step.BACKWARD, True

    def update(self):
        if not (self.optimizer_initialized and self._lifecycle.gradients_pending):
            life.require_gradients(self, self._lifecycle.gradients_pending)
        self._said_at_update = self._said_at_update and self._said_at_update()  # None after
        super().update()
        self._lifecycle.step, self._lifecycle.gradients_pending = life.Step.UPDATED, False
        self.weights_from = WeightsFrom.TRAINED
        self.updates.count(in_fit=self._lifecycle.call is not None)

    @public("mod.update_metric()", **P.UPDATE_METRIC)
    def update_metric(self, eval_metric, labels, pre_sliced=False):
        step = self._lifecycle.step
        if step is life.Step.NO_OUTPUTS:
            life.require_params(self, "mod.update_metric()")
        if not isinstance(eval_metric, mx.metric.EvalMetric):
            raise arguments.NotAMetric(metric=eval_metric)
        if step is life.Step.NO_OUTPUTS:
            life.require_outputs(self, step, life.NoOutputsToMeasure)
        if labels is None:
            raise arguments.NoLabelsToCompare()
        if not self._label_shapes and self._label_names:
            raise binding.BoundWithoutLabels(called="mod.update_metric()")
        if self._batch_pad and not pre_sliced:
            if update_without_padding(eval_metric, labels, self._exec_group, self._batch_pad):
                return
        if isinstance(eval_metric, DeferredMetric):
            one_device = len(self._exec_group.execs) == 1 and not pre_sliced
            if one_device and eval_metric.update_single(self._exec_group, labels):
                return
            # the bound batch size is the labels' length, without asking the device
            eval_metric.begin_batch(self._exec_group.batch_size)
        super().update_metric(eval_metric, labels, pre_sliced)

    def get_outputs(self, merge_multi_context=True):
        life.require_params(self, "mod.get_outputs()")
        life.require_outputs(self, self._lifecycle.step, life.NoOutputsToReturn)
        return super().get_outputs(merge_multi_context)


# Every call a student can make on a module goes through the boundary (mxlearn.boundary):
# the constructor and each public method of MXNet's Module (the class method load too).
MODULE_CALLS = ["__init__"] + [
    name for name, _ in inspect.getmembers(mx.mod.Module, inspect.isroutine) if name[0] != "_"
]
guard_methods(Module, "mod", MODULE_CALLS)


# what MXNet's DataParallelExecutorGroup.bind_exec sets before it reshapes the executors
_GROUP_SHAPES = ("batch_size", "slices", "data_layouts", "label_layouts")


def _loads_weights(initializer) -> bool:
    """An initializer that loads arrays (mx.init.Load, alone or in a Mixed) gives weights."""
    if isinstance(initializer, mx.init.Mixed):
        return any(_loads_weights(init) for _, init in initializer.map)
    return isinstance(initializer, mx.init.Load)


def _synced_without(labels, group, arg_params: dict, aux_params: dict) -> bool:
    """Read the weights back from the devices as MXNet does, leaving ``labels`` out; False
    (nothing read) when there are none to leave out, for MXNet's own sync."""
    # MXNet 1.9.1's oneDNN BatchNorm writes its running mean and variance without telling the
    # engine (apache/mxnet#18610, fixed only after 1.9), so a read right after a training step
    # can return the values of the step before: wait for the device first. Only networks with
    # such states pay for it (get_params, checkpoints).
    if group.aux_names:
        mx.nd.waitall()
    if not labels:
        return False
    # MXNet's sync is each weight's mean over the devices. A label it took for a parameter holds
    # a device's slice of a batch, not a weight: left out (an uneven split's slices differ in
    # shape, and MXNet's mean of them fails).
    blocks = [(n, b, arg_params) for n, b in zip(group.param_names, group.param_arrays)]
    blocks += [(n, b, aux_params) for n, b in zip(group.aux_names, group.aux_arrays)]
    for name, block, params in blocks:
        if name not in labels:
            mean = sum(w.copyto(mx.cpu()) for w in block) / len(block)
            mean.astype(params[name].dtype).copyto(params[name])
    return True


@contextlib.contextmanager
def _binding_kept(mod, group):
    """A module's shapes and executor group as they were if its reshape fails (a batch too
    large for memory): MXNet sets the new shapes, batch size and slices first, and a device or
    more may hold a reshaped executor."""
    shapes = mod._data_shapes, mod._label_shapes
    kept = [list(group.execs), *(getattr(group, name, None) for name in _GROUP_SHAPES)]
    try:
        yield
    except BaseException:
        group.execs[:] = kept[0]
        for name, value in zip(_GROUP_SHAPES, kept[1:]):
            setattr(group, name, value)
        mod._data_shapes, mod._label_shapes = shapes
        raise


def _label_descs(label_shapes, called: str) -> list | None:
    # an unlabelled iterator's provide_label is []: no labels, as None is
    if label_shapes is None or (isinstance(label_shapes, (list, tuple)) and not label_shapes):
        return None
    return arguments.as_descs(label_shapes, "label_shapes", called)


def _as_bound(batch, data_shapes, label_shapes):
    """A batch with labels as the module is bound: without them, the bound labels' shapes at
    its rows (MXNet's reshape needs them); bound without labels, none (MXNet's module reads
    none at the bound shapes, and fails on them at others: "'NoneType' object is not
    iterable")."""
    if label_shapes:
        return rows.with_label_shapes(batch, data_shapes, label_shapes)
    provide_data = getattr(batch, "provide_data", None) or None
    return mx.io.DataBatch(
        batch.data, None, pad=batch.pad, index=batch.index, provide_data=provide_data
    )
