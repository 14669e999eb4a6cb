"""Memory under changing input shapes: RSS growth over 200 shape changes among 20 shapes.

Each variant runs in a fresh process: a small convolutional net (mxlearn.models.conv_net) on
batches of 16 grey images, 13x13 to 32x32 (20 sizes). Warm-up: two passes over the 20 shapes.
Then 200 training steps (forward, backward, update), each on a shape different from the step
before, drawn with a fixed seed; the figure is the resident memory after them minus before.

Variants: mxlearn.MutableModule (default cache of 32 shapes, and a cache of 8 that rebinds all
the time); MXNet's Module, which reshapes its executors on each new shape; MXNet's
BucketingModule keyed by shape. MXNET_MKLDNN_CACHE_NUM is what mxlearn sets (64) unless the
environment says otherwise.

    python benchmarks/shape_memory.py [--changes 200] [--repeats 3] [--distinct]

``--distinct`` makes every change a shape never seen before (rectangles): the case where a
per-shape cache that never forgets keeps growing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

SIZES = list(range(13, 33))
VARIANTS = (
    "mutable",
    "mutable-cache8",
    "mxnet-module",
    "mxnet-bucketing",
    "mxnet-module-unbounded",
)
# the last: MXNet's own oneDNN cache default (-1: one entry per shape, kept forever)
ENVIRONMENT = {"mxnet-module-unbounded": {"MXNET_MKLDNN_CACHE_NUM": "-1"}}


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def batch_for(mx, size, rng):
    height, width = size if isinstance(size, tuple) else (size, size)
    data = mx.nd.array(rng.normal(size=(16, 1, height, width)))
    label = mx.nd.array(rng.integers(0, 3, size=16))
    return mx.io.DataBatch(
        [data],
        [label],
        provide_data=[mx.io.DataDesc("data", data.shape)],
        provide_label=[mx.io.DataDesc("softmax_label", label.shape)],
    )


def make_module(variant: str):
    import mxlearn
    from mxlearn import mx

    net = mxlearn.models.conv_net()
    biggest = [("data", (16, 1, 32, 32))]
    labels = [("softmax_label", (16,))]
    if variant.startswith("mutable"):
        mod = mxlearn.MutableModule(net, cache_size=8 if variant.endswith("8") else 32)
    elif variant == "mxnet-module":
        mod = mx.mod.Module(net)
    else:
        mod = mx.mod.BucketingModule(
            lambda key: (net, ("data",), ("softmax_label",)), default_bucket_key=32
        )
    mod.bind(biggest, labels)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer_params={"learning_rate": 0.01})
    return mod


def distinct_shapes(count: int) -> list[tuple[int, int]]:
    """``count`` rectangles (height, width) within 32x32, none of them a warm-up square."""
    rectangles = [(h, w) for h in range(13, 33) for w in range(13, 33) if h != w]
    order = np.random.default_rng(1).permutation(len(rectangles))[:count]
    return [rectangles[i] for i in order]


def measure(variant: str, changes: int, distinct: bool) -> dict:
    from mxlearn import mx

    rng = np.random.default_rng(0)
    bound = rss_mb()
    mod = make_module(variant.removesuffix("-unbounded"))

    def step(size):
        batch = batch_for(mx, size, rng)
        if variant == "mxnet-bucketing":
            batch.bucket_key = size if isinstance(size, int) else size[0] * 100 + size[1]
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()

    for size in SIZES * 2:
        step(size)
    mx.nd.waitall()
    before = rss_mb()
    warm_up = before - bound
    if distinct:
        for size in distinct_shapes(changes):
            step(size)
    else:
        previous = None
        for _ in range(changes):
            size = previous
            while size == previous:
                size = int(rng.choice(SIZES))
            step(size)
            previous = size
    mx.nd.waitall()
    return {"variant": variant, "growth_mb": rss_mb() - before, "warm_up_mb": warm_up}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--distinct",
        action="store_true",
        help="every change a new shape (rectangles), instead of 20 shapes",
    )
    parser.add_argument("--variant", help=argparse.SUPPRESS)  # one measurement, in a child
    args = parser.parse_args()
    if args.variant:
        print(json.dumps(measure(args.variant, args.changes, args.distinct)))
        return
    growth: dict[str, list[float]] = {v: [] for v in VARIANTS}
    warm_up: dict[str, list[float]] = {v: [] for v in VARIANTS}
    for _ in range(args.repeats):
        for variant in VARIANTS:  # interleaved: machine noise hits all alike
            out = subprocess.run(
                [sys.executable, __file__, "--variant", variant, "--changes", str(args.changes)]
                + (["--distinct"] if args.distinct else []),
                capture_output=True,
                text=True,
                check=True,
                env={**os.environ, **ENVIRONMENT.get(variant, {})},
            )
            result = json.loads(out.stdout.strip().splitlines()[-1])
            growth[variant].append(result["growth_mb"])
            warm_up[variant].append(result["warm_up_mb"])
    among = "new shapes each time" if args.distinct else f"among {len(SIZES)} shapes"
    print(
        f"RSS growth over {args.changes} shape changes, {among}, after "
        f"warm-up (median of {args.repeats} processes; the warm-up's own growth beside):"
    )
    for variant, values in growth.items():
        runs = ", ".join(f"{v:.1f}" for v in values)
        print(
            f"  {variant:24s} {statistics.median(values):6.1f} MB ({runs})   warm-up "
            f"{statistics.median(warm_up[variant]):6.1f} MB"
        )


if __name__ == "__main__":
    main()
