"""A Colab-like Python (3.12 with NumPy 2 and NumPy-2 builds of matplotlib and pandas already
installed, and already imported in the running kernel): a student's ``%pip install mxlearn[cpu]``
then either gives a working course or stops at once with the one thing to do; each piece of
advice is followed here, on the run that provoked it, until notebook 01 runs."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def _python312() -> str | None:
    """A working python3.12, found as the Makefile's PYTHON312 finds one."""
    found = [os.environ.get("PYTHON312", ""), shutil.which("python3.12") or ""]
    found += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12")))
    found.append("/usr/bin/python3.12")
    for python in filter(None, found):
        done = subprocess.run([python, "-c", "print(1)"], capture_output=True, timeout=30)
        if done.returncode == 0:
            return python
    return None


PYTHON312 = _python312()
pytestmark = [
    pytest.mark.slow,  # builds a venv and installs into it with pip
    pytest.mark.skipif(
        PYTHON312 is None,
        reason="no Python 3.12 here (not on PATH, in ~/.pyenv or /usr/bin; PYTHON312= names one)",
    ),
]
# What Colab's image has: NumPy 2 and builds of matplotlib and pandas made for it.
COLAB_SEED = ["numpy>=2", "matplotlib>=3.10", "pandas>=2.2", "ipywidgets>=8", "ipykernel>=6"]
TRAIN_A_FEW_BATCHES = (
    "import mxlearn\nfrom mxlearn import mx\n"
    "train, _ = mxlearn.datasets.letter_iters(batch_size=32)\n"
    "mod = mxlearn.Module(mxlearn.models.mlp(num_classes=26))\n"
    "mod.fit(mx.io.ResizeIter(train, 20), num_epoch=1)\n"
)


def _run(command, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=300, **kwargs)


def _version(python: Path, package: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({package!r}))"
    return _run([python, "-c", code], check=True).stdout.strip()


def _cell(kc, code: str) -> tuple[dict, str]:
    """Run one cell in the kernel: its reply and everything it printed."""
    printed = []
    reply = kc.execute_interactive(
        code,
        timeout=300,
        output_hook=lambda msg: printed.append(msg["content"].get("text", "")),
    )
    return reply["content"], "".join(printed)


def _fix_line(said: str) -> str:
    """The command after 'Fix:' in what mxlearn said."""
    (fix,) = re.findall(r"^\s*Fix: (.+)$", said, re.MULTILINE)
    return fix


def test_pip_install_in_a_colab_like_kernel_leads_to_a_working_course(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp_path, ROOT],
        check=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("mxlearn-*.whl")
    venv = tmp_path / "colab"
    _run([PYTHON312, "-m", "venv", venv], check=True)
    python = venv / "bin" / "python"
    _run([python, "-m", "pip", "install", "-q", *COLAB_SEED], check=True)
    assert _version(python, "numpy").startswith("2.")

    spec = tmp_path / "kernels" / "colab"
    spec.mkdir(parents=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "language": "python"}))
    km = KernelManager(
        kernel_name="colab",
        kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(spec.parent)]),
    )
    env = {**os.environ, "MPLBACKEND": "Agg", "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"}
    km.start_kernel(env=env, cwd=str(tmp_path))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)
        # Colab's runtime has NumPy imported before the student's first cell
        reply, printed = _cell(
            kc, "import numpy, matplotlib.pyplot, pandas; print(numpy.__version__)"
        )
        assert reply["status"] == "ok" and printed.startswith("2.")

        reply, printed = _cell(kc, f"%pip install '{wheel}[cpu]'")
        assert reply["status"] == "ok", printed
        assert "numpy-1.26.4" in printed  # mxlearn's pin replaced NumPy 2 ...
        assert "dependency conflicts" not in printed  # ... and the packages built for it

        reply, _ = _cell(kc, "import mxlearn")
        assert reply["status"] == "error"
        assert reply["ename"] == "NumpyLoadedBeforeInstallSetupError", reply["evalue"]
        assert "numpy 2." in reply["evalue"].lower() and "restart" in reply["evalue"].lower()

        # The advice: restart the kernel. Then notebook 01 runs, exercises checked.
        kc.stop_channels()
        km.restart_kernel(now=True)
        nb = nbformat.read(ROOT / "notebooks" / "01_module_step_by_step.ipynb", as_version=4)
        NotebookClient(nb, km=km, timeout=300).execute()
        shown = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
        assert "Epoch 4, training accuracy" in shown
    finally:
        if km.has_kernel:
            km.shutdown_kernel(now=True)

    # The other advice: NumPy 2 back on disk (a later pip install pulled it) is refused with
    # one command, and that command brings the course back.
    _run([python, "-m", "pip", "install", "-q", "numpy>=2"], check=True)
    refused = _run([python, "-c", "import mxlearn"], env=env)
    assert "NumpyTooNewSetupError" in refused.stderr, refused.stderr
    fix = _fix_line(refused.stderr)
    assert fix == 'pip install "numpy==1.26.4"'
    # the command line says the same, as its other errors: the explanation, no traceback
    doctor = _run([python, "-m", "mxlearn", "doctor"], env=env)
    assert doctor.returncode == 1 and "Traceback" not in doctor.stderr, doctor.stderr
    assert doctor.stderr.lstrip().startswith("mxlearn: ") and _fix_line(doctor.stderr) == fix
    _run(["bash", "-c", fix], env=env, check=True)
    trained = _run([python, "-c", TRAIN_A_FEW_BATCHES], env=env, cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    assert "Epoch[0] Train-accuracy=" in trained.stdout + trained.stderr
    checked = _run([python, "-m", "pip", "check"], env=env)
    assert checked.returncode == 0, checked.stdout
