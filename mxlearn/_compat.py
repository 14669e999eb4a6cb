"""The one place that imports MXNet.

MXNet 1.9.1 (the last release) predates NumPy 1.24, which removed the aliases ``np.bool``,
``np.int``, ... that MXNet still uses at import time, and NumPy 2, which removed more
(``np.PZERO``). This module makes MXNet importable on NumPy 1.23-1.26, refuses NumPy 2 with
the fix, and sets MXNet's environment defaults before MXNet reads them. Every other mxlearn
module does ``from ._compat import mx``.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from .errors import N_, SetupError
from .language import say


# Each named ...SetupError: an import that fails shows it in a terminal's traceback.
class NumpyTooNewSetupError(SetupError):
    says = N_(
        "MXNet 1.9.1 cannot run with NumPy {version}: NumPy 2 removed names MXNet "
        'needs. Fix: pip install "numpy==1.23.5" (or make setup, which pins it).'
    )


class NvidiaLibrariesSetupError(SetupError):
    says = N_(
        "The GPU wheel of MXNet is installed but cannot load the NVIDIA libraries "
        "({error}). It needs the NVIDIA driver, CUDA 11.2 and cuDNN 8. Fix: on a "
        "machine without them use the CPU wheel instead: pip uninstall mxnet-cu112 "
        "&& {cpu_fix}"
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


def _check_numpy() -> None:
    if _numpy_major_minor() >= (2, 0):
        raise NumpyTooNewSetupError(version=np.__version__)


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
    except ImportError as err:
        cpu_fix = say('pip install "mxnet==1.9.1" (CPU) or: pip install -e ".[cpu]" / make setup')
        if "libcuda" in str(err) or "libnvidia" in str(err):  # libcuda.so, libcudart.so too
            raise NvidiaLibrariesSetupError(error=err, cpu_fix=cpu_fix) from None
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
