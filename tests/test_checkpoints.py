"""Checkpoints: complete and verified, exact resume, interrupts, damage reported; a resume, an
epoch number, a network or files that cannot work are refused before anything trains."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from conftest import seed_all

import mxlearn
from mxlearn import checkpoint as ckpt
from mxlearn import mx
from mxlearn.checkpoint.files import (
    DamagedSymbol,
    IncompleteManifest,
    ListedFileDamaged,
    NoCompleteCheckpoint,
    NotAnEpoch,
)
from mxlearn.checkpoint.optimizer_state import PickleAsksForClass, UntrustedStates
from mxlearn.checkpoint.policy import MXNetFilesInTheWay, WouldOverwrite
from mxlearn.checkpoint.prefixes import PrefixNotAPath
from mxlearn.errors import ArgumentTypeError, InputError, NonFiniteError
from mxlearn.guards.binding import ParamsDoNotMatch, ParamsFromOtherLayers, ParamsMissing
from mxlearn.guards.fit_arguments import (
    BeginEpochDiffers,
    OptimizerSettingsUnknown,
    OtherOptimizerKind,
)
from mxlearn.module.checkpoints import CompleteCheckpointExists
from mxlearn.training.early_stopping import NoValidationToJudge


def _data():
    X, y = mxlearn.datasets.letter_recognition()
    return X[:2048], y[:2048]


def _iter(shuffle=False):
    X, y = _data()
    return mx.io.NDArrayIter(X, y, 32, shuffle=shuffle)


def _optimizer_params():
    # momentum and a schedule: both carry state that a resume must restore exactly
    return {
        "learning_rate": 0.05,
        "momentum": 0.9,
        "lr_scheduler": mx.lr_scheduler.FactorScheduler(step=40, factor=0.7),
    }


def _params(mod):
    args, auxs = mod.get_params()
    return {k: v.asnumpy() for k, v in {**args, **auxs}.items()}


def test_files_and_manifest(tmp_path):
    prefix = str(tmp_path / "mlp")
    mod = mxlearn.Module(mxlearn.models.mlp())
    mod.fit(_iter(), optimizer_params=_optimizer_params(), num_epoch=2, checkpoint=prefix)
    names = sorted(os.listdir(tmp_path))
    assert names == [
        "mlp-0001.json",
        "mlp-0001.optimizer.params",
        "mlp-0001.params",
        "mlp-0002.json",
        "mlp-0002.optimizer.params",
        "mlp-0002.params",
        "mlp-symbol.json",
    ]
    manifest = json.loads((tmp_path / "mlp-0002.json").read_text())
    assert manifest["epochs_completed"] == 2 and manifest["resume_with"] == {"begin_epoch": 2}
    assert manifest["optimizer"]["num_update"] == 128
    assert manifest["optimizer"]["lr_scheduler"]["class"] == "FactorScheduler"
    assert manifest["optimizer"]["settings"]["params"]["momentum"] == 0.9
    assert len(manifest["history"]["rows"]) > 0
    # MXNet's own loader opens the files
    sym, args, _ = mx.model.load_checkpoint(prefix, 2)
    assert np.array_equal(args["fc1_weight"].asnumpy(), _params(mod)["fc1_weight"])
    assert not any(n.endswith(".tmp") for n in names)


def test_resume_is_bit_equal_to_an_uninterrupted_run(tmp_path):
    seed_all(11)
    whole = mxlearn.Module(mxlearn.models.mlp())
    whole.fit(
        _iter(),
        optimizer="sgd",
        optimizer_params=_optimizer_params(),
        num_epoch=5,
        initializer=mx.init.Xavier(),
        checkpoint=str(tmp_path / "whole"),
    )

    seed_all(11)
    first = mxlearn.Module(mxlearn.models.mlp())
    first.fit(
        _iter(),
        optimizer="sgd",
        optimizer_params=_optimizer_params(),
        num_epoch=2,
        initializer=mx.init.Xavier(),
        checkpoint=str(tmp_path / "part"),
    )
    del first  # "the kernel died"
    resumed = mxlearn.resume(str(tmp_path / "part"))
    resumed.fit(_iter(), num_epoch=5, checkpoint=str(tmp_path / "part"))

    a, b = _params(whole), _params(resumed)
    assert all(a[k].tobytes() == b[k].tobytes() for k in a)
    assert resumed._optimizer.num_update == whole._optimizer.num_update == 5 * 64
    assert resumed.history.events[0].text == "resumed at epoch 2"
    assert resumed.history.series("accuracy", "train", "epoch")[0] == [0, 1, 2, 3, 4]


def test_fit_resume_argument_on_a_new_module(tmp_path, capsys):
    prefix = str(tmp_path / "m")
    mxlearn.Module(mxlearn.models.mlp()).fit(
        _iter(), optimizer_params=_optimizer_params(), num_epoch=1, checkpoint=prefix
    )
    mod = mxlearn.Module(mxlearn.models.mlp())
    mod.fit(_iter(), num_epoch=3, resume=prefix, checkpoint=prefix)
    out = capsys.readouterr().out
    assert "Resuming from checkpoint 1" in out and "begin_epoch=1" in out
    assert ckpt.manifested_epochs(prefix) == [1, 2, 3]
    with pytest.raises(BeginEpochDiffers) as refused:
        mxlearn.Module(mxlearn.models.mlp()).fit(_iter(), num_epoch=5, begin_epoch=1, resume=prefix)
    assert refused.value.fields == {"begin_epoch": 1, "epoch": 3, "prefix": prefix}
    assert "begin_epoch=3" in refused.value.fix  # the number that goes on


def test_never_overwrites_an_epoch_silently(tmp_path):
    prefix = str(tmp_path / "m")
    mod = mxlearn.Module(mxlearn.models.mlp())
    mod.fit(_iter(), num_epoch=1, checkpoint=prefix)
    before = (tmp_path / "m-0001.params").read_bytes()
    with pytest.raises(WouldOverwrite) as refused:
        mxlearn.Module(mxlearn.models.mlp()).fit(_iter(), num_epoch=1, checkpoint=prefix)
    assert refused.value.fields["prefix"] == prefix and refused.value.fields["which"] == "1"
    assert (tmp_path / "m-0001.params").read_bytes() == before


def test_non_finite_parameters_are_never_saved(tmp_path):
    prefix = str(tmp_path / "m")
    mod = mxlearn.Module(mxlearn.models.mlp())
    with pytest.raises(NonFiniteError) as refused:
        mod.fit(_iter(), optimizer_params={"learning_rate": 1e30}, num_epoch=1, checkpoint=prefix)
    assert "1e+30" in refused.value.fields["cause"]  # the rate that made it diverge
    assert "optimizer_params={'learning_rate': " in refused.value.fix  # a rate to retry with
    assert ckpt.manifested_epochs(prefix) == []


def test_keep_period_and_best(tmp_path):
    prefix = str(tmp_path / "m")
    X, y = _data()
    val = mx.io.NDArrayIter(X[:512], y[:512], 32)
    saver = mxlearn.Checkpoint(prefix, period=2, keep=2, best="accuracy")
    mxlearn.Module(mxlearn.models.mlp()).fit(
        _iter(),
        eval_data=val,
        optimizer_params={"learning_rate": 0.1},
        num_epoch=8,
        checkpoint=saver,
    )
    best = json.loads((tmp_path / "m-best.json").read_text())
    kept = ckpt.manifested_epochs(prefix)
    assert set(kept) == {6, 8} | {best["epoch"]}
    assert all(e % 2 == 0 for e in kept)


def test_interrupt_keeps_the_last_epoch_and_says_how_to_resume(tmp_path):
    prefix = str(tmp_path / "m")
    it = _iter()

    def interrupt(param):
        if param.epoch == 2 and param.nbatch == 10:
            raise KeyboardInterrupt

    mod = mxlearn.Module(mxlearn.models.mlp())
    with pytest.raises(KeyboardInterrupt) as info:
        mod.fit(it, num_epoch=5, checkpoint=prefix, batch_end_callback=interrupt)
    message = str(info.value)
    assert "Checkpoint 2" in message and f"mxlearn.resume('{prefix}')" in message
    assert ckpt.manifested_epochs(prefix) == [1, 2]
    assert sum(1 for _ in it) == 64  # the iterator was reset: a whole epoch is there
    resumed = mxlearn.resume(prefix)
    it.reset()
    resumed.fit(it, num_epoch=5, checkpoint=prefix)
    assert ckpt.manifested_epochs(prefix) == [1, 2, 3, 4, 5]


def test_damaged_files_are_reported_and_skipped(tmp_path):
    prefix = str(tmp_path / "m")
    mxlearn.Module(mxlearn.models.mlp()).fit(_iter(), num_epoch=2, checkpoint=prefix)
    path = tmp_path / "m-0002.params"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40  # one bit
    path.write_bytes(bytes(data))
    with pytest.raises(ListedFileDamaged) as refused:
        mxlearn.load_checkpoint(prefix, 2)
    assert refused.value.fields["file"] == str(path) and refused.value.fields["epoch"] == 2
    assert refused.value.fields["sha256"] != refused.value.fields["listed_sha256"]
    epoch, _ = ckpt.latest(prefix)  # the newest good one
    assert epoch == 1
    (tmp_path / "m-symbol.json").write_text('{"nodes": [')  # cut short
    with pytest.raises(ListedFileDamaged) as refused:
        mxlearn.load_checkpoint(prefix, 1)
    assert refused.value.fields["file"] == str(tmp_path / "m-symbol.json")
    assert refused.value.fields["size"] < refused.value.fields["listed_size"]
    for manifest in tmp_path.glob("m-*.json"):
        if manifest.name != "m-symbol.json":
            manifest.unlink()  # as an MXNet-only checkpoint: no manifest to compare with
    with pytest.raises(DamagedSymbol) as refused:
        mxlearn.load_checkpoint(prefix, 1)
    assert refused.value.fields["path"] == str(tmp_path / "m-symbol.json")
    assert isinstance(refused.value.fields["error"], json.JSONDecodeError)


def test_a_damaged_file_is_named_as_the_prefix_was_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    mxlearn.Module(mxlearn.models.mlp()).fit(_iter(), num_epoch=1, checkpoint="runs/m")
    path = tmp_path / "runs" / "m-0001.params"
    path.write_bytes(path.read_bytes()[:-1])  # cut short by one byte
    with pytest.raises(ListedFileDamaged) as refused:
        mxlearn.load_checkpoint("runs/m", 1)
    assert "'runs/m-0001.params' is damaged" in str(refused.value)
    assert str(tmp_path) not in str(refused.value)


def test_no_checkpoint_is_explained(tmp_path):
    with pytest.raises(NoCompleteCheckpoint) as refused:
        mxlearn.resume(str(tmp_path / "none"))
    assert refused.value.fields["prefix"] == str(tmp_path / "none")


class _Payload:
    """Unpickling this runs a shell command: what a crafted .states file can do."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_pickle_payload_never_runs(tmp_path, ready_module):
    import pickle

    from mxlearn.errors import UntrustedFileError

    def asks_for_system(refused):
        return refused.value.fields["module"] in ("os", "posix", "nt") and (
            refused.value.fields["name"] == "system"
        )

    marker = tmp_path / "pwned"
    crafted = tmp_path / "m-0001.states"
    crafted.write_bytes(pickle.dumps({0: _Payload(marker)}))
    with pytest.raises(UntrustedStates) as refused:
        ready_module.load_optimizer_states(str(crafted))
    assert refused.value.fields["path"] == str(crafted)
    assert refused.value.fields["call"].endswith(", trust=True)")  # the call to retry
    with pytest.raises(PickleAsksForClass) as refused:
        ready_module.load_optimizer_states(str(crafted), trust=True)
    assert asks_for_system(refused)
    ready_module.save_checkpoint(str(tmp_path / "m"), 1)
    with pytest.raises(UntrustedFileError) as refused:
        mxlearn.Module.load(str(tmp_path / "m"), 1, load_optimizer_states=True)
    assert "load_optimizer_states=True, trust=True)" in refused.value.fix  # the call to retry
    trusting = mxlearn.Module.load(str(tmp_path / "m"), 1, load_optimizer_states=True, trust=True)
    trusting.bind([("data", (32, 16))], [("softmax_label", (32,))])
    with pytest.raises(PickleAsksForClass) as refused:
        trusting.init_optimizer()  # reads the .states file: trusted, yet the payload is refused
    assert asks_for_system(refused)
    assert not marker.exists()


