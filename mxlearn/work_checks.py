"""Checks of how an exercise was done, not only of what it reached: a loop written by hand
rather than fit, a run started from a checkpoint's weights, the layers a network was asked to
hold, a callback replayed by the check on histories it builds, a function called on arrays the
check makes. A shortcut that reaches the same accuracy another way fails them.
``mxlearn.checks`` re-exports them.
"""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np

from ._compat import mx
from .checkpoint import files
from .errors import N_, CheckFailed
from .language import say
from .metrics.history import MetricHistory
from .run_checks import NotAnMxlearnModule, TrackerHooksNothing, _ok, history_of, overrides_a_hook
from .states import WeightsFrom
from .weights_digest import weights_digest


class TrainedByFit(CheckFailed):
    says = N_(
        "The module was trained by fit ({updates} of its updates): this exercise writes the "
        "loop fit runs for you, batch by batch."
    )
    fix_says = N_(
        "per epoch: train_iter.reset(), then for each batch: mod.forward(batch, is_train=True); "
        "mod.backward(); mod.update()"
    )


class TooFewUpdates(CheckFailed):
    says = N_(
        "The module made {updates} updates, but {epochs} epochs of the iterator's {batches} "
        "batches make {expected}: each epoch goes through every batch, and an iterator read to "
        "its end gives no more batches until it is reset."
    )
    fix_says = N_("reset the iterator at the start of each epoch: train_iter.reset()")


class StartedFromGivenWeights(CheckFailed):
    says = N_(
        "The loop trained weights given to the module (set_params or arg_params), not weights "
        "its initializer made: the exercise trains the module from mx.init.Xavier()."
    )
    fix_code = "mod.init_params(initializer=mx.init.Xavier(), force_init=True)"


class NoRunFromEpoch(CheckFailed):
    says = N_(
        "No fit of this module began at epoch {epoch}, so it did not continue checkpoint "
        "{epoch}; its runs began at epochs {begins}."
    )
    fix_code = "mod.fit(..., begin_epoch={epoch})"


class StartedFromOtherWeights(CheckFailed):
    says = N_(
        "The run that began at epoch {epoch} started from {start}, not from the weights of "
        "checkpoint {epoch} of '{prefix}'. Fresh weights learn too, so the accuracy alone "
        "cannot show a resume."
    )
    fix_says = N_(
        "sym, arg_params, aux_params = mx.model.load_checkpoint(prefix, {epoch}), then "
        "fit(..., arg_params=arg_params, aux_params=aux_params, begin_epoch={epoch}); or a "
        "module from mxlearn.Module.load(prefix, {epoch})"
    )


class OtherLayers(CheckFailed):
    says = N_(
        "The network holds {found} {op} layers ({where}); the exercise asks for {count} with "
        "{settings}, each right after a hidden activation and read by the next layer."
    )


class NotAMutableModule(CheckFailed):
    says = N_("This is a {kind}, not a MutableModule: mxlearn.MutableModule(net, ...).")


class OtherCacheSize(CheckFailed):
    says = N_(
        "The MutableModule keeps up to {got} executor groups besides the one at its maximum "
        "shape, not {cache_size}: the number is a setting of MutableModule itself."
    )


class NotABucketingModule(CheckFailed):
    says = N_(
        "This is a {kind}, not MXNet's BucketingModule: "
        "mx.mod.BucketingModule(sym_gen, default_bucket_key=..., context=ctx)."
    )


class DefaultBucketNotLargest(CheckFailed):
    says = N_(
        "The default bucket key is {given!r}, not the largest bucket's {largest!r}: bind makes "
        "the default bucket first and every other bucket borrows its memory, so it is the "
        "largest one (the iterator's default_bucket_key)."
    )


class BucketNotMXNets(CheckFailed):
    says = N_(
        "The bucket {key!r} is not one BucketingModule made: it is not bound at its batches' "
        "shape {shape} sharing the default bucket's parameters. fit (or forward) makes each "
        "bucket from sym_gen the first time a batch of its key comes."
    )
    fix_says = N_("a new BucketingModule, trained by fit on train_iter")


class OtherNetwork(CheckFailed):
    says = N_(
        "The buckets' network holds other layers than the exercise asks for ({found} parameter "
        "arrays, of other shapes, against {wanted}): sym_gen gives the same network for every "
        "key."
    )
    fix_says = N_("return from sym_gen, for every key, the network the check was given")


class BucketsUndertrained(CheckFailed):
    says = N_(
        "The buckets made {updates} updates together, fewer than {epochs} epochs of the "
        "iterator's {batches} batches: fit trains the buckets one batch of its key at a time, "
        "every key each epoch."
    )
    fix_code = "bmod.fit(train_iter, num_epoch={epochs}, ...)"


