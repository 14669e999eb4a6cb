"""Colab's GPU has CUDA 12 and no CUDA 11 libraries: MXNet's GPU wheel, linked against CUDA
11.2's, cannot load there. On this machine (no CUDA at all) the real wheel fails the same way,
with the loader's own OSError; the doctor must explain that error, and its advice, followed in
the same venv, must give a working MXNet.

The wheel is 499 MB (1 GB installed; about 40 s to install here, the download once into pip's
cache, 8 s at 80 MB/s): one slow test, in a venv in its tmp dir."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_gpus import SMI

from mxlearn._compat import no_kernels_even_then
from mxlearn.devices import parse_nvidia_smi

ROOT = Path(__file__).resolve().parents[1]


def _run(command, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=600, **kwargs)


@pytest.mark.slow  # installs a 499 MB wheel
def test_doctor_explains_why_the_gpu_wheel_cannot_load_and_its_fix_works(tmp_path):
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp_path, ROOT], check=True
    )
    (wheel,) = tmp_path.glob("mxlearn-*.whl")
    venv = tmp_path / "gpu"
    _run([sys.executable, "-m", "venv", venv], check=True)
    python = venv / "bin" / "python"
    _run([python, "-m", "pip", "install", "-q", f"{wheel}[gpu]"], check=True)

    # the loader's own words, as MXNet raises them (a ctypes OSError, not an ImportError)
    bare = _run([python, "-c", "import mxnet"], cwd=tmp_path)
    (loader_error,) = [line for line in bare.stderr.splitlines() if line.startswith("OSError: ")]
    assert "cannot open shared object file" in loader_error

    doctor = _run([python, "-m", "mxlearn", "doctor"], cwd=tmp_path)
    said = doctor.stderr
    assert doctor.returncode == 1 and "Traceback" not in said, said  # as the CLI's other errors
    assert said.lstrip().startswith("mxlearn: ")
    assert loader_error.removeprefix("OSError: ") in said  # the error as it is, then why
    for library in ("libcudart.so.11.0", "libcudnn.so.8", "libcublas.so.11", "libcuda.so.1"):
        assert library in said  # every library the loader cannot find, not only the first
    assert "CUDA 11.2" in said and "CUDA 12" in said
    (fix,) = [line.split("Fix: ", 1)[1] for line in said.splitlines() if "Fix: " in line]
    assert fix == "pip uninstall -y mxnet-cu112 && pip install mxnet==1.9.1"

    # the advice, followed in the same venv: the doctor then runs and MXNet trains
    path = f"{venv / 'bin'}:/usr/bin:/bin"
    _run(["bash", "-c", fix], env={"PATH": path}, check=True)
    doctor = _run([python, "-m", "mxlearn", "doctor"], cwd=tmp_path)
    assert doctor.returncode == 0, doctor.stderr
    assert "Using cpu(0)" in doctor.stdout
    code = "from mxlearn import mx; print((mx.nd.ones((2, 2)) * 3).sum().asscalar())"
    assert _run([python, "-c", code], cwd=tmp_path, check=True).stdout.strip() == "12.0"


def test_a_hopper_gpu_is_named_as_having_no_kernels_even_with_the_libraries():
    # on recorded nvidia-smi output (tests/test_gpus.py's): no Hopper GPU here
    hopper, t4 = parse_nvidia_smi(SMI["H100"] + "\n" + SMI["T4"].replace("0,", "1,", 1))
    said = no_kernels_even_then([hopper, t4], ("mxnet-cu112", "1.9.1"))
    assert "H100" in said and "sm_90" in said and "sm_86" in said and "T4" not in said
    assert no_kernels_even_then([t4], ("mxnet-cu112", "1.9.1")) == ""
