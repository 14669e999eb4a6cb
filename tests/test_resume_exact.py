"""Resume is exact for every optimizer MXNet ships and for schedules that keep lists: a run
checkpointed after 2 epochs and resumed in a fresh process to epoch 4 ends with every
parameter byte and the update count of a run never interrupted."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import mxlearn

OPTIMIZERS = [
    "sgd",
    "nag",
    "adam",
    "adagrad",
    "adadelta",
    "rmsprop",
    "ftrl",
    "adamax",
    "nadam",
    "signum",
    "ftml",
    "lamb",
    "dcasgd",
    "lars",
]

COMMON = textwrap.dedent(
    """
    import hashlib, json, sys
    import mxlearn
    from mxlearn import mx

    def data():
        X, y = mxlearn.datasets.synthetic_classification(num_samples=256, num_classes=4, seed=3)
        return mx.io.NDArrayIter(X, y, batch_size=32)

    def settings(name):
        params = {"learning_rate": 0.01}
        if name in ("sgd", "nag", "signum", "lars"):
            params["momentum"] = 0.9
        if name == "sgd+multifactor":
            params["lr_scheduler"] = mx.lr_scheduler.MultiFactorScheduler(step=[10, 20], factor=0.5)
        return name.split("+")[0], params

    def fingerprint(mod):
        args, auxs = mod.get_params()
        digest = hashlib.sha256()
        for name in sorted(args):
            digest.update(args[name].asnumpy().tobytes())
        return {"sha256": digest.hexdigest(), "num_update": mod.optimizer.num_update}
    """
)

TRAIN = COMMON + textwrap.dedent(
    """
    folder, names = sys.argv[1], sys.argv[2].split(",")
    found = {}
    for name in names:
        for prefix, epochs in (("whole", 4), ("part", 2)):
            optimizer, params = settings(name)  # a fresh schedule object for each run
            mxlearn.seed(7)
            mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=16))
            mod.fit(data(), num_epoch=epochs, optimizer=optimizer, optimizer_params=params,
                    initializer=mx.init.Xavier(), checkpoint=f"{folder}/{name}-{prefix}")
            if prefix == "whole":
                found[name] = fingerprint(mod)
    print(json.dumps(found))
    """
)

RESUME = COMMON + textwrap.dedent(
    """
    folder, names = sys.argv[1], sys.argv[2].split(",")
    found = {}
    for name in names:
        mod = mxlearn.resume(f"{folder}/{name}-part")
        mod.fit(data(), num_epoch=4, checkpoint=f"{folder}/{name}-part")
        found[name] = fingerprint(mod)
    print(json.dumps(found))
    """
)


def _run(script: str, folder, names) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", script, str(folder), ",".join(names)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_every_optimizer_and_a_multi_step_schedule_resume_exactly(tmp_path):
    names = [*OPTIMIZERS, "sgd+multifactor"]
    whole = _run(TRAIN, tmp_path, names)  # uninterrupted runs, and runs stopped after epoch 2
    resumed = _run(RESUME, tmp_path, names)  # a fresh process resumes those to epoch 4
    differ = {n: (resumed[n], whole[n]) for n in names if resumed[n] != whole[n]}
    assert not differ, differ
    assert whole["sgd"]["num_update"] == 4 * 8


@pytest.mark.parametrize("attribute", ["step"])
def test_a_schedule_keeps_its_step_list(tmp_path, attribute):
    import mxlearn
    from mxlearn import mx

    X, y = mxlearn.datasets.synthetic_classification(num_samples=64, num_classes=4)
    schedule = mx.lr_scheduler.MultiFactorScheduler(step=[3, 5], factor=0.5)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    mod.fit(
        mx.io.NDArrayIter(X, y, 32),
        num_epoch=1,
        checkpoint=str(tmp_path / "m"),
        optimizer_params={"learning_rate": 0.1, "lr_scheduler": schedule},
    )
    manifest = mxlearn.checkpoint.read_manifest(str(tmp_path / "m"), 1)
    assert manifest["optimizer"]["lr_scheduler"]["state"][attribute] == [3, 5]
    assert manifest["optimizer"]["not_saved"] == []


def test_what_cannot_be_saved_is_recorded_and_named_on_resume(tmp_path, capsys):
    import mxlearn
    from mxlearn import mx

    class MySchedule(mx.lr_scheduler.FactorScheduler):
        """A schedule of the user's own: mxlearn cannot rebuild its class from a file."""

    X, y = mxlearn.datasets.synthetic_classification(num_samples=64, num_classes=4)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    mod.fit(
        mx.io.NDArrayIter(X, y, 32),
        num_epoch=1,
        checkpoint=str(tmp_path / "m"),
        optimizer_params={"learning_rate": 0.1, "lr_scheduler": MySchedule(step=2)},
    )
    manifest = mxlearn.checkpoint.read_manifest(str(tmp_path / "m"), 1)
    assert manifest["optimizer"]["not_saved"] == [
        "the learning-rate schedule (a MySchedule, not one of MXNet's)"
    ]
    capsys.readouterr()
    mxlearn.resume(str(tmp_path / "m"))
    assert (
        "the resumed run will differ from an uninterrupted one there: the learning-rate "
        "schedule (a MySchedule" in capsys.readouterr().out
    )


