"""Arguments checked before MXNet sees them: names, shapes, keywords, devices' work loads."""

from __future__ import annotations

import contextlib
import inspect
import os
import re

import numpy as np

from .. import network
from .._compat import mx
from ..errors import ArgumentTypeError, InputError, closest, did_you_mean
from ..language import say
from .lifecycle import BIND_CALL


def refuse_unknown(called: str, unknown: dict, method) -> None:
    """A misspelled keyword (the seed tutorial's ``optimizer_param=``) named with the right one,
    instead of Python's bare "unexpected keyword argument"."""
    if not unknown:
        return
    name = next(iter(unknown))
    known = [p for p in inspect.signature(method).parameters if p not in ("self", "unknown")]
    raise ArgumentTypeError(
        say(
            "{called} has no argument '{name}'. {hint}",
            called=called,
            name=name,
            hint=did_you_mean(name, known),
        ),
        fix=f"{called[:-1]}{(closest(name, known) or known)[0]}=...)",
    )


def as_list(callbacks) -> list:
    """MXNet's convention for callbacks: None, one function, or a list of them."""
    if callbacks is None:
        return []
    return list(callbacks) if isinstance(callbacks, (list, tuple)) else [callbacks]


def check_symbol(symbol) -> None:
    if not isinstance(symbol, mx.sym.Symbol):
        raise ArgumentTypeError(
            say(
                "Module(symbol=...) needs a network built with mx.sym; got {kind}.",
                kind=type(symbol).__name__,
            ),
            fix="net = mxlearn.models.mlp(); mod = mxlearn.Module(net, context=mx.cpu())",
        )


def as_name_list(names, argument: str) -> list[str]:
    if names is None:
        return []
    if isinstance(names, str):
        raise ArgumentTypeError(
            say(
                "Module({argument}='{names}'): {argument} is a list of names; a bare string would "
                "be read letter by letter.",
                argument=argument,
                names=names,
            ),
            fix=f"Module(net, {argument}=['{names}'])",
        )
    return list(names)


def check_names(symbol, data_names, label_names, state_names, fixed_param_names) -> None:
    """Every name given to Module() must be an input or argument of the network."""
    data_names = as_name_list(data_names, "data_names")
    label_names = as_name_list(label_names, "label_names")
    state_names = as_name_list(state_names, "state_names")
    fixed_param_names = as_name_list(fixed_param_names, "fixed_param_names")
    args = symbol.list_arguments()
    labels = network.label_inputs(symbol)
    expected_data = network.input_names(symbol)
    expected_labels = [li.name for li in labels]
    fix = f"Module(net, data_names={expected_data}, label_names={expected_labels or None})"
    reads = say("The network reads: {inputs}.", inputs=network.describe_inputs(symbol))
    for name in data_names:
        if name not in args:
            raise InputError(
                say(
                    "Module(data_names={data_names}): the network has no input '{name}'. {reads}",
                    data_names=data_names,
                    name=name,
                    reads=reads,
                ),
                fix=fix,
            )
    for name in label_names:
        if name not in args:
            _refuse_label(label_names, name, labels, fix)
    for argument, names in (
        ("state_names", state_names),
        ("fixed_param_names", fixed_param_names),
    ):
        for name in names:
            if name not in args:
                raise InputError(
                    say(
                        "Module({argument}={names}): the network has no argument '{name}'. {hint}",
                        argument=argument,
                        names=names,
                        name=name,
                        hint=did_you_mean(name, args),
                    )
                )


def _refuse_label(label_names: list, name: str, labels: list, fix: str) -> None:
    """A label name the network does not read: named with the labels it does read, if any."""
    if labels:
        problem = say(
            "Module(label_names={label_names}): the network has no input '{name}'; {labels}.",
            label_names=label_names,
            name=name,
            labels="; ".join(li.describe() for li in labels),
        )
    else:
        problem = say(
            "Module(label_names={label_names}): the network takes no label, because it "
            "ends without a loss layer such as SoftmaxOutput, so it cannot be trained.",
            label_names=label_names,
        )
        fix = say(
            "end the network with net = mx.sym.SoftmaxOutput(net, name='softmax'); "
            "for a network that only predicts: Module(net, label_names=None)"
        )
    raise InputError(problem, fix=fix)