def test_trusted_mxnet_states_load_and_train_on(tmp_path, small_iter):
    prefix = str(tmp_path / "m")
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    mod.fit(small_iter, optimizer_params={"learning_rate": 0.1, "momentum": 0.9}, num_epoch=1)
    mod.save_checkpoint(prefix, 1, save_optimizer_states=True)
    loaded = mxlearn.Module.load(prefix, 1, load_optimizer_states=True, trust=True)
    small_iter.reset()
    loaded.fit(
        small_iter,
        optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
        num_epoch=2,
        begin_epoch=1,
    )
    momentum = optimizer_state_of(loaded)
    assert momentum and all(np.isfinite(v.asnumpy()).all() for v in momentum)


def optimizer_state_of(mod):
    return [s for s in mod.updater.states.values() if s is not None]


def test_resuming_another_architecture_names_every_difference(tmp_path):
    prefix = str(tmp_path / "m")
    mxlearn.Module(mxlearn.models.mlp()).fit(_iter(), num_epoch=1, checkpoint=prefix)
    net = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(net, name="fc1", num_hidden=32)
    net = mx.sym.Activation(net, act_type="relu")
    net = mx.sym.FullyConnected(net, name="fc3", num_hidden=26)
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    with pytest.raises(ParamsDoNotMatch) as info:
        mxlearn.Module(net).fit(_iter(), num_epoch=3, resume=prefix)
    problems = info.value.fields["problems"]
    # one problem per name, with the shapes that differ: given, then this network's
    assert _problem_of(problems, "fc1_weight") == ["(64, 16)", "(32, 16)"], problems
    assert _problem_of(problems, "fc3_weight") == ["(26, 32)"], problems  # missing
    assert "(26,)" in _problem_of(problems, "fc2_bias"), problems  # not in this network


