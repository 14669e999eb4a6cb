"""Arguments checked before MXNet sees them: names, shapes, keywords, devices' work loads."""

from __future__ import annotations

import contextlib
import inspect
import math
import os

import numpy as np

from .. import network
from .._compat import mx
from ..boundary import condensed
from ..errors import N_, ArgumentTypeError, InputError, closest, did_you_mean
from ..language import say
from ..network_layers import network_layers
from ..network_view import memory_text
from . import rows
from .lifecycle import BIND_CALL

# The call that names a module's inputs as the network reads them (the fix of a wrong name).
NAMES_FIX = "Module(net, data_names={expected_data}, label_names={expected_labels})"


class NoSuchArgument(ArgumentTypeError):
    says = N_("{called} has no argument '{name}'. {hint}")
    fix_code = "{opening}{nearest}=...)"


class NoSuchInput(InputError):
    says = N_("Module(data_names={data_names}): the network has no input '{name}'. {reads}")
    fix_code = NAMES_FIX


class NoSuchLabel(InputError):
    says = N_("Module(label_names={label_names}): the network has no input '{name}'; {labels}.")
    fix_code = NAMES_FIX


class NetworkTakesNoLabel(InputError):
    says = N_(
        "Module(label_names={label_names}): the network takes no label, because it ends without a "
        "loss layer such as SoftmaxOutput, so it cannot be trained."
    )
    fix_says = N_(
        "end the network with net = mx.sym.SoftmaxOutput(net, name='softmax'); for a network that "
        "only predicts: Module(net, label_names=None)"
    )


class NoSuchNetworkArgument(InputError):
    says = N_("Module({argument}={names}): the network has no argument '{name}'. {hint}")


class WorkLoadMismatch(InputError):
    says = N_(
        "Module(work_load_list={work_load_list}) gives {shares} shares for {devices} devices."
    )
    fix_says = N_("one number per device, e.g. work_load_list={example}")


class WorkLoadNotPositive(InputError):
    says = N_(
        "Module(work_load_list={work_load_list}): the work load of {device} is {value}, not a "
        "finite number above 0. MXNet gives each device a share of every batch in proportion to "
        "its work load, and with this one no batch can be split: every bind would fail."
    )
    fix_says = N_(
        "give every device a work load above 0, e.g. work_load_list={example}, or leave {device} "
        "out of context=[...]"
    )


class WorkLoadShareTooSmall(InputError):
    says = N_(
        "Module(work_load_list={work_load_list}) gives {device} {share} of each batch: MXNet "
        "rounds each device's share to whole rows, and no batch of up to {largest} rows gives "
        "every device one."
    )
    fix_says = N_("work loads closer to even, e.g. work_load_list={example}")


class NotShapePairs(ArgumentTypeError):
    says = N_(
        "{called}: {argument}={shapes!r} is not a list of (name, shape) pairs such as [('data', "
        "(32, 16))], which is what an iterator's provide_data gives."
    )
    fix_code = BIND_CALL


class InitializerClass(ArgumentTypeError):
    says = N_(
        "mod.init_params(initializer={name}): that is the initializer class; pass an initializer "
        "object."
    )
    fix_code = "mod.init_params(initializer=mx.init.{name}())"


class NotAMetric(ArgumentTypeError):
    says = N_("mod.update_metric() takes a metric object; got {metric!r}.")
    fix_code = "metric = mx.metric.create('acc'); mod.update_metric(metric, batch.label)"


class NoLabelsToCompare(InputError):
    says = N_("mod.update_metric(metric, None): there are no labels to compare with.")
    fix_says = N_("mod.update_metric(metric, batch.label) with a batch from a labelled iterator")


class NetworkCannotTake(InputError):
    """bind: MXNet's engine cannot build the network for these inputs (a shape, by default)."""

    says = N_(
        "mod.bind(): MXNet cannot build this network for data {data} and labels {labels}: {reason}"
    )
    fix_says = N_(
        "check the input shapes against the layers: mod.symbol.infer_shape({shapes}) shows the "
        "same error without binding"
    )


class ImagesNeedFourAxes(NetworkCannotTake):
    fix_says = N_("images go in as (batch, channels, height, width), e.g. X.reshape(-1, 1, 28, 28)")


class InputTypesDiffer(NetworkCannotTake):
    fix_says = N_(
        "give every input the network's type, float32: X.astype('float32') and y.astype('float32') "
        "before making the iterator (or mx.sym.Cast in the network)"
    )


