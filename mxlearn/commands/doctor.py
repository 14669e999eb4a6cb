"""``python -m mxlearn doctor``: versions, the device, and whether notebook widgets will render."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys

from .. import cpu_share
from .._compat import ENV_DEFAULTS, mx
from ..devices import (
    architectures_text,
    auto_context,
    build_architectures,
    has_kernels,
    installed_mxnet,
    nvidia_gpus,
)
from ..language import say
from ..network_view import padded

GPU_WHEEL = ("mxnet-cu112", "1.9.1")  # what `make setup MXNET=gpu` installs
LABEL_WIDTH = 26  # the column of the values

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
        return False, say("ipywidgets is not installed: pip install 'ipywidgets>=8,<9'")
    if _version("jupyterlab_widgets") is None:
        return False, say("jupyterlab_widgets is missing: pip install 'jupyterlab_widgets>=3'")
    manager = os.path.join(
        sys.prefix, "share", "jupyter", "labextensions", "@jupyter-widgets", "jupyterlab-manager"
    )
    if not os.path.isdir(manager):
        why = say(
            "the widget manager extension is not in {folder}: reinstall jupyterlab_widgets",
            folder=manager,
        )
        return False, why
    return True, say(
        "ipywidgets {version} with its JupyterLab manager installed",
        version=_version("ipywidgets"),
    )


def _kernels_verdict(runs: bool | None, installed: bool, wheel, architectures) -> str:
    """Whether the GPU build (installed, or the one to install) has kernels for a GPU."""
    values = {"wheel": wheel[0], "version": wheel[1]}
    if runs is None:
        return say("unknown for {wheel} {version} (its architectures are not on record)", **values)
    values["build"] = say("the installed") if installed else say("the GPU build")
    if runs:
        return say("yes: {build} {wheel} {version} has kernels for it", **values)
    return say(
        "NO: {build} {wheel} {version} carries {architectures} only (no PTX); "
        "mxlearn.auto_context() uses the CPU",
        architectures=architectures_text(architectures),
        **values,
    )


def gpu_rows() -> None:
    """Each GPU the driver shows, and whether MXNet's GPU build can run on it."""
    gpus = nvidia_gpus()
    if not gpus:
        _row(say("gpus"), say("none (no NVIDIA driver, or it shows no GPU: nvidia-smi tells)"))
        return
    build = installed_mxnet()
    gpu_build = build if build and build[0] != "mxnet" else None
    wheel = gpu_build or GPU_WHEEL
    architectures = build_architectures(wheel)
    for gpu in gpus:
        used = ""
        if gpu.memory_used_mib:
            used = say(", {used:.1f} GiB in use", used=gpu.memory_used_mib / 1024)
        _row(say("gpu {index}", index=gpu.index), gpu.describe() + used)
        verdict = _kernels_verdict(
            has_kernels(gpu, architectures), gpu_build is not None, wheel, architectures
        )
        _row("  " + say("mxnet kernels"), verdict)
    if not gpu_build:
        _row(
            "  " + say("note"),
            say("the CPU build of MXNet is installed: `make setup MXNET=gpu` for the GPU"),
        )


def thread_rows() -> None:
    """MXNet's threads as mxlearn sized them at import, and why."""
    chosen = cpu_share.CHOSEN
    share = chosen.share
    if chosen.user_set:
        why = say("your own setting")
    elif share.quota is not None and share.quota < share.affinity:
        why = say(
            "the cgroup's CPU quota allows {quota:g} CPUs of the {affinity} this process may "
            "run on",
            quota=share.quota,
            affinity=share.affinity,
        )
    else:
        why = say("the CPUs this process may run on")
    _row(cpu_share.POOL, f"{chosen.threads} ({why})")
    workers = os.environ.get(cpu_share.WORKERS)
    _row(cpu_share.WORKERS, workers or say("1 (MXNet's default: one operator at a time)"))


def _row(label: str, value: str) -> None:
    print(f"{padded(label, LABEL_WIDTH)} {value}")


def run_doctor() -> None:
    python = f"{sys.version.split()[0]} ({platform.system()} {platform.machine()})"
    _row("python", python)
    for package in PACKAGES:
        version = _version(package)
        if version:
            _row(package, version)
    features = mx.runtime.Features()
    flags = [f for f in ("CUDA", "CUDNN", "MKLDNN", "DIST_KVSTORE") if features.is_enabled(f)]
    _row(say("mxnet build"), ", ".join(flags) or say("no optional features"))
    gpu_rows()
    for name in ENV_DEFAULTS:
        _row(name, str(os.environ.get(name)))
    thread_rows()
    device = say("device")
    print(f"{padded(device, LABEL_WIDTH)} ", end="")
    auto_context()
    ok, why = widget_support()
    verdict = say("will render: {why}", why=why) if ok else say("will NOT render: {why}", why=why)
    _row(say("widgets"), verdict)
