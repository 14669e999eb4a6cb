"""bind's and set_params' checks: input names, label shapes, and parameters that must fit."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import batch_axes, network
from .._compat import mx
from ..batch_axes import batch_rows
from ..errors import N_, InputError, LifecycleError
from ..language import say
from . import rows
from .arguments import NoLabelsToScore, shapes_text
from .batches import explain_bad_batch
from .lifecycle import BIND_CALL
from .rows import example_shape


class AlreadyBound(LifecycleError):
    says = N_(
        "mod.bind(): the module is already bound, for data {bound_data} {bound_mode}; this call "
        "asks for data {asked_data} {asked_mode}. MXNet would silently keep the old binding."
    )
    fix_says = N_(
        "mod.bind(..., force_rebind=True) or mod.fit(..., force_rebind=True)  (parameters are kept "
        "when their shapes still fit)"
    )


class InputGradsNeedTraining(InputError):
    says = N_(
        "mod.bind(inputs_need_grad=True, for_training=False): input gradients need a module bound "
        "for training."
    )
    fix_code = "mod.bind(..., for_training=True, inputs_need_grad=True)"


class NoLabelShapes(InputError):
    says = N_(
        "mod.bind(for_training=True) without label_shapes: the network's {expects}, and without "
        "labels it would train against zeros."
    )
    fix_code = BIND_CALL


class DataNamesDiffer(InputError):
    says = N_("mod.bind(): the data is named {given}, but the module reads {names} ({inputs}).")
    fix_says = N_("name the iterator's data after the network's input: {call}")


class LabelNamesDiffer(InputError):
    says = N_("mod.bind(): the labels are named {given}, but {expects}.")
    fix_says = N_("name the iterator's label after the network's: {call}")


class LabelNamesDifferFromModule(LabelNamesDiffer):
    """The network has no loss layer to describe: the module's label names are named."""

    says = N_("mod.bind(): the labels are named {given}, but {names}.")


class LabelsOneColumnTooMany(InputError):
    says = N_(
        "{called}: labels shaped {got}, one column too many; {who} expects '{name}' shaped {want}."
    )
    fix_says = N_("flatten the labels before making the iterator: y = y.ravel()")


class LabelsOneAxisTooMany(LabelsOneColumnTooMany):
    """A label of several axes, with a trailing axis of 1 (ravel would flatten them all)."""

    fix_says = N_(
        "drop the labels' last axis before making the iterator, to the shape {who} infers "
        "from the data, {want}: y = y.squeeze(axis=-1)"
    )


class LabelLayoutDiffers(InputError):
    says = N_(
        "{called}: '{name}' {got} has the shape {who} infers for it from the data, with the "
        "batch on axis {axis}; without a layout MXNet takes axis {declared} for the batch, and "
        "slices that axis over the devices."
    )
    fix_says = N_(
        "give the label its layout, in label_shapes or the iterator's provide_label: "
        "mx.io.DataDesc('{name}', {got}, layout='{layout}')"
    )


class OneHotLabels(InputError):
    # rows of another width than the classes (a row as wide as the output is a probability per
    # class, which SoftmaxOutput takes), or fed to a module bound for class numbers
    says = N_(
        "{called}: labels shaped {got}: one-hot rows ({width} numbers per example); {who} expects "
        "'{name}' shaped {want}."
    )
    fix_says = N_("turn one-hot rows into class numbers: y = y.argmax(axis=1)")


class ClassNumbersForProbabilities(InputError):
    says = N_(
        "{called}: labels shaped {got}: a class number per example; {who} reads '{name}' as a "
        "probability per class here, shaped {want}, as the training labels were."
    )
    fix_code = "y = np.eye({classes}, dtype='float32')[y.astype(int)]"


class LabelShapeDiffers(InputError):
    says = N_("{called}: labels shaped {got}; {who} expects '{name}' shaped {want}.")
    fix_says = N_("give '{name}' the shape {who} infers for it from the data: {want}")


class TargetsShapeDiffer(LabelShapeDiffers):
    fix_says = N_("give each row one target per output value: labels shaped {want}")


