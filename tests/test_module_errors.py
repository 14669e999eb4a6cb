"""Every misuse of the Module raises an MXLearnError naming the fix, never a bare assert."""

from __future__ import annotations

import contextlib
import logging

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.errors import (
    ArgumentTypeError,
    CheckpointError,
    DeviceError,
    InputError,
    LifecycleError,
    MXLearnError,
    UnknownAttributeError,
)


@contextlib.contextmanager
def explained(error_type, *words, builtin=None):
    """Expect ``error_type`` whose message contains every word, and no colour codes."""
    with pytest.raises(error_type) as info:
        yield info
    message = str(info.value)
    assert isinstance(info.value, MXLearnError)
    if builtin is not None:
        assert isinstance(info.value, builtin)
    assert "\033[" not in message
    for word in words:
        assert word in message, f"{word!r} not in:\n{message}"


def first_batch(it):
    it.reset()
    return next(iter(it))


# ---------------------------------------------------------------- calls before their steps
def test_forward_before_bind_names_bind(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    with explained(
        LifecycleError, "mod.forward()", "mod.bind(data_shapes=", "created", builtin=RuntimeError
    ):
        mod.forward(first_batch(small_iter))


def test_forward_before_init_params_names_init_params(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    mod.bind(small_iter.provide_data, small_iter.provide_label)
    with explained(LifecycleError, "mod.init_params(", "Module state: bound"):
        mod.forward(first_batch(small_iter))


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda m, b: m.backward(), ["mod.backward()", "mod.bind("]),
        (lambda m, b: m.update(), ["mod.update()", "mod.bind("]),
        (lambda m, b: m.update_metric(mx.metric.create("acc"), b.label), ["mod.update_metric()"]),
        (lambda m, b: m.get_outputs(), ["mod.get_outputs()", "mod.bind("]),
        (lambda m, b: m.get_params(), ["mod.get_params()", "mod.init_params("]),
        (lambda m, b: m.init_params(), ["mod.init_params()", "before mod.bind()", "mod.bind("]),
        (lambda m, b: m.init_optimizer(), ["mod.init_optimizer()", "mod.bind("]),
        (lambda m, b: m.predict(b.data[0]), ["mod.predict()", "mod.bind("]),
        (lambda m, b: m.set_params({}, {}), ["mod.set_params()", "not bound"]),
    ],
)
def test_calls_on_a_created_module_name_the_missing_step(small_net, small_iter, call, words):
    mod = mxlearn.Module(small_net)
    with explained(LifecycleError, *words, "Module state: created"):
        call(mod, first_batch(small_iter))


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.data_shapes,
        lambda m: m.label_shapes,
        lambda m: m.output_shapes,
        lambda m: m.get_states(),
        lambda m: m.install_monitor(None),
        lambda m: m.reshape([("data", (8, 16))]),
        lambda m: m.save_optimizer_states("never-written.states"),
    ],
)
def test_mxnets_bare_asserts_are_explained(small_net, call):
    with explained(LifecycleError, "Fix:", "Module state: created", builtin=RuntimeError):
        call(mxlearn.Module(small_net))


def test_input_gradients_need_inputs_need_grad(ready_module):
    with explained(LifecycleError, "inputs_need_grad=True"):
        ready_module.get_input_grads()


def test_score_before_bind(small_net, small_iter):
    with explained(LifecycleError, "mod.score()", "mod.bind("):
        mxlearn.Module(small_net).score(small_iter, "acc")


def test_save_checkpoint_before_init(small_net, tmp_path):
    with explained(LifecycleError, "mod.save_checkpoint()", "mod.init_params("):
        mxlearn.Module(small_net).save_checkpoint(str(tmp_path / "m"), 1)