RANDOM_COMMON = textwrap.dedent(
    """
    import hashlib, json, sys
    import mxlearn
    from mxlearn import mx

    def network(kind):
        if kind == "letters":
            return mxlearn.models.mlp(num_classes=26, num_hidden=32)
        data = mx.sym.Variable("data")
        net = mx.sym.FullyConnected(data, num_hidden=32)
        net = mx.sym.BatchNorm(net, fix_gamma=False)
        net = mx.sym.Activation(net, act_type="relu")
        net = mx.sym.Dropout(net, p=0.3)
        net = mx.sym.FullyConnected(net, num_hidden=26)
        return mx.sym.SoftmaxOutput(net, name="softmax")

    def settings():
        schedule = mx.lr_scheduler.MultiFactorScheduler(step=[600, 1200], factor=0.5)
        return {"learning_rate": 0.05, "momentum": 0.9, "lr_scheduler": schedule}

    def fingerprint(mod):
        args, auxs = mod.get_params()
        digest = hashlib.sha256()
        for name in sorted(args):
            digest.update(args[name].asnumpy().tobytes())
        for name in sorted(auxs):
            digest.update(auxs[name].asnumpy().tobytes())
        return {"sha256": digest.hexdigest(), "num_update": mod.optimizer.num_update}
    """
)

RANDOM_TRAIN = RANDOM_COMMON + textwrap.dedent(
    """
    folder, kind, epochs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    mxlearn.seed(11)
    train, val = mxlearn.datasets.letter_iters(batch_size=64)
    mod = mxlearn.Module(network(kind))
    mod.fit(train, eval_data=val, num_epoch=epochs, optimizer_params=settings(),
            initializer=mx.init.Xavier(), checkpoint=f"{folder}/{kind}-{epochs}")
    print(json.dumps(fingerprint(mod)))
    """
)

RANDOM_RESUME = RANDOM_COMMON + textwrap.dedent(
    """
    folder, kind = sys.argv[1], sys.argv[2]
    mxlearn.seed(999)  # another process, another state: the checkpoint must bring its own
    train, val = mxlearn.datasets.letter_iters(batch_size=64)
    mod = mxlearn.resume(f"{folder}/{kind}-2")
    mod.fit(train, eval_data=val, num_epoch=4, checkpoint=f"{folder}/{kind}-2")
    print(json.dumps(fingerprint(mod)))
    """
)


def _run_random(script: str, *args) -> tuple[dict, str]:
    done = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["letters", "dropout-batchnorm"])
def test_shuffled_data_and_random_operators_resume_exactly(tmp_path, kind):
    """Shuffled letter iterators, momentum and a MultiFactorScheduler; a network with Dropout
    and BatchNorm: stopped after 2 epochs and resumed in a fresh process to epoch 4, every
    parameter byte (auxiliary states too) and the update count match an uninterrupted run."""
    whole, _ = _run_random(RANDOM_TRAIN, tmp_path, kind, 4)
    _run_random(RANDOM_TRAIN, tmp_path, kind, 2)
    resumed, printed = _run_random(RANDOM_RESUME, tmp_path, kind)
    assert resumed == whole
    assert whole["num_update"] == 4 * 250
    assert "will differ" not in printed


