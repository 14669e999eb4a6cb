"""A careless student's wrong values, one parameter at a time: every public call either accepts
the value or refuses it with an mxlearn error; no raw TypeError/AttributeError/... from inside.

Each call starts from a right call (``CALLS``); each of its parameters is given each of the
wrong values in turn, the others kept right.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import io

import numpy as np
import pytest

import mxlearn
from mxlearn import mx
from mxlearn.boundary import CallFailedInMxlearn
from mxlearn.errors import MXLearnError


def wrong_values(folder) -> dict:
    return {
        "None": None,
        "negative": -3,
        "NaN": float("nan"),
        "a string": "text",
        "an empty list": [],
        "a dict": {"a": 1},
        "a NumPy matrix": np.matrix([[1.0, 2.0]]),
        "an NDArray": mx.nd.ones((2, 2)),
        "a folder": str(folder),
        "an object": object(),
        "True": True,
    }


def data():
    rng = np.random.RandomState(0)
    X = rng.rand(64, 16).astype("float32")
    return X, (np.arange(64) % 4).astype("float32")


def it():
    X, y = data()
    return mx.io.NDArrayIter(X, y, batch_size=32)


def net():
    return mxlearn.models.mlp(num_classes=4, num_hidden=8)


def fresh():
    return mxlearn.Module(net())


def bound():
    mod = fresh()
    train = it()
    mod.bind(train.provide_data, train.provide_label)
    return mod


def initialised():
    mod = bound()
    mod.init_params()
    return mod


def ready():
    mod = initialised()
    mod.init_optimizer()
    return mod


def forwarded():
    mod = ready()
    mod.forward(next(iter(it())), is_train=True)
    return mod


def batch():
    return next(iter(it()))


def trained():
    mod = fresh()
    mod.fit(it(), num_epoch=1)
    return mod


def with_params(mod):
    arg_params, aux_params = mod.get_params()
    return mod.set_params, dict(arg_params=arg_params, aux_params=aux_params)


# name -> a factory of (the call, its right arguments by name)
CALLS = {
    "Module": lambda: (mxlearn.Module, dict(symbol=net(), context=mx.cpu())),
    "MutableModule": lambda: (mxlearn.MutableModule, dict(symbol=net(), cache_size=4)),
    "bind": lambda: (
        fresh().bind,
        dict(data_shapes=it().provide_data, label_shapes=it().provide_label),
    ),
    "init_params": lambda: (bound().init_params, dict(initializer=mx.init.Xavier())),
    "init_optimizer": lambda: (
        initialised().init_optimizer,
        dict(optimizer="sgd", optimizer_params={"learning_rate": 0.1}),
    ),
    "forward": lambda: (ready().forward, dict(data_batch=batch(), is_train=True)),
    "update_metric": lambda: (
        forwarded().update_metric,
        dict(eval_metric=mx.metric.Accuracy(), labels=batch().label),
    ),
    "set_params": lambda: with_params(initialised()),
    "reshape": lambda: (
        ready().reshape,
        dict(data_shapes=[("data", (16, 16))], label_shapes=[("softmax_label", (16,))]),
    ),
    "fit": lambda: (fresh().fit, dict(train_data=it(), eval_data=it(), num_epoch=1)),
    "score": lambda: (trained().score, dict(eval_data=it(), eval_metric="acc")),
    "predict": lambda: (trained().predict, dict(eval_data=it())),
    "lr_find": lambda: (
        mxlearn.lr_find,
        dict(mod_or_symbol=net(), train_iter=it(), num_batches=4, plot=False),
    ),
    "compare": lambda: (
        functools.partial(mxlearn.compare, trained(), trained()),
        dict(labels=["a", "b"], show=False),
    ),
    "show_network": lambda: (mxlearn.show_network, dict(symbol=net(), data=(32, 16))),
    "LivePlot": lambda: (mxlearn.LivePlot, dict(backend="console")),
    "EarlyStopping": lambda: (mxlearn.EarlyStopping, dict(patience=2)),
    "Checkpoint": lambda: (mxlearn.Checkpoint, dict(prefix="runs/m", period=1)),
    "set_language": lambda: (mxlearn.set_language, dict(name="en")),
    "hint": lambda: (mxlearn.hint, dict(exercise="01.1")),
    "create_metric": lambda: (mxlearn.create_metric, dict(spec="acc")),
    "context_list": lambda: (mxlearn.context_list, dict(count=2, verbose=False)),
    "letter_iters": lambda: (mxlearn.datasets.letter_iters, dict(batch_size=32)),
    "load_checkpoint": lambda: (mxlearn.load_checkpoint, dict(prefix="runs/none", epoch=1)),
    "launch": lambda: (mxlearn.distributed.launch, dict(script="no-such-train.py", workers=1)),
    "models.mlp": lambda: (mxlearn.models.mlp, dict(num_classes=4)),
    "models.conv_net": lambda: (mxlearn.models.conv_net, dict(num_classes=3)),
    "LayerStats": lambda: (mxlearn.LayerStats, dict(every=10)),
    "seed": lambda: (mxlearn.seed, dict(n=3)),
    "checks.output_shape": lambda: (
        mxlearn.checks.output_shape,
        dict(mod=forwarded(), expected=(32, 4)),
    ),
    "checks.parameters_changed": lambda: (
        lambda m: (mxlearn.checks.parameters_changed, dict(mod=m, before={}))
    )(ready()),
    "checks.learned": lambda: (mxlearn.checks.learned, dict(mod=trained(), eval_iter=it())),
    "checks.prediction_shape": lambda: (
        mxlearn.checks.prediction_shape,
        dict(predictions=mx.nd.ones((64, 4)), eval_iter=it(), num_classes=4),
    ),
}


def parameters(call) -> list[str]:
    skipped = {"self", "unknown", "kwargs", "runs", "clock", "logger"}
    return [
        name
        for name, p in inspect.signature(call).parameters.items()
        if name not in skipped and p.kind is not p.VAR_KEYWORD and p.kind is not p.VAR_POSITIONAL
    ]


def outcome(call, arguments: dict) -> str | None:
    """None when accepted or refused by mxlearn; otherwise what escaped."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            call(**arguments)
    except CallFailedInMxlearn as failed:  # explained, but no check caught the value first
        return f"unchecked: {failed.fields['reason']}"
    except MXLearnError:
        return None
    except Exception as raw:  # noqa: BLE001  (that is what this test looks for)
        return f"raw {type(raw).__name__}: {str(raw).splitlines()[0][:120] if str(raw) else ''}"
    return None


