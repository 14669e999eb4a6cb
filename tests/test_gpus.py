"""The GPU path without a GPU here: reading nvidia-smi, which architectures MXNet's GPU wheel
can run on, and the device choice that follows (pure decisions on recorded facts)."""

from __future__ import annotations

import pytest

from mxlearn.devices import (
    GpuForcedMissing,
    GpuForcedUnsupported,
    NotADeviceKind,
    build_architectures,
    choose_device,
    has_kernels,
    parse_nvidia_smi,
    unsupported_reason,
)

# What `nvidia-smi --query-gpu=index,name,compute_cap,memory.total,memory.used
# --format=csv,noheader,nounits` prints, one GPU per line.
SMI = {
    "H100": "0, NVIDIA H100 80GB HBM3, 9.0, 81559, 1",
    "A100": "0, NVIDIA A100-SXM4-40GB, 8.0, 40960, 3",
    "RTX 4090": "0, NVIDIA GeForce RTX 4090, 8.9, 24564, 312",
    "T4": "0, Tesla T4, 7.5, 15360, 0",
    "GTX 980": "0, NVIDIA GeForce GTX 980, 5.2, 4096, 20",
    "K80": "0, Tesla K80, 3.7, 11441, 0",
}
CU112 = ("mxnet-cu112", "1.9.1")
CPU_WHEEL = ("mxnet", "1.9.1")


def _gpu(name):
    (gpu,) = parse_nvidia_smi(SMI[name])
    return gpu


def test_nvidia_smi_lines_are_read():
    gpu = _gpu("H100")
    assert (gpu.index, gpu.compute_capability, gpu.memory_total_mib) == (0, (9, 0), 81559)
    assert gpu.describe() == "gpu(0) NVIDIA H100 80GB HBM3 (sm_90, 80 GiB)"
    assert parse_nvidia_smi("0, Some GPU, [N/A], [N/A], [N/A]")[0].compute_capability is None
    assert len(parse_nvidia_smi(SMI["T4"] + "\n" + SMI["A100"].replace("0,", "1,", 1))) == 2


@pytest.mark.parametrize(
    "name, runs",
    [
        ("H100", False),
        ("A100", True),
        ("RTX 4090", True),
        ("T4", True),
        ("GTX 980", True),
        ("K80", False),
    ],
)
def test_which_gpus_the_cu112_wheel_runs_on(name, runs):
    # sm_50, 60, 70, 80, 86 and no PTX: same major version, minor at least the kernel's
    assert has_kernels(_gpu(name), build_architectures(CU112)) is runs


def test_an_unsupported_gpu_falls_back_to_the_cpu_with_the_reason():
    kind, why = choose_device(1, [_gpu("H100")], CU112)
    assert kind == "cpu"
    assert "sm_90" in why and "sm_50, sm_60, sm_70, sm_80, sm_86 only" in why
    assert "no kernel image" in why and "the CPU works instead" in why
    with pytest.raises(GpuForcedUnsupported) as refused:
        choose_device(1, [_gpu("H100")], CU112, forced="gpu")
    assert type(refused.value) is GpuForcedUnsupported
    h100 = _gpu("H100")
    assert refused.value.fields["why"] == unsupported_reason(
        h100, CU112, build_architectures(CU112)
    )
    assert "gpu(0) NVIDIA H100" in refused.value.fields["why"]


def test_a_supported_gpu_is_used_and_the_cpu_can_be_asked_for():
    kind, why = choose_device(1, [_gpu("RTX 4090")], CU112)
    assert kind == "gpu" and "RTX 4090 (sm_89" in why
    assert choose_device(1, [_gpu("RTX 4090")], CU112, forced="cpu")[0] == "cpu"
    with pytest.raises(NotADeviceKind) as refused:
        choose_device(1, [_gpu("RTX 4090")], CU112, forced="tpu")
    assert refused.value.fields == {"forced": "tpu"}


def test_the_cpu_wheel_beside_a_gpu_names_the_fix():
    # this machine has the CPU build; the reason mentions the GPU the driver shows
    kind, why = choose_device(0, [_gpu("T4")], CPU_WHEEL)
    assert kind == "cpu" and "Tesla T4" in why and "make setup MXNET=gpu" in why
    kind, why = choose_device(0, [_gpu("H100")], CPU_WHEEL)
    assert "the GPU build" in why and "sm_90" in why and "make setup" not in why
    with pytest.raises(GpuForcedMissing) as refused:
        choose_device(0, [], CPU_WHEEL, forced="gpu")
    assert type(refused.value) is GpuForcedMissing
    assert refused.value.fields["why"] == choose_device(0, [], CPU_WHEEL)[1]
    assert "make setup MXNET=gpu" in refused.value.fix  # the command the student runs


def test_the_progress_line_carries_the_gpu_memory_when_training_on_a_gpu():
    from mxlearn import mx
    from mxlearn.devices import gpu_memory_text
    from mxlearn.metrics.recorder import TrainingRecorder

    assert gpu_memory_text([mx.cpu(0), mx.cpu(1)]) == ""  # fit adds it for GPU contexts only
    recorder = TrainingRecorder(clock=lambda: 1.0)
    recorder.begin(total_epochs=3)
    recorder.status = lambda: "GPU memory 1.2/16.0 GiB"  # what gpu_memory_text gives on a GPU
    assert recorder.progress_text().endswith(" · GPU memory 1.2/16.0 GiB")
