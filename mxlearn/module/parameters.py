"""What the module's calls accept, declared once: ``@public(..., **RULES)`` on each call.

fit's rules are lr_find's too (it trains as fit does). What needs the module itself (a name
the network reads, shapes that fit) is checked by the call, after these.
"""

from __future__ import annotations

from .. import rules
from .._compat import mx
from ..errors import N_
from ..training.callback import Callback

ITERATOR = "train_iter = mx.io.NDArrayIter(X, y, batch_size=32)"
FLAG = {  # a flag's example is the same call with True or False spelled out
    name: rules.flag(f"{name}=True")
    for name in (
        "for_training",
        "inputs_need_grad",
        "force_rebind",
        "allow_missing",
        "force_init",
        "allow_extra",
        "merge_batches",
        "reset",
        "always_output_list",
        "pre_sliced",
        "save_optimizer_states",
        "remove_amp_cast",
        "load_optimizer_states",
        "trust",
        "merge_multi_context",
    )
}
PARAMS = rules.arrays("arg_params, aux_params = mod.get_params()", optional=True)


def _shape_pairs(example: str, optional: bool = False) -> rules.Rule:
    what = N_("a list of (name, shape) pairs such as [('data', (32, 16))]")

    def pairs(v) -> bool:
        return isinstance(v, (list, tuple)) and all(map(rules.is_shape_pair, v))

    return rules.satisfying(pairs, what, example, optional=optional)


def _optimizer_params(optional: bool) -> rules.Rule:
    what = N_("the optimizer's settings, a dict")
    example = "optimizer_params={'learning_rate': 0.1}"
    return rules.instance((dict, list, tuple), what, example, optional=optional)


CALLBACKS = rules.callbacks(
    "batch_end_callback=mx.callback.Speedometer(32, 50)", left_to_the_call=(Callback,)
)