class BucketsMissing(CheckFailed):
    says = N_(
        "The module has buckets for {bound}, not for every key of the data ({keys}): a bucket "
        "is made the first time a batch of its key goes through, so train it on the data."
    )


class NotRemadeForReplay(CheckFailed):
    says = N_(
        "The check makes a new {kind}() to replay it on histories of its own, and that failed: "
        "{error}. The exercise's callback takes no arguments."
    )


class ReplayFailed(CheckFailed):
    says = N_(
        "Replayed by the check on validation accuracies of its own, the callback raised {error}. "
        "The replay gives each hook run.history (the values so far) and run.epoch, as fit does; "
        "it has no module or metrics to read: the best epoch is found from run.history."
    )


class FunctionFailed(CheckFailed):
    says = N_(
        "The check called {name}(outputs, labels) on scores of its own, and it raised {error}: "
        "it takes the scores (an NDArray, as predict returns) and the labels (a NumPy array), and "
        "returns the fraction as a number."
    )


class ReplayMissesBest(CheckFailed):
    says = N_(
        "Replayed by the check on validation accuracies {values}, the callback kept "
        "best_epoch={epoch} and best_accuracy={accuracy}; the best is {best} in epoch {right}. "
        "It must compare each epoch's validation accuracy with the best so far and keep the "
        "larger (a NaN is never the best)."
    )


class FunctionUsesAMetric(CheckFailed):
    says = N_(
        "{name} reads {found}: MXNet's metrics count for it. The exercise is to count by hand "
        "the rows whose largest score is the label (argmax, compare, mean)."
    )


class FunctionMiscounts(CheckFailed):
    says = N_(
        "On {rows} rows of scores the check made, {name} gave {got}; the fraction whose largest "
        "score is the true class is {expected:.4f}. It must count from the scores and labels it "
        "is given."
    )


ACTIVATIONS = ("Activation", "LeakyReLU", "relu", "sigmoid", "tanh", "softsign")
LAYERS = ("FullyConnected", "Convolution")  # what reads a hidden layer's (dropped) values


def trained_by_hand(mod, train_iter, epochs: int) -> None:
    """The module was trained by a loop of forward, backward and update (not by fit): at least
    ``epochs`` epochs of the iterator's batches were updated."""
    # imported here: mxlearn.checks is imported by mxlearn before its training package
    from .training.recording import batches_per_epoch

    if not hasattr(mod, "updates"):  # MXNet's module does not count them
        raise NotAnMxlearnModule(kind=type(mod).__name__)
    counted = mod.updates  # since the weights were last made or given; another module's: none
    updates = counted.by_hand
    batches = batches_per_epoch(train_iter)
    expected = epochs * batches if batches else 1
    if counted.by_fit:
        raise TrainedByFit(updates=counted.by_fit)
    if counted.started_from == WeightsFrom.GIVEN:
        raise StartedFromGivenWeights()
    if updates < expected:
        raise TooFewUpdates(updates=updates, epochs=epochs, batches=batches, expected=expected)
    _ok(N_("{updates} updates by hand, forward, backward and update per batch."), updates=updates)


def started_from_checkpoint(mod, prefix: str, epoch: int) -> None:
    """The fit that began at epoch ``epoch`` started from checkpoint ``epoch``'s weights."""
    history = history_of(mod, fitted=False)
    starts = history.starts if history is not None else {}
    if epoch not in starts:
        raise NoRunFromEpoch(epoch=epoch, begins=sorted(starts))
    _, arg_params, aux_params = files.load_checkpoint(prefix, epoch)
    if starts[epoch] != weights_digest(arg_params, aux_params):
        fresh = epoch in history.fresh_starts
        start = say("fresh weights (the initializer's)") if fresh else say("other weights")
        raise StartedFromOtherWeights(epoch=epoch, prefix=prefix, start=start)
    _ok(N_("training went on from the weights of checkpoint {epoch}."), epoch=epoch)


def holds_layers(mod, op: str, count: int, **settings) -> None:
    """The network holds ``count`` layers of operator ``op`` (with ``settings``, e.g. p=0.5),
    each right after a hidden activation."""
    nodes = json.loads(mod.symbol.tojson())["nodes"]
    readers: dict[int, list[str]] = {}  # node index -> the operators that read its output
    for node in nodes:
        for source, *_ in node["inputs"]:
            readers.setdefault(source, []).append(node["op"])

    def fits(index: int) -> bool:
        node = nodes[index]
        attrs = node.get("attrs", {})
        if any(not _same(attrs.get(k), v) for k, v in settings.items()):
            return False
        read = any(reader in LAYERS for reader in readers.get(index, []))
        return read and nodes[node["inputs"][0][0]]["op"] in ACTIVATIONS

    indices = [i for i, n in enumerate(nodes) if n["op"] == op]
    layers = [nodes[i] for i in indices]
    if sum(map(fits, indices)) != count:
        after = [
            say("{layer} after {input}", layer=n["name"], input=nodes[n["inputs"][0][0]]["name"])
            for n in layers
        ]
        where = ", ".join(after) or say("none")
        shown = ", ".join(f"{k}={v}" for k, v in settings.items())
        raise OtherLayers(found=len(layers), op=op, settings=shown, count=count, where=where)
    _ok(N_("{count} {op} layers, each after a hidden activation."), count=count, op=op)


