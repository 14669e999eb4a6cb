"""The one place that imports MXNet.

MXNet 1.9.1 (the last release) predates NumPy 1.24, which removed the aliases ``np.bool``,
``np.int``, ... that MXNet still uses at import time, and NumPy 2, which removed more
(``np.PZERO``). This module makes MXNet importable on NumPy 1.23-1.26, refuses NumPy 2 with
the fix, and sets MXNet's environment defaults before MXNet reads them. Every other mxlearn
module does ``from ._compat import mx``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import sys
import warnings

import numpy as np

from .errors import N_, SetupError
from .language import say
from .nvidia import (  # facts that need no MXNet
    WHEEL_ARCHITECTURES,
    architectures_text,
    has_kernels,
    installed_mxnet,
    libraries_not_found,
    nvidia_gpus,
)


# Each named ...SetupError: an import that fails shows it in a terminal's traceback.
class NumpyTooNewSetupError(SetupError):
    says = N_(
        "MXNet 1.9.1 cannot run with NumPy {version}: NumPy 2 removed names MXNet needs. "
        "Install the NumPy mxlearn pins for Python {python}, then import mxlearn again."
    )
    fix_code = 'pip install "numpy=={pin}"'


class NumpyLoadedBeforeInstallSetupError(SetupError):
    says = N_(
        "This Python process still runs NumPy {loaded}, imported before NumPy {installed} was "
        "installed: pip replaced the files, not the module already in memory, and MXNet 1.9.1 "
        "cannot run with NumPy 2."
    )
    fix_says = N_(
        "restart the kernel (Colab: Runtime > Restart session; Jupyter: Kernel > Restart "
        "Kernel), then run the cells again"
    )


class NvidiaLibrariesSetupError(SetupError):
    says = N_(
        "MXNet's GPU wheel {wheel} {version} cannot load: {error}. It is built for CUDA 11.2 "
        "and links against the NVIDIA driver's libcuda.so.1 and the libraries of CUDA 11.2, "
        "cuDNN 8 and NCCL 2; not found here: {missing}. A machine with CUDA 12 alone (such as "
        "Colab's GPU) has none of CUDA 11's.{kernels} For the GPU: a machine or container "
        "with the NVIDIA driver, CUDA 11.2 and cuDNN 8 (docs/devices.md). Here: MXNet's CPU "
        "wheel."
    )
    fix_code = "pip uninstall -y {wheel} && pip install mxnet==1.9.1"


# A sentence of NvidiaLibrariesSetupError's, for each GPU the wheel has no kernels for (Hopper).
NO_KERNELS_EVEN_THEN = N_(
    " With those libraries, {gpu} would still have no kernels in it: it carries "
    "{architectures} only (no PTX)."
)


class NoMxnetSetupError(SetupError):
    says = N_(
        "MXNet is not installed ({error}). Fix, choose one: {cpu_fix}; or for a GPU: {gpu_fix}."
    )


# Why each default: MXNET_SUBGRAPH_VERBOSE=0 silences the "Subgraph backend MKLDNN is activated"
# line MXNet prints at every bind; a bounded oneDNN cache keeps memory flat when input shapes
# vary (unbounded, it grew by 159 MB over 1,000 shapes here: benchmarks/shape_memory.py).
ENV_DEFAULTS = {"MXNET_SUBGRAPH_VERBOSE": "0", "MXNET_MKLDNN_CACHE_NUM": "64"}

# Aliases NumPy 1.24 removed and MXNet 1.9.1 still touches at import time.
_NUMPY_ALIASES = {
    "bool": np.bool_,
    "int": int,
    "float": float,
    "complex": complex,
    "object": object,
    "str": str,
}


def _numpy_major_minor() -> tuple[int, int]:
    major, minor = np.__version__.split(".")[:2]
    return int(major), int(minor)


# The NumPy pyproject.toml pins for each Python: 1.23.5 has no wheel for 3.12.
NUMPY_PINS = {(3, 11): "1.23.5", (3, 12): "1.26.4"}

# The dynamic loader's words for a library it cannot find (MXNet loads libmxnet.so by ctypes).
LOADER_MISSING = re.compile(r"(lib[\w.+-]+\.so[\w.]*): cannot open shared object file")


def _check_numpy() -> None:
    if _numpy_major_minor() < (2, 0):
        return
    try:
        installed = importlib.metadata.version("numpy")
    except importlib.metadata.PackageNotFoundError:
        installed = np.__version__
    if int(installed.split(".")[0]) < 2:  # Colab: `%pip install` in a kernel that has NumPy
        raise NumpyLoadedBeforeInstallSetupError(loaded=np.__version__, installed=installed)
    python = sys.version_info[:2]
    pin = NUMPY_PINS.get(python, NUMPY_PINS[(3, 12)])
    raise NumpyTooNewSetupError(version=np.__version__, python="{}.{}".format(*python), pin=pin)


def _gpu_wheel_failure(err: OSError) -> NvidiaLibrariesSetupError | None:
    """The explanation of a GPU wheel whose libmxnet.so the loader cannot link: every library
    it cannot find and, for a GPU the wheel has no kernels for, that too. None for any other
    failure, which is shown as it is."""
    found = LOADER_MISSING.search(str(err))
    wheel = installed_mxnet()
    if found is None or not wheel or not wheel[0].startswith("mxnet-cu"):
        return None
    folder = importlib.util.find_spec("mxnet").submodule_search_locations[0]
    missing = libraries_not_found(os.path.join(folder, "libmxnet.so")) or [found.group(1)]
    return NvidiaLibrariesSetupError(
        wheel=wheel[0],
        version=wheel[1],
        error=err,
        missing=", ".join(missing),
        kernels=no_kernels_even_then(nvidia_gpus(), wheel),
    )


def no_kernels_even_then(gpus, wheel: tuple[str, str]) -> str:
    """A sentence for each of ``gpus`` the GPU ``wheel`` has no kernels for (Hopper)."""
    architectures = WHEEL_ARCHITECTURES.get(wheel)
    return "".join(
        say(
            NO_KERNELS_EVEN_THEN,
            gpu=gpu.describe(),
            architectures=architectures_text(architectures),
        )
        for gpu in gpus
        if has_kernels(gpu, architectures) is False
    )


def _set_numpy_aliases() -> None:
    # NumPy 1.23 still has the aliases (with a deprecation warning); touch only newer ones.
    if _numpy_major_minor() < (1, 24):
        return
    for name, value in _NUMPY_ALIASES.items():
        if name not in np.__dict__:
            setattr(np, name, value)


def _import_mxnet():
    _check_numpy()
    _set_numpy_aliases()
    for name, value in ENV_DEFAULTS.items():
        os.environ.setdefault(name, value)
    try:
        with warnings.catch_warnings():
            # MXNet 1.9.1's own imports trip NumPy and distutils deprecations that a student can
            # do nothing about.
            warnings.simplefilter("ignore", DeprecationWarning)
            import mxnet
    except OSError as err:  # the loader's, from ctypes: a GPU wheel without its libraries
        explained = _gpu_wheel_failure(err)
        if explained is None:
            raise
        raise explained from None
    except ModuleNotFoundError as err:
        if err.name != "mxnet":  # a module MXNet itself imports: shown as it is
            raise
        cpu_fix = say('pip install "mxnet==1.9.1" (CPU) or: pip install -e ".[cpu]" / make setup')
        gpu_fix = say(
            'pip install "mxnet-cu112==1.9.1" (NVIDIA GPU with CUDA 11.2 and cuDNN 8; never both '
            "wheels at once) or: conda env create -f environment.yml"
        )
        raise NoMxnetSetupError(error=err, cpu_fix=cpu_fix, gpu_fix=gpu_fix) from None
    if mxnet.__version__ != "1.9.1":
        warnings.warn(
            say(
                "mxlearn is built and tested against MXNet 1.9.1; this is MXNet {version}.",
                version=mxnet.__version__,
            ),
            stacklevel=3,
        )
    return mxnet


mx = _import_mxnet()
