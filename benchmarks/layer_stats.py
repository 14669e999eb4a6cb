"""What LayerStats costs per batch: fit with and without it, side by side.

The tutorial's letter MLP (16-64-26), batch 32, CPU, SGD lr 0.1, no validation; variants
interleaved (one of each per repeat), medians of samples per second and ratios to fit without
statistics.

    .venv/bin/python benchmarks/layer_stats.py --repeats 7 --epochs 5
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time

import mxlearn
from mxlearn import mx

QUIET = logging.getLogger("benchmark-layer-stats")
QUIET.addHandler(logging.NullHandler())
QUIET.propagate = False

VARIANTS = {
    "fit, no statistics": lambda: [],
    "LayerStats() (every=50)": lambda: [mxlearn.LayerStats()],
    "LayerStats(every=10)": lambda: [mxlearn.LayerStats(every=10)],
    "LayerStats(every=1)": lambda: [mxlearn.LayerStats(every=1)],
}


def samples_per_second(train_iter, epochs: int, callbacks) -> float:
    mxlearn.seed(0)
    train_iter.reset()
    mod = mxlearn.Module(mxlearn.models.mlp(), context=mx.cpu(), logger=QUIET)
    started = time.perf_counter()
    mod.fit(
        train_iter, num_epoch=epochs, optimizer_params={"learning_rate": 0.1}, callbacks=callbacks
    )
    mx.nd.waitall()
    return epochs * 16000 / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    train_iter, _ = mxlearn.datasets.letter_iters(batch_size=32)
    found = {name: [] for name in VARIANTS}
    for _ in range(args.repeats):
        for name, callbacks in VARIANTS.items():
            found[name].append(samples_per_second(train_iter, args.epochs, callbacks()))
    base = statistics.median(found["fit, no statistics"])
    print("| variant | median samples/s | vs fit without statistics | min-max |")
    print("|---|---:|---:|---|")
    for name, values in found.items():
        ratios = [v / b for v, b in zip(values, found["fit, no statistics"])]
        print(
            f"| {name} | {statistics.median(values):,.0f} | {statistics.median(ratios):.3f} "
            f"| {min(ratios):.3f}-{max(ratios):.3f} |"
        )
    print(f"(median of fit without statistics: {base:,.0f} samples/s)")


if __name__ == "__main__":
    main()