def cache_kept(mod, cache_size: int) -> None:
    """A MutableModule that keeps at most ``cache_size`` executor groups of other shapes."""
    if not hasattr(mod, "cache_size"):
        raise NotAMutableModule(kind=type(mod).__name__)
    if mod.cache_size != cache_size:
        raise OtherCacheSize(got=mod.cache_size, cache_size=cache_size)
    _ok(N_("a MutableModule that keeps up to {count} other shapes."), count=cache_size)


def buckets_bound(bmod, data, network, epochs: int) -> None:
    """MXNet's BucketingModule of ``network``, its default bucket the largest of ``data``'s
    (bound first: the others borrow its memory), a bucket bound at each key's batch shape that
    shares the default's parameters, trained ``epochs`` epochs of ``data``."""
    if not isinstance(bmod, mx.mod.BucketingModule):
        raise NotABucketingModule(kind=type(bmod).__name__)
    if not bmod.binded:
        raise BucketsMissing(bound=[], keys=[data.default_bucket_key])
    # MXNet has no public accessor for a BucketingModule's key, buckets and optimizer
    default, largest = bmod._default_bucket_key, data.default_bucket_key
    if default != largest:
        raise DefaultBucketNotLargest(given=default, largest=largest)
    seen = [(b.bucket_key, [tuple(a.shape) for a in b.data]) for b in _reset(data)]
    shapes, batches = dict(seen), len(seen)  # each key -> its batches' data shapes
    first = bmod._buckets.get(default)
    missing = sorted(set(shapes) - set(bmod._buckets))
    if missing:
        raise BucketsMissing(bound=sorted(bmod._buckets), keys=sorted(shapes))
    for key, shape in sorted(shapes.items()):
        module = bmod._buckets[key]
        if _data_shapes(module) != shape or module._arg_params is not first._arg_params:
            raise BucketNotMXNets(key=key, shape=shape[0])
    _same_network(first, network)
    updates = getattr(getattr(first, "_optimizer", None), "num_update", 0)
    if updates < epochs * batches:
        raise BucketsUndertrained(updates=updates, epochs=epochs, batches=batches)
    _ok(N_("a BucketingModule with {count} buckets, its default the largest."), count=len(shapes))


def _reset(data):
    data.reset()
    yield from data
    data.reset()


def _data_shapes(module) -> list | None:
    if not isinstance(module, mx.mod.Module) or not module.binded:
        return None
    return [tuple(d.shape) for d in module.data_shapes]


def _same_network(module, network) -> None:
    """``module``'s network holds the layers of ``network``: the same parameter shapes at the
    module's data shapes (names may differ: a network written by hand is the same network)."""
    inputs = {d.name: d.shape for d in module.data_shapes}

    def parameters(symbol) -> list:
        known = {k: v for k, v in inputs.items() if k in symbol.list_arguments()}
        shapes, _, aux = symbol.infer_shape_partial(**known)
        names = symbol.list_arguments()
        labels = set(module.label_names or ())
        weights = [s for n, s in zip(names, shapes) if n not in inputs and n not in labels]
        return sorted(map(tuple, weights + aux))

    found, wanted = parameters(module.symbol), parameters(network)
    if found != wanted:
        raise OtherNetwork(found=len(found), wanted=len(wanted))


def _same(written, wanted) -> bool:
    if written is None:
        return False
    try:
        return math.isclose(float(written), float(wanted))
    except (TypeError, ValueError):
        return str(written) == str(wanted)


def _replays() -> tuple:
    """Validation accuracies a callback is replayed on: the best not last, a tie, a NaN, the
    best last. A function, not a constant: the grader's seal compares code, and a NaN is no
    literal it could compare."""
    return (
        [0.52, 0.71, 0.64, 0.69],
        [0.6, 0.74, 0.74, 0.7],
        [0.55, math.nan, 0.68, 0.61],
        [0.3, 0.5, 0.6, 0.8],
    )