def test_update_without_optimizer(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    mod.bind(small_iter.provide_data, small_iter.provide_label)
    mod.init_params()
    mod.forward(first_batch(small_iter))
    mod.backward()
    with explained(
        LifecycleError,
        "mod.update()",
        "mod.init_optimizer(optimizer='sgd'",
        "Module state: initialized",
    ):
        mod.update()


def test_init_optimizer_before_init_params(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    mod.bind(small_iter.provide_data, small_iter.provide_label)
    with explained(LifecycleError, "mod.init_optimizer()", "mod.init_params("):
        mod.init_optimizer()


def test_get_outputs_and_update_metric_before_any_forward(ready_module, small_iter):
    with explained(LifecycleError, "mod.get_outputs()", "no", "mod.forward("):
        ready_module.get_outputs()
    with explained(LifecycleError, "mod.update_metric()", "mod.forward("):
        ready_module.update_metric(mx.metric.create("acc"), first_batch(small_iter).label)


# ---------------------------------------------------------------- order of the training step
def test_backward_before_any_forward(ready_module):
    with explained(LifecycleError, "mod.backward()", "training forward", "corrupt"):
        ready_module.backward()


def test_backward_after_update_without_new_forward(ready_module, small_iter):
    ready_module.forward(first_batch(small_iter), is_train=True)
    ready_module.backward()
    ready_module.update()
    before = {k: v.asnumpy().copy() for k, v in ready_module.get_params()[0].items()}
    with explained(
        LifecycleError,
        "mod.backward()",
        "since the last update",
        "mod.forward(batch, is_train=True)",
    ):
        ready_module.backward()
    after = ready_module.get_params()[0]
    assert all(np.array_equal(before[k], after[k].asnumpy()) for k in before)


def test_backward_after_inference_forward(ready_module, small_iter):
    ready_module.forward(first_batch(small_iter), is_train=False)
    with explained(LifecycleError, "mod.backward()"):
        ready_module.backward()


def test_update_twice_is_refused(ready_module, small_iter):
    ready_module.forward(first_batch(small_iter), is_train=True)
    ready_module.backward()
    ready_module.update()
    with explained(LifecycleError, "mod.update()", "applied again"):
        ready_module.update()


def test_training_on_a_module_bound_for_prediction(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    mod.bind(small_iter.provide_data, small_iter.provide_label, for_training=False)
    mod.init_params()
    batch = first_batch(small_iter)
    for call in (lambda: mod.forward(batch, is_train=True), mod.backward, mod.init_optimizer):
        with explained(LifecycleError, "for_training=False", "force_rebind=True"):
            call()


# ---------------------------------------------------------------- repeated set-up with changes
def test_bind_again_with_other_shapes_says_force_rebind(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    mod.bind(small_iter.provide_data, small_iter.provide_label)
    with explained(LifecycleError, "already bound", "(32, 20)", "force_rebind=True"):
        mod.bind([("data", (32, 20))], small_iter.provide_label)
    with explained(LifecycleError, "for prediction", "force_rebind=True"):
        mod.bind(small_iter.provide_data, small_iter.provide_label, for_training=False)


def test_bind_again_with_same_shapes_is_ignored_as_in_mxnet(small_net, small_iter, caplog):
    mod = mxlearn.Module(small_net)
    mod.bind(small_iter.provide_data, small_iter.provide_label)
    with caplog.at_level(logging.WARNING):
        mod.bind(small_iter.provide_data, small_iter.provide_label)
    assert "Already bound" in caplog.text
    assert mod.binded


def test_init_optimizer_again_with_other_settings_says_force_init(ready_module):
    with explained(LifecycleError, "already installed", "learning_rate", "force_init=True"):
        ready_module.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5})
    ready_module.init_optimizer(
        optimizer="sgd", optimizer_params={"learning_rate": 0.5}, force_init=True
    )
    assert ready_module._optimizer.learning_rate == 0.5


def test_fit_again_with_another_learning_rate(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    mod.fit(small_iter, optimizer_params={"learning_rate": 0.1}, num_epoch=1)
    small_iter.reset()
    with explained(
        LifecycleError, "mod.fit()", "already installed", "0.1", "0.01", "force_init=True"
    ):
        mod.fit(small_iter, optimizer="sgd", optimizer_params={"learning_rate": 0.01}, num_epoch=2)
    with explained(LifecycleError, "mod.fit()", "'adam'"):
        mod.fit(small_iter, optimizer="adam", optimizer_params={"learning_rate": 0.1}, num_epoch=2)


# ---------------------------------------------------------------- batches
def test_training_forward_without_label(ready_module, small_data):
    X, _ = small_data
    batch = mx.io.DataBatch(data=[mx.nd.array(X[:32])])
    with explained(InputError, "no label", "previous batch's labels", builtin=ValueError):
        ready_module.forward(batch, is_train=True)


def test_batch_with_other_feature_width(ready_module, small_data):
    X, y = small_data
    wide = np.hstack([X, X[:, :4]])
    batch = next(iter(mx.io.NDArrayIter(wide, y, 32)))
    with explained(InputError, "input has 20 features; the module was bound for 16"):
        ready_module.forward(batch, is_train=True)


def test_other_batch_size_still_reshapes_as_in_mxnet(ready_module, small_data):
    X, y = small_data
    batch = next(iter(mx.io.NDArrayIter(X, y, 8)))
    ready_module.forward(batch, is_train=False)
    assert ready_module.get_outputs()[0].shape == (8, 4)


@pytest.mark.parametrize("bad_label, shown", [(4.0, "label 4"), (-1.0, "label -1")])
def test_labels_outside_the_output_width(small_net, small_data, bad_label, shown):
    X, y = small_data
    y = y.copy()
    y[3] = bad_label
    it = mx.io.NDArrayIter(X, y, 32)
    mod = mxlearn.Module(small_net)
    with explained(InputError, shown, "4 classes", "0..3"):
        mod.fit(it, num_epoch=1)


def test_score_checks_the_labels_of_its_first_batch(ready_module, small_data):
    X, y = small_data
    shifted = mx.io.NDArrayIter(X, y + 1, 32)  # classes counted from 1
    with explained(InputError, "evaluation labels", "the label 4", "y = y - 1"):
        ready_module.score(shifted, "acc")
    assert ready_module.score(mx.io.NDArrayIter(X, y, 32), "acc")[0][0] == "accuracy"


def test_fractional_labels_are_not_class_numbers(small_net, small_data):
    X, y = small_data
    y = y.copy()
    y[3] = 1.5
    with explained(InputError, "label 1.5", "not all class numbers", "LinearRegressionOutput"):
        mxlearn.Module(small_net).fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1)


def test_score_checks_the_data_of_its_first_batch(ready_module, small_data):
    X, y = small_data
    X = X.copy()
    X[3, 3] = np.nan
    with explained(InputError, "evaluation data", "1 NaN", "np.isfinite(X)"):
        ready_module.score(mx.io.NDArrayIter(X, y, 32), "acc")


def test_labels_shaped_n_by_1(small_net, small_data):
    X, y = small_data
    it = mx.io.NDArrayIter(X, y.reshape(-1, 1), 32)
    with explained(InputError, "(32, 1)", "SoftmaxOutput 'softmax'", "y.ravel()"):
        mxlearn.Module(small_net).fit(it, num_epoch=1)


def test_one_hot_labels(small_net, small_data):
    X, y = small_data
    one_hot = np.eye(4, dtype=np.float32)[y.astype(int)]
    it = mx.io.NDArrayIter(X, one_hot, 32)
    with explained(InputError, "one-hot", "(32, 4)", "y.argmax(axis=1)"):
        mxlearn.Module(small_net).fit(it, num_epoch=1)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_or_inf_in_data(small_net, small_data, bad):
    X, y = small_data
    X = X.copy()
    X[5, 2] = bad
    it = mx.io.NDArrayIter(X, y, 32)
    with explained(InputError, "NaN", "np.isfinite"):
        mxlearn.Module(small_net).fit(it, num_epoch=1)


def test_empty_or_exhausted_iterator(ready_module, small_iter):
    for _ in small_iter:
        pass  # a manual loop ran the iterator to its end
    with explained(InputError, "mod.fit()", "no batch", "run to its end", "train_iter.reset()"):
        ready_module.fit(small_iter, optimizer_params=(("learning_rate", 0.1),), num_epoch=1)
    ready_module.fit(small_iter, optimizer_params=(("learning_rate", 0.1),), num_epoch=1)


def test_truly_empty_iterator(small_net, small_data):
    X, y = small_data
    empty = mx.io.NDArrayIter(X[:10], y[:10], 32, last_batch_handle="discard")
    with explained(InputError, "mod.fit()", "empty", "even after reset()", "batch_size"):
        mxlearn.Module(small_net).fit(empty, num_epoch=1)


def test_fit_needs_num_epoch_and_a_real_range(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    with explained(InputError, "num_epoch", "mod.fit(train_iter, num_epoch=5)"):
        mod.fit(small_iter)
    with explained(InputError, "begin_epoch=3, num_epoch=3", "num_epoch=6"):
        mod.fit(small_iter, begin_epoch=3, num_epoch=3)


def test_fit_on_numpy_arrays(small_net, small_data):
    X, _ = small_data
    with explained(ArgumentTypeError, "data iterator", "mx.io.NDArrayIter(X, y", builtin=TypeError):
        mxlearn.Module(small_net).fit(X, num_epoch=1)


# ---------------------------------------------------------------- names
def test_context_function_not_called(small_net):
    with explained(ArgumentTypeError, "context=mx.gpu", "mx.gpu(0)", builtin=TypeError):
        mxlearn.Module(small_net, context=mx.gpu)


def test_gpu_when_mxnet_sees_none(small_net):
    if mx.context.num_gpus() > 0:
        pytest.fail("this test expects the CPU wheel; MXNet sees a GPU here")
    with explained(DeviceError, "gpu(0)", "CPU build", "context=mx.cpu()", builtin=RuntimeError):
        mxlearn.Module(small_net, context=mx.gpu(0))


def test_data_names_that_match_nothing(small_net):
    with explained(InputError, "no input 'x'", "data_names=['data']"):
        mxlearn.Module(small_net, data_names=["x"])


def test_label_names_derived_from_the_output_layer(small_net):
    with explained(
        InputError,
        "SoftmaxOutput 'softmax' expects the label 'softmax_label'",
        "label_names=['softmax_label']",
    ):
        mxlearn.Module(small_net, label_names=["label"])


def test_regression_label_name_is_derived(small_data):
    with explained(InputError, "LinearRegressionOutput 'lro' expects the label 'lro_label'"):
        mxlearn.Module(mxlearn.models.linear_regression())


def test_names_given_as_a_string(small_net):
    with explained(ArgumentTypeError, "data_names=['data']"):
        mxlearn.Module(small_net, data_names="data")


def test_iterator_names_that_match_nothing(small_net, small_data):
    X, y = small_data
    mod = mxlearn.Module(small_net)
    it = mx.io.NDArrayIter(X, y, 32, data_name="features")
    with explained(InputError, "['features']", "data_name='data'"):
        mod.fit(it, num_epoch=1)
    it = mx.io.NDArrayIter(X, y, 32, label_name="label")
    with explained(
        InputError,
        "['label']",
        "SoftmaxOutput 'softmax' expects the label 'softmax_label'",
        "label_name='softmax_label'",
    ):
        mod.fit(it, num_epoch=1)


def test_misspelled_metric_optimizer_and_setting(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    with explained(InputError, "'acuracy'", "'accuracy'"):
        mod.fit(small_iter, eval_metric="acuracy", num_epoch=1)
    with explained(InputError, "'sgdd'", "'sgd'"):
        mod.fit(small_iter, optimizer="sgdd", num_epoch=1)
    with explained(InputError, "'learning_rat'", "'learning_rate'"):
        mod.fit(small_iter, optimizer_params={"learning_rat": 0.1}, num_epoch=1)
    with explained(InputError, "'lr'", "'learning_rate'"):
        mod.fit(small_iter, optimizer_params={"lr": 0.1}, num_epoch=1)
    assert mod.state == "created"  # nothing was bound or changed by the refused calls


def test_top_k_needs_fewer_than_all_classes(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    mod.fit(small_iter, num_epoch=1)
    with explained(InputError, "top_5_accuracy", "4 classes", "every prediction"):
        mod.score(small_iter, "top_k_acc")  # 5 of 4 classes: always right


def test_misspelled_attribute(small_net):
    mod = mxlearn.Module(small_net)
    with explained(UnknownAttributeError, "'set_param'", "'set_params'", builtin=AttributeError):
        mod.set_param({}, {})
    assert not hasattr(mod, "no_such_thing")


# ---------------------------------------------------------------- parameters and checkpoints
def test_set_params_from_another_network(ready_module):
    other = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=12))
    other.bind([("data", (32, 16))], [("softmax_label", (32,))])
    other.init_params()
    args, auxs = other.get_params()
    with explained(InputError, "'fc1_weight' is (12, 16)", "(8, 16) in this network"):
        ready_module.set_params(args, auxs)


def test_load_of_a_missing_epoch_lists_the_saved_ones(ready_module, tmp_path):
    prefix = str(tmp_path / "m")
    ready_module.save_checkpoint(prefix, 2)
    with explained(
        CheckpointError, "m-0003.params", "saved epochs: [2]", builtin=FileNotFoundError
    ):
        mxlearn.Module.load(prefix, 3)
    with explained(CheckpointError, "no-such-symbol.json"):
        mxlearn.load_checkpoint(str(tmp_path / "no-such"), 1)


def test_save_checkpoint_into_a_missing_folder(ready_module, tmp_path):
    with explained(InputError, "does not exist", "os.makedirs("):
        ready_module.save_checkpoint(str(tmp_path / "nope" / "m"), 1)


def test_predict_after_load_without_bind_binds_from_the_data(
    ready_module, small_iter, tmp_path, capsys
):
    prefix = str(tmp_path / "m")
    ready_module.save_checkpoint(prefix, 1)
    loaded = mxlearn.Module.load(prefix, 1)
    assert isinstance(loaded, mxlearn.Module) and loaded.state == "loaded"
    out = loaded.predict(small_iter)
    assert out.shape == (256, 4)
    assert "bound the module for prediction" in capsys.readouterr().out
    expected = ready_module.predict(small_iter)
    assert np.array_equal(out.asnumpy(), expected.asnumpy())
    # and it can still go on to train: fit rebinds it for training
    small_iter.reset()
    loaded.fit(small_iter, num_epoch=1)
    assert loaded.state == "ready"


def test_the_seed_tutorials_misspelled_keywords_are_named(ready_module, small_iter):
    with explained(ArgumentTypeError, "no argument 'optimizer_param'", "'optimizer_params'"):
        ready_module.init_optimizer(
            optimizer="sgd", optimizer_param=(("learning_rate", 0.1),), force_init=True
        )
    with explained(ArgumentTypeError, "no argument 'num_epochs'", "mod.fit(num_epoch=...)"):
        ready_module.fit(small_iter, num_epochs=2)
    with pytest.raises(TypeError):  # still a TypeError, as Python's own would be
        ready_module.score(small_iter, eval_metrics="acc")


def test_a_misspelled_checkpoint_prefix_lists_the_saved_ones(ready_module, tmp_path):
    ready_module.save_checkpoint(str(tmp_path / "mx_mlp"), 3)
    wrong = str(tmp_path / "mx_mpl")
    with explained(CheckpointError, "Saved in", f"'{tmp_path / 'mx_mlp'}'", "Did you mean"):
        mxlearn.load_checkpoint(wrong, 3)


def test_resuming_without_begin_epoch_says_what_happens(small_net, small_iter, tmp_path, capsys):
    prefix = str(tmp_path / "m")
    mod = mxlearn.Module(small_net)
    mod.fit(small_iter, num_epoch=2, epoch_end_callback=mx.callback.do_checkpoint(prefix))
    _, args, auxs = mxlearn.load_checkpoint(prefix, 2)
    capsys.readouterr()
    again = mxlearn.Module(small_net)
    again.fit(
        small_iter,
        num_epoch=1,
        arg_params=args,
        aux_params=auxs,
        epoch_end_callback=mx.callback.do_checkpoint(prefix),
    )
    out = capsys.readouterr().out
    assert f"checkpoint 2 of '{prefix}' and begin_epoch=0" in out
    assert f"write '{prefix}-0001.params' again" in out and "begin_epoch=2" in out
    resumed = mxlearn.Module(small_net)
    resumed.fit(small_iter, num_epoch=3, arg_params=args, aux_params=auxs, begin_epoch=2)
    assert "Note: fit() got" not in capsys.readouterr().out


def test_gradients_wait_for_update_across_an_evaluating_forward(ready_module, small_iter):
    """forward(train); backward(); forward(eval) to look at the outputs; update() applies the
    gradients backward computed, as MXNet does."""
    batch = next(iter(small_iter))
    ready_module.forward(batch, is_train=True)
    ready_module.backward()
    ready_module.forward(batch, is_train=False)
    before = mxlearn.checks.snapshot(ready_module)
    ready_module.update()
    mxlearn.checks.parameters_changed(ready_module, before)
    assert "gradients from backward wait for update" not in repr(ready_module)
    with explained(LifecycleError, "needs gradients from mod.backward()"):
        ready_module.update()  # applied once, not twice


def test_loading_optimizer_states_without_an_updater_is_explained(ready_module, tmp_path):
    ready_module.save_optimizer_states(str(tmp_path / "s.states"))
    ready_module._updater = None  # as when a distributed kvstore updates on the servers
    with explained(InputError, "inside a distributed kvstore"):
        ready_module.load_optimizer_states(str(tmp_path / "s.states"), trust=True)


def test_an_unknown_kvstore_name_is_refused_with_the_closest(tmp_path):
    import mxlearn
    from mxlearn import mx
    from mxlearn.errors import InputError

    X, y = mxlearn.datasets.synthetic_classification(num_samples=64, num_classes=4)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    with pytest.raises(InputError, match=r"kvstore='locall' is not a kvstore type.*'local'"):
        mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1, kvstore="locall")
    assert not mod.params_initialized


def test_features_of_a_module_bound_for_images_are_counted_flat():
    import numpy as np

    import mxlearn
    from mxlearn import mx
    from mxlearn.errors import InputError

    y = np.arange(64) % 4
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    mod.fit(mx.io.NDArrayIter(np.random.rand(64, 16, 3).astype("float32"), y, 32), num_epoch=1)
    flat = mx.io.NDArrayIter(np.random.rand(64, 16).astype("float32"), y, 32)
    with pytest.raises(InputError, match="input has 16 features; the module was bound for 48 "):
        mod.fit(flat, num_epoch=1, force_rebind=True)


def test_set_params_with_allow_missing_initializes_what_is_missing(ready_module):
    args, auxs = ready_module.get_params()
    partial = {k: v for k, v in args.items() if k != "fc2_weight"}
    with pytest.raises(InputError, match="is missing") as info:
        ready_module.set_params(partial, auxs)
    assert "mod.init_params(" in info.value.fix
    assert "force_init=True" in info.value.fix  # a call that fills the missing, not zeros
    ready_module.set_params(partial, auxs, allow_missing=True)  # keeps its own fc2_weight
    assert ready_module.get_params()[0]["fc2_weight"].asnumpy().any()
    fresh = mxlearn.Module(ready_module.symbol)
    fresh.bind(ready_module.data_shapes, ready_module.label_shapes)
    with pytest.raises(InputError, match="would stay zeros"):
        fresh.set_params(partial, auxs, allow_missing=True)


def test_iter_predict_before_bind(small_net, small_iter):
    with pytest.raises(LifecycleError, match="before the module was bound"):
        list(mxlearn.Module(small_net).iter_predict(small_iter))


def test_borrow_optimizer_from_a_module_without_one(ready_module, small_net):
    with pytest.raises(LifecycleError, match="borrow_optimizer") as info:
        ready_module.borrow_optimizer(mxlearn.Module(small_net))
    assert "init_optimizer(" in info.value.fix


def test_a_params_path_that_is_a_folder(ready_module, tmp_path):
    (tmp_path / "m-0001.params").mkdir()
    with pytest.raises(MXLearnError, match="is a folder"):
        ready_module.load_params(str(tmp_path / "m-0001.params"))


@pytest.mark.parametrize("kind", ["column", "one-hot"])
def test_badly_shaped_labels_in_score_and_validation(ready_module, small_data, small_iter, kind):
    X, y = small_data
    labels = y.reshape(-1, 1) if kind == "column" else mx.nd.one_hot(mx.nd.array(y), 4).asnumpy()
    fix = "y.ravel()" if kind == "column" else "y.argmax(axis=1)"
    with pytest.raises(InputError, match="mod.score()") as info:
        ready_module.score(mx.io.NDArrayIter(X, labels, 32), "acc")
    assert fix in info.value.fix
    with pytest.raises(InputError, match="eval_data") as info:
        mxlearn.Module(ready_module.symbol).fit(
            small_iter, eval_data=mx.io.NDArrayIter(X, labels, 32), num_epoch=1
        )
    assert fix in info.value.fix


def test_shapes_a_layer_cannot_take_are_explained_at_bind():
    import mxlearn
    from mxlearn import mx
    from mxlearn.errors import InputError

    pooled = mx.sym.Pooling(mx.sym.Variable("data"), kernel=(9, 9), pool_type="max")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(pooled, num_hidden=4), name="softmax")
    mod = mxlearn.Module(net)
    with pytest.raises(InputError) as caught:
        mod.bind(data_shapes=[("data", (32, 1, 4, 4))], label_shapes=[("softmax_label", (32,))])
    text = str(caught.value)
    assert "operator pooling0" in text and "kernel size (9) exceeds input" in text
    assert "convolution.cc" not in text and "pooling.cc" not in text
    assert "mod.symbol.infer_shape(data=(32, 1, 4, 4))" in text


def test_a_convolution_fed_flat_rows_is_told_the_image_layout():
    import mxlearn
    from mxlearn import mx
    from mxlearn.errors import InputError

    conv = mx.sym.Convolution(mx.sym.Variable("data"), kernel=(3, 3), num_filter=4, name="conv1")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(conv, num_hidden=4), name="softmax")
    with pytest.raises(InputError, match=r"(?s)Input data should be 4D.*\(batch, channels, height"):
        mxlearn.Module(net).bind(
            data_shapes=[("data", (32, 16))], label_shapes=[("softmax_label", (32,))]
        )


def test_integer_labels_from_a_custom_iterator_are_told_the_type_not_the_shape():
    import numpy as np

    import mxlearn
    from mxlearn import mx
    from mxlearn.errors import InputError

    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    labels = mx.io.DataDesc("softmax_label", (8,), np.int32)
    with pytest.raises(InputError) as caught:
        mod.bind(data_shapes=[("data", (8, 16))], label_shapes=[labels])
    assert "y.astype('float32')" in str(caught.value)
    assert "infer_shape" not in str(caught.value)