class SharedModuleNotReady(LifecycleError):
    says = N_("mod.bind(shared_module=...) needs a Module that is bound and has parameters.")
    fix_says = N_(
        "shared.bind(...); shared.init_params(); then mod.bind(..., shared_module=shared)"
    )


class InputDoesNotFit(InputError):
    says = N_("{called}: input '{name}' shaped {shape} does not fit the parameters.")
    fix_says = N_(
        "feed data with the columns the model was built for; a different input needs a new module: "
        "mod = mxlearn.Module(net, ...)"
    )


class InputShapeChanged(InputDoesNotFit):
    says = N_("{called}: input '{name}' shaped {shape} does not fit the parameters made for {old}.")


class FeaturesDifferFromBinding(InputDoesNotFit):
    says = N_(
        "{called}: input has {features} features; the module was bound for {bound} ('{name}' is "
        "{have}; these inputs would need {needed})."
    )


class FeaturesDifferFromParams(InputDoesNotFit):
    says = N_(
        "{called}: input has {features} features; the parameters were made for {made} ('{name}' is "
        "{have}; these inputs would need {needed})."
    )


class ParamsFromOtherLayers(InputError):
    says = N_(
        "{called}: the parameters do not fit this network's layers ({shown}): they come from a "
        "network with other layer sizes than this symbol."
    )
    fix_says = N_(
        "load the symbol and the parameters saved together (the same prefix and epoch of one "
        "training run), or build the network with the sizes the parameters have"
    )


class ParamsMissing(InputError):
    says = N_(
        "The loaded parameters lack {missing}, which this network needs: those layers would start "
        "as zeros. The parameter file belongs to another network than the symbol it was loaded "
        "with."
    )
    fix_says = N_(
        "load the symbol and the parameters saved together (the same prefix and epoch of one "
        "training run)"
    )


class MissingLeftAsZeros(InputError):
    says = N_(
        "mod.set_params(allow_missing=True) would leave {missing} as they are, and this module's "
        "parameters were never initialized: they would stay zeros."
    )
    fix_code = (
        "mod.init_params(initializer=mx.init.Xavier(), arg_params=arg_params, "
        "aux_params=aux_params, allow_missing=True, force_init=True)"
    )


class ParamsDoNotMatch(InputError):
    says = N_("{called}: the given parameters do not match this network: {problems}.")
    fix_says = N_(
        "load parameters saved from the same network (same layers and input width); to fill the "
        "missing ones from an initializer: mod.init_params(initializer=mx.init.Xavier(), "
        "arg_params=arg_params, aux_params=aux_params, allow_missing=True, force_init=True)"
    )


class LabelTakenForAParameter(InputError):
    """Module(net, label_names=None): MXNet takes the loss layer's label for a parameter."""


class LabelNotInGivenParams(LabelTakenForAParameter):
    says = N_(
        "{called}: '{name}' is the label {layer} reads; with label_names=None MXNet takes it for "
        "a parameter, and the given values do not hold it. For a module that only predicts, "
        "MXNet's idiom leaves it out: the label is never read to predict."
    )
    fix_code = "mod.set_params(arg_params, aux_params, allow_missing=True)"


class LabelNotInitializable(LabelTakenForAParameter):
    says = N_(
        "mod.init_params(): '{name}' is the label {layer} reads; with label_names=None MXNet "
        "takes it for a parameter, and no initializer makes a label."
    )
    fix_says = N_(
        "to start from an initializer, keep the label: mxlearn.Module(net) reads it as the "
        "network does; a module that only predicts takes trained weights: "
        "mod.set_params(arg_params, aux_params, allow_missing=True)"
    )


class LabelParamKeepsItsRows(LabelTakenForAParameter):
    says = N_(
        "{called}: '{name}' is the label {layer} reads; with label_names=None MXNet takes it for "
        "a parameter of the bound batch's {bound} rows, and cannot reshape it for a batch of "
        '{rows} (MXNet: "Shape of unspecified array arg changed").'
    )
    fix_says = N_(
        "to predict at any batch size, keep the label and bind without it: mxlearn.Module(net), "
        "then mod.bind(data_shapes=..., for_training=False) and mod.set_params(arg_params, "
        "aux_params)"
    )


