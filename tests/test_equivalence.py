"""Valid use of mxlearn.Module gives exactly MXNet's results: bit-equal parameters."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import seed_all

import mxlearn
from mxlearn import mx


def _params(mod):
    args, auxs = mod.get_params()
    return {k: v.asnumpy() for k, v in {**args, **auxs}.items()}


def _assert_bit_equal(a, b):
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].tobytes() == b[name].tobytes(), f"{name} differs"


def _fit(module_class, net, data, **fit_args):
    X, y = data
    seed_all(7)
    train = mx.io.NDArrayIter(X, y, batch_size=32, shuffle=True)
    val = mx.io.NDArrayIter(X[:64], y[:64], batch_size=32)
    mod = module_class(net, context=mx.cpu())
    mod.fit(train, eval_data=val, num_epoch=3, **fit_args)
    return mod


@pytest.mark.parametrize(
    "fit_args",
    [
        dict(optimizer="sgd", optimizer_params={"learning_rate": 0.1}),
        dict(
            optimizer="sgd",
            optimizer_params={"learning_rate": 0.05, "momentum": 0.9, "wd": 1e-4},
            initializer=mx.init.Xavier(),
        ),
        dict(
            optimizer="adam", optimizer_params=(("learning_rate", 0.01),), eval_metric=["acc", "ce"]
        ),
    ],
)
def test_fit_gives_bit_equal_parameters(small_net, small_data, fit_args):
    ours = _fit(mxlearn.Module, small_net, small_data, **fit_args)
    theirs = _fit(mx.mod.Module, small_net, small_data, **fit_args)
    _assert_bit_equal(_params(ours), _params(theirs))
    # and the training moved the weights (the comparison is not of two untouched modules)
    seed_all(7)
    untouched = mx.mod.Module(small_net)
    untouched.bind([("data", (32, 16))], [("softmax_label", (32,))])
    untouched.init_params(fit_args.get("initializer", mx.init.Uniform(0.01)))
    assert not np.array_equal(_params(ours)["fc1_weight"], _params(untouched)["fc1_weight"])


def _manual_loop(module_class, net, data):
    X, y = data
    seed_all(3)
    train = mx.io.NDArrayIter(X, y, batch_size=32, shuffle=True)
    mod = module_class(net, context=mx.cpu())
    mod.bind(train.provide_data, train.provide_label)
    mod.init_params(initializer=mx.init.Uniform(scale=0.1))
    mod.init_optimizer(optimizer="sgd", optimizer_params=(("learning_rate", 0.1),))
    metric = mx.metric.create("acc")
    accuracies = []
    for _ in range(3):
        train.reset()
        metric.reset()
        for batch in train:
            mod.forward(batch, is_train=True)
            mod.update_metric(metric, batch.label)
            mod.backward()
            mod.update()
        accuracies.append(metric.get()[1])
    val = mx.io.NDArrayIter(X, y, batch_size=32)
    return mod, accuracies, mod.predict(val).asnumpy(), mod.score(val, ["acc", "ce"])


def test_manual_loop_predict_and_score_are_bit_equal(small_net, small_data):
    ours, our_acc, our_pred, our_score = _manual_loop(mxlearn.Module, small_net, small_data)
    theirs, their_acc, their_pred, their_score = _manual_loop(mx.mod.Module, small_net, small_data)
    _assert_bit_equal(_params(ours), _params(theirs))
    assert our_acc == their_acc
    assert our_pred.tobytes() == their_pred.tobytes()
    assert our_score == their_score
    assert our_acc[-1] > our_acc[0]


def test_checkpoint_files_load_in_plain_mxnet(ready_module, small_iter, tmp_path):
    ready_module.fit(small_iter, optimizer_params=(("learning_rate", 0.1),), num_epoch=1)
    prefix = str(tmp_path / "m")
    ready_module.save_checkpoint(prefix, 1)
    sym, args, auxs = mx.model.load_checkpoint(prefix, 1)
    plain = mx.mod.Module(sym)
    plain.bind(small_iter.provide_data, small_iter.provide_label, for_training=False)
    plain.set_params(args, auxs)
    assert np.array_equal(
        plain.predict(small_iter).asnumpy(), ready_module.predict(small_iter).asnumpy()
    )
