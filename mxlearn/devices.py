"""Device choice: the GPU when MXNet sees one its build has kernels for, else the CPU, with
the reason. MXNet's GPU wheels carry machine code for fixed architectures and no PTX (the last,
``mxnet-cu112==1.9.1``, stops at sm_86): another GPU fails in its first operator with "no kernel
image", so mxlearn checks first, reading GPUs with ``nvidia-smi``, which even the CPU build has.
"""

from __future__ import annotations

import contextlib
import os
import platform

from . import rules
from ._compat import mx
from .boundary import public
from .errors import N_, ArgumentTypeError, DeviceError
from .language import say, say_n
from .nvidia import (
    GpuInfo,
    architectures_text,
    build_architectures,
    has_kernels,
    installed_mxnet,
    nvidia_gpus,
    parse_nvidia_smi,  # noqa: F401 (read here by tests/test_gpus.py)
)


class NotADeviceKind(DeviceError):
    says = N_("MXLEARN_DEVICE={forced!r} is not a device kind.")
    fix_says = N_("MXLEARN_DEVICE=gpu (or cpu), or unset it")


class GpuForced(DeviceError):
    says = N_("MXLEARN_DEVICE=gpu, but {why}.")


class GpuForcedUnsupported(GpuForced):
    fix_says = N_(
        "run on the CPU (unset MXLEARN_DEVICE), or on a GPU from Maxwell to Ada (sm_50-sm_89)"
    )


class GpuForcedMissing(GpuForced):
    fix_says = N_(
        "on a machine with an NVIDIA GPU: make setup MXNET=gpu; or unset MXLEARN_DEVICE "
        "to run on the CPU"
    )


class DeviceFunctionGiven(ArgumentTypeError):
    says = N_(
        "{called}: context=mx.{name} passes the function itself; a device is made by calling it."
    )
    fix_says = N_("context=mx.{name}(0)   (or context=mxlearn.auto_context())")


class NotADevice(ArgumentTypeError):
    says = N_("{called}: context={context!r} is not a device.")
    fix_says = N_("context=mx.cpu() or context=mx.gpu(0) (or mxlearn.auto_context())")


class DeviceUnusable(DeviceError):
    says = N_("{called}: context={context} cannot be used: {why}.")
    fix_says = N_(
        "context=mx.cpu()   (or context=mxlearn.auto_context(), which picks the GPU "
        "when there is one)"
    )


def unsupported_reason(gpu: GpuInfo, build, architectures, installed: bool = True) -> str:
    template = N_(
        "{gpu} has no kernels in the installed {wheel} {version}, which carries machine code for "
        "{architectures} only (no PTX): every operator would fail with 'no kernel image'"
    )
    if not installed:
        template = N_(
            "{gpu} has no kernels in the GPU build {wheel} {version} either, which carries machine "
            "code for {architectures} only (no PTX): every operator would fail with 'no kernel "
            "image'"
        )
    wheel, version = build
    text = architectures_text(architectures)
    return say(template, gpu=gpu.describe(), wheel=wheel, version=version, architectures=text)


def gpu_count() -> int:
    try:
        return mx.context.num_gpus()
    except mx.base.MXNetError:
        return 0


def _build_has_cuda() -> bool:
    return mx.runtime.Features().is_enabled("CUDA")


def no_gpu_reason(gpus=None) -> str:
    """Why MXNet sees no GPU, naming the fix when a GPU is in fact here."""
    if _build_has_cuda():
        return say("MXNet's GPU build sees no GPU (is the NVIDIA driver loaded? nvidia-smi tells)")
    gpus = nvidia_gpus() if gpus is None else gpus
    version = mx.__version__
    if not gpus:
        return say("the installed MXNet {version} is the CPU build", version=version)
    gpu, wheel = gpus[0], ("mxnet-cu112", "1.9.1")
    architectures = build_architectures(wheel)
    if has_kernels(gpu, architectures) is False:
        why = unsupported_reason(gpu, wheel, architectures, False)
        return say(
            "the installed MXNet {version} is the CPU build; {why}", version=version, why=why
        )
    return say(
        "the installed MXNet {version} is the CPU build, though {gpu} is here: "
        "`make setup MXNET=gpu` installs the GPU build",
        version=version,
        gpu=gpu.describe(),
    )