class OutOfMemory(NetworkCannotTake):
    says = N_(
        "{called}: MXNet could not allocate the memory for data {data} and labels {labels}: "
        "{reason}. The parameters take {params}, the layers' outputs for this batch {outputs}."
    )
    fix_says = N_("a smaller batch_size: the layers' outputs grow with the batch's rows")


class ParametersOutOfMemory(OutOfMemory):
    # a smaller batch would not help: the parameters are the same for any batch
    fix_says = N_("smaller layers (fewer num_hidden or num_filter): the parameters take the most")


class ParametersExceedMemory(ParametersOutOfMemory):
    says = N_(
        "{called}: MXNet could not allocate the memory for data {data} and labels {labels}: "
        "{reason}. The parameters take {params}, more than {memory}, so no batch is small "
        "enough (the layers' outputs for this batch take {outputs})."
    )
    fix_says = N_(
        "smaller layers (fewer num_hidden or num_filter): the parameters alone do not fit"
    )


class NotInferenceData(ArgumentTypeError):
    says = N_("{called} takes a data iterator (or, for predict, an array); got {kind}.")
    fix_code = "val_iter = mx.io.NDArrayIter(X_val, y_val, batch_size=32)"


class NoRows(InputError):
    says = N_("{called}: the array has no rows (shape {shape}), so there is nothing to compute.")
    fix_says = N_("pass at least one row, e.g. mod.predict(X[:1])")


class NoLabelsToScore(InputError):
    says = N_("mod.score(): the iterator has no labels to compare the predictions with.")
    fix_says = N_(
        "mx.io.NDArrayIter(X_val, y_val, batch_size=32); for outputs alone: mod.predict(val_iter)"
    )


class ScoreNeedsIterator(ArgumentTypeError):
    says = N_("mod.score() needs labels as well as data, so it takes an iterator, not an array.")
    fix_code = "mod.score(mx.io.NDArrayIter(X_val, y_val, batch_size=32), 'acc')"


class UnknownKVStore(InputError):
    says = N_(
        "{called}: kvstore='{kvstore}' is not a kvstore type MXNet knows; it would quietly use a "
        "local one. {hint}"
    )
    fix_says = N_(
        "kvstore='local' (one process), 'device' (several GPUs), or 'dist_sync' with a launcher"
    )


class NoLaunchedServers(InputError):
    says = N_(
        "{called}: kvstore='{kvstore}' trains with a scheduler and servers, and none were started "
        "for this process: MXNet would wait for them, or stop the process."
    )
    fix_says = N_(
        "in a terminal: python -m mxlearn launch -n 2 -s 1 train.py (a script that calls fit(..., "
        "kvstore='{kvstore}')); here, kvstore='local' or 'device'"
    )


def refuse_unknown(called: str, unknown: dict, method, leave_out=()) -> None:
    """A misspelled keyword (the seed tutorial's ``optimizer_param=``) named with the right one,
    instead of Python's bare "unexpected keyword argument"; the parameters of ``method`` (or of
    each of a tuple of them) are the known ones, but for ``leave_out``."""
    if not unknown:
        return
    name = next(iter(unknown))
    left_out = ("self", "unknown", *leave_out)
    methods = method if isinstance(method, tuple) else (method,)
    every = [p for m in methods for p in inspect.signature(m).parameters]
    known = [p for p in dict.fromkeys(every) if p not in left_out]
    hint, nearest = did_you_mean(name, known), (closest(name, known) or known)[0]
    raise NoSuchArgument(called=called, name=name, hint=hint, opening=called[:-1], nearest=nearest)


def as_list(callbacks) -> list:
    """MXNet's convention for callbacks: None, one function, or a list of them."""
    if callbacks is None:
        return []
    return list(callbacks) if isinstance(callbacks, (list, tuple)) else [callbacks]