def _problem_of(problems: str, name: str) -> list[str]:
    """The shapes said in the one problem (of ``problems``, said one after another) that names
    the parameter ``name``, in order."""
    import re

    parts = [part for part in re.split(r"[;；]", problems) if f"'{name}'" in part]
    assert len(parts) == 1, problems
    after = parts[0].split(f"'{name}'", 1)[1]
    return re.findall(r"\(\d+(?:, \d+)*,?\)", after.split("'", 1)[0])


def test_resumed_history_shows_the_mark_in_the_plot(tmp_path):
    prefix = str(tmp_path / "m")
    mxlearn.Module(mxlearn.models.mlp()).fit(_iter(), num_epoch=2, checkpoint=prefix)
    mod = mxlearn.resume(prefix)
    live = mxlearn.LivePlot(backend="console", png_path=str(tmp_path / "resumed.png"))
    mod.fit(_iter(), num_epoch=4, live=live)
    ax = live.figure._axes["accuracy"]
    texts = [t.get_text() for t in ax.texts]
    assert "resumed at epoch 2" in texts
    assert live.history.series("accuracy", "train", "epoch")[0] == [0, 1, 2, 3]
    assert (tmp_path / "resumed.png").exists()


def test_divergence_stops_fit_early_and_keeps_the_good_checkpoint(tmp_path):
    prefix = str(tmp_path / "m")
    mod = mxlearn.Module(mxlearn.models.mlp())
    mod.fit(_iter(), optimizer_params={"learning_rate": 0.1}, num_epoch=1, checkpoint=prefix)
    seen = []
    with pytest.raises(NonFiniteError) as info:
        fresh = mxlearn.Module(mxlearn.models.mlp())
        fresh.fit(
            _iter(),
            optimizer_params={"learning_rate": 1e30},
            num_epoch=5,
            resume=prefix,
            checkpoint=prefix,
            batch_end_callback=lambda p: seen.append(p.nbatch),
        )
    assert "1e+30" in info.value.fields["cause"]  # the rate that made it diverge
    # a probe found a rate that learns: the fix is the call with it
    fix = info.value.fix
    assert "optimizer_params={'learning_rate': " in fix, fix
    assert float(fix.rsplit("'learning_rate': ", 1)[1].split("}")[0]) <= 1.0
    assert len(seen) <= 64  # stopped within the first epoch after resuming, not at the end
    assert ckpt.manifested_epochs(prefix) == [1]


