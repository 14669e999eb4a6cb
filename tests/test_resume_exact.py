"""Resume is exact for every optimizer MXNet ships and for schedules that keep lists (issue 13,
family 2): a run checkpointed after 2 epochs and resumed in a fresh process to epoch 4 ends with
every parameter byte and the update count of a run never interrupted."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

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