def check_names(symbol, data_names, label_names, state_names, fixed_param_names) -> None:
    """Every name given to Module() must be an input or argument of the network (its rules
    have made them lists of names, or None)."""
    data_names, label_names = list(data_names), list(label_names or [])
    args = symbol.list_arguments()
    labels = network.label_inputs(symbol)
    expected = dict(
        expected_data=network.input_names(symbol),
        expected_labels=[li.name for li in labels] or None,
    )
    reads = say("The network reads: {inputs}.", inputs=network.describe_inputs(symbol))
    for name in data_names:
        if name not in args:
            raise NoSuchInput(data_names=data_names, name=name, reads=reads, **expected)
    for name in label_names:  # a label the network does not read: named with those it reads
        if name not in args and not labels:
            raise NetworkTakesNoLabel(label_names=label_names)
        if name not in args:
            described = "; ".join(li.describe() for li in labels)
            raise NoSuchLabel(label_names=label_names, name=name, labels=described, **expected)
    for argument, names in (("state_names", state_names), ("fixed_param_names", fixed_param_names)):
        for name in names or []:
            if name not in args:
                hint = did_you_mean(name, args)
                names = list(names)
                raise NoSuchNetworkArgument(argument=argument, names=names, name=name, hint=hint)


def check_work_load(work_load_list, contexts) -> None:
    """One work load per device, each a finite number above 0, that some batch splits (its
    rules have made it a list of numbers): else every bind fails, or MXNet's search for a
    split never ends."""
    if work_load_list is None:
        return
    given, example = list(work_load_list), [1] * len(contexts)
    if len(given) != len(contexts):
        shares, devices = len(given), len(contexts)
        raise WorkLoadMismatch(
            work_load_list=given, shares=shares, devices=devices, example=example
        )
    # MXNet divides by their sum: work loads all below 0 split as their opposites do
    finite = all(math.isfinite(w) for w in given)
    if not (finite and (all(w > 0 for w in given) or all(w < 0 for w in given))):
        context, value = next(
            (c, w) for c, w in zip(contexts, given) if not (math.isfinite(w) and w > 0)
        )
        facts = dict(device=str(context), value=value, example=example)
        raise WorkLoadNotPositive(work_load_list=given, **facts)
    if rows.first_split(given, 1) is None:  # a share too small to round to a row
        smallest = min(range(len(given)), key=lambda i: given[i] / sum(given))
        share = f"{given[smallest] / sum(given):.3g}"
        facts = dict(device=str(contexts[smallest]), share=share, largest=rows.LARGEST_BATCH)
        raise WorkLoadShareTooSmall(work_load_list=given, example=example, **facts)


def as_descs(shapes, argument: str, called: str = "mod.bind()") -> list:
    """Shapes as MXNet reads them, DataDesc(*pair) for each, with each shape a tuple: MXNet
    takes [32, 16] as well as (32, 16), and a later comparison of shapes needs one form."""
    try:
        descs = [as_desc(s) for s in shapes]
    except (TypeError, ValueError):
        descs = None
    if not descs or not all(
        isinstance(d.name, str) and isinstance(d.shape, tuple) and all(map(_is_dimension, d.shape))
        for d in descs
    ):
        raise NotShapePairs(called=called, argument=argument, shapes=shapes)
    return descs


def as_desc(pair):
    """One (name, shape[, dtype[, layout]]) pair or DataDesc as a DataDesc, a list shape as
    a tuple (not checked: as_descs checks)."""
    desc = pair if isinstance(pair, mx.io.DataDesc) else mx.io.DataDesc(*pair)
    if isinstance(desc.shape, list):
        return mx.io.DataDesc(desc.name, tuple(desc.shape), desc.dtype, desc.layout)
    return desc


def _is_dimension(n) -> bool:
    return isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_))


def shapes_text(descs, empty: str | None = None) -> str:
    """Input shapes as errors and the summary show them: ``data (32, 16), softmax_label (32,)``;
    ``empty`` (by default "none", said) when there are none."""
    if not descs:
        return say("none") if empty is None else empty
    return ", ".join(f"{d.name} {tuple(d.shape)}" for d in descs)


def check_initializer(initializer) -> None:
    if isinstance(initializer, type):
        raise InitializerClass(name=initializer.__name__)