def test_early_stopping_after_validation_restores_the_best_epoch(tmp_path, capsys):
    prefix = str(tmp_path / "m")
    X, y = _data()
    val = mx.io.NDArrayIter(X[:512], y[:512], 32)
    mod = mxlearn.Module(mxlearn.models.mlp())
    # min_delta=1.0: no epoch can improve on the first, so it stops after the second
    stopper = mxlearn.EarlyStopping("accuracy", patience=1, min_delta=1.0)
    mod.fit(
        _iter(),
        eval_data=val,
        optimizer_params={"learning_rate": 0.1},
        num_epoch=10,
        early_stopping=stopper,
        checkpoint=prefix,
    )
    assert "Early stopping" in capsys.readouterr().out
    assert mod.history.series("accuracy", "validation", "epoch")[0] == [0, 1]
    assert ckpt.manifested_epochs(prefix) == [1, 2]  # the stopping epoch is saved too
    _, best_args, _ = ckpt.load_checkpoint(prefix, 1)
    args, _ = mod.get_params()
    assert all(np.array_equal(args[k].asnumpy(), best_args[k].asnumpy()) for k in args)
    with pytest.raises(NoValidationToJudge) as refused:
        mxlearn.Module(mxlearn.models.mlp()).fit(_iter(), num_epoch=2, early_stopping=2)
    assert "eval_data=val_iter" in refused.value.fix