class LabelTakenForTraining(LabelTakenForAParameter):
    says = N_(
        "mod.fit(): '{name}' is the label {layer} reads; with label_names=None MXNet takes it "
        "for a parameter, so training would never see the iterator's labels."
    )
    fix_says = N_(
        "train a module that reads the label: mxlearn.Module(net); it also predicts at any "
        "batch size"
    )


class ModuleReadsNoLabels(NoLabelsToScore):
    says = N_(
        "mod.score(): this module reads no labels (label_names=None: MXNet takes '{name}' for a "
        "parameter), so its predictions cannot be compared with the iterator's."
    )
    fix_says = N_(
        "score with a module that reads the label: mxlearn.Module(net), mod.bind(val_iter."
        "provide_data, val_iter.provide_label, for_training=False), mod.set_params(arg_params, "
        "aux_params)"
    )


class BoundWithoutLabels(NoLabelsToScore):
    says = N_(
        "{called}: the module is bound without label shapes (mod.bind(data_shapes=..., "
        "for_training=False)): MXNet has no labels to slice over its devices and compare."
    )
    fix_says = None
    fix_code = (
        "mod.bind(val_iter.provide_data, val_iter.provide_label, for_training=False, "
        "force_rebind=True)"
    )


@dataclass(frozen=True)
class Binding:
    """What a bind call asks for (or what a module is bound with)."""

    data: list  # DataDesc
    label: list | None
    for_training: bool
    inputs_need_grad: bool
    grad_req: object

    def key(self):
        # Batch size alone may differ: MXNet's forward reshapes for a new batch size by itself.
        def shapes(descs):
            return None if descs is None else sorted((d.name, example_shape(d)) for d in descs)

        return (shapes(self.data), self.for_training, self.inputs_need_grad, self.grad_req)

    def labels_differ(self, other: Binding) -> bool:
        if self.label is None or other.label is None:
            return False
        return Binding(self.label, None, 0, 0, 0).key() != Binding(other.label, None, 0, 0, 0).key()


def _mode(training: bool) -> str:
    return say("for training") if training else say("for prediction")


def check_same_binding(now: Binding, asked: Binding, state: str) -> None:
    """A second bind without force_rebind: MXNet would silently keep the old binding."""
    if now.key() == asked.key() and not asked.labels_differ(now):
        return
    bound = dict(bound_data=shapes_text(now.data), bound_mode=_mode(now.for_training))
    asked_for = dict(asked_data=shapes_text(asked.data), asked_mode=_mode(asked.for_training))
    raise AlreadyBound(**bound, **asked_for, state=state)


def new_shapes(batch, data_shapes, label_shapes, data_names) -> tuple | None:
    """Per batch, attribute reads only: the shapes MXNet's forward would reshape to (the bound
    names and layouts, the batch's sizes) when any differs from the bound ones, else None."""
    data = getattr(batch, "data", None)
    if not isinstance(data, (list, tuple)) or len(data) != len(data_shapes):
        explain_bad_batch(batch, data_shapes, data_names)
    if not all(isinstance(a, mx.nd.NDArray) for a in data):
        explain_bad_batch(batch, data_shapes, data_names)
    labels = getattr(batch, "label", None) if label_shapes else None  # read only if bound
    if not isinstance(labels, (list, tuple)) or not all(
        isinstance(a, mx.nd.NDArray) for a in labels
    ):
        labels = []  # not MXNet's to reshape to: the value checks explain them
    bound = [tuple(d.shape) for d in [*data_shapes, *(label_shapes or [])[: len(labels)]]]
    if [a.shape for a in [*data, *labels]] == bound:
        return None

    def descs(arrays, bound):
        return [mx.io.DataDesc(d.name, a.shape, a.dtype, d.layout) for d, a in zip(bound, arrays)]

    return descs(data, data_shapes), descs(labels, label_shapes) if labels else None


def check_request(asked: Binding) -> None:
    if asked.inputs_need_grad and not asked.for_training:
        raise InputGradsNeedTraining()