def _small_run(prefix, train_iter, epochs=1):
    import mxlearn

    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    mod.fit(train_iter, num_epoch=epochs, checkpoint=prefix)
    return mod


def test_an_iterator_whose_order_cannot_be_saved_is_named_on_resume(tmp_path, capsys):
    import mxlearn
    from mxlearn import mx

    X, y = mxlearn.datasets.synthetic_classification(num_samples=64, num_classes=4)
    inner = mx.io.NDArrayIter(X, y, 16, shuffle=True)
    _small_run(str(tmp_path / "m"), mx.io.ResizeIter(inner, 4))
    manifest = mxlearn.checkpoint.read_manifest(str(tmp_path / "m"), 1)
    assert manifest["random"]["not_saved"] == [
        "the order of the training data (a ResizeIter: mxlearn saves the order of an "
        "mx.io.NDArrayIter only)"
    ]
    capsys.readouterr()
    mxlearn.resume(str(tmp_path / "m"))
    assert "differ from an uninterrupted one there: the order of the training data (a " in (
        capsys.readouterr().out
    )


def test_resuming_on_other_rows_says_the_order_was_not_restored(tmp_path, capsys):
    import mxlearn
    from mxlearn import mx

    X, y = mxlearn.datasets.synthetic_classification(num_samples=64, num_classes=4)
    _small_run(str(tmp_path / "m"), mx.io.NDArrayIter(X, y, 16, shuffle=True))
    mod = mxlearn.resume(str(tmp_path / "m"))
    capsys.readouterr()
    mod.fit(mx.io.NDArrayIter(X[:48], y[:48], 16, shuffle=True), num_epoch=2)
    assert (
        "this run will differ from an uninterrupted one: the training data holds other rows "
        "than the checkpoint's run trained on" in capsys.readouterr().out
    )


def test_a_checkpoint_keeps_a_shuffled_order_only_with_the_rows_it_needs(tmp_path):
    import mxlearn
    from mxlearn import mx

    X, y = mxlearn.datasets.synthetic_classification(num_samples=64, num_classes=4)
    _small_run(str(tmp_path / "fixed"), mx.io.NDArrayIter(X, y, 16))
    _small_run(str(tmp_path / "shuffled"), mx.io.NDArrayIter(X, y, 16, shuffle=True))
    fixed = mxlearn.checkpoint.read_manifest(str(tmp_path / "fixed"), 1)
    shuffled = mxlearn.checkpoint.read_manifest(str(tmp_path / "shuffled"), 1)
    assert "random" not in fixed["files"] and fixed["random"]["iterator"]["shuffle"] is False
    assert shuffled["files"]["random"]["name"] == "shuffled-0001.random.params"
    assert fixed["random"]["not_saved"] == [] and isinstance(fixed["random"]["mxnet_run_seed"], int)


def test_a_resume_that_cannot_be_exact_says_why(tmp_path, capsys):
    import mxlearn
    from mxlearn import mx

    X, y = mxlearn.datasets.synthetic_classification(num_samples=64, num_classes=4)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    mod.fit(
        mx.io.NDArrayIter(X, y, 32, shuffle=True),
        num_epoch=1,
        checkpoint=str(tmp_path / "m"),
        optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
    )
    capsys.readouterr()
    mxlearn.resume(str(tmp_path / "m")).fit(
        mx.io.NDArrayIter(X, y, 16, shuffle=True),
        num_epoch=2,
        optimizer_params={"learning_rate": 0.2, "momentum": 0.9},
    )
    out = capsys.readouterr().out
    assert "the checkpoint's run used {'learning_rate': 0.1, 'momentum': 0.9}" in out
    assert "the training batches are cut differently (16 rows, last batch 'pad')" in out