def test_a_refused_resume_leaves_no_optimizer_state_behind(tmp_path):
    prefix = str(tmp_path / "m")
    mxlearn.Module(mxlearn.models.mlp()).fit(
        _iter(), num_epoch=2, optimizer_params=_optimizer_params(), checkpoint=prefix
    )
    mod = mxlearn.Module(mxlearn.models.mlp())
    with pytest.raises(BeginEpochDiffers) as refused:
        mod.fit(_iter(), num_epoch=6, begin_epoch=5, resume=prefix)
    assert refused.value.fields == {"begin_epoch": 5, "epoch": 2, "prefix": prefix}
    with pytest.raises(ArgumentTypeError) as refused:
        mod.fit(_iter(), num_epoch=4, resume=prefix, optimizer="adam", optimizer_params=0.1)
    assert refused.value.fields["name"] == "optimizer_params"
    # a plain fit afterwards starts afresh: no sgd momentum forced into its adam
    mod.fit(_iter(), num_epoch=1, optimizer="adam", optimizer_params={"learning_rate": 0.01})
    assert type(mod.optimizer).__name__ == "Adam"
    assert mod.optimizer.num_update == 2048 // 32  # one epoch's updates, none inherited


def test_a_resume_with_another_optimizer_is_refused_before_touching_the_module(
    small_iter, small_net, tmp_path
):
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=1, checkpoint=prefix)
    mod = mxlearn.resume(prefix)
    with pytest.raises(OtherOptimizerKind) as refused:
        mod.fit(small_iter, num_epoch=2, checkpoint=prefix, optimizer="adam")
    assert refused.value.fields == {"kind": "sgd", "asked": "adam"}
    assert not mod.optimizer_initialized
    mod.fit(small_iter, num_epoch=2, checkpoint=prefix)  # the corrected call continues
    assert mxlearn.checkpoint.manifested_epochs(prefix) == [1, 2]


def test_a_resume_of_an_optimizer_object_says_how_to_go_on(small_iter, small_net, tmp_path):
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(
        small_iter, num_epoch=1, checkpoint=prefix, optimizer=mx.optimizer.Adam(learning_rate=0.05)
    )
    manifest = mxlearn.checkpoint.read_manifest(prefix, 1)
    assert any("settings" in item for item in manifest["optimizer"]["not_saved"])
    with pytest.raises(OptimizerSettingsUnknown) as info:
        mxlearn.resume(prefix).fit(small_iter, num_epoch=2, checkpoint=prefix)
    assert info.value.fields["kind"] == "adam"
    assert "optimizer='adam'" in info.value.fix


def test_a_resume_that_is_not_a_prefix_is_explained():
    import numpy as np

    import mxlearn
    from mxlearn import mx
    from mxlearn.errors import ArgumentTypeError

    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    data = mx.io.NDArrayIter(np.zeros((64, 16), "float32"), np.arange(64) % 4, 32)
    with pytest.raises(PrefixNotAPath) as refused:
        mod.fit(data, num_epoch=1, resume=True)
    assert refused.value.fields == {"called": "resume(True)", "kind": "bool"}
    assert isinstance(refused.value, ArgumentTypeError)


def test_mxnet_checkpoint_files_in_the_way_are_refused_before_training(
    small_iter, small_net, ready_module, tmp_path
):
    prefix = str(tmp_path / "mx")
    ready_module.save_checkpoint(prefix, 1)  # MXNet's own files, no manifest
    before = (tmp_path / "mx-0001.params").read_bytes()
    with pytest.raises(WouldOverwrite) as refused:
        mxlearn.Module(small_net).fit(small_iter, num_epoch=1, checkpoint=prefix)
    assert type(refused.value) is MXNetFilesInTheWay  # not "exists already and verifies" (#26)
    assert refused.value.fields["prefix"] == prefix and refused.value.fields["which"] == "1"
    assert (tmp_path / "mx-0001.params").read_bytes() == before
    ours = str(tmp_path / "ours")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=1, checkpoint=ours)
    with pytest.raises(CompleteCheckpointExists) as refused:
        ready_module.save_checkpoint(ours, 1)  # would break checkpoint 1's manifest
    assert refused.value.fields == {"epoch": 1, "prefix": ours}
    assert mxlearn.checkpoint.verifies(ours, 1)