def callback_replayed(tracker) -> None:
    """A new callback of ``tracker``'s class, given fit's hooks in fit's order on histories the
    check builds, keeps each one's best validation accuracy and its epoch."""
    if not overrides_a_hook(tracker):
        raise TrackerHooksNothing(kind=type(tracker).__name__)
    for values in _replays():
        epoch, accuracy = _replay(type(tracker), values)
        finite = [v for v in values if not math.isnan(v)]
        right = [e for e, v in enumerate(values) if v == max(finite)]
        if epoch not in right or accuracy is None or not np.isclose(float(accuracy), max(finite)):
            shown = [round(v, 2) for v in values]
            facts = dict(epoch=epoch, accuracy=accuracy, best=max(finite), right=right[0])
            raise ReplayMissesBest(values=shown, **facts)
    _ok(N_("replayed on {count} made-up runs, the callback kept each best epoch."), count=4)


def _replay(kind: type, values: list) -> tuple:
    from .training.callback import RunContext

    try:
        tracker = kind()
    except Exception as error:  # the student's constructor: whatever it raises is the answer
        problem = f"{type(error).__name__}: {error}"
        raise NotRemadeForReplay(kind=kind.__name__, error=problem) from None
    history = MetricHistory()
    recorder = SimpleNamespace(history=history)
    run = RunContext(None, recorder, 0, len(values), has_validation=True)
    try:
        _hooks(tracker, run, history, values)
    except Exception as error:  # the student's hooks: whatever they raise is their answer's
        raise ReplayFailed(error=f"{type(error).__name__}: {error}") from None
    return getattr(tracker, "best_epoch", None), getattr(tracker, "best_accuracy", None)


def _hooks(tracker, run, history: MetricHistory, values: list) -> None:
    """fit's hooks in fit's order, each epoch's values recorded where fit records them."""
    tracker.on_train_begin(run)
    for epoch, value in enumerate(values):
        run.epoch = epoch
        tracker.on_batch_end(run, 0)
        # training accuracy rises every epoch: a callback that reads it keeps the last epoch
        _record(history, "train", epoch, 0.8 + epoch / 100)
        tracker.on_epoch_end(run, epoch)
        _record(history, "validation", epoch, value)
        tracker.on_validation_end(run, epoch)
        tracker.on_epoch_done(run, epoch)
    tracker.on_train_end(run)


def _record(history: MetricHistory, phase: str, epoch: int, value: float) -> None:
    where = dict(epoch=epoch, batch=0, samples=(epoch + 1) * 100, time=float(epoch))
    history.record("accuracy", phase, "epoch", **where, value=value)


def counts_by_hand(function) -> None:
    """``function(outputs, labels)`` gives the fraction of rows whose largest score (in
    ``outputs``, an NDArray as predict returns) is the label: called on arrays the check makes."""
    name = getattr(function, "__name__", None) or say("the function")
    found = sorted(_names_read(function) & METRIC_NAMES)
    if found:
        raise FunctionUsesAMetric(name=name, found=", ".join(found))
    pick = np.random.RandomState(7)
    for rows in (40, 13):
        scores = pick.rand(rows, 26).astype("float32")
        labels = pick.randint(0, 26, rows).astype("float32")
        labels[: rows // 2] = scores[: rows // 2].argmax(axis=1)  # about half right
        expected = float(np.mean(scores.argmax(axis=1) == labels))
        try:
            got = function(mx.nd.array(scores), labels)
        except Exception as error:  # the student's function: its error is the answer's
            raise FunctionFailed(name=name, error=f"{type(error).__name__}: {error}") from None
        if not np.isclose(_number(got), expected, rtol=0, atol=1e-6):
            raise FunctionMiscounts(rows=rows, name=name, got=got, expected=expected)
    _ok(N_("it counts right on scores it had never seen."))


# What a function that lets MXNet (or mxlearn) count reads: a metric, or a module's score.
METRIC_NAMES = {"metric", "Accuracy", "TopKAccuracy", "EvalMetric", "create_metric", "score"}


def _names_read(function, depth: int = 3) -> set[str]:
    """The global and attribute names ``function``'s code reads, with those of the functions
    and lambdas it defines and of the notebook's functions it calls (``depth`` deep)."""
    code = getattr(function, "__code__", None)
    if code is None or depth == 0:
        return set()
    codes, names = [code], set()
    while codes:
        current = codes.pop()
        names.update(current.co_names)
        codes.extend(c for c in current.co_consts if hasattr(c, "co_names"))
    called = getattr(function, "__globals__", {})
    for name in list(names):
        helper = called.get(name)
        if helper is not function and callable(helper) and hasattr(helper, "__code__"):
            if getattr(helper, "__module__", None) == getattr(function, "__module__", None):
                names |= _names_read(helper, depth - 1)
    return names


def _number(value) -> float:
    """A number as a student's function may return one (a float, a NumPy or a one-value
    NDArray); NaN for anything else, which no count equals."""
    if isinstance(value, mx.nd.NDArray):
        value = value.asnumpy()
    try:
        values = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return math.nan
    return (
        float(values.reshape(-1)[0])
        if values.size == 1 and not isinstance(value, str)
        else math.nan
    )
