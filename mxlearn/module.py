"""mxlearn.Module: MXNet's own Module, with every precondition checked first and explained.

Each mirrored method keeps MXNet's name, signature and defaults, checks what MXNet would only
``assert`` (or not check at all), then calls MXNet's implementation unchanged, so valid use gives
bit-identical results to ``mx.mod.Module``. The checks are cheap flag tests on the hot path;
anything that reads device memory happens once, on the first training batch.
"""

from __future__ import annotations

import inspect
import logging
import math
import os
import warnings
from collections import OrderedDict

import numpy as np

from . import network, optimizer_state
from ._compat import mx
from .callbacks import FitFeed
from .checkpoint import load_checkpoint, load_params, optimizer_states_file
from .devices import check_context, gpu_memory_text
from .early_stopping import EarlyStopping
from .epoch_report import EpochReport, StopTraining
from .errors import (
    ArgumentTypeError,
    InputError,
    LifecycleError,
    TrainingWarning,
    UnknownAttributeError,
    closest,
    did_you_mean,
)
from .live import LivePlot
from .metric_tracking import DeferredMetric
from .metrics import check_metric_fits, create_metric
from .optimizers import check_optimizer, settings_dict
from .progress import visible_epoch_log
from .recorder import TrainingRecorder
from .resuming import Checkpoint, begin_epoch_note, load_resume_state
from .summary import module_summary_html, module_summary_text, next_step
from .watchdog import DivergenceWatchdog

BIND_CALL = "mod.bind(data_shapes=train_iter.provide_data, label_shapes=train_iter.provide_label)"
INIT_CALL = "mod.init_params(initializer=mx.init.Uniform(scale=0.1))"
OPTIMIZER_CALL = "mod.init_optimizer(optimizer='sgd', optimizer_params=(('learning_rate', 0.1),))"
TRAIN_STEP = "mod.forward(batch, is_train=True); mod.backward(); mod.update()"
ITER_FIX = "train_iter = mx.io.NDArrayIter(X, y, batch_size=32, shuffle=True)"


def _as_name_list(names, argument: str) -> list[str]:
    if names is None:
        return []
    if isinstance(names, str):
        raise ArgumentTypeError(
            f"Module({argument}='{names}'): {argument} is a list of names; a bare string would be "
            "read letter by letter.",
            fix=f"Module(net, {argument}=['{names}'])",
        )
    return list(names)


def _as_descs(shapes, argument: str) -> list:
    """``shapes`` as DataDesc objects, or an explained error for a malformed value."""
    try:
        descs = [s if isinstance(s, mx.io.DataDesc) else mx.io.DataDesc(*s) for s in shapes]
    except (TypeError, ValueError):
        descs = None
    if not descs or not all(
        isinstance(d.name, str)
        and isinstance(d.shape, tuple)
        and all(isinstance(n, (int, np.integer)) for n in d.shape)
        for d in descs
    ):
        raise ArgumentTypeError(
            f"mod.bind({argument}={shapes!r}): expected a list of (name, shape) pairs such as "
            "[('data', (32, 16))], which is what an iterator's provide_data gives.",
            fix=BIND_CALL,
        )
    return descs


def _shapes_text(descs) -> str:
    if not descs:
        return "none"
    return ", ".join(f"{d.name} {tuple(d.shape)}" for d in descs)


def _optimizer_text(optimizer, optimizer_params) -> str:
    if isinstance(optimizer, mx.optimizer.Optimizer):
        return f"{type(optimizer).__name__} object (learning_rate={optimizer.learning_rate})"
    settings = ", ".join(f"{k}={v!r}" for k, v in settings_dict(optimizer_params).items())
    return f"'{optimizer}' with {settings or 'default settings'}"


def _optimizer_key(kvstore, optimizer, optimizer_params):
    """What makes two init_optimizer calls the same request."""
    if isinstance(optimizer, mx.optimizer.Optimizer):
        return (kvstore, optimizer)
    params = settings_dict(optimizer_params)
    return (kvstore, optimizer.lower(), sorted(params.items(), key=lambda kv: kv[0]))


