"""Throughput of mxlearn.Module.fit against raw mx.mod.Module.fit, side by side.

The tutorial's letter MLP (16-64-26), batch 32, CPU, SGD lr 0.1, eval_metric='acc'. Runs are
interleaved (raw, mxlearn, raw, mxlearn, ...) so that machine noise hits both alike; the table
gives medians of samples per second and the ratio mxlearn / raw.

    make bench            # or: python benchmarks/run.py --repeats 7 --epochs 2
"""

from __future__ import annotations

import argparse
import logging
import platform
import statistics
import time

import mxlearn
from mxlearn import mx


def _quiet_logger() -> logging.Logger:
    logger = logging.getLogger("benchmark")
    logger.addHandler(logging.NullHandler())
    logger.propagate = False
    return logger


def time_fit(module_class, train_iter, epochs: int) -> float:
    """Samples per second of one ``fit`` of ``epochs`` epochs on a fresh module."""
    mxlearn.seed(0)
    train_iter.reset()
    mod = module_class(mxlearn.models.mlp(), context=mx.cpu(), logger=_quiet_logger())
    started = time.perf_counter()
    mod.fit(
        train_iter,
        eval_metric="acc",
        optimizer="sgd",
        optimizer_params={"learning_rate": 0.1},
        num_epoch=epochs,
    )
    mx.nd.waitall()
    return epochs * 16000 / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()

    train_iter, _ = mxlearn.datasets.letter_iters(batch_size=32)
    variants = {
        "raw mx.mod.Module.fit": mx.mod.Module,
        "mxlearn.Module.fit": mxlearn.Module,
        "raw again (noise floor)": mx.mod.Module,
    }
    time_fit(mxlearn.Module, train_iter, 1)  # warm-up: oneDNN kernels, allocator
    samples = {name: [] for name in variants}
    for _ in range(args.repeats):
        for name, module_class in variants.items():
            samples[name].append(time_fit(module_class, train_iter, args.epochs))

    raw = statistics.median(samples["raw mx.mod.Module.fit"])
    print(
        f"{platform.processor() or platform.machine()}, MXNet {mx.__version__}, "
        f"{args.repeats} interleaved repeats of {args.epochs} epochs\n"
    )
    print("| variant | median samples/s | ratio to raw |")
    print("|---|---:|---:|")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"| {name} | {median:,.0f} | {median / raw:.3f} |")


if __name__ == "__main__":
    main()
