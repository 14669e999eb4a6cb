"""What the boundary of the public calls costs per batch: a manual training loop (forward,
backward, update, update_metric) through mxlearn's guarded methods, and the same loop through
the methods underneath the boundary (``__wrapped__``: the rules and the net skipped), interleaved.

    python benchmarks/boundary.py --repeats 7 --epochs 5
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import mxlearn
from mxlearn import mx


def _module(train):
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=26, num_hidden=64))
    mod.bind(train.provide_data, train.provide_label)
    mod.init_params(initializer=mx.init.Xavier())
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1})
    return mod


def _loop(mod, train, epochs: int, bare: bool) -> float:
    """Seconds per batch of ``epochs`` epochs of the manual loop."""
    calls = ("forward", "backward", "update", "update_metric")
    if bare:  # the same methods without the boundary around them
        forward, backward, update, update_metric = (
            getattr(type(mod), name).__wrapped__.__get__(mod) for name in calls
        )
    else:
        forward, backward, update, update_metric = (getattr(mod, name) for name in calls)
    metric = mx.metric.Accuracy()
    batches = 0
    mx.nd.waitall()
    start = time.perf_counter()
    for _ in range(epochs):
        train.reset()
        for batch in train:
            forward(batch, is_train=True)
            backward()
            update()
            update_metric(metric, batch.label)
            batches += 1
    metric.get()
    mx.nd.waitall()
    return (time.perf_counter() - start) / batches


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.RandomState(0)
    X, y = rng.rand(4000, 16).astype("float32"), rng.randint(0, 26, 4000).astype("float32")
    train = mx.io.NDArrayIter(X, y, batch_size=32)
    mod = _module(train)
    times = {"through the boundary": [], "underneath it": []}
    for repeat in range(args.repeats):  # which goes first alternates: no order effect
        for bare in (repeat % 2 == 0, repeat % 2 == 1):
            name = "underneath it" if bare else "through the boundary"
            times[name].append(_loop(mod, train, args.epochs, bare=bare))
    bare = statistics.median(times["underneath it"])
    print("| loop | median µs per batch | ratio |\n|---|---:|---:|")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"| {name} | {median * 1e6:.1f} | {median / bare:.3f} |")


if __name__ == "__main__":
    main()