def check_work_load(work_load_list, contexts) -> None:
    if work_load_list is not None and len(work_load_list) != len(contexts):
        raise InputError(
            say(
                "Module(work_load_list={work_load_list}) gives {shares} shares for {devices} "
                "devices.",
                work_load_list=list(work_load_list),
                shares=len(work_load_list),
                devices=len(contexts),
            ),
            fix=say(
                "one number per device, e.g. work_load_list={example}", example=[1] * len(contexts)
            ),
        )


def as_descs(shapes, argument: str) -> list:
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
            say(
                "mod.bind({argument}={shapes!r}): expected a list of (name, shape) pairs such as "
                "[('data', (32, 16))], which is what an iterator's provide_data gives.",
                argument=argument,
                shapes=shapes,
            ),
            fix=BIND_CALL,
        )
    return descs


def shapes_text(descs, empty: str | None = None) -> str:
    """Input shapes as errors and the summary show them: ``data (32, 16), softmax_label (32,)``;
    ``empty`` (by default "none", said) when there are none."""
    if not descs:
        return say("none") if empty is None else empty
    return ", ".join(f"{d.name} {tuple(d.shape)}" for d in descs)


def engine_reason(err: Exception) -> str:
    """The one informative line of an MXNet engine error, without its C++ traceback."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    for line in lines:
        if "Error in operator" in line or line.startswith("MXNetError"):
            # "[13:30:48] ../src/operator/nn/convolution.cc:151: " says nothing to a student
            return re.sub(r"\[[\d:]+\] \S+:\d+: ", "", line.removeprefix("MXNetError: "))
    return lines[-1] if lines else type(err).__name__


def check_initializer(initializer) -> None:
    if isinstance(initializer, type):
        raise ArgumentTypeError(
            say(
                "mod.init_params(initializer={name}): that is the initializer class; pass an "
                "initializer object.",
                name=initializer.__name__,
            ),
            fix=f"mod.init_params(initializer=mx.init.{initializer.__name__}())",
        )


def check_param_dicts(arg_params) -> None:
    if not isinstance(arg_params, dict):
        raise ArgumentTypeError(
            say(
                "mod.set_params(arg_params, aux_params) takes the two dicts that "
                "mx.model.load_checkpoint returns."
            ),
            fix="sym, arg_params, aux_params = mx.model.load_checkpoint(prefix, epoch); "
            "mod.set_params(arg_params, aux_params)",
        )


def refuse_metric_object(eval_metric) -> None:
    """update_metric got something that is not an mx.metric.EvalMetric."""
    raise ArgumentTypeError(
        say("mod.update_metric() takes a metric object; got {metric!r}.", metric=eval_metric),
        fix="metric = mx.metric.create('acc'); mod.update_metric(metric, batch.label)",
    )


def refuse_missing_labels() -> None:
    """update_metric got labels=None."""
    raise InputError(
        say("mod.update_metric(metric, None): there are no labels to compare with."),
        fix=say("mod.update_metric(metric, batch.label) with a batch from a labelled iterator"),
    )


@contextlib.contextmanager
def engine_errors_explained(data_descs, label_descs):
    """bind: MXNet's engine error for shapes a network cannot take, as one explained line."""
    try:
        yield
    except (mx.base.MXNetError, RuntimeError) as err:
        # MXNet's simple_bind wraps the engine's shape error in a RuntimeError
        if not isinstance(err, mx.base.MXNetError) and "simple_bind error" not in str(err):
            raise
        reason = engine_reason(err)
        shapes = ", ".join(f"{d.name}={tuple(d.shape)}" for d in data_descs)
        fix = say(
            "check the input shapes against the layers: mod.symbol.infer_shape({shapes}) "
            "shows the same error without binding",
            shapes=shapes,
        )
        if "should be 4D" in reason:
            fix = say(
                "images go in as (batch, channels, height, width), e.g. X.reshape(-1, 1, 28, 28)"
            )
        if "uniform type" in reason or "data type" in reason:  # a dtype, not a shape
            fix = say(
                "give every input the network's type, float32: X.astype('float32') and "
                "y.astype('float32') before making the iterator (or mx.sym.Cast in the network)"
            )
        raise InputError(
            say(
                "mod.bind(): MXNet cannot build this network for data {data} and labels "
                "{labels}: {reason}",
                data=shapes_text(data_descs),
                labels=shapes_text(label_descs),
                reason=reason,
            ),
            fix=fix,
        ) from None


