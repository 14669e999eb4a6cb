"""What forward's per-batch checks cost: ``Module._check_batch`` (the batch's data and label
shapes read against the bound ones, attribute reads only) timed alone on a batch of the
tutorial's letter MLP (16-64-26, batch 32, CPU), against one training step (forward,
backward, update) of the same batch; medians of interleaved repeats.

    python benchmarks/batch_checks.py --repeats 7 --calls 20000
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import mxlearn
from mxlearn import mx


def _ready():
    X = np.random.RandomState(0).rand(32, 16).astype("float32")
    y = np.arange(32, dtype="float32") % 26
    batch = mx.io.DataBatch([mx.nd.array(X)], [mx.nd.array(y)])
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=26, num_hidden=64))
    mod.bind([("data", (32, 16))], [("softmax_label", (32,))])
    mod.init_params(initializer=mx.init.Xavier())
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1})
    mod.forward(batch, is_train=True)  # the first batch's value checks, once
    mod.backward()
    mod.update()
    return mod, batch


def _checks(mod, batch, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        mod._check_batch(batch, True)
    return (time.perf_counter() - start) / calls


def _steps(mod, batch, calls: int) -> float:
    mx.nd.waitall()
    start = time.perf_counter()
    for _ in range(calls):
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
    mx.nd.waitall()
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    mod, batch = _ready()
    checks, steps = [], []
    for _ in range(args.repeats):
        checks.append(_checks(mod, batch, args.calls))
        steps.append(_steps(mod, batch, args.calls // 20))
    check, step = statistics.median(checks) * 1e6, statistics.median(steps) * 1e6
    print(f"_check_batch: {check:.2f} us per batch; a training step: {step:.1f} us")
    print(f"share of a step: {check / step:.2%}")


if __name__ == "__main__":
    main()