@pytest.mark.parametrize(
    "make",
    [
        ("period", lambda m, p: m.Checkpoint(p, period=1.5)),
        ("keep", lambda m, p: m.Checkpoint(p, keep=True)),
        ("patience", lambda m, p: m.EarlyStopping("accuracy", patience=2.5)),
    ],
)
def test_epoch_counts_must_be_whole_numbers(tmp_path, make):
    import mxlearn
    from mxlearn.rules import WrongKind

    name, make_it = make
    with pytest.raises(WrongKind) as refused:
        make_it(mxlearn, str(tmp_path / "m"))
    assert refused.value.fields["name"] == name


@pytest.mark.parametrize("epoch", ["1", 1.0, True, -1])
def test_a_checkpoint_number_that_is_not_a_whole_number_is_explained(tmp_path, epoch):
    import mxlearn
    from mxlearn import mx
    from mxlearn.errors import InputError

    X, y = mxlearn.datasets.synthetic_classification(num_samples=64, num_classes=4)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1, checkpoint=str(tmp_path / "m"))
    for load in (mxlearn.Module.load, mxlearn.load_checkpoint):
        with pytest.raises(NotAnEpoch) as refused:
            load(str(tmp_path / "m"), epoch)
        given = refused.value.fields["epoch"]
        assert given == epoch and type(given) is type(epoch)  # True is 1 and 1.0: not enough
        assert refused.value.fields["kind"] == type(epoch).__name__
        assert isinstance(refused.value, InputError)
        assert "-1" not in refused.value.fix  # the example is a number that works


def test_a_checkpoint_missing_layers_is_refused_instead_of_loading_zeros(small_net, tmp_path):
    """A symbol file and a parameter file of two different networks: missing layers would be
    zeros, every prediction 1/num_classes."""
    other = mx.sym.FullyConnected(mx.sym.Variable("data"), name="fc1", num_hidden=8)
    other = mx.sym.SoftmaxOutput(other, name="softmax")
    donor = mxlearn.Module(other)
    donor.bind([("data", (32, 16))], [("softmax_label", (32,))])
    donor.init_params()
    prefix = str(tmp_path / "m")
    donor.save_checkpoint(prefix, 1)
    small_net.save(f"{prefix}-symbol.json")  # now the symbol needs fc2 and fc3 as well
    with pytest.raises(ParamsMissing) as info:
        mxlearn.Module.load(prefix, 1)
    assert sorted(info.value.fields["missing"]) == ["fc2_bias", "fc2_weight"]


def test_parameters_of_a_network_with_other_layer_sizes_are_named_not_the_data(tmp_path):
    import shutil

    X, y = mxlearn.datasets.synthetic_classification(num_samples=64, num_classes=4)
    for name, hidden in (("small", 8), ("large", 16)):
        mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=hidden))
        mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1)
        mod.save_checkpoint(str(tmp_path / name), 1)
    shutil.copy(tmp_path / "large-0001.params", tmp_path / "small-0001.params")
    mod = mxlearn.Module.load(str(tmp_path / "small"), 1)
    with pytest.raises(InputError) as caught:
        mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=2, begin_epoch=1)
    # the layers are the problem, not the data (FeaturesDifferFromParams would blame the input)
    assert type(caught.value) is ParamsFromOtherLayers
    assert _problem_of(caught.value.fields["shown"], "fc1_weight") == ["(16, 16)", "(8, 16)"]


def test_a_hand_edited_manifest(small_iter, small_net, tmp_path):
    prefix = str(tmp_path / "m")
    mxlearn.Module(small_net).fit(small_iter, num_epoch=1, checkpoint=prefix)
    manifest = json.loads((tmp_path / "m-0001.json").read_text())
    del manifest["files"]
    (tmp_path / "m-0001.json").write_text(json.dumps(manifest))
    with pytest.raises(IncompleteManifest) as refused:
        mxlearn.checkpoint.read_manifest(prefix, 1)
    assert refused.value.fields["path"] == str(tmp_path / "m-0001.json")
