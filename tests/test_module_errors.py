"""Every misuse of the Module raises an MXLearnError naming the fix, never a bare assert."""

from __future__ import annotations

import contextlib
import logging
import re

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.checkpoint.files import (
    NoParamsForEpoch,
    NoSymbolFile,
    ParamsIsFolder,
)
from mxlearn.checkpoint.optimizer_state import StatesInKVStore
from mxlearn.checkpoint.prefixes import NoPrefixFolder
from mxlearn.devices import DeviceFunctionGiven, DeviceUnusable, no_gpu_reason
from mxlearn.errors import LifecycleError, MXLearnError
from mxlearn.guards.arguments import (
    ImagesNeedFourAxes,
    InputTypesDiffer,
    NetworkCannotTake,
    NoSuchArgument,
    NoSuchInput,
    NoSuchLabel,
    UnknownKVStore,
)
from mxlearn.guards.batches import (
    LabelsNotAList,
    LabelsNotNDArrays,
    NotADataBatch,
    UnlabelledTrainingBatch,
)
from mxlearn.guards.binding import (
    AlreadyBound,
    DataNamesDiffer,
    FeaturesDifferFromBinding,
    LabelNamesDiffer,
    LabelsOneColumnTooMany,
    MissingLeftAsZeros,
    OneHotLabels,
    ParamsDoNotMatch,
)
from mxlearn.guards.data_values import (
    FractionalLabels,
    LabelsOutsideClasses,
    NonFiniteData,
    what_words,
)
from mxlearn.guards.fit_arguments import (
    EmptyTrainData,
    NoNumEpoch,
    NothingToTrain,
    TrainDataNotReset,
    TrainDataWithoutLabels,
)
from mxlearn.guards.lifecycle import (
    BoundForPrediction,
    InitParamsBeforeBind,
    NoGradients,
    NoInputGrads,
    NoOptimizer,
    NoOptimizerToLend,
    NoOptimizerToSave,
    NoOutputsToMeasure,
    NoOutputsToReturn,
    NoParamsYet,
    NotBound,
    NothingToSave,
    NoTrainingForward,
    ParamsNotInitialized,
    SetParamsBeforeBind,
    stage_words,
)
from mxlearn.guards.optimizer_settings import NoSuchOptimizer, NoSuchSetting, OptimizerInstalled
from mxlearn.metrics.catalogue import ClassMetricOfProbabilityLabels, NoSuchMetric, TopKCountsAll
from mxlearn.module.inspection import NoSuchAttribute
from mxlearn.rules import WrongKind


@contextlib.contextmanager
def explained(kind, /, *shown, builtin=None, state=None, **fields):
    """Expect exactly the refusal ``kind``, raised with ``fields`` (among others), whose message
    shows each of ``shown`` (calls and the code of fixes: what no translation changes) and no
    colour codes; ``state``: the module's stage (see mxlearn.guards.lifecycle.stage) it reports."""
    with pytest.raises(MXLearnError) as info:
        yield info
    error = info.value
    assert type(error) is kind, f"{type(error).__name__}, not {kind.__name__}:\n{error}"
    if builtin is not None:
        assert isinstance(error, builtin)
    for name, value in fields.items():
        assert error.fields[name] == value, f"{name}: {error.fields.get(name)!r} != {value!r}"
    message = str(error)
    assert "\033[" not in message
    for text in shown:
        assert text in message, f"{text!r} not in:\n{message}"
    if state is not None:
        assert error.state and error.state.startswith(stage_words(state)), error.state


def _problem_of(problems: str, name: str) -> list[str]:
    """The shapes said in the one problem (of ``problems``, said one after another) that names
    the parameter ``name``, in order."""
    parts = [part for part in re.split(r"[;；]", problems) if f"'{name}'" in part]
    assert len(parts) == 1, problems
    after = parts[0].split(f"'{name}'", 1)[1]
    return re.findall(r"\(\d+(?:, \d+)*,?\)", after.split("'", 1)[0])


def first_batch(it):
    it.reset()
    return next(iter(it))


