"""The single MXNet import point, device choice, the tour and the doctor."""

from __future__ import annotations

import importlib.metadata as metadata
import os
import subprocess
import sys

import numpy as np
import pytest

import mxlearn
from mxlearn import _compat, mx


def _python(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )


def test_numpy_2_in_memory_over_an_older_one_on_disk_asks_for_a_restart(monkeypatch):
    # as in a Colab kernel after `%pip install mxlearn`; NumPy 2 on disk: test_colab_like_python
    monkeypatch.setattr(np, "__version__", "2.1.0")
    with pytest.raises(_compat.NumpyLoadedBeforeInstallSetupError) as info:
        _compat._check_numpy()
    assert info.value.fields == {"loaded": "2.1.0", "installed": metadata.version("numpy")}
    assert "restart the kernel" in str(info.value) and isinstance(info.value, ImportError)


def test_aliases_are_set_only_where_numpy_removed_them(monkeypatch):
    added = [n for n in _compat._NUMPY_ALIASES if n not in np.__dict__]
    _compat._set_numpy_aliases()  # NumPy 1.23 keeps its own (deprecated) aliases
    assert all(n not in np.__dict__ for n in added)
    monkeypatch.setattr(np, "__version__", "1.26.4")
    try:
        _compat._set_numpy_aliases()
        assert np.__dict__["bool"] is np.bool_ and np.__dict__["object"] is object
    finally:
        for name in added:
            delattr(np, name)


@pytest.mark.slow
def test_missing_mxnet_names_both_wheels():
    done = _python("import sys; sys.modules['mxnet'] = None; import mxlearn")
    assert done.returncode != 0
    assert "SetupError" in done.stderr
    assert "mxnet==1.9.1" in done.stderr and "mxnet-cu112==1.9.1" in done.stderr


@pytest.mark.slow
def test_environment_defaults_respect_the_user():
    code = "import os, mxlearn; print(os.environ['MXNET_SUBGRAPH_VERBOSE'], os.environ['MXNET_MKLDNN_CACHE_NUM'])"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MXNET_")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.stdout.split() == ["0", "64"]
    done = _python(code, MXNET_MKLDNN_CACHE_NUM="5")
    assert done.stdout.split()[1] == "5"


def test_every_module_imports_mxnet_only_through_compat():
    package = os.path.dirname(mxlearn.__file__)
    for root, _, files in os.walk(package):
        for name in files:
            if name.endswith(".py") and name != "_compat.py":
                text = open(os.path.join(root, name)).read()
                assert "import mxnet" not in text, name


def test_auto_context_on_this_machine_says_why(capsys):
    ctx = mxlearn.auto_context()
    line = capsys.readouterr().out.strip()
    assert ctx == (mx.gpu(0) if mx.context.num_gpus() else mx.cpu())
    assert line.count("\n") == 0 and line.startswith("Using ")
    assert "CPU build" in line or "GPU" in line
    assert "cores" in mxlearn.describe(mx.cpu())


@pytest.mark.slow
def test_fit_in_a_fresh_interpreter_prints_epochs_without_logging_setup():
    code = (
        "import mxlearn\nfrom mxlearn import mx\n"
        "X, y = mxlearn.datasets.synthetic_classification(num_samples=64)\n"
        "it = mx.io.NDArrayIter(X, y, 32)\n"
        "mxlearn.Module(mxlearn.models.mlp(num_classes=4)).fit(it, eval_data=it, num_epoch=2)\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert "Epoch[0] Train-accuracy=" in done.stdout
    assert "Epoch[1] Validation-accuracy=" in done.stdout
    assert "Subgraph backend" not in done.stderr  # MXNET_SUBGRAPH_VERBOSE=0 took effect


def test_tour_runs_and_learns(tmp_path, capsys):
    from mxlearn.commands.tour import run_tour

    result = run_tour(str(tmp_path / "tour"))
    out = capsys.readouterr().out
    assert result["accuracy"] > 0.70
    assert result["prediction_shape"] == (4000, 26)
    for step in (
        "bind",
        "init_params",
        "update_metric",
        "fit",
        "Predict",
        "do_checkpoint",
        "set_params",
        "begin_epoch=3",
    ):
        assert step in out
    assert sorted(os.listdir(tmp_path / "tour")) == [
        "mx_mlp-0001.params",
        "mx_mlp-0002.params",
        "mx_mlp-0003.params",
        "mx_mlp-0004.params",
        "mx_mlp-0005.params",
        "mx_mlp-symbol.json",
    ]


@pytest.mark.slow
def test_doctor_reports_versions_device_and_widgets():
    done = subprocess.run(
        [sys.executable, "-m", "mxlearn", "doctor"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "mxnet" in done.stdout and "1.9.1" in done.stdout
    assert "Using cpu(0)" in done.stdout or "Using gpu(0)" in done.stdout
    assert "widgets" in done.stdout and "will render" in done.stdout


@pytest.mark.slow
def test_cli_reports_an_explained_error_without_traceback(tmp_path):
    env = {**os.environ, "MXLEARN_DATA": str(tmp_path / "none"), "XDG_CACHE_HOME": str(tmp_path)}
    # an unreachable download: the loader explains, the command exits 1 without a traceback
    code = (
        "import sys, mxlearn.datasets as d; d.LETTER_URL = 'http://127.0.0.1:9/x'; "
        "from mxlearn.__main__ import main; sys.exit(main(['tour', '--out', sys.argv[1]]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "t")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "Could not download" in done.stderr