def choose_device(mxnet_gpus: int, gpus: list[GpuInfo], build, forced: str = "") -> tuple[str, str]:
    """('gpu' or 'cpu', why); ``forced`` ($MXLEARN_DEVICE) 'gpu' refuses to fall back."""
    forced = forced.strip().lower()
    if forced not in ("", "cpu", "gpu"):
        raise NotADeviceKind(forced=forced)
    if forced == "cpu":
        return "cpu", say("MXLEARN_DEVICE=cpu asks for it")
    if mxnet_gpus > 0:
        first = next((g for g in gpus if g.index == 0), None)
        architectures = build_architectures(build)
        if first is not None and has_kernels(first, architectures) is False:
            why = unsupported_reason(first, build, architectures)
            if forced == "gpu":
                raise GpuForcedUnsupported(why=why)
            return "cpu", say("{why}; the CPU works instead", why=why)
        if first is None:
            return "gpu", say("MXNet sees a GPU")
        return "gpu", say("MXNet sees a GPU: {gpu}", gpu=first.describe())
    why = no_gpu_reason(gpus)
    if forced == "gpu":
        raise GpuForcedMissing(why=why)
    return "cpu", why


@public("mxlearn.auto_context()", verbose=rules.flag("verbose=False"))
def auto_context(verbose: bool = True):
    """``mx.gpu(0)`` when MXNet sees a GPU its build has kernels for, else ``mx.cpu()``, saying
    why. ``$MXLEARN_DEVICE`` (cpu or gpu) overrides the choice.

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
        print(say("Using {device}: {why}.", device=describe(ctx), why=why))
    return ctx


@public(
    "mxlearn.context_list()",
    count=rules.whole(1, "mxlearn.context_list(2)"),
    verbose=rules.flag("verbose=False"),
)
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
        contexts = [mx.gpu(i) for i in range(count)]
        why = say("MXNet sees {count} GPUs", count=gpu_count())
    else:
        contexts = [mx.cpu(i) for i in range(count)]
        why = say(
            "{count} CPU contexts on the same {cores} cores (no {count} usable GPUs)",
            count=count,
            cores=os.cpu_count(),
        )
    if verbose:
        print(say("Using {device}: {why}.", device=", ".join(str(c) for c in contexts), why=why))
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
    if not total:
        return ""
    return say("GPU memory {used:.1f}/{total:.1f} GiB", used=used / 2**30, total=total / 2**30)


def _cpu_name() -> str:
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


@public(
    "mxlearn.describe()",
    ctx=rules.instance(mx.Context, N_("a device such as mx.cpu()"), "mxlearn.describe(mx.cpu())"),
)
def describe(ctx) -> str:
    """A one-line name for a context: its kind, model and (on a GPU) memory."""
    if ctx.device_type == "gpu":
        name = next((g.name for g in nvidia_gpus() if g.index == ctx.device_id), "NVIDIA GPU")
        text = f"gpu({ctx.device_id}) {name}"
        with contextlib.suppress(mx.base.MXNetError):
            free, total = (n / 2**30 for n in mx.context.gpu_memory_info(ctx.device_id))
            text += say(", {total:.1f} GiB ({free:.1f} GiB free)", total=total, free=free)
        return text
    return say(
        "cpu({number}) {name}, {cores} cores",
        number=ctx.device_id,
        name=_cpu_name(),
        cores=os.cpu_count(),
    )


def check_context(context, called: str = "Module()"):
    """The context as a list, after refusing what MXNet would only reject at bind time."""
    contexts = list(context) if isinstance(context, (list, tuple)) else [context]
    if not contexts:
        raise NotADevice(called=called, context=[])
    for ctx in contexts:
        if ctx is mx.gpu or ctx is mx.cpu or (callable(ctx) and not isinstance(ctx, mx.Context)):
            raise DeviceFunctionGiven(called=called, name=getattr(ctx, "__name__", "gpu"))
        if not isinstance(ctx, mx.Context):
            raise NotADevice(called=called, context=ctx)
        seen = gpu_count() if ctx.device_type == "gpu" else 0
        if ctx.device_type == "gpu" and ctx.device_id >= seen:
            why = no_gpu_reason()
            if seen:
                why = say_n(
                    "MXNet sees {count} GPU: gpu(0)",
                    "MXNet sees {count} GPUs: gpu(0)..gpu({last})",
                    seen,
                    last=seen - 1,
                )
            raise DeviceUnusable(called=called, context=ctx, why=why)
    return contexts