def check_labels_given(mod, asked: Binding) -> None:
    if asked.for_training and asked.label is None and mod.label_names:
        expects = "; ".join(li.describe() for li in mod.label_inputs.values())
        raise NoLabelShapes(expects=expects)


def check_input_names(mod, data_descs, label_descs) -> None:
    """The names given to bind are those the module (``mod``) reads."""
    data_names, label_names = mod.data_names, mod.label_names
    label0 = label_names[0] if label_names else "softmax_label"
    iter_fix = (
        f"mx.io.NDArrayIter(X, y, batch_size=32, data_name='{data_names[0]}', "
        f"label_name='{label0}')"
        if data_names
        else None
    )
    given = [d.name for d in data_descs]
    if sorted(given) != sorted(data_names):
        inputs = network.describe_inputs(mod.symbol)
        raise DataNamesDiffer(given=given, names=list(data_names), inputs=inputs, call=iter_fix)
    if label_descs is None or not label_names:
        return
    given = [d.name for d in label_descs]
    if sorted(given) != sorted(label_names):
        expects = "; ".join(li.describe() for li in mod.label_inputs.values())
        refused = LabelNamesDiffer if expects else LabelNamesDifferFromModule
        raise refused(given=given, expects=expects, names=list(label_names), call=iter_fix)


def check_batch_shapes(
    symbol, data_descs, label_descs, label_names, label_inputs, work_load, called
) -> None:
    """New shapes, from bind, reshape or a batch: labels on their batch axes, shapes MXNet can
    slice over the devices, labels the network reads."""
    if label_descs is not None:
        _check_label_axes(symbol, data_descs, label_descs, label_inputs, len(work_load), called)
    rows.check_slicable(data_descs, label_descs, work_load, called)
    if label_descs is not None:
        check_label_shapes(symbol, data_descs, label_descs, label_names, label_inputs, called)


def _check_label_axes(symbol, data_descs, label_descs, label_inputs, devices, called) -> None:
    """A label of several axes whose batch axis is not its layout's, or whose rows differ from
    the data's: told its layout, or the shape the network infers (not only its rows)."""
    rows = batch_rows(data_descs[0])
    several = [d for d in label_descs if len(d.shape) > 1 or batch_rows(d) != rows]
    if not several or not [d for d in several if devices > 1 or batch_rows(d) != rows]:
        return  # as bound: MXNet slices them by their layouts, and the rows agree
    found = batch_axes.inferred_labels(symbol, data_descs, [d.name for d in several])
    for desc in several:
        label, got = found.get(desc.name), tuple(desc.shape)
        if label is None or len(label.shape) < 2:
            continue  # a label of one axis: only its rows can differ (RowsDiffer says so)
        declared = mx.io.DataDesc.get_batch_axis(desc.layout)
        if got == label.shape and declared != label.axis:
            facts = dict(called=called, name=desc.name, got=got, who=_reader(label_inputs, desc))
            layout = dict(axis=label.axis, declared=declared, layout=label.layout())
            raise LabelLayoutDiffers(**facts, **layout)
        if got != label.shape and batch_rows(desc) != rows:
            # the rows alone would not be enough: the network reads a label of several axes
            check_label_shapes(symbol, data_descs, [desc], [desc.name], label_inputs, called)


def _reader(label_inputs, desc) -> str:
    layer = label_inputs.get(desc.name)
    return f"{layer.op} '{layer.layer}'" if layer else say("the network")