def check_inference_data(eval_data, called: str) -> bool:
    """predict and score take an iterator (predict also an array); True for an array."""
    is_array = isinstance(eval_data, (np.ndarray, mx.nd.NDArray))
    if not is_array and not isinstance(eval_data, mx.io.DataIter):
        raise ArgumentTypeError(
            say(
                "{called} takes a data iterator (or, for predict, an array); got {kind}.",
                called=called,
                kind=type(eval_data).__name__,
            ),
            fix="val_iter = mx.io.NDArrayIter(X_val, y_val, batch_size=32)",
        )
    return is_array


def check_rows(shape, called: str) -> None:
    if not shape or shape[0] == 0:
        raise InputError(
            say(
                "{called}: the array has no rows (shape {shape}), so there is nothing to compute.",
                called=called,
                shape=tuple(shape),
            ),
            fix=say("pass at least one row, e.g. mod.predict(X[:1])"),
        )


def check_labelled_data(eval_data) -> None:
    if isinstance(eval_data, mx.io.DataIter) and not eval_data.provide_label:
        raise InputError(
            say("mod.score(): the iterator has no labels to compare the predictions with."),
            fix=say(
                "mx.io.NDArrayIter(X_val, y_val, batch_size=32); for outputs alone: "
                "mod.predict(val_iter)"
            ),
        )
    if isinstance(eval_data, (np.ndarray, mx.nd.NDArray)):
        raise ArgumentTypeError(
            say("mod.score() needs labels as well as data, so it takes an iterator, not an array."),
            fix="mod.score(mx.io.NDArrayIter(X_val, y_val, batch_size=32), 'acc')",
        )


# The kvstore types MXNet 1.9.1 creates (kvstore.py, c_api's KVStore::Create): another name
# would silently give a local store.
KVSTORE_TYPES = (
    "local",
    "local_update_cpu",
    "local_allreduce_cpu",
    "local_allreduce_device",
    "device",
    "nccl",
    "dist_sync",
    "dist_async",
    "dist_sync_device",
    "dist_async_device",
    "dist_device_sync",
    "horovod",
    "byteps",
)


def check_count(value, name: str, called: str, example: str, allow_none: bool = False) -> None:
    """A whole number >= 1 (epochs, checks): 1.5 or True would count something else."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(
            say(
                "{called}: {name}={value!r}, but {name} is a count: a whole number, at least 1.",
                called=called,
                name=name,
                value=value,
            ),
            fix=example,
        )


def check_kvstore(kvstore, called: str) -> None:
    """A known kvstore type; a distributed one needs the scheduler and servers a launcher
    starts: without them MXNet waits for ever, or stops the whole process (a notebook's
    kernel)."""
    if isinstance(kvstore, str) and kvstore not in KVSTORE_TYPES:
        raise InputError(
            say(
                "{called}: kvstore='{kvstore}' is not a kvstore type MXNet knows; it would quietly "
                "use a local one. {hint}",
                called=called,
                kvstore=kvstore,
                hint=did_you_mean(kvstore, KVSTORE_TYPES),
            ),
            fix=say(
                "kvstore='local' (one process), 'device' (several GPUs), or 'dist_sync' with a "
                "launcher"
            ),
        )
    if isinstance(kvstore, str) and "dist" in kvstore and "DMLC_ROLE" not in os.environ:
        raise InputError(
            say(
                "{called}: kvstore='{kvstore}' trains with a scheduler and servers, and none were "
                "started for this process: MXNet would wait for them, or stop the process.",
                called=called,
                kvstore=kvstore,
            ),
            fix=say(
                "in a terminal: python -m mxlearn launch -n 2 -s 1 train.py (a script that calls "
                "fit(..., kvstore='{kvstore}')); here, kvstore='local' or 'device'",
                kvstore=kvstore,
            ),
        )
