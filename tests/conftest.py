"""Shared fixtures. Tests write only under tmp_path and read the UCI data from ../shared."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "letter-recognition"


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path, monkeypatch):
    # The cache and any download go under tmp_path; the data comes from ../shared when present.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    # Kernels, IPython and matplotlib keep files of their own: keep those under tmp_path too.
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "jupyter-runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "matplotlib"))
    if SHARED_DATA.is_dir():
        monkeypatch.setenv("MXLEARN_DATA", str(SHARED_DATA))
    else:
        monkeypatch.delenv("MXLEARN_DATA", raising=False)


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"the UCI data is expected at {SHARED_DATA} (beside the checkout)")
    return SHARED_DATA


def seed_all(seed: int = 0) -> None:
    """Every generator a run draws from (MXNet's, NumPy's, Python's): mxlearn.seed."""
    import mxlearn

    mxlearn.seed(seed)


@pytest.fixture
def small_data():
    """A seeded 4-class problem with 16 features, 256 rows: fast to train, easy to learn."""
    from mxlearn.datasets import synthetic_classification

    return synthetic_classification(num_samples=256, num_features=16, num_classes=4, seed=1)


@pytest.fixture
def small_iter(small_data):
    from mxlearn import mx

    X, y = small_data
    return mx.io.NDArrayIter(X, y, batch_size=32)


@pytest.fixture
def small_net():
    from mxlearn import models

    return models.mlp(num_classes=4, num_hidden=8)


@pytest.fixture
def ready_module(small_net, small_iter):
    """A module bound for training, initialized, with an SGD optimizer."""
    import mxlearn
    from mxlearn import mx

    mod = mxlearn.Module(small_net, context=mx.cpu())
    mod.bind(small_iter.provide_data, small_iter.provide_label)
    mod.init_params(initializer=mx.init.Uniform(0.1))
    mod.init_optimizer(optimizer="sgd", optimizer_params=(("learning_rate", 0.1),))
    return mod


os.environ.setdefault("MPLBACKEND", "Agg")
# The docstring examples (collected from mxlearn/ in the same run) read the data set too.
if SHARED_DATA.is_dir():
    os.environ.setdefault("MXLEARN_DATA", str(SHARED_DATA))


def printed_by(code: str, in_kernel: bool) -> str:
    """What ``code`` prints, run in a new Jupyter kernel or in a plain Python process."""
    import subprocess
    import sys

    if not in_kernel:
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        return run.stdout.strip()
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", stderr=subprocess.DEVNULL)
    printed = []
    try:
        client.execute_interactive(
            code, timeout=120, output_hook=lambda m: printed.append(m["content"].get("text", ""))
        )
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return "".join(printed).strip()


@pytest.fixture
def temporary(tmp_path, monkeypatch):
    """Every temporary folder of the grader under tmp_path, so its processes can be found."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))  # the grader's own
    monkeypatch.setenv("TMPDIR", str(folder))  # the runner's: the kernel's connection file
    return tmp_path
