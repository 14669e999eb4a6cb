"""``python -m mxlearn doctor``: versions, the device, and whether notebook widgets will render."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys

from ._compat import ENV_DEFAULTS, mx
from .devices import auto_context

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
    for name in ENV_DEFAULTS:
        _row(name, str(os.environ.get(name)))
    print(f"{'device':<23} ", end="")
    auto_context()
    ok, why = widget_support()
    _row("widgets", f"{'will render' if ok else 'will NOT render'}: {why}")