DEVICES = textwrap.dedent(
    """
    import hashlib, json, sys
    import mxlearn
    from mxlearn import mx

    folder, devices, epochs, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    context = [mx.cpu(i) for i in range(devices)]
    X, y = mxlearn.datasets.synthetic_classification(num_samples=256, num_classes=4, seed=3)
    data = mx.io.NDArrayIter(X, y, 32, shuffle=True)
    settings = {"learning_rate": 0.1, "momentum": 0.9}
    if mode == "resume":
        mod = mxlearn.resume(f"{folder}/m", context=context)
    else:
        mxlearn.seed(5)
        mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=16), context=context)
    mod.fit(data, num_epoch=epochs, optimizer_params=settings, checkpoint=f"{folder}/m")
    momentum = sum(float(s.norm().asscalar()) for s in mod.updater.states.values() if s is not None)
    print(json.dumps({"num_update": mod.optimizer.num_update, "momentum": momentum > 0}))
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("saved_on, resumed_on", [(2, 1), (1, 2)])
def test_a_resume_on_other_devices_keeps_momentum_and_counts(tmp_path, saved_on, resumed_on):
    _run_random(DEVICES, tmp_path, saved_on, 2, "train")
    resumed, printed = _run_random(DEVICES, tmp_path, resumed_on, 3, "resume")
    assert resumed == {"num_update": 3 * 8, "momentum": True}


EARLY = textwrap.dedent(
    """
    import hashlib, json, sys
    import mxlearn
    from mxlearn import mx

    folder, mode = sys.argv[1], sys.argv[2]
    mxlearn.seed(99 if mode == "resume" else 3)  # the resumed process: another state
    X, y = mxlearn.datasets.synthetic_classification(num_samples=256, num_classes=4)
    Xv, yv = mxlearn.datasets.synthetic_classification(num_samples=256, num_classes=4, seed=1)
    train = mx.io.NDArrayIter(X, y, 32, shuffle=True)
    val = mx.io.NDArrayIter(Xv, yv, 64)
    settings = dict(optimizer_params={"learning_rate": 0.05, "momentum": 0.9}, early_stopping=2)
    if mode == "resume":
        mod = mxlearn.resume(f"{folder}/part")
        mod.fit(train, eval_data=val, num_epoch=12, checkpoint=f"{folder}/part", **settings)
    else:
        mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=16))
        epochs, prefix = (12, "whole") if mode == "whole" else (2, "part")
        mod.fit(train, eval_data=val, num_epoch=epochs, checkpoint=f"{folder}/{prefix}", **settings)
    args, _ = mod.get_params()
    digest = hashlib.sha256(b"".join(args[n].asnumpy().tobytes() for n in sorted(args)))
    print(json.dumps({"sha256": digest.hexdigest(), "num_update": mod.optimizer.num_update}))
    """
)


@pytest.mark.slow
def test_early_stopping_carries_on_across_a_resume(tmp_path):
    whole, told = _run_random(EARLY, tmp_path, "whole")
    _run_random(EARLY, tmp_path, "part")
    resumed, printed = _run_random(EARLY, tmp_path, "resume")
    assert "Early stopping" in told and resumed == whole
    best = [line for line in told.splitlines() if "Early stopping" in line]
    assert best[0] in printed  # the same best epoch and value


CHANGED = textwrap.dedent(
    """
    import hashlib, json, sys
    import mxlearn
    from mxlearn import mx

    folder, change, mode = sys.argv[1], sys.argv[2], sys.argv[3]

    class Change(mxlearn.Callback):
        '''Changes the optimizer's settings during the run, as a student's callback would.'''

        def on_epoch_end(self, run, epoch):
            optimizer = run.module.optimizer
            if change == "set_learning_rate" and epoch == 0:
                optimizer.set_learning_rate(0.5)
            elif change == "halve_lr":  # every epoch, by hand
                run.module._optimizer.lr = run.module._optimizer.lr * 0.5
            elif change == "wd_momentum" and epoch == 0:
                optimizer.wd, optimizer.momentum = 1e-3, 0.5
            elif change == "lr_mult" and epoch == 0:
                optimizer.set_lr_mult({"fc1_weight": 0.1})

    mxlearn.seed(99 if mode == "resume" else 5)  # the resumed process: another state
    X, y = mxlearn.datasets.synthetic_classification(num_samples=128, num_classes=4, seed=3)
    data = mx.io.NDArrayIter(X, y, 32, shuffle=True)
    settings = dict(optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    if mode == "resume":
        mod = mxlearn.resume(f"{folder}/{change}-part")
        mod.fit(data, num_epoch=4, checkpoint=f"{folder}/{change}-part", callbacks=[Change()])
    else:
        mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=16))
        epochs, prefix = (4, "whole") if mode == "whole" else (2, "part")
        mod.fit(data, num_epoch=epochs, checkpoint=f"{folder}/{change}-{prefix}",
                callbacks=[Change()], **settings)
    args, _ = mod.get_params()
    digest = hashlib.sha256(b"".join(args[n].asnumpy().tobytes() for n in sorted(args)))
    optimizer = mod.optimizer
    print(json.dumps({"sha256": digest.hexdigest(), "lr": optimizer.lr, "wd": optimizer.wd,
                      "lr_mult": optimizer.lr_mult, "num_update": optimizer.num_update}))
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("change", ["set_learning_rate", "halve_lr", "wd_momentum", "lr_mult"])
def test_settings_a_callback_changed_during_the_run_are_restored_exactly(tmp_path, change):
    """#26: a callback that changed the rate (set_learning_rate, or _optimizer.lr by hand), the
    weight decay and momentum, or a layer's rate multiplier: the resumed run goes on with the
    changed settings, byte for byte as an uninterrupted run with the same callback."""
    whole, _ = _run_random(CHANGED, tmp_path, change, "whole")
    _run_random(CHANGED, tmp_path, change, "part")
    resumed, printed = _run_random(CHANGED, tmp_path, change, "resume")
    assert resumed == whole
    assert "goes on with them" in printed and "will differ" not in printed


