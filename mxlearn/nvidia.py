"""What the NVIDIA driver shows (``nvidia-smi``) and what MXNet's GPU wheels carry: facts that
need no MXNet, so that mxlearn can explain a GPU wheel that does not load at all."""

from __future__ import annotations

import contextlib
import importlib.metadata
import shutil
import subprocess
from dataclasses import dataclass

# Architectures (compute capability x 10) compiled into the GPU wheels mxlearn installs, as
# listed by `cuobjdump --list-elf libmxnet.so` of the wheel. No PTX: nothing else can run.
WHEEL_ARCHITECTURES = {("mxnet-cu112", "1.9.1"): (50, 60, 70, 80, 86)}


@dataclass(frozen=True)
class GpuInfo:
    index: int
    name: str
    compute_capability: tuple[int, int] | None  # (9, 0) for an H100
    memory_total_mib: int | None
    memory_used_mib: int | None

    def describe(self) -> str:
        sm = "sm_{}{}".format(*self.compute_capability) if self.compute_capability else "sm_?"
        memory = f", {self.memory_total_mib / 1024:.0f} GiB" if self.memory_total_mib else ""
        return f"gpu({self.index}) {self.name} ({sm}{memory})"


def _number(text: str) -> int | None:
    with contextlib.suppress(ValueError):
        return int(float(text))
    return None


def parse_nvidia_smi(csv_text: str) -> list[GpuInfo]:
    """GPUs from ``nvidia-smi --query-gpu=index,name,compute_cap,memory.total,memory.used
    --format=csv,noheader,nounits``."""
    gpus = []
    for line in csv_text.strip().splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 5:
            continue
        index, name, capability, total, used = fields
        major, _, minor = capability.partition(".")
        cc = (int(major), int(minor)) if major.isdigit() and minor.isdigit() else None
        gpus.append(GpuInfo(int(index), name, cc, _number(total), _number(used)))
    return gpus


def nvidia_gpus() -> list[GpuInfo]:
    """The GPUs the NVIDIA driver shows; [] without a driver or GPU."""
    if not shutil.which("nvidia-smi"):
        return []
    query = "--query-gpu=index,name,compute_cap,memory.total,memory.used"
    try:
        command = ["nvidia-smi", query, "--format=csv,noheader,nounits"]
        out = subprocess.run(command, capture_output=True, text=True, timeout=15)
    except (OSError, subprocess.SubprocessError):
        return []
    return parse_nvidia_smi(out.stdout) if out.returncode == 0 else []


def installed_mxnet() -> tuple[str, str] | None:
    """(distribution, version) of the installed MXNet wheel, e.g. ('mxnet-cu112', '1.9.1')."""
    for dist in importlib.metadata.distributions():
        name = (dist.metadata["Name"] or "").lower()
        if name == "mxnet" or name.startswith("mxnet-cu"):
            return name, dist.version
    return None


def build_architectures(build: tuple[str, str] | None) -> tuple[int, ...] | None:
    """The architectures a GPU wheel has kernels for; None when unknown (or the CPU wheel)."""
    return WHEEL_ARCHITECTURES.get(build) if build else None


def has_kernels(gpu: GpuInfo, architectures) -> bool | None:
    """Whether machine code for one of ``architectures`` runs on ``gpu``. Code for sm_XY runs
    on sm_XZ with Z >= Y (same major version); there is no PTX to compile for anything else."""
    if gpu.compute_capability is None or architectures is None:
        return None
    major, minor = gpu.compute_capability
    return any(a // 10 == major and a % 10 <= minor for a in architectures)


def architectures_text(architectures) -> str:
    return ", ".join(f"sm_{a}" for a in architectures)


def libraries_not_found(library: str) -> list[str]:
    """The shared libraries ``library`` links against (directly or through another) that the
    dynamic loader cannot find, as ``ldd`` lists them; [] where ldd is not there."""
    if not shutil.which("ldd"):
        return []
    try:
        out = subprocess.run(["ldd", library], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return []
    lines = out.stdout.splitlines()
    return [line.split("=>")[0].strip() for line in lines if line.endswith("=> not found")]
