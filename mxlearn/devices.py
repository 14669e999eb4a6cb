"""Device choice: the GPU when MXNet sees one, else the CPU, always with the reason."""

from __future__ import annotations

import os
import platform

from ._compat import mx
from .errors import ArgumentTypeError, DeviceError
from .gpus import (
    GpuInfo,
    build_architectures,
    has_kernels,
    installed_mxnet,
    nvidia_gpus,
    unsupported_reason,
)


def gpu_count() -> int:
    """GPUs MXNet can use: 0 on the CPU wheel or without the NVIDIA driver."""
    try:
        return mx.context.num_gpus()
    except mx.base.MXNetError:
        return 0


def _build_has_cuda() -> bool:
    return mx.runtime.Features().is_enabled("CUDA")


def no_gpu_reason(gpus=None, build=None) -> str:
    """Why MXNet sees no GPU, naming the fix when a GPU is in fact here."""
    gpus = nvidia_gpus() if gpus is None else gpus
    build = installed_mxnet() if build is None else build
    if not _build_has_cuda():
        reason = f"the installed MXNet {mx.__version__} is the CPU build"
        if gpus:
            gpu = gpus[0]
            wheel = ("mxnet-cu112", "1.9.1")
            if has_kernels(gpu, build_architectures(wheel)) is False:
                return (
                    f"{reason}, and although {gpu.describe()} is here, the GPU build "
                    f"({unsupported_reason(gpu, wheel, build_architectures(wheel))})"
                )
            return f"{reason}, though {gpu.describe()} is here: `make setup MXNET=gpu` installs the GPU build"
        return reason
    return "MXNet's GPU build sees no GPU (is the NVIDIA driver loaded? nvidia-smi tells)"


def choose_device(mxnet_gpus: int, gpus: list[GpuInfo], build, forced: str = "") -> tuple[str, str]:
    """('gpu' or 'cpu', why): the first GPU when MXNet sees one that its build can run on.

    ``forced`` is $MXLEARN_DEVICE: 'cpu' always takes the CPU, 'gpu' refuses to fall back.
    """
    forced = forced.strip().lower()
    if forced not in ("", "cpu", "gpu"):
        raise DeviceError(
            f"MXLEARN_DEVICE={forced!r} is not a device kind.",
            fix="MXLEARN_DEVICE=gpu (or cpu), or unset it",
        )
    if forced == "cpu":
        return "cpu", "MXLEARN_DEVICE=cpu asks for it"
    if mxnet_gpus > 0:
        first = next((g for g in gpus if g.index == 0), None)
        architectures = build_architectures(build)
        if first is not None and has_kernels(first, architectures) is False:
            why = unsupported_reason(first, build, architectures)
            if forced == "gpu":
                raise DeviceError(
                    f"MXLEARN_DEVICE=gpu, but {why}.",
                    fix="run on the CPU (unset MXLEARN_DEVICE), or on a GPU "
                    "from Maxwell to Ada (sm_50-sm_89)",
                )
            return "cpu", f"{why}; the CPU works instead"
        return "gpu", "MXNet sees a GPU" + (f": {first.describe()}" if first else "")
    why = no_gpu_reason(gpus, build)
    if forced == "gpu":
        raise DeviceError(
            f"MXLEARN_DEVICE=gpu, but {why}.",
            fix="on a machine with an NVIDIA GPU: make setup MXNET=gpu; or unset "
            "MXLEARN_DEVICE to run on the CPU",
        )
    return "cpu", why


def auto_context(verbose: bool = True):
    """``mx.gpu(0)`` when MXNet sees a GPU its build has kernels for, else ``mx.cpu()``; prints
    why in one line. ``$MXLEARN_DEVICE`` (cpu or gpu) overrides the choice.

    Examples
    --------
    >>> ctx = auto_context(verbose=False)
    >>> ctx.device_type in ('cpu', 'gpu')
    True
    """
    seen = gpu_count()
    gpus = nvidia_gpus() if seen or _build_has_cuda() else []
    kind, why = choose_device(seen, gpus, installed_mxnet(), os.environ.get("MXLEARN_DEVICE", ""))
    ctx = mx.gpu(0) if kind == "gpu" else mx.cpu()
    if verbose:
        print(f"Using {describe(ctx)}: {why}.")
    return ctx


def context_list(count: int = 2, verbose: bool = True) -> list:
    """``count`` devices for data parallelism: GPUs when MXNet sees that many it can use, else
    ``count`` CPU contexts (which share the same cores: they show the mechanics, not a speedup).

    Examples
    --------
    >>> context_list(2, verbose=False)[0].device_type in ('cpu', 'gpu')
    True
    """
    first = auto_context(verbose=False)
    if first.device_type == "gpu" and gpu_count() >= count:
        contexts, why = [mx.gpu(i) for i in range(count)], f"MXNet sees {gpu_count()} GPUs"
    else:
        contexts = [mx.cpu(i) for i in range(count)]
        why = f"{count} CPU contexts on the same {os.cpu_count()} cores (no {count} usable GPUs)"
    if verbose:
        print(f"Using {', '.join(str(c) for c in contexts)}: {why}.")
    return contexts


def gpu_memory_text(contexts) -> str:
    """'GPU memory 1.2/16.0 GiB' over the GPUs among ``contexts`` ('' when none)."""
    used = total = 0
    for ctx in contexts:
        if ctx.device_type != "gpu":
            continue
        try:
            free, size = mx.context.gpu_memory_info(ctx.device_id)
        except mx.base.MXNetError:
            continue
        used, total = used + size - free, total + size
    return f"GPU memory {used / 2**30:.1f}/{total / 2**30:.1f} GiB" if total else ""


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe(ctx) -> str:
    """A one-line name for a context: its kind, model and (on a GPU) memory."""
    if ctx.device_type == "gpu":
        name = next((g.name for g in nvidia_gpus() if g.index == ctx.device_id), "NVIDIA GPU")
        text = f"gpu({ctx.device_id}) {name}"
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
