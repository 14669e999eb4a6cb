"""``python -m mxlearn doctor``: versions, the device, and whether notebook widgets will render."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys

from .._compat import ENV_DEFAULTS, mx
from ..devices import auto_context
from ..gpus import (
    architectures_text,
    build_architectures,
    has_kernels,
    installed_mxnet,
    nvidia_gpus,
)

GPU_WHEEL = ("mxnet-cu112", "1.9.1")  # what `make setup MXNET=gpu` installs

PACKAGES = (
    "mxnet",
    "mxnet-cu112",
    "numpy",
    "matplotlib",
    "ipywidgets",
    "jupyterlab",
    "jupyterlab_widgets",
    "ipykernel",
    "pandas",
)


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def widget_support() -> tuple[bool, str]:
    """Whether ipywidgets will render in JupyterLab 4 / Notebook 7 from this environment."""
    if _version("ipywidgets") is None:
        return False, "ipywidgets is not installed: pip install 'ipywidgets>=8,<9'"
    if _version("jupyterlab_widgets") is None:
        return False, "jupyterlab_widgets is missing: pip install 'jupyterlab_widgets>=3'"
    manager = os.path.join(
        sys.prefix, "share", "jupyter", "labextensions", "@jupyter-widgets", "jupyterlab-manager"
    )
    if not os.path.isdir(manager):
        return (
            False,
            f"the widget manager extension is not in {manager}: reinstall jupyterlab_widgets",
        )
    return True, f"ipywidgets {_version('ipywidgets')} with its JupyterLab manager installed"


def gpu_rows() -> None:
    """Each GPU the driver shows, and whether MXNet's GPU build can run on it."""
    gpus = nvidia_gpus()
    if not gpus:
        _row("gpus", "none (no NVIDIA driver, or it shows no GPU: nvidia-smi tells)")
        return
    build = installed_mxnet()
    gpu_build = build if build and build[0] != "mxnet" else None
    wheel = gpu_build or GPU_WHEEL
    architectures = build_architectures(wheel)
    for gpu in gpus:
        used = f", {gpu.memory_used_mib / 1024:.1f} GiB in use" if gpu.memory_used_mib else ""
        _row(f"gpu {gpu.index}", gpu.describe() + used)
        runs = has_kernels(gpu, architectures)
        owner = "the installed" if gpu_build else "the GPU build"
        if runs is None:
            verdict = f"unknown for {wheel[0]} {wheel[1]} (its architectures are not on record)"
        elif runs:
            verdict = f"yes: {owner} {wheel[0]} {wheel[1]} has kernels for it"
        else:
            verdict = (
                f"NO: {owner} {wheel[0]} {wheel[1]} carries {architectures_text(architectures)} "
                "only (no PTX); mxlearn.auto_context() uses the CPU"
            )
        _row("  mxnet kernels", verdict)
    if not gpu_build:
        _row("  note", "the CPU build of MXNet is installed: `make setup MXNET=gpu` for the GPU")


def _row(label: str, value: str) -> None:
    print(f"{label:<23} {value}")


def run_doctor() -> None:
    _row("python", f"{sys.version.split()[0]} ({platform.system()} {platform.machine()})")
    for package in PACKAGES:
        version = _version(package)
        if version:
            _row(package, version)
    features = mx.runtime.Features()
    flags = [f for f in ("CUDA", "CUDNN", "MKLDNN", "DIST_KVSTORE") if features.is_enabled(f)]
    _row("mxnet build", ", ".join(flags) or "no optional features")
    gpu_rows()
    for name in ENV_DEFAULTS:
        _row(name, str(os.environ.get(name)))
    print(f"{'device':<23} ", end="")
    auto_context()
    ok, why = widget_support()
    _row("widgets", f"{'will render' if ok else 'will NOT render'}: {why}")