class Module(mx.mod.Module):
    """MXNet's ``mx.mod.Module`` with explained errors, a readable state and a summary.

    Same constructor, methods, signatures and defaults as ``mx.mod.Module`` (see its
    documentation); misuse raises a subclass of :class:`mxlearn.errors.MXLearnError` that names
    the missing step and the call that fixes it.

    Examples
    --------
    >>> import mxlearn
    >>> from mxlearn._compat import mx
    >>> mod = mxlearn.Module(mxlearn.models.mlp(), context=mx.cpu())
    >>> mod.state
    'created'
    """

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
        if not isinstance(symbol, mx.sym.Symbol):
            raise ArgumentTypeError(
                f"Module(symbol=...) needs a network built with mx.sym; got {type(symbol).__name__}.",
                fix="net = mxlearn.models.mlp(); mod = mxlearn.Module(net, context=mx.cpu())",
            )
        contexts = check_context(context)
        names = {
            "data_names": _as_name_list(data_names, "data_names"),
            "label_names": _as_name_list(label_names, "label_names"),
            "state_names": _as_name_list(state_names, "state_names"),
            "fixed_param_names": _as_name_list(fixed_param_names, "fixed_param_names"),
        }
        self._check_names(symbol, **names)
        if work_load_list is not None and len(work_load_list) != len(contexts):
            raise InputError(
                f"Module(work_load_list={list(work_load_list)}) gives {len(work_load_list)} "
                f"shares for {len(contexts)} devices.",
                fix=f"one number per device, e.g. work_load_list={[1] * len(contexts)}",
            )
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
        self._optimizer_settings = None
        self._auto_bound = False  # bound by predict/score after Module.load, for inference
        self._in_predict = False
        self.history = None  # the MetricHistory of the last fit
        self._resume = None  # a ResumeState from mxlearn.resume, used by the next fit
        self._pending_optimizer = None  # (arrays, description) for the next init_optimizer
        self._reset_step_flags()

    # ------------------------------------------------------------------ names
    @staticmethod
    def _check_names(symbol, data_names, label_names, state_names, fixed_param_names):
        args = symbol.list_arguments()
        labels = network.label_inputs(symbol)
        expected_data = network.input_names(symbol)
        expected_labels = [li.name for li in labels]
        fix = f"Module(net, data_names={expected_data}, label_names={expected_labels or None})"
        reads = f"The network reads: {network.describe_inputs(symbol)}."
        for name in data_names:
            if name not in args:
                raise InputError(
                    f"Module(data_names={data_names}): the network has no input '{name}'. {reads}",
                    fix=fix,
                )
        for name in label_names:
            if name in args:
                continue
            if labels:
                problem = f"Module(label_names={label_names}): the network has no input '{name}'; "
                problem += "; ".join(li.describe() for li in labels) + "."
            else:
                problem = (
                    f"Module(label_names={label_names}): the network takes no label, because it "
                    "ends without a loss layer such as SoftmaxOutput, so it cannot be trained."
                )
                fix = (
                    "end the network with net = mx.sym.SoftmaxOutput(net, name='softmax'); "
                    "for a network that only predicts: Module(net, label_names=None)"
                )
            raise InputError(problem, fix=fix)
        for argument, names in (
            ("state_names", state_names),
            ("fixed_param_names", fixed_param_names),
        ):
            for name in names:
                if name not in args:
                    raise InputError(
                        f"Module({argument}={names}): the network has no argument '{name}'. "
                        + did_you_mean(name, args)
                    )

    # ------------------------------------------------------------------ state
    def _reset_step_flags(self) -> None:
        self._outputs_ready = False  # a forward pass has run since bind
        self._train_forward_pending = False  # a training forward awaits backward/update
        self._grads_pending = False  # backward ran since the last update
        self._preflight_done = False  # the first training batch was checked
        self._batch_pad = 0  # padded rows in the last forward's batch
        self._score_preflight = False  # score's first batch awaits its check

    def _reset_bind(self) -> None:
        super()._reset_bind()
        self._reset_step_flags()

    @property
    def state(self) -> str:
        """One word: 'created', 'loaded', 'bound', 'initialized' or 'ready'."""
        if not self.binded:
            return "loaded" if self.params_initialized else "created"
        if not self.params_initialized:
            return "bound"
        return "ready" if self.optimizer_initialized else "initialized"

    def _state_text(self) -> str:
        return f"{self.state}; next: {next_step(self)}"

    def __repr__(self) -> str:
        return module_summary_text(self)

    def _extra_summary_rows(self) -> list[tuple[str, str]]:
        """Rows a subclass adds to the summary (MutableModule: its shapes)."""
        return []

    def _repr_html_(self) -> str:
        return module_summary_html(self)

    def __getattr__(self, name):
        # Only reached when normal lookup failed. Private and special names (IPython probes many)
        # get the plain error at once.
        if name.startswith("_"):
            raise AttributeError(name)
        public = [n for n in dir(self) if not n.startswith("_")]
        near = closest(name, public)
        raise UnknownAttributeError(
            f"mxlearn.Module has no attribute '{name}'. " + did_you_mean(name, public),
            fix=f"mod.{near[0]}" if near else "dir(mod) lists what a module has",
        )

    # ------------------------------------------------------------------ requirements
    def _require_bound(self, called: str) -> None:
        if self.binded:
            return
        if self.params_initialized:
            raise LifecycleError(
                f"{called} was called on a module whose parameters are loaded but which is not "
                "bound yet: bind allocates the memory for the input shapes.",
                fix=f"{BIND_CALL} to train on, or mod.bind(data_shapes=val_iter.provide_data, "
                "for_training=False) to predict (the loaded parameters are kept either way)",
                state=self._state_text(),
            )
        raise LifecycleError(
            f"{called} was called before the module was bound: bind allocates the memory for "
            "the input shapes.",
            fix=BIND_CALL,
            state=self._state_text(),
        )

    def _require_params(self, called: str) -> None:
        self._require_bound(called)
        if not self.params_initialized:
            raise LifecycleError(
                f"{called} needs the parameters, and they are not initialized yet.",
                fix=INIT_CALL,
                state=self._state_text(),
            )

    def _require_training(self, called: str) -> None:
        if not self.for_training:
            raise LifecycleError(
                f"{called}: the module is bound for prediction only (for_training=False), so it "
                "keeps no gradients and cannot train.",
                fix="mod.bind(data_shapes=train_iter.provide_data, "
                "label_shapes=train_iter.provide_label, for_training=True, force_rebind=True)  "
                "(the parameters are kept)",
                state=self._state_text(),
            )

    def _require_optimizer(self, called: str) -> None:
        self._require_params(called)
        self._require_training(called)
        if not self.optimizer_initialized:
            raise LifecycleError(
                f"{called} needs an optimizer to turn gradients into new weights, and none is "
                "installed.",
                fix=OPTIMIZER_CALL,
                state=self._state_text(),
            )

    # ------------------------------------------------------------------ MXNet's asserts, explained
    # MXNet guards these with a bare `assert self.binded` (and the like); same checks, in words.
    @property
    def data_shapes(self):
        self._require_bound("mod.data_shapes")
        return super().data_shapes

    @property
    def label_shapes(self):
        self._require_bound("mod.label_shapes")
        return super().label_shapes

    @property
    def output_shapes(self):
        self._require_bound("mod.output_shapes")
        return super().output_shapes

    def reshape(self, data_shapes, label_shapes=None):
        self._require_bound("mod.reshape()")
        super().reshape(data_shapes, label_shapes)

    def get_input_grads(self, merge_multi_context=True):
        self._require_params("mod.get_input_grads()")
        if not self.inputs_need_grad:
            raise LifecycleError(
                "mod.get_input_grads(): the module keeps no gradients for its inputs.",
                fix="mod.bind(..., inputs_need_grad=True, force_rebind=True)",
                state=self._state_text(),
            )
        return super().get_input_grads(merge_multi_context)

    def get_states(self, merge_multi_context=True):
        self._require_params("mod.get_states()")
        return super().get_states(merge_multi_context)

    def set_states(self, states=None, value=None):
        self._require_params("mod.set_states()")
        super().set_states(states, value)

    def install_monitor(self, mon):
        self._require_bound("mod.install_monitor()")
        super().install_monitor(mon)

    def save_optimizer_states(self, fname):
        if not self.optimizer_initialized:
            raise LifecycleError(
                "mod.save_optimizer_states() saves the optimizer's state, and no optimizer is "
                "installed.",
                fix=OPTIMIZER_CALL,
                state=self._state_text(),
            )
        super().save_optimizer_states(fname)

    # ------------------------------------------------------------------ bind
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
        _refuse_unknown("mod.bind()", unknown, Module.bind)
        data_descs = _as_descs(data_shapes, "data_shapes")
        label_descs = _as_descs(label_shapes, "label_shapes") if label_shapes is not None else None
        request = (data_descs, label_descs, for_training, inputs_need_grad, grad_req)
        mxnet_args = (data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind,
                      shared_module, grad_req)  # fmt: skip
        if self.binded and not force_rebind:
            self._check_same_binding(*request)
            return super().bind(*mxnet_args)
        if inputs_need_grad and not for_training:
            raise InputError(
                "mod.bind(inputs_need_grad=True, for_training=False): input gradients need a "
                "module bound for training.",
                fix="mod.bind(..., for_training=True, inputs_need_grad=True)",
            )
        self._check_input_names(data_descs, label_descs)
        if for_training and label_descs is None and self._label_names:
            raise InputError(
                "mod.bind(for_training=True) without label_shapes: the network's "
                + "; ".join(li.describe() for li in self._label_inputs.values())
                + ", and without labels it would train against zeros.",
                fix=BIND_CALL,
            )
        if label_descs is not None:
            self._check_label_shapes(data_descs, label_descs)
        if self.params_initialized:
            self._check_params_fit(data_descs)
        if shared_module is not None and not (
            isinstance(shared_module, mx.mod.Module)
            and shared_module.binded
            and shared_module.params_initialized
        ):
            raise LifecycleError(
                "mod.bind(shared_module=...) needs a Module that is bound and has parameters.",
                fix="shared.bind(...); shared.init_params(); then mod.bind(..., shared_module=shared)",
            )
        try:
            with warnings.catch_warnings():
                # MXNet warns that an inference binding has no label shapes: not a problem.
                warnings.filterwarnings("ignore", message="Data provided by label_shapes")
                super().bind(*mxnet_args)
        except mx.base.MXNetError as err:
            raise InputError(
                f"mod.bind(): MXNet cannot build this network for data {_shapes_text(data_descs)}"
                f" and labels {_shapes_text(label_descs)}: {_engine_reason(err)}",
                fix="check the input shapes against the network's layers",
            ) from None
        self._reset_step_flags()
        self._auto_bound = False

    def _check_same_binding(
        self, data_descs, label_descs, for_training, inputs_need_grad, grad_req
    ):
        # Batch size alone may differ: MXNet's forward reshapes for a new batch size by itself.
        def key(descs):
            return None if descs is None else sorted((d.name, tuple(d.shape[1:])) for d in descs)

        now = (key(self._data_shapes), self.for_training, self.inputs_need_grad, self._grad_req)
        asked = (key(data_descs), for_training, inputs_need_grad, grad_req)
        labels_differ = (
            label_descs is not None
            and self._label_shapes is not None
            and key(label_descs) != key(self._label_shapes)
        )
        if now == asked and not labels_differ:
            return

        def mode(training):
            return "for training" if training else "for prediction"

        raise LifecycleError(
            f"mod.bind(): the module is already bound, for data {_shapes_text(self._data_shapes)} "
            f"{mode(self.for_training)}; this call asks for data {_shapes_text(data_descs)} "
            f"{mode(for_training)}. MXNet would silently keep the old binding.",
            fix="mod.bind(..., force_rebind=True) or mod.fit(..., force_rebind=True)  "
            "(parameters are kept when their shapes still fit)",
            state=self._state_text(),
        )

    def _check_input_names(self, data_descs, label_descs) -> None:
        label0 = self._label_names[0] if self._label_names else "softmax_label"
        iter_fix = (
            f"mx.io.NDArrayIter(X, y, batch_size=32, data_name='{self._data_names[0]}', "
            f"label_name='{label0}')"
            if self._data_names
            else None
        )
        given = [d.name for d in data_descs]
        if sorted(given) != sorted(self._data_names):
            raise InputError(
                f"mod.bind(): the data is named {given}, but the module reads "
                f"{self._data_names} ({network.describe_inputs(self._symbol)}).",
                fix=f"name the iterator's data after the network's input: {iter_fix}",
            )
        if label_descs is None or not self._label_names:
            return
        given = [d.name for d in label_descs]
        if sorted(given) != sorted(self._label_names):
            expects = "; ".join(li.describe() for li in self._label_inputs.values())
            raise InputError(
                f"mod.bind(): the labels are named {given}, but {expects or self._label_names}.",
                fix=f"name the iterator's label after the network's: {iter_fix}",
            )

    def _check_label_shapes(self, data_descs, label_descs) -> None:
        expected = network.infer_label_shapes(
            self._symbol, {d.name: d.shape for d in data_descs}, self._label_names
        )
        for desc in label_descs:
            want, got = expected.get(desc.name), tuple(desc.shape)
            if want is None or want == got:
                continue
            if got == want + (1,):
                fix = "flatten the labels before making the iterator: y = y.ravel()"
                problem = f"labels shaped {got}, one column too many"
            elif len(got) == 2 and got[0] == want[0] and len(want) == 1:
                # SoftmaxOutput would take them as class probabilities, and 'acc' would then
                # compare two argmaxes of the same kind: about 0.96 for an untrained model
                fix = "turn one-hot rows into class numbers: y = y.argmax(axis=1)"
                problem = f"labels shaped {got}: one-hot rows ({got[1]} numbers per example)"
            else:
                fix = "give one label per example, shaped like the batch: (batch_size,)"
                problem = f"labels shaped {got}"
            layer = self._label_inputs.get(desc.name)
            who = f"{layer.op} '{layer.layer}'" if layer else "the network"
            raise InputError(
                f"mod.bind(): {problem}; {who} expects '{desc.name}' shaped {want}.", fix=fix
            )

    def _check_params_fit(self, data_descs, called: str = "mod.bind()") -> None:
        """The initialized parameters' shapes must still fit the new input shapes."""
        needed = network.infer_param_shapes(
            self._symbol, self._param_names, {d.name: d.shape for d in data_descs}
        )
        have = {n: tuple(a.shape) for n, a in self._arg_params.items()}
        wrong = [n for n in have if needed is None or needed.get(n, have[n]) != have[n]]
        if not wrong:
            return
        desc, old = data_descs[0], self._data_shapes[0].shape if self._data_shapes else None
        if len(desc.shape) == 2 and needed is not None:
            w = wrong[0]
            made_for = (
                f"the module was bound for {old[1]}"
                if old
                else f"the parameters were made for {have[w][-1]}"
            )
            problem = (
                f"input has {desc.shape[1]} features; {made_for} ('{w}' is {have[w]}; these "
                f"inputs would need {needed[w]})"
            )
        else:
            problem = f"input '{desc.name}' shaped {tuple(desc.shape)} does not fit the parameters"
            if old is not None:
                problem += f" made for {tuple(old)}"
        raise InputError(
            f"{called}: {problem}.",
            fix="feed data with the columns the model was built for; a different input needs "
            "a new module: mod = mxlearn.Module(net, ...)",
            state=self._state_text(),
        )

    # ------------------------------------------------------------------ params
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
        _refuse_unknown("mod.init_params()", unknown, Module.init_params)
        if self.params_initialized and not force_init:
            return super().init_params(
                initializer, arg_params, aux_params, allow_missing, force_init, allow_extra
            )
        if not self.binded:
            raise LifecycleError(
                "mod.init_params() was called before mod.bind(): the parameters' shapes come "
                "from the input shapes, which bind sets.",
                fix=BIND_CALL,
                state=self._state_text(),
            )
        if isinstance(initializer, type):
            raise ArgumentTypeError(
                f"mod.init_params(initializer={initializer.__name__}): that is the initializer "
                "class; pass an initializer object.",
                fix=f"mod.init_params(initializer=mx.init.{initializer.__name__}())",
            )
        if arg_params is not None or aux_params is not None:
            self._check_given_params(arg_params, aux_params, allow_missing, "mod.init_params()")
        super().init_params(
            initializer, arg_params, aux_params, allow_missing, force_init, allow_extra
        )

    def set_params(
        self, arg_params, aux_params, allow_missing=False, force_init=True, allow_extra=False
    ):
        if not self.binded:
            raise LifecycleError(
                "mod.set_params() copies values into the module's memory, and the module is not "
                "bound yet.",
                fix=f"{BIND_CALL}; then mod.set_params(arg_params, aux_params)",
                state=self._state_text(),
            )
        if not isinstance(arg_params, dict):
            raise ArgumentTypeError(
                "mod.set_params(arg_params, aux_params) takes the two dicts that "
                "mx.model.load_checkpoint returns.",
                fix="sym, arg_params, aux_params = mx.model.load_checkpoint(prefix, epoch); "
                "mod.set_params(arg_params, aux_params)",
            )
        self._check_given_params(arg_params, aux_params, allow_missing, "mod.set_params()")
        super().set_params(arg_params, aux_params, allow_missing, force_init, allow_extra)

    def _check_given_params(self, arg_params, aux_params, allow_missing, called) -> None:
        problems, extra = [], []
        for kind, given, own in (
            ("argument", arg_params, self._arg_params),
            ("auxiliary state", aux_params, self._aux_params),
        ):
            given = given or {}
            extra += [f"'{n}' {tuple(given[n].shape)}" for n in sorted(set(given) - set(own))]
            for name, arr in sorted(own.items()):
                if name not in given:
                    if not allow_missing:
                        problems.append(f"{kind} '{name}' {tuple(arr.shape)} is missing")
                elif tuple(given[name].shape) != tuple(arr.shape):
                    problems.append(
                        f"'{name}' is {tuple(given[name].shape)} in the given values but "
                        f"{tuple(arr.shape)} in this network"
                    )
        if problems:
            # extra values alone are allowed (MXNet ignores them); beside other problems they
            # show that the values come from another network
            if extra:
                problems.append("not in this network: " + ", ".join(extra))
            raise InputError(
                f"{called}: the given parameters do not match this network: "
                + "; ".join(problems)
                + ".",
                fix="load parameters saved from the same network (same layers and input width); "
                "to fill missing ones from the initializer pass allow_missing=True",
                state=self._state_text(),
            )

    def get_params(self):
        if not self.params_initialized:
            raise LifecycleError(
                "mod.get_params() was called before the parameters exist.",
                fix=f"{BIND_CALL}; {INIT_CALL}" if not self.binded else INIT_CALL,
                state=self._state_text(),
            )
        return super().get_params()

    def _sync_params_from_devices(self):
        # MXNet 1.9.1's oneDNN BatchNorm writes its running mean and variance without telling
        # the engine (apache/mxnet#18610, fixed only after 1.9), so a read right after a
        # training step can return the values of the step before: wait for the device first.
        # Only networks with such states pay for it (get_params, checkpoints).
        if self._aux_names:
            mx.nd.waitall()
        super()._sync_params_from_devices()

    # ------------------------------------------------------------------ optimizer
    def init_optimizer(
        self,
        kvstore="local",
        optimizer="sgd",
        optimizer_params=(("learning_rate", 0.01),),
        force_init=False,
        **unknown,
    ):
        _refuse_unknown("mod.init_optimizer()", unknown, Module.init_optimizer)
        called = "mod.init_optimizer()"
        self._require_params(called)
        self._require_training(called)
        check_optimizer(optimizer, optimizer_params, called)
        key = _optimizer_key(kvstore, optimizer, optimizer_params)
        if self.optimizer_initialized and not force_init:
            self._check_same_optimizer(key, optimizer, optimizer_params, called)
            return super().init_optimizer(kvstore, optimizer, optimizer_params, force_init)
        with warnings.catch_warnings():
            # MXNet's "rescale_grad is not normalized ... Is this intended?": explained below
            warnings.filterwarnings("ignore", message="Optimizer created manually")
            super().init_optimizer(kvstore, optimizer, optimizer_params, force_init)
        self._optimizer_settings = (key, _optimizer_text(optimizer, optimizer_params))
        if isinstance(optimizer, mx.optimizer.Optimizer):
            self._check_rescale_grad(optimizer)
        if self._pending_optimizer is not None:  # resuming: the checkpoint's optimizer state
            arrays, description = self._pending_optimizer
            self._pending_optimizer = None
            optimizer_state.restore(self, arrays, description)

    def gradient_scale(self) -> tuple[float, str]:
        """The rescale_grad MXNet gives an optimizer made from a name, and why."""
        batch = self._exec_group.batch_size
        kvstore = self._kvstore
        workers = kvstore.num_workers if kvstore and "dist" in kvstore.type else 1
        synchronous = kvstore is not None and "_sync" in kvstore.type and workers > 1
        rows = batch * workers if synchronous else batch
        how = f"batch {batch} x {workers} workers" if synchronous else f"batch {batch}"
        return 1.0 / rows, f"1/{rows} (1 / ({how}))"

    def _check_rescale_grad(self, optimizer) -> None:
        expected, why = self.gradient_scale()
        if math.isclose(optimizer.rescale_grad, expected, rel_tol=1e-6):
            return
        factor = optimizer.rescale_grad / expected
        warnings.warn(
            f"The optimizer was made outside the module with rescale_grad="
            f"{optimizer.rescale_grad:g}. Gradients here are sums over the rows of a batch "
            f"(over every device and worker), and MXNet scales them by {why} = {expected:g} so "
            f"that a step follows the average; with {optimizer.rescale_grad:g} each step is "
            f"{factor:g} times that. Fix: make it with rescale_grad={expected:g}, or pass the "
            "optimizer by name (optimizer='sgd', optimizer_params={...}) and MXNet sets it.",
            TrainingWarning,
            stacklevel=3,
        )

    def _check_same_optimizer(self, key, optimizer, optimizer_params, called) -> None:
        if self._optimizer_settings is None or self._optimizer_settings[0] == key:
            return
        raise LifecycleError(
            f"{called}: an optimizer is already installed ({self._optimizer_settings[1]}); this "
            f"call asks for {_optimizer_text(optimizer, optimizer_params)}. MXNet would keep the "
            "old one and ignore the new settings.",
            fix="mod.init_optimizer(optimizer=..., optimizer_params=..., force_init=True) replaces "
            "it (momentum and other optimizer state start afresh); to continue with the installed "
            "one, pass the same settings",
            state=self._state_text(),
        )

    # ------------------------------------------------------------------ computation
    def forward(self, data_batch, is_train=None):
        if not (self.binded and self.params_initialized):
            self._require_params("mod.forward()")
        training = self.for_training if is_train is None else bool(is_train)
        if training and not self.for_training:
            self._require_training("mod.forward(batch, is_train=True)")
        if not isinstance(data_batch, list):
            self._check_batch(data_batch, training)
        super().forward(data_batch, is_train)
        self._outputs_ready = True
        self._train_forward_pending = training
        # rows an iterator added to fill the last batch: metrics must not count them (#5)
        self._batch_pad = 0 if isinstance(data_batch, list) else int(data_batch.pad or 0)

    def _check_batch(self, batch, training: bool) -> None:
        # Runs every batch: one pass over the arrays, with the explanations off the fast path.
        data = getattr(batch, "data", None)
        if not isinstance(data, (list, tuple)) or len(data) != len(self._data_shapes):
            self._explain_bad_batch(batch)
        for array, desc in zip(data, self._data_shapes):
            if not isinstance(array, mx.nd.NDArray):
                self._explain_bad_batch(batch)
            if array.shape[1:] != desc.shape[1:]:
                descs = [mx.io.DataDesc(d.name, a.shape) for d, a in zip(self._data_shapes, data)]
                self._check_params_fit(descs, "mod.forward()")
                break
        if not training:
            if self._score_preflight and batch.label:
                self._score_preflight = False
                self._preflight(batch, "evaluation")
            return
        if self._label_names and self._label_shapes is not None and not batch.label:
            if not self._in_predict:
                raise InputError(
                    "mod.forward(batch, is_train=True): the batch has no label, so there is "
                    "nothing to learn from (MXNet would silently reuse the previous batch's "
                    "labels).",
                    fix="train on batches from an iterator made with labels: "
                    "mx.io.NDArrayIter(X, y, batch_size=32); for prediction use "
                    "mod.forward(batch, is_train=False)",
                )
        if not self._preflight_done and batch.label:
            self._preflight(batch)
            self._preflight_done = True

    def _explain_bad_batch(self, batch):
        data = getattr(batch, "data", None)
        if isinstance(data, (list, tuple)) and all(isinstance(d, mx.nd.NDArray) for d in data):
            raise InputError(
                f"mod.forward(): the batch holds {len(data)} data arrays; the module reads "
                f"{len(self._data_shapes)} ({self._data_names}).",
                fix="build the iterator with one data array per name in data_names",
            )
        raise ArgumentTypeError(
            f"mod.forward() takes an mx.io.DataBatch of NDArrays (what `for batch in "
            f"train_iter` gives); got {type(batch).__name__}.",
            fix="for batch in train_iter: mod.forward(batch, is_train=True)  "
            "(for a NumPy array: mod.predict(X))",
        )

    def _preflight(self, batch, what: str = "training") -> None:
        """Once, on the first training batch (and on score's first batch): the checks that need
        the values themselves, so one device read, not one per batch."""
        for desc, arr in zip(self._data_shapes, batch.data):
            values = arr.asnumpy()
            if not np.isfinite(values).all():
                raise InputError(
                    f"The first {what} batch's '{desc.name}' holds {int(np.isnan(values).sum())}"
                    f" NaN and {int(np.isinf(values).sum())} infinite values; one is enough to "
                    "turn the results (and, in training, every weight) into NaN.",
                    fix="clean the data before making the iterator, e.g. keep the finite rows: "
                    "ok = np.isfinite(X).all(axis=1); X, y = X[ok], y[ok]",
                )
        outputs = dict(self.output_shapes)
        for name, arr in zip(self._label_names, batch.label):
            layer = self._label_inputs.get(name)
            if layer is None or not layer.is_classification:
                continue
            shape = outputs.get(layer.output_name)
            if not shape or len(shape) < 2:
                continue
            classes, values = shape[1], arr.asnumpy()
            fractional = values[values != np.round(values)]
            if fractional.size:
                raise InputError(
                    f"The first {what} batch has the label {fractional[0]:g}, which is not a "
                    f"class number: {layer.op} '{layer.layer}' expects whole numbers 0..."
                    f"{classes - 1}. MXNet would cut it to an integer without a word.",
                    fix="for classes, y = y.astype(int) after checking how they were coded; "
                    "to predict a quantity, end the network with LinearRegressionOutput",
                )
            wrong = values[(values < 0) | (values >= classes)]
            if wrong.size:
                raise InputError(
                    f"The first {what} batch has the label {wrong[0]:g}, but {layer.op} "
                    f"'{layer.layer}' has {classes} classes, numbered 0..{classes - 1}; MXNet "
                    "would not complain, and every number it gave would be wrong.",
                    fix="labels must be whole class numbers from 0 (e.g. y = y - 1 if they start "
                    "at 1), or widen the last layer: FullyConnected(..., num_hidden=K) for K "
                    "classes",
                )

    def backward(self, out_grads=None):
        if not self._train_forward_pending:
            self._require_params("mod.backward()")
            self._require_training("mod.backward()")
            raise LifecycleError(
                "mod.backward() needs a training forward pass first, and there has been none "
                "since the last update (MXNet would compute gradients from stale or "
                "uninitialised values and corrupt the weights).",
                fix=TRAIN_STEP,
                state=self._state_text(),
            )
        super().backward(out_grads)
        self._grads_pending = True

    def update(self):
        if not self.optimizer_initialized:
            self._require_optimizer("mod.update()")
        if not self._grads_pending:
            raise LifecycleError(
                "mod.update() needs gradients from mod.backward() since the last update "
                "(otherwise the previous gradients would be applied again).",
                fix=TRAIN_STEP,
                state=self._state_text(),
            )
        super().update()
        self._grads_pending = False
        self._train_forward_pending = False

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        if not self._outputs_ready:
            self._require_params("mod.update_metric()")
        if not isinstance(eval_metric, mx.metric.EvalMetric):
            raise ArgumentTypeError(
                f"mod.update_metric() takes a metric object; got {eval_metric!r}.",
                fix="metric = mx.metric.create('acc'); mod.update_metric(metric, batch.label)",
            )
        if not self._outputs_ready:
            raise LifecycleError(
                "mod.update_metric() compares the outputs of the last forward pass with the "
                "labels, and there has been no forward pass yet.",
                fix="mod.forward(batch, is_train=True); mod.update_metric(metric, batch.label)",
                state=self._state_text(),
            )
        if labels is None:
            raise InputError(
                "mod.update_metric(metric, None): there are no labels to compare with.",
                fix="mod.update_metric(metric, batch.label) with a batch from a labelled iterator",
            )
        if self._batch_pad and not pre_sliced:
            self._update_metric_without_pad(eval_metric, labels)
            return
        if isinstance(eval_metric, DeferredMetric):
            # the bound batch size is the labels' length, without asking the device
            eval_metric.begin_batch(self._exec_group.batch_size)
        super().update_metric(eval_metric, labels, pre_sliced)

    def _update_metric_without_pad(self, eval_metric, labels) -> None:
        """MXNet's per-device metric update, leaving out the padded rows at the batch's end
        (MXNet counts them: 0.609 instead of 0.630 on 100 samples in batches of 32)."""
        group = self._exec_group
        real = group.batch_size - self._batch_pad
        if isinstance(eval_metric, DeferredMetric):
            eval_metric.begin_batch(real)
        for texec, rows in zip(group.execs, group.slices):
            stop = min(rows.stop, real)
            if stop <= rows.start:
                continue  # this device holds only padding
            labels_ = OrderedDict(
                (name, label[rows.start : stop]) for name, label in zip(group.label_names, labels)
            )
            preds = OrderedDict(
                (name, out[: stop - rows.start])
                for name, out in zip(group.output_names, texec.outputs)
            )
            eval_metric.update_dict(labels_, preds)

    def get_outputs(self, merge_multi_context=True):
        self._require_params("mod.get_outputs()")
        if not self._outputs_ready:
            raise LifecycleError(
                "mod.get_outputs() returns the outputs of the last forward pass, and there has "
                "been none yet.",
                fix="mod.forward(batch, is_train=False); mod.get_outputs()",
                state=self._state_text(),
            )
        return super().get_outputs(merge_multi_context)

    # ------------------------------------------------------------------ high level
    def _check_metric_fits(self, metric, data_descs, called: str) -> None:
        layers = list(self._label_inputs.values())
        if any(layer.is_classification for layer in layers):
            kind = "classification"
        elif any(layer.op in network.REGRESSION_OUTPUTS for layer in layers):
            kind = "regression"
        else:
            kind = None
        classes = None
        try:
            _, out_shapes, _ = self._symbol.infer_shape_partial(
                **{d.name: d.shape for d in data_descs}
            )
            if kind == "classification" and out_shapes and len(out_shapes[0]) == 2:
                classes = out_shapes[0][1]
        except mx.base.MXNetError:
            pass  # the bind that follows explains shape problems
        check_metric_fits(metric, kind, classes, called)

    def _prepare_inference(self, called: str, eval_data) -> None:
        is_array = isinstance(eval_data, (np.ndarray, mx.nd.NDArray))
        if not is_array and not isinstance(eval_data, mx.io.DataIter):
            raise ArgumentTypeError(
                f"{called} takes a data iterator (or, for predict, an array); got "
                f"{type(eval_data).__name__}.",
                fix="val_iter = mx.io.NDArrayIter(X_val, y_val, batch_size=32)",
            )
        if not self.binded and self.params_initialized:
            # A module from Module.load has parameters but no memory: bind it for prediction from
            # the data itself instead of failing.
            if is_array:
                data_shapes = [(self._data_names[0], eval_data.shape)]
                label_shapes = None
            else:
                data_shapes = eval_data.provide_data
                given = [d.name for d in eval_data.provide_label or []]
                label_shapes = (
                    eval_data.provide_label if sorted(given) == sorted(self._label_names) else None
                )
            self.bind(data_shapes, label_shapes, for_training=False)
            self._auto_bound = True
            print(
                f"Note: {called} bound the module for prediction from the data's shapes "
                "(the same as mod.bind(data_shapes=val_iter.provide_data, for_training=False))."
            )
            return
        self._require_params(called)

    def predict(
        self,
        eval_data,
        num_batch=None,
        merge_batches=True,
        reset=True,
        always_output_list=False,
        sparse_row_id_fn=None,
        **unknown,
    ):
        _refuse_unknown("mod.predict()", unknown, Module.predict)
        self._prepare_inference("mod.predict()", eval_data)
        self._in_predict = True  # an array forward keeps MXNet's is_train=None; it needs no label
        try:
            return super().predict(
                eval_data, num_batch, merge_batches, reset, always_output_list, sparse_row_id_fn
            )
        finally:
            self._in_predict = False
            self._train_forward_pending = False

    def score(
        self,
        eval_data,
        eval_metric,
        num_batch=None,
        batch_end_callback=None,
        score_end_callback=None,
        reset=True,
        epoch=0,
        sparse_row_id_fn=None,
        **unknown,
    ):
        _refuse_unknown("mod.score()", unknown, Module.score)
        self._prepare_inference("mod.score()", eval_data)
        if isinstance(eval_data, (np.ndarray, mx.nd.NDArray)):
            raise ArgumentTypeError(
                "mod.score() needs labels as well as data, so it takes an iterator, not an array.",
                fix="mod.score(mx.io.NDArrayIter(X_val, y_val, batch_size=32), 'acc')",
            )
        eval_metric = create_metric(eval_metric, "mod.score()")
        self._check_metric_fits(eval_metric, eval_data.provide_data, "mod.score()")
        self._score_preflight = True  # the first batch's labels and data get checked once
        return super().score(
            eval_data,
            eval_metric,
            num_batch,
            batch_end_callback,
            score_end_callback,
            reset,
            epoch,
            sparse_row_id_fn,
        )

    def fit(
        self,
        train_data,
        eval_data=None,
        eval_metric="acc",
        epoch_end_callback=None,
        batch_end_callback=None,
        kvstore="local",
        optimizer="sgd",
        optimizer_params=(("learning_rate", 0.01),),
        eval_end_callback=None,
        eval_batch_end_callback=None,
        initializer=mx.init.Uniform(0.01),
        arg_params=None,
        aux_params=None,
        allow_missing=False,
        force_rebind=False,
        force_init=False,
        begin_epoch=0,
        num_epoch=None,
        validation_metric=None,
        monitor=None,
        sparse_row_id_fn=None,
        live=None,
        checkpoint=None,
        resume=None,
        early_stopping=None,
        epoch_report_callback=None,
        **unknown,
    ):
        """Train the module: MXNet's ``fit``, plus ``live`` curves and ``mod.history``.

        All of MXNet's parameters keep their meaning and defaults. In addition:

        live : bool or LivePlot, optional
            ``True`` draws live training curves (a widget in a notebook, one line per epoch in
            a terminal); a ``LivePlot(...)`` chooses its options.
        checkpoint : str or Checkpoint, optional
            A prefix such as ``'runs/mlp'``: a complete checkpoint (parameters, optimizer state,
            metric history) after every epoch; ``mxlearn.Checkpoint(prefix, period, keep, best)``
            chooses when and how many.
        resume : str, optional
            A prefix: continue from its newest complete checkpoint (parameters, optimizer state,
            begin_epoch). ``mxlearn.resume(prefix)`` does the same and returns the module.
        early_stopping : int or EarlyStopping, optional
            Stop when the validation metric has not improved for that many epochs, and put the
            best epoch's parameters back (needs ``eval_data``).
        epoch_report_callback : function or list of functions, optional
            Called as ``fn(report)`` once per epoch after validation (MXNet's
            ``epoch_end_callback`` runs before it); ``report.train`` and ``report.validation``
            map metric names to the epoch's values. Raise ``mxlearn.StopTraining`` in it to
            end training after that epoch.

        After training, ``mod.history`` holds every metric value (a MetricHistory). Metrics are
        read from the device without a wait per batch; the values are exactly MXNet's.

        Examples
        --------
        >>> mod.fit(train_iter, eval_data=val_iter, optimizer_params={'learning_rate': 0.1},
        ...         num_epoch=5, live=True)  # doctest: +SKIP
        """
        _refuse_unknown("mod.fit()", unknown, Module.fit)
        called = "mod.fit()"
        saver = Checkpoint.of(checkpoint)
        stopper = EarlyStopping.of(early_stopping)
        if stopper is not None and eval_data is None:
            raise InputError(
                "mod.fit(early_stopping=...) judges the validation metric, and there is no "
                "eval_data.",
                fix="mod.fit(train_iter, eval_data=val_iter, early_stopping=3, ...)",
            )
        if resume is not None:
            self._resume = load_resume_state(resume)
            print(self._resume.explain())
        state, self._resume = self._resume, None
        if state is not None:
            begin_epoch, arg_params, aux_params, optimizer, optimizer_params = self._apply_resume(
                state, begin_epoch, arg_params, aux_params, optimizer, optimizer_params
            )
        if num_epoch is None:
            raise InputError(
                "mod.fit() needs num_epoch: the epoch number to stop before (epochs count from "
                "0, so num_epoch=5 trains epochs 0..4).",
                fix="mod.fit(train_iter, num_epoch=5)",
            )
        note = None if state else begin_epoch_note(arg_params, begin_epoch,
                                                    _as_list(epoch_end_callback))  # fmt: skip
        if note:
            print(note)
        if begin_epoch >= num_epoch:
            raise InputError(
                f"mod.fit(begin_epoch={begin_epoch}, num_epoch={num_epoch}) would train nothing: "
                "num_epoch is the epoch to stop before, not how many epochs to add.",
                fix=f"to train 3 more epochs: mod.fit(..., begin_epoch={begin_epoch}, "
                f"num_epoch={begin_epoch + 3})",
            )
        for argument, data in (("train_data", train_data), ("eval_data", eval_data)):
            if data is not None and not isinstance(data, mx.io.DataIter):
                raise ArgumentTypeError(
                    f"mod.fit({argument}=...) takes a data iterator; got {type(data).__name__}.",
                    fix=ITER_FIX,
                )
        check_optimizer(optimizer, optimizer_params, called)
        if self.optimizer_initialized:
            key = _optimizer_key(kvstore, optimizer, optimizer_params)
            self._check_same_optimizer(key, optimizer, optimizer_params, called)
        if validation_metric is None:
            validation_metric = eval_metric
        eval_metric = create_metric(eval_metric, called)
        validation_metric = create_metric(validation_metric, called)
        for metric in (eval_metric, validation_metric):
            self._check_metric_fits(metric, train_data.provide_data, called)
        if self._auto_bound and not self.for_training:
            force_rebind = True  # bound for prediction by predict/score; training needs more
        feed = FitFeed(
            _recorder_for(live),
            eval_metric,
            validation_metric,
            has_validation=eval_data is not None,
        )
        if state is not None:
            feed.recorder.history = state.history()
        if any(ctx.device_type == "gpu" for ctx in self._context):
            feed.recorder.status = lambda: gpu_memory_text(self._context)
        self.history = feed.recorder.history
        # fit's own callbacks run first: they name each batch before a user's callback reads it
        watchdog = DivergenceWatchdog(self)
        epoch_end_callback = [watchdog.epoch_end, feed.epoch_end, *_as_list(epoch_end_callback)]
        batch_end_callback = [feed.batch_end, watchdog.batch_end, *_as_list(batch_end_callback)]
        eval_end_callback = [feed.eval_end, *_as_list(eval_end_callback)]
        # After everything MXNet does for an epoch (validation and the user's callbacks
        # included): save, report, then judge stopping. The watchdog ran at the epoch's end,
        # before all of these: weights it finds diverged never reach a checkpoint.
        epoch_done = []
        if saver is not None:
            epoch_done.append(lambda epoch: self._save_epoch(saver, epoch, watchdog))
        for report_to in _as_list(epoch_report_callback):
            epoch_done.append(
                lambda epoch, fn=report_to: fn(EpochReport.of(self, epoch, self.history))
            )
        if stopper is not None:
            epoch_done.append(lambda epoch: stopper.after_validation(self, epoch, self.history))
        if eval_data is None:
            epoch_end_callback += [lambda epoch, *_, fn=fn: fn(epoch) for fn in epoch_done]
        else:
            eval_end_callback += [lambda param, fn=fn: fn(param.epoch) for fn in epoch_done]
        with visible_epoch_log(self):
            try:
                feed.begin(train_data, begin_epoch, num_epoch)
                if eval_data is not None:
                    feed.begin_validation(eval_data)
                super().fit(
                    train_data,
                    eval_data,
                    feed.train_metric,
                    epoch_end_callback,
                    batch_end_callback,
                    kvstore,
                    optimizer,
                    optimizer_params,
                    eval_end_callback,
                    eval_batch_end_callback,
                    initializer,
                    arg_params,
                    aux_params,
                    allow_missing,
                    force_rebind,
                    force_init,
                    begin_epoch,
                    num_epoch,
                    feed.validation_metric,
                    monitor,
                    sparse_row_id_fn,
                )
            except StopIteration:
                # MXNet's fit takes the first batch of each epoch with a bare next().
                raise _no_batch_error(train_data, self._state_text()) from None
            except StopTraining as stop:
                train_data.reset()  # stopped after the epoch, before fit's own reset
                if stopper is not None and stopper.stopped and stopper.best_params is not None:
                    self.set_params(*stopper.best_params)
                print(str(stop) or "Training stopped by a callback (StopTraining).")
            except KeyboardInterrupt:
                train_data.reset()  # the next fit starts from a full epoch
                raise TrainingInterrupted(_interrupt_text(saver, num_epoch)) from None
            finally:
                feed.finish()

    def _apply_resume(
        self, state, begin_epoch, arg_params, aux_params, optimizer, optimizer_params
    ):
        """fit's arguments for continuing ``state``; the optimizer state waits for
        init_optimizer."""
        if begin_epoch not in (0, state.epoch):
            raise InputError(
                f"mod.fit(begin_epoch={begin_epoch}) but checkpoint {state.epoch} of "
                f"'{state.prefix}' has {state.epoch} epochs done, so training goes on with epoch "
                f"{state.epoch}.",
                fix=f"leave begin_epoch out (or begin_epoch={state.epoch})",
            )
        if arg_params is None and not self.params_initialized:
            arg_params, aux_params = state.arg_params, state.aux_params
        saved = state.optimizer
        if saved is not None:
            settings = saved.get("settings")
            uses_defaults = optimizer == "sgd" and dict(optimizer_params) == {"learning_rate": 0.01}
            if uses_defaults and settings:
                optimizer, optimizer_params = settings["optimizer"], settings["params"]
                print(
                    f"Continuing with the checkpoint's optimizer: '{optimizer}' with "
                    f"{optimizer_params}."
                )
            self._pending_optimizer = (state.optimizer_arrays, saved)
        return state.epoch, arg_params, aux_params, optimizer, optimizer_params

    def _save_epoch(self, saver, epoch: int, watchdog) -> None:
        if watchdog.suspect:  # the loss is growing: keep the last good checkpoint the newest
            print(
                f"Checkpoint of epoch {epoch} not written: the training loss is past the "
                "divergence limit (see the watchdog's message if training stops)."
            )
            return
        saver.after_epoch(self, epoch + 1, self.history, self._optimizer_settings_json())

    def _optimizer_settings_json(self) -> dict | None:
        if self._optimizer_settings is None:
            return None
        kvstore, optimizer, *rest = self._optimizer_settings[0]
        if not isinstance(optimizer, str):
            return None
        params = {k: v for k, v in rest[0] if v is None or isinstance(v, (bool, int, float, str))}
        return {"optimizer": optimizer, "params": params}

    # ------------------------------------------------------------------ checkpoints
    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False, remove_amp_cast=True):
        called = "mod.save_checkpoint()"
        if not self.params_initialized:
            raise LifecycleError(
                f"{called} saves the parameters, and there are none yet.",
                fix=INIT_CALL if self.binded else f"{BIND_CALL}; {INIT_CALL}",
                state=self._state_text(),
            )
        if save_optimizer_states and not self.optimizer_initialized:
            raise LifecycleError(
                f"{called}(save_optimizer_states=True): no optimizer is installed, so there is "
                "no optimizer state to save.",
                fix=f"{OPTIMIZER_CALL}, or save_optimizer_states=False",
                state=self._state_text(),
            )
        folder = os.path.dirname(os.path.abspath(prefix))
        if not os.path.isdir(folder):
            raise InputError(
                f"{called}: the folder '{folder}' for prefix '{prefix}' does not exist.",
                fix=f"os.makedirs({folder!r}, exist_ok=True)",
            )
        super().save_checkpoint(prefix, epoch, save_optimizer_states, remove_amp_cast)

    @classmethod
    def load(cls, prefix, epoch, load_optimizer_states=False, trust=False, **kwargs):
        """Create a module from a checkpoint, as ``mx.mod.Module.load`` does, as an mxlearn.Module.

        The files are checked first; a missing epoch names the epochs that exist. MXNet's
        ``.states`` file is a pickle: ``load_optimizer_states=True`` needs ``trust=True``.
        """
        if load_optimizer_states and not trust:
            optimizer_state.read_pickled_states(optimizer_states_file(prefix, epoch), trust=False)
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        mod = cls(symbol=symbol, **kwargs)
        mod._arg_params = arg_params
        mod._aux_params = aux_params
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = optimizer_states_file(prefix, epoch)
            mod._trusted_states = optimizer_states_file(prefix, epoch)
        return mod

    def load_params(self, fname):
        """MXNet's ``load_params``, with the file checked before MXNet parses it."""
        arg_params, aux_params = load_params(fname)
        self.set_params(arg_params, aux_params)

    def load_optimizer_states(self, fname, trust=False):
        """MXNet's ``load_optimizer_states``, refusing to unpickle unless ``trust=True``, and then
        admitting only arrays in plain containers (no code runs from the file)."""
        trust = trust or fname == getattr(self, "_trusted_states", None)
        states = optimizer_state.read_pickled_states(fname, trust)
        if not self.optimizer_initialized:
            raise LifecycleError(
                "mod.load_optimizer_states() fills the optimizer's state, and no optimizer is "
                "installed yet.",
                fix=OPTIMIZER_CALL,
                state=self._state_text(),
            )
        updater = optimizer_state.updater_of(self)
        updater.states = states
        updater.states_synced = dict.fromkeys(states, False)