class _SetRate(mxlearn.Callback):
    def __init__(self, rate):
        self.rate = rate

    def on_epoch_end(self, run, epoch):
        run.module.optimizer.lr = self.rate


def _changed_run(prefix, rate):
    import mxlearn
    from mxlearn import mx

    X, y = mxlearn.datasets.synthetic_classification(num_samples=64, num_classes=4)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    data = mx.io.NDArrayIter(X, y, 32)
    mod.fit(
        data,
        num_epoch=1,
        checkpoint=prefix,
        callbacks=[_SetRate(rate)],
        optimizer_params={"learning_rate": 0.1},
    )
    return data


def test_a_rate_a_checkpoint_cannot_hold_is_named_on_resume(tmp_path, capsys):
    import numpy as np

    import mxlearn

    prefix = str(tmp_path / "m")
    _changed_run(prefix, np.float32(0.5))  # JSON would give it back as another type
    manifest = mxlearn.checkpoint.read_manifest(prefix, 1)
    assert manifest["optimizer"]["not_saved"] == ["the optimizer's lr (a float32)"]
    capsys.readouterr()
    mxlearn.resume(prefix)
    assert "uninterrupted one there: the optimizer's lr (a float32)" in capsys.readouterr().out


@pytest.mark.parametrize("asked, goes_on_at", [(None, 0.5), (0.1, 0.5), (0.2, 0.2)])
def test_a_rate_changed_during_the_run_yields_only_to_a_new_request(
    tmp_path, capsys, asked, goes_on_at
):
    """Resumed with the checkpoint's settings (left out, or asked again as the run first
    asked them), the run goes on at the rate its callback set; asked for another rate, at
    that one."""
    import mxlearn

    prefix = str(tmp_path / "m")
    data = _changed_run(prefix, 0.5)
    mod = mxlearn.resume(prefix)
    more = {} if asked is None else {"optimizer_params": {"learning_rate": asked}}
    capsys.readouterr()
    mod.fit(data, num_epoch=2, **more)
    assert mod.optimizer.lr == goes_on_at
    said = capsys.readouterr().out
    if goes_on_at == 0.5:
        assert "goes on with them, as an uninterrupted one would: lr 0.1 -> 0.5" in said
    else:
        assert "asks for other values, which apply: lr 0.5 -> 0.2" in said


def test_settings_the_run_never_changed_are_not_said_to_have_changed(small_iter, tmp_path, capsys):
    import mxlearn

    prefix = str(tmp_path / "m")
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    asked = {"learning_rate": 0.1, "momentum": 0.9}
    mod.fit(small_iter, num_epoch=1, checkpoint=prefix, optimizer_params=asked)
    mod = mxlearn.resume(prefix)
    capsys.readouterr()
    mod.fit(small_iter, num_epoch=2, optimizer_params={"learning_rate": 0.5})
    said = capsys.readouterr().out
    assert "changed these settings while it trained" not in said
    assert (mod.optimizer.lr, mod.optimizer.momentum) == (0.5, 0.0)  # this fit's request