def check_label_shapes(
    symbol,
    data_descs,
    label_descs,
    label_names,
    label_inputs,
    called: str = "mod.bind()",
) -> None:
    """Labels shaped as the network reads them: the shape it infers from the data, or another
    its layers take (SoftmaxOutput(multi_output=True) reads (N, 1, T) as (N, T), and a label
    shaped like its output as a probability per class)."""
    data = {d.name: tuple(d.shape) for d in data_descs}
    expected = network.infer_label_shapes(symbol, data, label_names)
    for desc in label_descs:
        want, got = expected.get(desc.name), tuple(desc.shape)
        if want is None or want == got:
            continue
        layer = label_inputs.get(desc.name)
        facts = dict(called=called, got=got, who=_reader(label_inputs, desc), name=desc.name)
        facts["want"] = want
        if layer and layer.op in network.REGRESSION_OUTPUTS:
            # MXNet's rule (regression_output-inl.h): a target per output value, in rows
            if got[:1] == want[:1] and np.prod(got) == np.prod(want):
                continue
            raise TargetsShapeDiffer(**facts)
        one_row_each = len(got) == 2 and got[0] == want[0] and len(want) == 1
        read = network.infer_param_shapes(symbol, [], {**data, desc.name: got}) is not None
        if read and (not one_row_each or _shaped_as_output(symbol, data, layer, got)):
            continue
        if got == want + (1,):
            raise (LabelsOneColumnTooMany if len(want) == 1 else LabelsOneAxisTooMany)(**facts)
        if one_row_each:
            raise OneHotLabels(width=got[1], **facts)
        raise LabelShapeDiffers(**facts)


def check_labels_as_trained(label_inputs: dict, given, trained, called: str) -> None:
    """A classifier's labels of the kind it was bound or trained with (``trained``: those
    labels' descriptions): class numbers and probabilities bind apart, and MXNet fails deep in
    its engine when one is fed to a module bound for the other."""
    rows = {d.name: tuple(d.shape[1:]) for d in trained or ()}
    for desc in given or ():
        layer, want, got = label_inputs.get(desc.name), rows.get(desc.name), tuple(desc.shape)
        if layer is None or not layer.is_classification or want is None or got[1:] == want:
            continue
        who = _reader(label_inputs, desc)
        facts = dict(called=called, got=got, who=who, name=desc.name, want=got[:1] + want)
        if len(got) == 2 and not want:
            raise OneHotLabels(width=got[1], **facts)
        if len(got) == 1 and len(want) == 1:
            raise ClassNumbersForProbabilities(classes=want[0], **facts)


def _shaped_as_output(symbol, data: dict, layer, got: tuple) -> bool:
    """A SoftmaxOutput's label shaped like its output: a probability per class (MXNet takes
    the gradient as output minus label: label smoothing, soft targets)."""
    if layer is None:
        return False
    try:
        _, shapes, _ = symbol.infer_shape_partial(**data)
    except mx.base.MXNetError:
        return False
    outputs = dict(zip(symbol.list_outputs(), shapes or []))
    return layer.name in network.probability_labels([layer], outputs, [(layer.name, got)])


def check_shared_module(shared_module) -> None:
    if shared_module is not None and not (
        isinstance(shared_module, mx.mod.Module)
        and shared_module.binded
        and shared_module.params_initialized
    ):
        raise SharedModuleNotReady()


def _unfit_input(called: str, desc, old, have: dict, needed: dict | None, wrong: list):
    """Why parameters made for other inputs do not fit ``desc``, the first new input: the
    kind, and its fields."""
    if len(desc.shape) == 2 and needed is not None:
        w = wrong[0]
        facts = dict(called=called, features=desc.shape[1], name=w, have=have[w], needed=needed[w])
        if old:  # a layer sees an image's values in one row
            return FeaturesDifferFromBinding, dict(bound=int(np.prod(old[1:])), **facts)
        return FeaturesDifferFromParams, dict(made=have[w][-1], **facts)
    facts = dict(called=called, name=desc.name, shape=tuple(desc.shape))
    if old is not None:
        return InputShapeChanged, dict(old=tuple(old), **facts)
    return InputDoesNotFit, facts