class TrainingInterrupted(KeyboardInterrupt):
    """fit stopped by the user (Ctrl-C, or "interrupt kernel"), with how to go on."""


def _interrupt_text(saver, num_epoch) -> str:
    if saver is not None and saver.saved:
        epoch = saver.saved[-1]
        return (
            f"Training stopped. Checkpoint {epoch} ({epoch} epochs done) is on disk and the data "
            f"iterator was reset. To go on: mod = mxlearn.resume('{saver.prefix}'); "
            f"mod.fit(train_iter, num_epoch={num_epoch}, checkpoint='{saver.prefix}')"
        )
    return (
        "Training stopped; no checkpoint was being written, so only the module in memory holds "
        "the progress. The data iterator was reset. Next time pass checkpoint='runs/name' to fit "
        "to keep every completed epoch on disk."
    )


def _refuse_unknown(called: str, unknown: dict, method) -> None:
    """A misspelled keyword (the seed tutorial's ``optimizer_param=``) named with the right one,
    instead of Python's bare "unexpected keyword argument"."""
    if not unknown:
        return
    name = next(iter(unknown))
    known = [p for p in inspect.signature(method).parameters if p not in ("self", "unknown")]
    raise ArgumentTypeError(
        f"{called} has no argument '{name}'. " + did_you_mean(name, known),
        fix=f"{called[:-1]}{(closest(name, known) or known)[0]}=...)",
    )


