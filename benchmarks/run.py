"""Throughput of fit: raw MXNet, mxlearn without a plot, mxlearn with live plots, side by side.

The tutorial's letter MLP (16-64-26), batch 32, CPU, SGD lr 0.1, eval_metric='acc', no
validation. Variants run interleaved (one of each per repeat) so that machine noise hits all
alike; the table gives medians of samples per second and ratios.

    make bench            # or: python benchmarks/run.py --repeats 5 --epochs 10
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import platform
import statistics
import tempfile
import time

import mxlearn
from mxlearn import mx


def _quiet_logger() -> logging.Logger:
    logger = logging.getLogger("benchmark")
    logger.addHandler(logging.NullHandler())
    logger.propagate = False
    return logger


def _live(backend: str, folder: str):
    def make():
        return mxlearn.LivePlot(backend=backend, png_path=os.path.join(folder, f"{backend}.png"))

    return make


def time_fit(module_class, train_iter, epochs: int, live=None) -> float:
    """Samples per second of one ``fit`` of ``epochs`` epochs on a fresh module."""
    mxlearn.seed(0)
    train_iter.reset()
    mod = module_class(mxlearn.models.mlp(), context=mx.cpu(), logger=_quiet_logger())
    # The plots' own output (console lines, the widget's text form outside a kernel) goes
    # to /dev/null: it is produced, so it costs, but it would clutter the table.
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        extra = {} if live is None else {"live": live()}
        started = time.perf_counter()
        mod.fit(
            train_iter,
            eval_metric="acc",
            optimizer="sgd",
            optimizer_params={"learning_rate": 0.1},
            num_epoch=epochs,
            **extra,
        )
        mx.nd.waitall()
        seconds = time.perf_counter() - started
    return epochs * 16000 / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()

    train_iter, _ = mxlearn.datasets.letter_iters(batch_size=32)
    folder = tempfile.mkdtemp(prefix="mxlearn-bench-")
    variants = {
        "raw mx.mod.Module.fit": (mx.mod.Module, None),
        "mxlearn fit, no plot": (mxlearn.Module, None),
        "mxlearn fit, live console": (mxlearn.Module, _live("console", folder)),
        "mxlearn fit, live widget": (mxlearn.Module, _live("widget", folder)),
        "raw again (noise floor)": (mx.mod.Module, None),
    }
    time_fit(mxlearn.Module, train_iter, 1)  # warm-up: oneDNN kernels, allocator
    samples = {name: [] for name in variants}
    for _ in range(args.repeats):
        for name, (module_class, live) in variants.items():
            samples[name].append(time_fit(module_class, train_iter, args.epochs, live))

    median = {name: statistics.median(values) for name, values in samples.items()}
    raw, plain = median["raw mx.mod.Module.fit"], median["mxlearn fit, no plot"]
    print(
        f"{platform.machine()}, {os.cpu_count()} cores, MXNet {mx.__version__}; "
        f"{args.repeats} interleaved repeats of {args.epochs} epochs\n"
    )
    print("| variant | median samples/s | vs raw MXNet | vs mxlearn without plot |")
    print("|---|---:|---:|---:|")
    for name, value in median.items():
        print(f"| {name} | {value:,.0f} | {value / raw:.3f} | {value / plain:.3f} |")


if __name__ == "__main__":
    main()