def check_params_fit(
    symbol,
    param_shapes: dict,
    data_descs,
    bound_data,
    called: str,
    state: str,
    labels=(),
    rebinding: bool = False,
) -> None:
    """The parameters fit inputs of these shapes (``labels``: the label inputs taken for
    parameters, which hold each device's slice of the bound batch: MXNet cannot reshape them,
    and a new binding, ``rebinding``, makes them anew)."""
    bound, rows = (batch_rows(d[0]) if d else None for d in (bound_data, data_descs))
    for label in labels.values() if labels and not rebinding else ():
        if bound is not None and rows != bound:  # then every device's slice is the same
            facts = dict(called=called, name=label.name, layer=f"{label.op} '{label.layer}'")
            raise LabelParamKeepsItsRows(**facts, bound=bound, rows=rows, state=state)
    have = {n: shape for n, shape in param_shapes.items() if n not in labels}
    needed = network.infer_param_shapes(symbol, list(have), {d.name: d.shape for d in data_descs})
    wrong = [n for n in have if needed is None or needed.get(n, have[n]) != have[n]]
    if not wrong:
        return
    desc, old = data_descs[0], bound_data[0].shape if bound_data else None
    # a layer's size (an array's first axis) that differs whatever the input: another network
    resized = [n for n in wrong if needed is not None and needed[n][:1] != have[n][:1]]
    if resized:
        shown = say("; ").join(
            say(
                "'{name}' is {have} where this network needs {needed}",
                name=n,
                have=have[n],
                needed=needed[n],
            )
            for n in resized
        )
        raise ParamsFromOtherLayers(called=called, shown=shown, state=state)
    refused, facts = _unfit_input(called, desc, old, have, needed, wrong)
    raise refused(**facts, state=state)


def check_complete_params(arg_params, aux_params, param_names, aux_names) -> None:
    """Loaded parameters must hold every array the network has: a missing one would start as
    zeros (every prediction 1/num_classes for a missing last layer)."""
    missing = [n for n in param_names if n not in arg_params]
    missing += [n for n in aux_names if n not in (aux_params or {})]
    if missing:
        raise ParamsMissing(missing=missing)


def refuse_missing_left_as_zeros(arg_params, aux_params, own_args: dict, labels=()) -> None:
    """set_params(allow_missing=True) keeps the missing arrays as they are: on a module whose
    parameters were never initialized, that is zeros (a label taken for a parameter, never
    read to predict, may stay so)."""
    missing = sorted(set(own_args) - set(arg_params) - set(labels))
    if missing:
        raise MissingLeftAsZeros(missing=missing)


def _missing(auxiliary: bool, name: str, shape: tuple) -> str:
    if auxiliary:
        return say("auxiliary state '{name}' {shape} is missing", name=name, shape=shape)
    return say("argument '{name}' {shape} is missing", name=name, shape=shape)


def check_given_params(
    arg_params,
    aux_params,
    own_args: dict,
    own_auxs: dict,
    allow_missing: bool,
    called: str,
    state: str,
    labels: dict | None = None,
) -> None:
    """Values given to init_params or set_params must be this network's, shape for shape;
    ``labels`` are the loss layers' labels MXNet takes for parameters (label_names=None)."""
    problems, extra, labels = [], [], labels or {}
    for auxiliary, given, own in ((False, arg_params, own_args), (True, aux_params, own_auxs)):
        given = given or {}
        extra += [f"'{n}' {tuple(given[n].shape)}" for n in sorted(set(given) - set(own))]
        for name, arr in sorted(own.items()):
            if name not in given and name in labels:
                continue  # said below, if nothing else is wrong
            if name not in given:
                if not allow_missing:
                    problems.append(_missing(auxiliary, name, tuple(arr.shape)))
            elif tuple(given[name].shape) != tuple(arr.shape):
                problems.append(
                    say(
                        "'{name}' is {given} in the given values but {own} in this network",
                        name=name,
                        given=tuple(given[name].shape),
                        own=tuple(arr.shape),
                    )
                )
    if problems:
        # extra values alone are allowed (MXNet ignores them); beside other problems they
        # show that the values come from another network
        if extra:
            problems.append(say("not in this network: {extra}", extra=", ".join(extra)))
        said = say("; ").join(problems)
        raise ParamsDoNotMatch(called=called, problems=said, state=state)
    left_out = [n for n in labels if n not in (arg_params or {})]
    if left_out and not allow_missing:
        label = labels[left_out[0]]
        layer = f"{label.op} '{label.layer}'"
        raise LabelNotInGivenParams(called=called, name=label.name, layer=layer, state=state)
