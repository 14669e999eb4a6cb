"""What the data checks cost per batch: fit on an in-memory iterator (every row checked once
before training) and on an iterator mxlearn cannot see into (each batch queues device-side
checks, read every 100 batches), each against raw ``mx.mod.Module.fit`` on the same iterator.

The tutorial's letter MLP (16-64-26), batch 32, CPU, with validation (eval_data), interleaved
repeats, medians. ``OpaqueIter`` hands over NDArrayIter's batches unchanged: the difference
between the two ratios is the cost of the per-batch checks.

    python benchmarks/data_checks.py --repeats 7 --epochs 5
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time

import mxlearn
from mxlearn import mx


class OpaqueIter(mx.io.DataIter):
    """NDArrayIter's batches behind an interface that hides its arrays."""

    def __init__(self, inner):
        super().__init__(inner.batch_size)
        self.inner = inner
        self.provide_data, self.provide_label = inner.provide_data, inner.provide_label

    def reset(self):
        self.inner.reset()

    def next(self):
        return self.inner.next()


def _logger() -> logging.Logger:
    logger = logging.getLogger("data-checks-benchmark")
    logger.addHandler(logging.NullHandler())
    logger.propagate = False
    return logger


def time_fit(module_class, wrap, epochs: int) -> float:
    mxlearn.seed(0)
    train, val = mxlearn.datasets.letter_iters(batch_size=32)
    train, val = wrap(train), wrap(val)
    mod = module_class(mxlearn.models.mlp(), context=mx.cpu(), logger=_logger())
    started = time.perf_counter()
    mod.fit(
        train,
        eval_data=val,
        eval_metric="acc",
        optimizer_params={"learning_rate": 0.1},
        num_epoch=epochs,
    )
    mx.nd.waitall()
    return epochs * 16000 / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    variants = {
        "in memory": lambda it: it,
        "opaque": OpaqueIter,
    }
    samples = {(who, kind): [] for who in ("raw", "mxlearn") for kind in variants}
    for _ in range(args.repeats):
        for kind, wrap in variants.items():
            samples[("raw", kind)].append(time_fit(mx.mod.Module, wrap, args.epochs))
            samples[("mxlearn", kind)].append(time_fit(mxlearn.Module, wrap, args.epochs))
    print(f"{args.repeats} interleaved repeats of {args.epochs} epochs, batch 32, with eval_data")
    print("| iterator | raw samples/s | mxlearn samples/s | mxlearn / raw (min-max of pairs) |")
    print("|---|---:|---:|---:|")
    for kind in variants:
        raw, ours = samples[("raw", kind)], samples[("mxlearn", kind)]
        pairs = [o / r for o, r in zip(ours, raw)]
        print(
            f"| {kind} | {statistics.median(raw):,.0f} | {statistics.median(ours):,.0f} | "
            f"{statistics.median(pairs):.3f} ({min(pairs):.3f}-{max(pairs):.3f}) |"
        )


if __name__ == "__main__":
    main()
