"""Device choice: the GPU when MXNet sees one, else the CPU, always with the reason."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess

from ._compat import mx
from .errors import ArgumentTypeError, DeviceError


def gpu_count() -> int:
    """GPUs MXNet can use: 0 on the CPU wheel or without the NVIDIA driver."""
    try:
        return mx.context.num_gpus()
    except mx.base.MXNetError:
        return 0


def _build_has_cuda() -> bool:
    return mx.runtime.Features().is_enabled("CUDA")


def no_gpu_reason() -> str:
    if not _build_has_cuda():
        return f"the installed MXNet {mx.__version__} is the CPU build"
    return "MXNet's GPU build sees no GPU (is the NVIDIA driver loaded? nvidia-smi tells)"


def auto_context(verbose: bool = True):
    """``mx.gpu(0)`` when MXNet sees a GPU, else ``mx.cpu()``; prints why in one line.

    Examples
    --------
    >>> ctx = auto_context(verbose=False)
    >>> ctx.device_type in ('cpu', 'gpu')
    True
    """
    if gpu_count() > 0:
        ctx, why = mx.gpu(0), "MXNet sees a GPU"
    else:
        ctx, why = mx.cpu(), no_gpu_reason()
    if verbose:
        print(f"Using {describe(ctx)}: {why}.")
    return ctx


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _gpu_name(index: int) -> str:
    if shutil.which("nvidia-smi"):
        out = subprocess.run(
            ["nvidia-smi", f"--id={index}", "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    return "NVIDIA GPU"


def describe(ctx) -> str:
    """A one-line name for a context: its kind, model and (on a GPU) memory."""
    if ctx.device_type == "gpu":
        text = f"gpu({ctx.device_id}) {_gpu_name(ctx.device_id)}"
        try:
            free, total = mx.context.gpu_memory_info(ctx.device_id)
            text += f", {total / 2**30:.1f} GiB ({free / 2**30:.1f} GiB free)"
        except mx.base.MXNetError:
            pass
        return text
    return f"cpu({ctx.device_id}) {_cpu_name()}, {os.cpu_count()} cores"


def check_context(context, called: str = "Module()"):
    """The context as a list, after refusing what MXNet would only reject at bind time."""
    contexts = list(context) if isinstance(context, (list, tuple)) else [context]
    if not contexts:
        raise ArgumentTypeError(
            f"{called}: context=[] names no device.", fix="context=mxlearn.auto_context()"
        )
    for ctx in contexts:
        if ctx in (mx.gpu, mx.cpu) or (callable(ctx) and not isinstance(ctx, mx.Context)):
            name = getattr(ctx, "__name__", "gpu")
            raise ArgumentTypeError(
                f"{called}: context=mx.{name} passes the function itself; a device is made by "
                "calling it.",
                fix=f"context=mx.{name}(0)   (or context=mxlearn.auto_context())",
            )
        if not isinstance(ctx, mx.Context):
            raise ArgumentTypeError(
                f"{called}: context={ctx!r} is not a device.",
                fix="context=mx.cpu() or context=mx.gpu(0) (or mxlearn.auto_context())",
            )
        if ctx.device_type == "gpu" and ctx.device_id >= gpu_count():
            seen = gpu_count()
            why = (
                no_gpu_reason()
                if seen == 0
                else f"MXNet sees {seen} GPU(s): gpu(0)..gpu({seen - 1})"
            )
            raise DeviceError(
                f"{called}: context={ctx} cannot be used: {why}.",
                fix="context=mx.cpu()   (or context=mxlearn.auto_context(), which picks the GPU "
                "when there is one)",
            )
    return contexts