@pytest.mark.parametrize("name", sorted(CALLS))
def test_wrong_values_are_refused_by_mxlearn_or_accepted(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    escaped = []
    call, right = CALLS[name]()
    for parameter in parameters(call):
        for label, value in wrong_values(tmp_path / "folder").items():
            call, right = CALLS[name]()
            found = outcome(call, {**right, parameter: value})
            if found is not None:
                escaped.append(f"{name}({parameter}={label}): {found}")
    mxlearn.set_language("en")
    assert not escaped, "\n".join(escaped)


def test_a_rule_reads_its_own_argument_after_a_star_parameter():
    """compare(*runs, show=...): the third run is not ``show``."""
    runs = [mxlearn.Module(net()) for _ in range(3)]
    for mod in runs:
        with contextlib.redirect_stdout(io.StringIO()):
            mod.fit(it(), num_epoch=1)
    comparison = mxlearn.compare(*runs, show=False)
    assert len(comparison.runs) == 3


COMMAND_LINES = [
    *(["tour", "--epochs", v] for v in ("-3", "0", "nan", "text")),
    *(["launch", option, v, "train.py"] for option in ("-n", "-s") for v in ("-3", "0", "x")),
    *(["launch", "--timeout", v, "train.py"] for v in ("-3", "0", "nan", "inf", "text")),
    *(["grade", "folder", "--timeout", v] for v in ("-3", "0", "nan", "inf", "text")),
    *(["grade", "folder", option, v] for option in ("--memory-mb", "--jobs") for v in ("-3", "0")),
    ["grade", "nothere"],
    ["course", "--notebooks", "nothere"],
    ["course", "--notebooks", "folder", "--out", "o", "--student", "s"],
    ["launch", "folder"],
    ["mark", "nothere.ipynb"],
    ["mark", "folder"],
    ["mark", "train.py"],  # a file that is not a notebook
]


@pytest.mark.parametrize("argv", COMMAND_LINES, ids=" ".join)
def test_the_command_line_refuses_wrong_values_before_running(argv, tmp_path, monkeypatch, capsys):
    from mxlearn.__main__ import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    (tmp_path / "train.py").write_text("raise SystemExit('this job must not start')\n")
    try:
        code = main(argv)
    except SystemExit as refused:  # argparse's refusal: its usage line and the reason
        code = refused.code
    said = capsys.readouterr().err
    assert code in (1, 2), said
    assert "Traceback" not in said and "failed inside" not in said, said
    assert "mxlearn" in said


def test_numpy_integers_count_where_python_integers_do():
    mxlearn.seed(np.int64(3))
    assert mxlearn.LayerStats(every=np.int64(10)).every == 10
    with contextlib.redirect_stdout(io.StringIO()):
        fresh().fit(it(), eval_data=it(), num_epoch=2, early_stopping=np.int64(1))


@pytest.mark.parametrize("figsize", [(8,), (-8, 3), ("a", "b"), (1e6, 1e6)])
def test_a_figure_size_is_checked_before_training_not_after(figsize):
    from mxlearn.rules import OutOfRange, WrongKind

    with pytest.raises((WrongKind, OutOfRange)) as refused:
        mxlearn.LivePlot(backend="console", figsize=figsize)
    assert refused.value.fields["name"] == "figsize"


def test_parameters_as_numpy_arrays_are_refused_at_the_call_made():
    from mxlearn.rules import WrongKind

    mod = initialised()
    arg_params, aux_params = mod.get_params()
    with pytest.raises(WrongKind) as refused:
        mod.set_params({k: v.asnumpy() for k, v in arg_params.items()}, aux_params)
    assert refused.value.fields["called"] == "mod.set_params()"
