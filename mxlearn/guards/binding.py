"""bind's and set_params' checks: input names, label shapes, and parameters that must fit."""

from __future__ import annotations

from dataclasses import dataclass

from .. import network
from .._compat import mx
from ..errors import InputError, LifecycleError
from .arguments import shapes_text


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
            return None if descs is None else sorted((d.name, tuple(d.shape[1:])) for d in descs)

        return (shapes(self.data), self.for_training, self.inputs_need_grad, self.grad_req)

    def labels_differ(self, other: Binding) -> bool:
        if self.label is None or other.label is None:
            return False
        return Binding(self.label, None, 0, 0, 0).key() != Binding(other.label, None, 0, 0, 0).key()


def _mode(training: bool) -> str:
    return "for training" if training else "for prediction"


def check_same_binding(now: Binding, asked: Binding, state: str) -> None:
    """A second bind without force_rebind: MXNet would silently keep the old binding."""
    if now.key() == asked.key() and not asked.labels_differ(now):
        return
    raise LifecycleError(
        f"mod.bind(): the module is already bound, for data {shapes_text(now.data)} "
        f"{_mode(now.for_training)}; this call asks for data {shapes_text(asked.data)} "
        f"{_mode(asked.for_training)}. MXNet would silently keep the old binding.",
        fix="mod.bind(..., force_rebind=True) or mod.fit(..., force_rebind=True)  "
        "(parameters are kept when their shapes still fit)",
        state=state,
    )


def check_request(asked: Binding) -> None:
    if asked.inputs_need_grad and not asked.for_training:
        raise InputError(
            "mod.bind(inputs_need_grad=True, for_training=False): input gradients need a "
            "module bound for training.",
            fix="mod.bind(..., for_training=True, inputs_need_grad=True)",
        )


def check_labels_given(asked: Binding, label_names, label_inputs: dict, fix: str) -> None:
    if asked.for_training and asked.label is None and label_names:
        raise InputError(
            "mod.bind(for_training=True) without label_shapes: the network's "
            + "; ".join(li.describe() for li in label_inputs.values())
            + ", and without labels it would train against zeros.",
            fix=fix,
        )


def check_input_names(
    symbol, data_descs, label_descs, data_names, label_names, label_inputs: dict
) -> None:
    label0 = label_names[0] if label_names else "softmax_label"
    iter_fix = (
        f"mx.io.NDArrayIter(X, y, batch_size=32, data_name='{data_names[0]}', "
        f"label_name='{label0}')"
        if data_names
        else None
    )
    given = [d.name for d in data_descs]
    if sorted(given) != sorted(data_names):
        raise InputError(
            f"mod.bind(): the data is named {given}, but the module reads "
            f"{list(data_names)} ({network.describe_inputs(symbol)}).",
            fix=f"name the iterator's data after the network's input: {iter_fix}",
        )
    if label_descs is None or not label_names:
        return
    given = [d.name for d in label_descs]
    if sorted(given) != sorted(label_names):
        expects = "; ".join(li.describe() for li in label_inputs.values())
        raise InputError(
            f"mod.bind(): the labels are named {given}, but {expects or list(label_names)}.",
            fix=f"name the iterator's label after the network's: {iter_fix}",
        )


def check_label_shapes(
    symbol, data_descs, label_descs, label_names, label_inputs, called: str = "mod.bind()"
) -> None:
    expected = network.infer_label_shapes(
        symbol, {d.name: d.shape for d in data_descs}, label_names
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
        layer = label_inputs.get(desc.name)
        who = f"{layer.op} '{layer.layer}'" if layer else "the network"
        raise InputError(
            f"{called}: {problem}; {who} expects '{desc.name}' shaped {want}.", fix=fix
        )


def check_shared_module(shared_module) -> None:
    if shared_module is not None and not (
        isinstance(shared_module, mx.mod.Module)
        and shared_module.binded
        and shared_module.params_initialized
    ):
        raise LifecycleError(
            "mod.bind(shared_module=...) needs a Module that is bound and has parameters.",
            fix="shared.bind(...); shared.init_params(); then mod.bind(..., shared_module=shared)",
        )


def check_params_fit(
    symbol, param_shapes: dict, data_descs, bound_data, called: str, state: str
) -> None:
    """The initialized parameters' shapes (``param_shapes``) must still fit the new inputs."""
    needed = network.infer_param_shapes(
        symbol, list(param_shapes), {d.name: d.shape for d in data_descs}
    )
    have = param_shapes
    wrong = [n for n in have if needed is None or needed.get(n, have[n]) != have[n]]
    if not wrong:
        return
    desc, old = data_descs[0], bound_data[0].shape if bound_data else None
    # a layer's size (an array's first axis) that differs whatever the input: another network
    resized = [n for n in wrong if needed is not None and needed[n][:1] != have[n][:1]]
    if resized:
        shown = ", ".join(
            f"'{n}' is {have[n]} where this network needs {needed[n]}" for n in resized
        )
        raise InputError(
            f"{called}: the parameters do not fit this network's layers ({shown}): they come "
            "from a network with other layer sizes than this symbol.",
            fix="load the symbol and the parameters saved together (the same prefix and epoch "
            "of one training run), or build the network with the sizes the parameters have",
            state=state,
        )
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
        state=state,
    )


def check_complete_params(arg_params, aux_params, param_names, aux_names) -> None:
    """Loaded parameters must hold every array the network has: a missing one would start as
    zeros (every prediction 1/num_classes for a missing last layer)."""
    missing = [n for n in param_names if n not in arg_params]
    missing += [n for n in aux_names if n not in (aux_params or {})]
    if missing:
        raise InputError(
            f"The loaded parameters lack {missing}, which this network needs: those layers "
            "would start as zeros. The parameter file belongs to another network than the "
            "symbol it was loaded with.",
            fix="load the symbol and the parameters saved together (the same prefix and epoch "
            "of one training run)",
        )


def refuse_missing_left_as_zeros(arg_params, aux_params, own_args: dict) -> None:
    """set_params(allow_missing=True) keeps the missing arrays as they are: on a module whose
    parameters were never initialized, that is zeros."""
    missing = sorted(set(own_args) - set(arg_params))
    if missing:
        raise InputError(
            f"mod.set_params(allow_missing=True) would leave {missing} as they are, and this "
            "module's parameters were never initialized: they would stay zeros.",
            fix="mod.init_params(initializer=mx.init.Xavier(), arg_params=arg_params, "
            "aux_params=aux_params, allow_missing=True, force_init=True)",
        )


def check_given_params(
    arg_params,
    aux_params,
    own_args: dict,
    own_auxs: dict,
    allow_missing: bool,
    called: str,
    state: str,
) -> None:
    """Values given to init_params or set_params must be this network's, shape for shape."""
    problems, extra = [], []
    for kind, given, own in (
        ("argument", arg_params, own_args),
        ("auxiliary state", aux_params, own_auxs),
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
            "to fill the missing ones from an initializer: mod.init_params("
            "initializer=mx.init.Xavier(), arg_params=arg_params, aux_params=aux_params, "
            "allow_missing=True, force_init=True)",
            state=state,
        )
