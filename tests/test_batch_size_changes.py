"""A step follows the batch it is given: when a module's batch size changes after its optimizer
was made (a second bind, a forced rebind, fit with another iterator, a reshape), MXNet keeps the
optimizer's rescale_grad at 1/old batch, so every step is silently scaled by old/new. mxlearn
keeps the 1/batch MXNet would have set, and says so where the student set it by hand."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.errors import TrainingWarning

ROWS = np.random.RandomState(0).rand(256, 16).astype("float32")
LABELS = (ROWS[:, 0] > 0.5).astype("float32")


def _iter(batch):
    return mx.io.NDArrayIter(ROWS, LABELS, batch_size=batch)


def _module(batch, optimizer="sgd", optimizer_params=(("learning_rate", 0.1),)):
    mxlearn.seed(1)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=2), context=mx.cpu())
    it = _iter(batch)
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer=optimizer, optimizer_params=optimizer_params)
    return mod


def _weights(mod) -> dict:
    return {n: a.asnumpy() for n, a in mod.get_params()[0].items()}


def _one_step(mod, batch) -> dict:
    data = next(iter(_iter(batch)))
    mod.forward(data, is_train=True)
    mod.backward()
    mod.update()
    return _weights(mod)


def _same(a: dict, b: dict) -> bool:
    return all(np.array_equal(a[n], b[n]) for n in a)


@pytest.mark.parametrize("force_rebind", [False, True])
def test_a_second_bind_with_another_batch_size_steps_as_a_module_bound_for_it(force_rebind):
    rebound = _module(32)
    it = _iter(64)
    rebound.bind(it.provide_data, it.provide_label, force_rebind=force_rebind)
    assert rebound._exec_group.batch_size == 64
    assert rebound._optimizer.rescale_grad == pytest.approx(1 / 64)
    assert _same(_one_step(rebound, 64), _one_step(_module(64), 64))


def test_fit_with_an_iterator_of_another_batch_size_steps_as_asked():
    seen = []
    rebound = _module(32)
    rebound.fit(
        _iter(64),
        num_epoch=1,
        optimizer_params=(("learning_rate", 0.1),),
        batch_end_callback=lambda p: seen.append(rebound._optimizer.rescale_grad),
    )
    assert seen and all(s == pytest.approx(1 / 64) for s in seen)
    direct = _module(64)
    direct.fit(_iter(64), num_epoch=1, optimizer_params=(("learning_rate", 0.1),))
    assert _same(_weights(rebound), _weights(direct))


def test_a_reshape_keeps_the_step_a_mean_over_the_new_batch():
    mod = _module(32)
    it = _iter(128)
    mod.reshape(it.provide_data, it.provide_label)
    assert mod._optimizer.rescale_grad == pytest.approx(1 / 128)
    assert _same(_one_step(mod, 128), _one_step(_module(128), 128))


def test_an_evaluation_batch_between_training_batches_leaves_the_step_as_it_was():
    seen = []
    mod = _module(32)
    mod.fit(
        _iter(32),
        eval_data=_iter(64),
        num_epoch=2,
        optimizer_params=(("learning_rate", 0.1),),
        batch_end_callback=lambda p: seen.append(mod._optimizer.rescale_grad),
    )
    assert seen and all(s == pytest.approx(1 / 32) for s in seen)


@pytest.mark.parametrize(
    "made",
    [
        dict(optimizer=mx.optimizer.SGD(learning_rate=0.1, rescale_grad=1 / 32)),
        dict(optimizer_params={"learning_rate": 0.1, "rescale_grad": 1 / 32}),
    ],
    ids=["an optimizer object", "rescale_grad by name"],
)
def test_a_rescale_grad_set_by_hand_is_kept_and_said_to_be(made):
    mod = _module(32, **made)
    it = _iter(64)
    with pytest.warns(
        TrainingWarning, match=r"rescale_grad=0\.03125 .* 1/64 \(1 / \(batch 64\)\)"
    ) as warned:
        mod.bind(it.provide_data, it.provide_label)
    assert len(warned) == 1
    assert mod._optimizer.rescale_grad == pytest.approx(1 / 32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once for that batch size, not every batch
        _one_step(mod, 64)
        _one_step(mod, 64)
        back = _iter(32)  # back at the batch it was set for: nothing to say
        mod.bind(back.provide_data, back.provide_label)
        _one_step(mod, 32)


def test_following_the_advice_on_a_hand_set_rescale_grad_steps_as_asked():
    mod = _module(32, optimizer=mx.optimizer.SGD(learning_rate=0.1, rescale_grad=1 / 32))
    it = _iter(64)
    with pytest.warns(TrainingWarning) as warned:
        mod.bind(it.provide_data, it.provide_label)
    # the advice: the optimizer again, made for this batch
    assert "mod.init_optimizer(optimizer=..., force_init=True)" in str(warned[0].message)
    mod.init_optimizer(
        optimizer=mx.optimizer.SGD(learning_rate=0.1, rescale_grad=1 / 64), force_init=True
    )
    assert _same(_one_step(mod, 64), _one_step(_module(64), 64))


@pytest.mark.parametrize("bound, rows", [(32, 16), (32, 1), (8, 8), (8, 4)])
def test_a_mutable_module_steps_as_a_module_bound_at_each_batch_size(bound, rows):
    mxlearn.seed(1)
    net = mxlearn.models.mlp(num_classes=2)
    start = _module(rows)
    mutable = mxlearn.MutableModule(
        net, max_data_shapes=[("data", (32, 16))], max_label_shapes=[("softmax_label", (32,))]
    )
    it = _iter(bound)
    mutable.bind(it.provide_data, it.provide_label)
    mutable.init_params(arg_params=_weights_as_arrays(start), aux_params={})
    mutable.init_optimizer(optimizer_params=(("learning_rate", 0.1),))
    stepped = _one_step(mutable, rows)
    assert mutable._optimizer.rescale_grad == pytest.approx(1 / rows)
    assert _same(stepped, _one_step(start, rows))


def _weights_as_arrays(mod) -> dict:
    return {n: mx.nd.array(a) for n, a in _weights(mod).items()}