def _as_list(callbacks) -> list:
    if callbacks is None:
        return []
    return list(callbacks) if isinstance(callbacks, (list, tuple)) else [callbacks]


def _recorder_for(live) -> TrainingRecorder:
    if live is None or live is False:
        return TrainingRecorder()
    if live is True:
        return LivePlot()
    if isinstance(live, LivePlot):
        return live
    raise ArgumentTypeError(
        f"mod.fit(live={live!r}): live is True, False or a LivePlot.",
        fix="mod.fit(..., live=True) or mod.fit(..., live=mxlearn.LivePlot(log_scale=True))",
    )


def _no_batch_error(train_data, state: str) -> InputError:
    """Tell an exhausted iterator (reset it) from an empty one (give it data)."""
    train_data.reset()
    try:
        next(iter(train_data))
    except StopIteration:
        return InputError(
            "mod.fit(): train_data is empty: it yields no batch, even after reset() (fewer rows "
            "than one batch, with last_batch_handle='discard'?).",
            fix="give it at least batch_size rows, or a smaller batch_size",
            state=state,
        )
    train_data.reset()
    return InputError(
        "mod.fit(): train_data gave no batch at the start of an epoch: it had already been run to "
        "its end (e.g. by a manual training loop) and not reset, and MXNet's fit does not reset it "
        "before the first epoch. It has been reset now.",
        fix="train_iter.reset(); mod.fit(train_iter, ...)",
        state=state,
    )


def _engine_reason(err: Exception) -> str:
    """The one informative line of an MXNet engine error, without its C++ traceback."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    for line in lines:
        if "Error in operator" in line or line.startswith("MXNetError"):
            return line.removeprefix("MXNetError: ")
    return lines[-1] if lines else type(err).__name__