@contextlib.contextmanager
def engine_errors_explained(
    symbol, data_descs, label_descs, contexts=None, called: str = "mod.bind()"
):
    """bind (or reshape, ``called``): MXNet's engine error for shapes a network cannot take, as
    one explained line; ``contexts``, the module's devices, tell how much memory they have
    (without them, only a failed allocation in CPU memory is measured against the machine's)."""
    try:
        yield
    except (mx.base.MXNetError, RuntimeError) as err:
        # MXNet's simple_bind wraps the engine's shape error in a RuntimeError
        if not isinstance(err, mx.base.MXNetError) and "simple_bind error" not in str(err):
            raise
        reason = condensed(err)
        kind = NetworkCannotTake
        if "should be 4D" in reason:
            kind = ImagesNeedFourAxes
        if "uniform type" in reason or "data type" in reason:  # a dtype, not a shape
            kind = InputTypesDiffer
        data, labels = shapes_text(data_descs), shapes_text(label_descs)
        shapes = ", ".join(f"{d.name}={tuple(d.shape)}" for d in data_descs)
        facts = dict(data=data, labels=labels, reason=reason, shapes=shapes)
        if "Failed to allocate" in reason:
            facts["called"] = called
            params, outputs = _memory_taken(symbol, data_descs, label_descs)
            kind = ParametersOutOfMemory if params > outputs else OutOfMemory
            facts.update(params=memory_text(params), outputs=memory_text(outputs))
            memory, copies, said = _device_memory(contexts, reason)
            if memory is not None and params * copies > memory:
                # no batch is small enough: the parameters are the same for any batch
                kind = ParametersExceedMemory
                facts.update(memory=said)
                if copies > 1:  # CPU contexts share the machine's memory, each with a copy
                    facts["params"] = say(
                        "{total} ({copies} copies of {each}, one for each CPU context)",
                        total=memory_text(params * copies),
                        copies=copies,
                        each=memory_text(params),
                    )
        raise kind(**facts) from None


def _memory_taken(symbol, data_descs, label_descs) -> tuple[int, int]:
    """Bytes of the parameters, and of every layer's outputs for the batch."""
    descs = [*data_descs, *(label_descs or [])]
    view = network_layers(symbol, {d.name: d.shape for d in descs}, {d.name for d in descs})
    return sum(layer.param_bytes for layer in view), sum(layer.output_bytes for layer in view)


def _device_memory(contexts, reason: str) -> tuple[int | None, int, str]:
    """The memory of the device that ran out, in bytes (None when not known), how many copies
    of the parameters it holds (every CPU context shares the machine's memory, each with its
    own copy; each GPU has its own memory, with one), and the memory said."""
    devices = list(contexts or [])
    gpus = [c for c in devices if c.device_type == "gpu"]
    if gpus and "CPU" not in reason:
        try:  # the smallest of the GPUs: each holds all the parameters
            memories = [(mx.context.gpu_memory_info(c.device_id)[1], c) for c in gpus]
        except (mx.base.MXNetError, AttributeError, OSError):
            return None, 1, ""
        memory, gpu = min(memories, key=lambda found: found[0])
        size = memory_text(memory)
        return memory, 1, say("the {size} of {device}", size=size, device=str(gpu))
    if not (devices or "CPU" in reason):
        return None, 1, ""
    memory = machine_memory()
    copies = max(1, len(devices) - len(gpus))
    if memory is None:
        return None, copies, ""
    return memory, copies, say("this machine's {size} of memory", size=memory_text(memory))


def machine_memory() -> int | None:
    """The machine's physical memory in bytes, where the system says (Linux, macOS)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def check_inference_data(eval_data, called: str) -> bool:
    """predict and score take an iterator (predict also an array); True for an array."""
    is_array = isinstance(eval_data, (np.ndarray, mx.nd.NDArray))
    if not is_array and not isinstance(eval_data, mx.io.DataIter):
        raise NotInferenceData(called=called, kind=type(eval_data).__name__)
    return is_array


def check_rows(shape, called: str) -> None:
    if not shape or shape[0] == 0:
        raise NoRows(called=called, shape=tuple(shape))


def check_labelled_data(eval_data) -> None:
    if isinstance(eval_data, mx.io.DataIter) and not eval_data.provide_label:
        raise NoLabelsToScore()
    if isinstance(eval_data, (np.ndarray, mx.nd.NDArray)):
        raise ScoreNeedsIterator()


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


def check_kvstore(kvstore, called: str) -> None:
    """A known kvstore type; a distributed one needs the scheduler and servers a launcher
    starts: without them MXNet waits for ever, or stops the whole process (a notebook's
    kernel)."""
    if isinstance(kvstore, str) and kvstore not in KVSTORE_TYPES:
        hint = did_you_mean(kvstore, KVSTORE_TYPES)
        raise UnknownKVStore(called=called, kvstore=kvstore, hint=hint)
    if isinstance(kvstore, str) and "dist" in kvstore and "DMLC_ROLE" not in os.environ:
        raise NoLaunchedServers(called=called, kvstore=kvstore)