# ---------------------------------------------------------------- calls before their steps
def test_forward_before_bind_names_bind(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    with explained(
        NotBound,
        "mod.forward()",
        "mod.bind(data_shapes=",
        builtin=RuntimeError,
        state="created",
        called="mod.forward()",
    ):
        mod.forward(first_batch(small_iter))


def test_forward_before_init_params_names_init_params(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    mod.bind(small_iter.provide_data, small_iter.provide_label)
    with explained(ParamsNotInitialized, "mod.init_params(", state="bound", called="mod.forward()"):
        mod.forward(first_batch(small_iter))


@pytest.mark.parametrize(
    "call, kind, called, fix",
    [
        (lambda m, b: m.backward(), NotBound, "mod.backward()", "mod.bind("),
        (lambda m, b: m.update(), NotBound, "mod.update()", "mod.bind("),
        (
            lambda m, b: m.update_metric(mx.metric.create("acc"), b.label),
            NotBound,
            "mod.update_metric()",
            "mod.bind(",
        ),
        (lambda m, b: m.get_outputs(), NotBound, "mod.get_outputs()", "mod.bind("),
        (lambda m, b: m.get_params(), NoParamsYet, "mod.get_params()", "mod.init_params("),
        (lambda m, b: m.init_params(), InitParamsBeforeBind, "mod.init_params()", "mod.bind("),
        (lambda m, b: m.init_optimizer(), NotBound, "mod.init_optimizer()", "mod.bind("),
        (lambda m, b: m.predict(b.data[0]), NotBound, "mod.predict()", "mod.bind("),
        (lambda m, b: m.set_params({}, {}), SetParamsBeforeBind, "mod.set_params()", "mod.bind("),
    ],
)
def test_calls_on_a_created_module_name_the_missing_step(
    small_net, small_iter, call, kind, called, fix
):
    mod = mxlearn.Module(small_net)
    with explained(kind, called, state="created", called=called) as info:
        call(mod, first_batch(small_iter))
    assert fix in info.value.fix


@pytest.mark.parametrize(
    "call, kind",
    [
        (lambda m: m.data_shapes, NotBound),
        (lambda m: m.label_shapes, NotBound),
        (lambda m: m.output_shapes, NotBound),
        (lambda m: m.get_states(), NotBound),
        (lambda m: m.install_monitor(None), NotBound),
        (lambda m: m.reshape([("data", (8, 16))]), NotBound),
        (lambda m: m.save_optimizer_states("never-written.states"), NoOptimizerToSave),
    ],
)
def test_mxnets_bare_asserts_are_explained(small_net, call, kind):
    with explained(kind, builtin=RuntimeError, state="created") as info:
        call(mxlearn.Module(small_net))
    assert info.value.fix and info.value.fix in str(info.value)


def test_input_gradients_need_inputs_need_grad(ready_module):
    with explained(NoInputGrads, "inputs_need_grad=True", called="mod.get_input_grads()"):
        ready_module.get_input_grads()


def test_score_before_bind(small_net, small_iter):
    with explained(NotBound, "mod.score()", "mod.bind(", called="mod.score()"):
        mxlearn.Module(small_net).score(small_iter, "acc")


def test_save_checkpoint_before_init(small_net, tmp_path):
    with explained(
        NothingToSave, "mod.save_checkpoint()", "mod.init_params(", called="mod.save_checkpoint()"
    ):
        mxlearn.Module(small_net).save_checkpoint(str(tmp_path / "m"), 1)


def test_update_without_optimizer(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    mod.bind(small_iter.provide_data, small_iter.provide_label)
    mod.init_params()
    mod.forward(first_batch(small_iter))
    mod.backward()
    with explained(
        NoOptimizer,
        "mod.update()",
        "mod.init_optimizer(optimizer='sgd'",
        state="initialized",
        called="mod.update()",
    ):
        mod.update()


def test_init_optimizer_before_init_params(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    mod.bind(small_iter.provide_data, small_iter.provide_label)
    with explained(
        ParamsNotInitialized,
        "mod.init_optimizer()",
        "mod.init_params(",
        called="mod.init_optimizer()",
    ):
        mod.init_optimizer()


def test_get_outputs_and_update_metric_before_any_forward(ready_module, small_iter):
    with explained(NoOutputsToReturn, "mod.get_outputs()", "mod.forward("):
        ready_module.get_outputs()
    with explained(NoOutputsToMeasure, "mod.update_metric(", "mod.forward("):
        ready_module.update_metric(mx.metric.create("acc"), first_batch(small_iter).label)


# ---------------------------------------------------------------- order of the training step
def test_backward_before_any_forward(ready_module):
    with explained(NoTrainingForward, "mod.backward()", "mod.forward(batch, is_train=True)"):
        ready_module.backward()


def test_backward_after_update_without_new_forward(ready_module, small_iter):
    ready_module.forward(first_batch(small_iter), is_train=True)
    ready_module.backward()
    ready_module.update()
    before = {k: v.asnumpy().copy() for k, v in ready_module.get_params()[0].items()}
    with explained(NoTrainingForward, "mod.backward()", "mod.forward(batch, is_train=True)"):
        ready_module.backward()
    after = ready_module.get_params()[0]
    assert all(np.array_equal(before[k], after[k].asnumpy()) for k in before)


def test_backward_after_inference_forward(ready_module, small_iter):
    ready_module.forward(first_batch(small_iter), is_train=False)
    with explained(NoTrainingForward, "mod.backward()"):
        ready_module.backward()


def test_update_twice_is_refused(ready_module, small_iter):
    ready_module.forward(first_batch(small_iter), is_train=True)
    ready_module.backward()
    ready_module.update()
    with explained(NoGradients, "mod.update()", "mod.backward()"):
        ready_module.update()


def test_training_on_a_module_bound_for_prediction(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    mod.bind(small_iter.provide_data, small_iter.provide_label, for_training=False)
    mod.init_params()
    batch = first_batch(small_iter)
    for call, called in (
        (lambda: mod.forward(batch, is_train=True), "mod.forward(batch, is_train=True)"),
        (mod.backward, "mod.backward()"),
        (mod.init_optimizer, "mod.init_optimizer()"),
    ):
        with explained(BoundForPrediction, "force_rebind=True", called=called) as info:
            call()
        assert "for_training=True, force_rebind=True" in info.value.fix


# ---------------------------------------------------------------- repeated set-up with changes
def test_bind_again_with_other_shapes_says_force_rebind(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    mod.bind(small_iter.provide_data, small_iter.provide_label)
    with explained(
        AlreadyBound, "force_rebind=True", bound_data="data (32, 16)", asked_data="data (32, 20)"
    ) as info:
        mod.bind([("data", (32, 20))], small_iter.provide_label)
    assert info.value.fields["asked_mode"] == info.value.fields["bound_mode"]
    with explained(AlreadyBound, "force_rebind=True", asked_data="data (32, 16)") as info:
        mod.bind(small_iter.provide_data, small_iter.provide_label, for_training=False)
    assert info.value.fields["asked_mode"] != info.value.fields["bound_mode"]  # prediction


def test_bind_again_with_same_shapes_is_ignored_as_in_mxnet(small_net, small_iter, caplog):
    mod = mxlearn.Module(small_net)
    mod.bind(small_iter.provide_data, small_iter.provide_label)
    with caplog.at_level(logging.WARNING):
        mod.bind(small_iter.provide_data, small_iter.provide_label)
    assert "Already bound" in caplog.text
    assert mod.binded


def test_init_optimizer_again_with_other_settings_says_force_init(ready_module):
    with explained(OptimizerInstalled, "force_init=True", called="mod.init_optimizer()") as info:
        ready_module.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5})
    assert "learning_rate=0.1" in info.value.fields["installed"]
    assert "learning_rate=0.5" in info.value.fields["asked"]
    ready_module.init_optimizer(
        optimizer="sgd", optimizer_params={"learning_rate": 0.5}, force_init=True
    )
    assert ready_module._optimizer.learning_rate == 0.5


def test_fit_again_with_another_learning_rate(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    mod.fit(small_iter, optimizer_params={"learning_rate": 0.1}, num_epoch=1)
    small_iter.reset()
    with explained(OptimizerInstalled, "mod.fit()", "force_init=True", called="mod.fit()") as info:
        mod.fit(small_iter, optimizer="sgd", optimizer_params={"learning_rate": 0.01}, num_epoch=2)
    assert "learning_rate=0.1" in info.value.fields["installed"]
    assert "learning_rate=0.01" in info.value.fields["asked"]
    with explained(OptimizerInstalled, "mod.fit()", called="mod.fit()") as info:
        mod.fit(small_iter, optimizer="adam", optimizer_params={"learning_rate": 0.1}, num_epoch=2)
    assert "'sgd'" in info.value.fields["installed"] and "'adam'" in info.value.fields["asked"]


# ---------------------------------------------------------------- batches
def test_training_forward_without_label(ready_module, small_data):
    X, _ = small_data
    batch = mx.io.DataBatch(data=[mx.nd.array(X[:32])])
    with explained(UnlabelledTrainingBatch, "mx.io.NDArrayIter(X, y", builtin=ValueError):
        ready_module.forward(batch, is_train=True)


def test_batch_with_other_feature_width(ready_module, small_data):
    X, y = small_data
    wide = np.hstack([X, X[:, :4]])
    batch = next(iter(mx.io.NDArrayIter(wide, y, 32)))
    with explained(FeaturesDifferFromBinding, features=20, bound=16, called="mod.forward()"):
        ready_module.forward(batch, is_train=True)


def test_other_batch_size_still_reshapes_as_in_mxnet(ready_module, small_data):
    X, y = small_data
    batch = next(iter(mx.io.NDArrayIter(X, y, 8)))
    ready_module.forward(batch, is_train=False)
    assert ready_module.get_outputs()[0].shape == (8, 4)


@pytest.mark.parametrize("bad_label, shown", [(4.0, "4"), (-1.0, "-1")])
def test_labels_outside_the_output_width(small_net, small_data, bad_label, shown):
    X, y = small_data
    y = y.copy()
    y[3] = bad_label
    it = mx.io.NDArrayIter(X, y, 32)
    mod = mxlearn.Module(small_net)
    with explained(LabelsOutsideClasses, label=shown, classes=4, last=3):
        mod.fit(it, num_epoch=1)


def test_score_checks_the_labels_of_its_first_batch(ready_module, small_data):
    X, y = small_data
    shifted = mx.io.NDArrayIter(X, y + 1, 32)  # classes counted from 1
    with explained(LabelsOutsideClasses, what=what_words("evaluation"), label="4") as info:
        ready_module.score(shifted, "acc")
    assert "y = y - 1" in info.value.fix
    assert ready_module.score(mx.io.NDArrayIter(X, y, 32), "acc")[0][0] == "accuracy"


def test_fractional_labels_are_not_class_numbers(small_net, small_data):
    X, y = small_data
    y = y.copy()
    y[3] = 1.5
    with explained(FractionalLabels, label="1.5", name="softmax_label") as info:
        mxlearn.Module(small_net).fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1)
    assert "LinearRegressionOutput" in info.value.fix


def test_score_checks_the_data_of_its_first_batch(ready_module, small_data):
    X, y = small_data
    X = X.copy()
    X[3, 3] = np.nan
    with explained(
        NonFiniteData, "np.isfinite(X)", what=what_words("evaluation"), name="data", nan=1, inf=0
    ):
        ready_module.score(mx.io.NDArrayIter(X, y, 32), "acc")


def test_labels_shaped_n_by_1(small_net, small_data):
    X, y = small_data
    it = mx.io.NDArrayIter(X, y.reshape(-1, 1), 32)
    with explained(
        LabelsOneColumnTooMany, "y.ravel()", got=(32, 1), want=(32,), who="SoftmaxOutput 'softmax'"
    ):
        mxlearn.Module(small_net).fit(it, num_epoch=1)


def test_one_hot_labels(small_net, small_data):
    """MXNet trains on one-hot rows (probabilities); 'acc' would read them as 0 and 1 and
    report 0.75 for 4 classes: refused, and the advised class numbers train and score."""
    X, y = small_data
    one_hot = np.eye(4, dtype=np.float32)[y.astype(int)]
    it = mx.io.NDArrayIter(X, one_hot, 32)
    with explained(ClassMetricOfProbabilityLabels, "y.argmax(axis=1)", metric="accuracy"):
        mxlearn.Module(small_net).fit(it, num_epoch=1)
    it = mx.io.NDArrayIter(X, one_hot.argmax(axis=1), 32)  # the advice followed
    mod = mxlearn.Module(small_net)
    mod.fit(it, num_epoch=1)
    assert 0 <= mod.score(it, "acc")[0][1] <= 1


def test_one_hot_rows_of_another_width_than_the_classes(small_net, small_data):
    X, y = small_data
    one_hot = np.eye(5, dtype=np.float32)[y.astype(int)]
    it = mx.io.NDArrayIter(X, one_hot, 32)
    with explained(OneHotLabels, "y.argmax(axis=1)", got=(32, 5), width=5):
        mxlearn.Module(small_net).fit(it, num_epoch=1)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_or_inf_in_data(small_net, small_data, bad):
    X, y = small_data
    X = X.copy()
    X[5, 2] = bad
    it = mx.io.NDArrayIter(X, y, 32)
    counts = {"nan": int(np.isnan(bad)), "inf": int(np.isinf(bad))}
    with explained(NonFiniteData, "np.isfinite", name="data", **counts):
        mxlearn.Module(small_net).fit(it, num_epoch=1)


def test_empty_or_exhausted_iterator(ready_module, small_iter):
    for _ in small_iter:
        pass  # a manual loop ran the iterator to its end
    with explained(TrainDataNotReset, "mod.fit()", "train_iter.reset()"):
        ready_module.fit(small_iter, optimizer_params=(("learning_rate", 0.1),), num_epoch=1)
    ready_module.fit(small_iter, optimizer_params=(("learning_rate", 0.1),), num_epoch=1)


def test_truly_empty_iterator(small_net, small_data):
    X, y = small_data
    empty = mx.io.NDArrayIter(X[:10], y[:10], 32, last_batch_handle="discard")
    with explained(EmptyTrainData, "mod.fit()", "batch_size"):
        mxlearn.Module(small_net).fit(empty, num_epoch=1)


def test_fit_needs_num_epoch_and_a_real_range(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    with explained(NoNumEpoch, "mod.fit(train_iter, num_epoch=5)"):
        mod.fit(small_iter)
    with explained(NothingToTrain, "num_epoch=6", begin_epoch=3, num_epoch=3, stop=6):
        mod.fit(small_iter, begin_epoch=3, num_epoch=3)


def test_fit_on_numpy_arrays(small_net, small_data):
    X, _ = small_data
    with explained(
        WrongKind,
        "mx.io.NDArrayIter(X, y",
        builtin=TypeError,
        called="mod.fit()",
        name="train_data",
    ):
        mxlearn.Module(small_net).fit(X, num_epoch=1)


# ---------------------------------------------------------------- names
def test_context_function_not_called(small_net):
    with explained(DeviceFunctionGiven, "context=mx.gpu(0)", builtin=TypeError, name="gpu"):
        mxlearn.Module(small_net, context=mx.gpu)


def test_gpu_when_mxnet_sees_none(small_net):
    if mx.context.num_gpus() > 0:
        pytest.fail("this test expects the CPU wheel; MXNet sees a GPU here")
    with explained(
        DeviceUnusable, "context=mx.cpu()", builtin=RuntimeError, context=mx.gpu(0)
    ) as info:
        mxlearn.Module(small_net, context=mx.gpu(0))
    assert info.value.fields["why"] == no_gpu_reason()  # no GPU here: the CPU build's reason


def test_data_names_that_match_nothing(small_net):
    with explained(NoSuchInput, "data_names=['data']", name="x", expected_data=["data"]):
        mxlearn.Module(small_net, data_names=["x"])


def test_label_names_derived_from_the_output_layer(small_net):
    with explained(
        NoSuchLabel,
        "label_names=['softmax_label']",
        name="label",
        expected_labels=["softmax_label"],
    ):
        mxlearn.Module(small_net, label_names=["label"])


def test_regression_label_name_is_derived(small_data):
    with explained(NoSuchLabel, name="softmax_label", expected_labels=["lro_label"]) as info:
        mxlearn.Module(mxlearn.models.linear_regression())
    assert "LinearRegressionOutput 'lro'" in info.value.fields["labels"]  # the layer that reads it


def test_names_given_as_a_string(small_net):
    with explained(WrongKind, "data_names=['data']", name="data_names", shown="'data'"):
        mxlearn.Module(small_net, data_names="data")


def test_iterator_names_that_match_nothing(small_net, small_data):
    X, y = small_data
    mod = mxlearn.Module(small_net)
    it = mx.io.NDArrayIter(X, y, 32, data_name="features")
    with explained(DataNamesDiffer, "data_name='data'", given=["features"], names=["data"]):
        mod.fit(it, num_epoch=1)
    it = mx.io.NDArrayIter(X, y, 32, label_name="label")
    with explained(
        LabelNamesDiffer, "label_name='softmax_label'", given=["label"], names=["softmax_label"]
    ):
        mod.fit(it, num_epoch=1)


def test_misspelled_metric_optimizer_and_setting(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    with explained(NoSuchMetric, spec="acuracy") as info:
        mod.fit(small_iter, eval_metric="acuracy", num_epoch=1)
    assert "'accuracy'" in info.value.fields["suggestion"]
    with explained(NoSuchOptimizer, optimizer="sgdd") as info:
        mod.fit(small_iter, optimizer="sgdd", num_epoch=1)
    assert "'sgd'" in info.value.fields["hint"]
    for wrong in ("learning_rat", "lr"):
        with explained(NoSuchSetting, "{'learning_rate': ", name=wrong, optimizer="sgd") as info:
            mod.fit(small_iter, optimizer_params={wrong: 0.1}, num_epoch=1)
        assert "'learning_rate'" in info.value.fields["hint"]
    assert mod.state == "created"  # nothing was bound or changed by the refused calls


def test_top_k_needs_fewer_than_all_classes(small_net, small_iter):
    mod = mxlearn.Module(small_net)
    mod.fit(small_iter, num_epoch=1)
    with explained(TopKCountsAll, metric="top_5_accuracy", classes=4, top_k=5):
        mod.score(small_iter, "top_k_acc")  # 5 of 4 classes: always right


def test_misspelled_attribute(small_net):
    mod = mxlearn.Module(small_net)
    with explained(NoSuchAttribute, builtin=AttributeError, name="set_param") as info:
        mod.set_param({}, {})
    assert "'set_params'" in info.value.fields["suggestion"]
    assert not hasattr(mod, "no_such_thing")


# ---------------------------------------------------------------- parameters and checkpoints
def test_set_params_from_another_network(ready_module):
    other = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=12))
    other.bind([("data", (32, 16))], [("softmax_label", (32,))])
    other.init_params()
    args, auxs = other.get_params()
    with explained(ParamsDoNotMatch, called="mod.set_params()") as info:
        ready_module.set_params(args, auxs)
    assert _problem_of(info.value.fields["problems"], "fc1_weight") == ["(12, 16)", "(8, 16)"]


def test_load_of_a_missing_epoch_lists_the_saved_ones(ready_module, tmp_path):
    prefix = str(tmp_path / "m")
    ready_module.save_checkpoint(prefix, 2)
    with explained(
        NoParamsForEpoch, builtin=FileNotFoundError, file=f"{prefix}-0003.params"
    ) as info:
        mxlearn.Module.load(prefix, 3)
    assert "[2]" in info.value.fields["saved"]  # the epochs there are
    with explained(NoSymbolFile, file=str(tmp_path / "no-such-symbol.json"), saved=[prefix]):
        mxlearn.load_checkpoint(str(tmp_path / "no-such"), 1)


def test_save_checkpoint_into_a_missing_folder(ready_module, tmp_path):
    with explained(NoPrefixFolder, "os.makedirs(", folder=str(tmp_path / "nope")):
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
    with explained(
        NoSuchArgument, name="optimizer_param", nearest="optimizer_params", builtin=TypeError
    ):
        ready_module.init_optimizer(
            optimizer="sgd", optimizer_param=(("learning_rate", 0.1),), force_init=True
        )
    with explained(
        NoSuchArgument, "mod.fit(num_epoch=...)", name="num_epochs", nearest="num_epoch"
    ):
        ready_module.fit(small_iter, num_epochs=2)
    with pytest.raises(TypeError):  # still a TypeError, as Python's own would be
        ready_module.score(small_iter, eval_metrics="acc")


def test_a_misspelled_checkpoint_prefix_lists_the_saved_ones(ready_module, tmp_path):
    ready_module.save_checkpoint(str(tmp_path / "mx_mlp"), 3)
    wrong = str(tmp_path / "mx_mpl")
    saved = str(tmp_path / "mx_mlp")
    with explained(NoSymbolFile, f"'{saved}'", prefix=wrong, saved=[saved]) as info:
        mxlearn.load_checkpoint(wrong, 3)
    assert str(info.value).count(f"'{saved}'") == 2  # listed, then as the one meant


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
    with explained(NoGradients, "mod.backward()"):
        ready_module.update()  # applied once, not twice


def test_loading_optimizer_states_without_an_updater_is_explained(ready_module, tmp_path):
    ready_module.save_optimizer_states(str(tmp_path / "s.states"))
    ready_module._updater = None  # as when a distributed kvstore updates on the servers
    with explained(StatesInKVStore, "mod.save_checkpoint(prefix, epoch)"):
        ready_module.load_optimizer_states(str(tmp_path / "s.states"), trust=True)


def test_an_unknown_kvstore_name_is_refused_with_the_closest(tmp_path):
    import mxlearn
    from mxlearn import mx

    X, y = mxlearn.datasets.synthetic_classification(num_samples=64, num_classes=4)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    with pytest.raises(UnknownKVStore) as caught:
        mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1, kvstore="locall")
    assert caught.value.fields["kvstore"] == "locall"
    assert "'local'" in caught.value.fields["hint"]  # the closest kvstore type
    assert not mod.params_initialized


def test_features_of_a_module_bound_for_images_are_counted_flat():
    import numpy as np

    import mxlearn
    from mxlearn import mx

    y = np.arange(64) % 4
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    mod.fit(mx.io.NDArrayIter(np.random.rand(64, 16, 3).astype("float32"), y, 32), num_epoch=1)
    flat = mx.io.NDArrayIter(np.random.rand(64, 16).astype("float32"), y, 32)
    with pytest.raises(FeaturesDifferFromBinding) as caught:
        mod.fit(flat, num_epoch=1, force_rebind=True)
    assert (caught.value.fields["features"], caught.value.fields["bound"]) == (16, 48)


def test_set_params_with_allow_missing_initializes_what_is_missing(ready_module):
    args, auxs = ready_module.get_params()
    partial = {k: v for k, v in args.items() if k != "fc2_weight"}
    with pytest.raises(ParamsDoNotMatch) as info:
        ready_module.set_params(partial, auxs)
    assert _problem_of(info.value.fields["problems"], "fc2_weight") == ["(4, 8)"]  # missing
    assert "mod.init_params(" in info.value.fix
    assert "force_init=True" in info.value.fix  # a call that fills the missing, not zeros
    ready_module.set_params(partial, auxs, allow_missing=True)  # keeps its own fc2_weight
    assert ready_module.get_params()[0]["fc2_weight"].asnumpy().any()
    fresh = mxlearn.Module(ready_module.symbol)
    fresh.bind(ready_module.data_shapes, ready_module.label_shapes)
    with pytest.raises(MissingLeftAsZeros) as info:
        fresh.set_params(partial, auxs, allow_missing=True)
    assert info.value.fields["missing"] == ["fc2_weight"]


def test_iter_predict_before_bind(small_net, small_iter):
    with pytest.raises(LifecycleError) as info:
        list(mxlearn.Module(small_net).iter_predict(small_iter))
    assert type(info.value) is NotBound and info.value.fields["called"] == "mod.iter_predict()"


def test_borrow_optimizer_from_a_module_without_one(ready_module, small_net):
    with pytest.raises(NoOptimizerToLend) as info:
        ready_module.borrow_optimizer(mxlearn.Module(small_net))
    assert "init_optimizer(" in info.value.fix
    assert "mod.borrow_optimizer(shared_module)" in info.value.fix


def test_a_params_path_that_is_a_folder(ready_module, tmp_path):
    (tmp_path / "m-0001.params").mkdir()
    with pytest.raises(ParamsIsFolder) as info:
        ready_module.load_params(str(tmp_path / "m-0001.params"))
    assert info.value.fields["path"] == str(tmp_path / "m-0001.params")


@pytest.mark.parametrize("kind", ["column", "one-hot"])
def test_badly_shaped_labels_in_score_and_validation(ready_module, small_data, small_iter, kind):
    X, y = small_data
    labels = y.reshape(-1, 1) if kind == "column" else mx.nd.one_hot(mx.nd.array(y), 4).asnumpy()
    fix = "y.ravel()" if kind == "column" else "y.argmax(axis=1)"
    refusal = LabelsOneColumnTooMany if kind == "column" else OneHotLabels
    with pytest.raises(refusal) as info:
        ready_module.score(mx.io.NDArrayIter(X, labels, 32), "acc")
    assert info.value.fields["called"] == "mod.score()"
    assert fix in info.value.fix
    with pytest.raises(refusal) as info:
        mxlearn.Module(ready_module.symbol).fit(
            small_iter, eval_data=mx.io.NDArrayIter(X, labels, 32), num_epoch=1
        )
    assert info.value.fields["called"] == "mod.fit(eval_data=...)"
    assert fix in info.value.fix


def test_shapes_a_layer_cannot_take_are_explained_at_bind():
    import mxlearn
    from mxlearn import mx

    pooled = mx.sym.Pooling(mx.sym.Variable("data"), kernel=(9, 9), pool_type="max")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(pooled, num_hidden=4), name="softmax")
    mod = mxlearn.Module(net)
    with pytest.raises(NetworkCannotTake) as caught:
        mod.bind(data_shapes=[("data", (32, 1, 4, 4))], label_shapes=[("softmax_label", (32,))])
    assert type(caught.value) is NetworkCannotTake
    reason = caught.value.fields["reason"]  # MXNet's own words, without its C++ file and line
    assert "operator pooling0" in reason and "kernel size (9) exceeds input" in reason
    text = str(caught.value)
    assert "convolution.cc" not in text and "pooling.cc" not in text
    assert "mod.symbol.infer_shape(data=(32, 1, 4, 4))" in text


def test_a_convolution_fed_flat_rows_is_told_the_image_layout():
    import mxlearn
    from mxlearn import mx

    conv = mx.sym.Convolution(mx.sym.Variable("data"), kernel=(3, 3), num_filter=4, name="conv1")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(conv, num_hidden=4), name="softmax")
    with pytest.raises(ImagesNeedFourAxes) as caught:
        mxlearn.Module(net).bind(
            data_shapes=[("data", (32, 16))], label_shapes=[("softmax_label", (32,))]
        )
    assert "Input data should be 4D" in caught.value.fields["reason"]  # MXNet's own words
    assert caught.value.fields["data"] == "data (32, 16)"
    assert "X.reshape(-1, 1, 28, 28)" in caught.value.fix


def test_integer_labels_from_a_custom_iterator_are_told_the_type_not_the_shape():
    import numpy as np

    import mxlearn
    from mxlearn import mx

    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    labels = mx.io.DataDesc("softmax_label", (8,), np.int32)
    with pytest.raises(InputTypesDiffer) as caught:
        mod.bind(data_shapes=[("data", (8, 16))], label_shapes=[labels])
    assert "y.astype('float32')" in str(caught.value)
    assert "infer_shape" not in str(caught.value)


def test_fit_on_an_iterator_without_labels_names_the_missing_labels(small_data, small_net):
    X, y = small_data
    with pytest.raises(TrainDataWithoutLabels) as refused:
        mxlearn.Module(small_net).fit(mx.io.NDArrayIter(X, batch_size=32), num_epoch=1)
    assert "softmax_label" in refused.value.fields["expects"]
    # the advice followed: the iterator made with the labels trains
    fixed = eval(refused.value.fix.split(" = ")[1], {"mx": mx, "X": X, "y": y})
    mod = mxlearn.Module(small_net)
    mod.fit(fixed, num_epoch=1)
    assert mod.score(fixed, "acc")[0][1] > 0


def test_an_unlabelled_iterators_empty_provide_label_binds_for_prediction(small_data, small_net):
    X, _ = small_data
    unlabelled = mx.io.NDArrayIter(X, batch_size=32)
    mod = mxlearn.Module(small_net)
    mod.bind(unlabelled.provide_data, unlabelled.provide_label, for_training=False)
    mod.init_params()
    assert mod.predict(unlabelled).shape == (len(X), 4)


def test_forward_of_a_list_of_arrays_is_refused_as_not_batches(ready_module, small_data):
    X, _ = small_data
    with pytest.raises(NotADataBatch) as refused:
        ready_module.forward([mx.nd.array(X[:32])], is_train=False)
    assert refused.value.fields["kind"] == "NDArray"
    assert "got a list of NDArray." in str(refused.value)


def test_max_shapes_given_as_one_pair_are_refused_as_not_a_list_of_pairs(small_net):
    from mxlearn.rules import WrongKind

    with pytest.raises(WrongKind) as refused:
        mxlearn.MutableModule(small_net, max_data_shapes=("data", (32, 16)))
    assert refused.value.fields["name"] == "max_data_shapes"


def _step(cls, net, X, labels):
    mxlearn.seed(0)
    mod = cls(net, context=mx.cpu())
    mod.bind([("data", (32, 16))], [("softmax_label", (32,))])
    mod.init_params(mx.init.One())
    mod.init_optimizer(optimizer_params={"learning_rate": 0.5})
    mod.forward(mx.io.DataBatch([mx.nd.array(X[:32])], labels), is_train=True)
    mod.backward()
    mod.update()
    return mod.get_params()[0]


@pytest.mark.parametrize("kind", ["numpy.ndarray", "list"])
def test_labels_that_are_not_ndarrays_are_refused_and_ndarrays_train_as_in_mxnet(
    small_data, small_net, kind
):
    X, y = small_data
    given = y[:32] if kind == "numpy.ndarray" else list(y[:32])
    with pytest.raises(AttributeError, match="copyto"):  # MXNet cannot load them either
        _step(mx.mod.Module, small_net, X, [given])
    with pytest.raises(LabelsNotNDArrays) as refused:
        _step(mxlearn.Module, small_net, X, [given])
    assert refused.value.fields["kind"] == kind and isinstance(refused.value, NotADataBatch)
    assert "mx.nd.array(y)" in refused.value.fix
    # the advice followed: the same step as MXNet's
    ours = _step(mxlearn.Module, small_net, X, [mx.nd.array(y[:32])])
    for name, value in _step(mx.mod.Module, small_net, X, [mx.nd.array(y[:32])]).items():
        np.testing.assert_allclose(ours[name].asnumpy(), value.asnumpy(), err_msg=name)


def test_a_batch_whose_label_is_one_array_is_refused_as_not_a_list(ready_module, small_data):
    X, y = small_data

    class Batch:  # a batch of the student's own: MXNet reads its data and label
        data, label = [mx.nd.array(X[:32])], y[:32]
        pad = index = provide_data = provide_label = None

    with pytest.raises(LabelsNotAList) as refused:
        ready_module.forward(Batch(), is_train=True)
    assert refused.value.fields["kind"] == "numpy.ndarray"


def test_a_module_bound_without_labels_leaves_a_batchs_numpy_labels_alone_as_mxnet_does(
    small_data, small_net
):
    X, y = small_data
    outputs = []
    for cls in (mx.mod.Module, mxlearn.Module):
        mxlearn.seed(0)
        mod = cls(small_net, context=mx.cpu())
        mod.bind([("data", (32, 16))], for_training=False)  # no label inputs bound
        mod.init_params(mx.init.One())
        mod.forward(mx.io.DataBatch([mx.nd.array(X[:32])], [y[:32]]), is_train=False)
        outputs.append(mod.get_outputs()[0].asnumpy())
    np.testing.assert_allclose(*outputs)


def test_a_module_bound_without_labels_leaves_a_label_that_is_one_array_alone(
    small_data, small_net
):
    X, y = small_data

    class Batch:  # one NumPy array as the label, not a list: MXNet never reads it here
        data, label = [mx.nd.array(X[:32])], y[:32]
        pad = index = provide_data = provide_label = None

    outputs = []
    for cls in (mx.mod.Module, mxlearn.Module):
        mod = cls(small_net, context=mx.cpu())
        mod.bind([("data", (32, 16))], for_training=False)
        mod.init_params(mx.init.One())
        mod.forward(Batch(), is_train=False)
        outputs.append(mod.get_outputs()[0].asnumpy())
    np.testing.assert_allclose(*outputs)


class _NumpyLabelled(mx.io.DataIter):
    """An iterator of the student's own whose batches hold NumPy labels."""

    def __init__(self, X, y):
        super().__init__(32)
        self.X, self.y, self.at = X, y, 0
        self.provide_data = [mx.io.DataDesc("data", (32, X.shape[1]))]
        self.provide_label = [mx.io.DataDesc("softmax_label", (32,))]

    def reset(self):
        self.at = 0

    def next(self):
        if self.at + 32 > len(self.X):
            raise StopIteration
        rows = slice(self.at, self.at + 32)
        self.at += 32
        return mx.io.DataBatch([mx.nd.array(self.X[rows])], [self.y[rows]])


def test_numpy_labels_are_refused_in_every_batch_not_only_the_first(ready_module, small_data):
    X, y = small_data
    ready_module.forward(mx.io.DataBatch([mx.nd.array(X[:32])], [mx.nd.array(y[:32])]), True)
    with pytest.raises(LabelsNotNDArrays):
        ready_module.forward(mx.io.DataBatch([mx.nd.array(X[:32])], [y[:32]]), is_train=True)
    with pytest.raises(LabelsNotNDArrays):
        ready_module.forward(mx.io.DataBatch([mx.nd.array(X[:32])], [y[:32]]), is_train=False)


def test_fit_on_an_iterator_of_numpy_labels_is_refused(small_data, small_net):
    X, y = small_data
    with pytest.raises(LabelsNotNDArrays):
        mxlearn.Module(small_net).fit(_NumpyLabelled(X, y), num_epoch=1)