MODULE = dict(
    symbol=rules.instance(
        mx.sym.Symbol, N_("a network built with mx.sym"), "mxlearn.Module(mxlearn.models.mlp())"
    ),
    data_names=rules.names("Module(net, data_names=['data'])"),
    label_names=rules.names("Module(net, label_names=['softmax_label'])", optional=True),
    work_load_list=rules.satisfying(
        rules.is_numbers,
        N_("a list with one number per device"),
        "work_load_list=[1, 1]",
        optional=True,
    ),
    fixed_param_names=rules.names("fixed_param_names=['fc1_weight']", optional=True),
    state_names=rules.names("state_names=['rnn_state']", optional=True),
    group2ctxs=rules.instance(
        (dict, list),
        N_("a dict of context groups"),
        "group2ctxs={'dev1': mx.cpu(1)}",
        optional=True,
    ),
    compression_params=rules.mapping("compression_params={'type': '2bit'}", optional=True),
)
BIND = dict(
    for_training=FLAG["for_training"],
    inputs_need_grad=FLAG["inputs_need_grad"],
    force_rebind=FLAG["force_rebind"],
    shared_module=rules.instance(
        mx.mod.BaseModule, N_("a module"), "shared_module=other_mod", optional=True
    ),
    grad_req=rules.either(
        rules.choice(("write", "add", "null"), "grad_req='write'"),
        rules.mapping("grad_req={'fc1_weight': 'null'}"),
        rules.instance((list, tuple), N_("a list with one per argument"), "grad_req=['write']"),
    ),
)
INIT_PARAMS = dict(
    initializer=rules.callable_as(
        N_("an initializer such as mx.init.Xavier()"),
        "initializer=mx.init.Xavier()",
        optional=True,
    ),
    arg_params=PARAMS,
    aux_params=PARAMS,
    allow_missing=FLAG["allow_missing"],
    force_init=FLAG["force_init"],
    allow_extra=FLAG["allow_extra"],
)
SET_PARAMS = dict(
    arg_params=rules.arrays("arg_params, aux_params = mod.get_params()"),
    aux_params=PARAMS,
    allow_missing=FLAG["allow_missing"],
    force_init=FLAG["force_init"],
    allow_extra=FLAG["allow_extra"],
)
OPTIMIZER = dict(
    kvstore=rules.either(
        rules.text("kvstore='local'"),
        rules.instance(mx.kv.KVStore, N_("a kvstore"), "kvstore='local'"),
        example="kvstore='local'",
        optional=True,
    ),
    optimizer=rules.either(
        rules.text("optimizer='sgd'"),
        rules.instance(mx.optimizer.Optimizer, N_("an optimizer"), "optimizer='sgd'"),
        example="optimizer='sgd'",
    ),
    optimizer_params=_optimizer_params(optional=False),
)
INIT_OPTIMIZER = dict(OPTIMIZER, force_init=FLAG["force_init"])
RESHAPE = dict(
    data_shapes=_shape_pairs("data_shapes=train_iter.provide_data"),
    label_shapes=_shape_pairs("label_shapes=train_iter.provide_label", optional=True),
)
FORWARD = dict(
    data_batch=rules.either(
        rules.having(
            ("data",),
            N_("a batch from a data iterator (mx.io.DataBatch)"),
            "batch = next(iter(train_iter)); mod.forward(batch, is_train=True)",
        ),
        rules.instance(list, N_("a list of batches, one per device"), "[batch0, batch1]"),
    ),
    is_train=rules.flag("mod.forward(batch, is_train=True)", optional=True),
)
UPDATE_METRIC = dict(
    labels=rules.instance(
        (list, tuple),
        N_("the batch's labels, a list of arrays (batch.label)"),
        "mod.update_metric(metric, batch.label)",
        optional=True,
    ),
    pre_sliced=FLAG["pre_sliced"],
)
NUM_BATCH = rules.whole(1, "num_batch=10", optional=True)
SCORE = dict(
    num_batch=NUM_BATCH,
    batch_end_callback=CALLBACKS,
    score_end_callback=CALLBACKS,
    reset=FLAG["reset"],
    epoch=rules.whole(0, "epoch=0"),
)
PREDICT = dict(
    num_batch=NUM_BATCH,
    merge_batches=FLAG["merge_batches"],
    reset=FLAG["reset"],
    always_output_list=FLAG["always_output_list"],
)
# fit's and lr_find's
TRAINING = dict(
    optimizer=OPTIMIZER["optimizer"],
    optimizer_params=_optimizer_params(optional=True),
)
FIT = dict(
    TRAINING,
    train_data=rules.data_iter(ITERATOR),
    eval_data=rules.data_iter("eval_data=val_iter", optional=True),
    epoch_end_callback=CALLBACKS,
    batch_end_callback=CALLBACKS,
    eval_end_callback=CALLBACKS,
    eval_batch_end_callback=CALLBACKS,
    kvstore=OPTIMIZER["kvstore"],
    optimizer_params=OPTIMIZER["optimizer_params"],
    initializer=INIT_PARAMS["initializer"],
    arg_params=PARAMS,
    aux_params=PARAMS,
    allow_missing=FLAG["allow_missing"],
    force_rebind=FLAG["force_rebind"],
    force_init=FLAG["force_init"],
    begin_epoch=rules.whole(0, "begin_epoch=0"),
    num_epoch=rules.whole(1, "num_epoch=10", optional=True),
    epoch_report_callback=CALLBACKS,
    callbacks=rules.instance(
        (list, tuple),
        N_("a list of mxlearn.Callback objects"),
        "callbacks=[MyCallback()]",
        optional=True,
    ),
)
MUTABLE_MODULE = dict(
    {name: rule for name, rule in MODULE.items() if name != "fixed_param_names"},
    max_data_shapes=_shape_pairs("max_data_shapes=[('data', (16, 1, 32, 32))]", optional=True),
    max_label_shapes=_shape_pairs("max_label_shapes=[('softmax_label', (16,))]", optional=True),
    fixed_param_prefix=rules.either(
        rules.text("fixed_param_prefix=['conv1']"),
        rules.names("fixed_param_prefix=['conv1']"),
        optional=True,
    ),
    cache_size=rules.whole(1, "MutableModule(..., cache_size=32)"),
)
CHECKPOINT_FILES = dict(
    prefix=rules.path("prefix='runs/mlp'"),
    epoch=rules.whole(0, "epoch=1"),
)
