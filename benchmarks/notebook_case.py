"""The student's real cell, timed in a Jupyter kernel: fit with validation, with and without
a live plot.

    mod.fit(train_iter, eval_data=val_iter, eval_metric='acc', num_epoch=N, live=True)

against raw MXNet's ``mx.mod.Module.fit(train_iter, eval_data=val_iter, eval_metric='acc')``
and against the ceiling, a bare forward/backward/update loop with one ``score`` per epoch,
which never waits for the device inside an epoch. The tutorial's letter MLP, SGD lr 0.1, CPU,
batch 32 and 128. Each run is a fresh IPython kernel, as a notebook's is: a first cell imports
mxlearn and loads the data, then the fit cell is timed twice (the first fit of the kernel, and
a later one, as when a student runs the cell again). The widget is a real ipywidgets widget
whose messages go to this benchmark's client. The variants run interleaved, one of each per
repeat; the tables give medians with the min-max range.

    .venv/bin/python benchmarks/notebook_case.py --repeats 5 --epochs 5 20 --batches 32 128

The plot's own time (its creation and its hooks in fit, by timers in the kernel) is given
beside the ratios: on a busy machine it is the steadier figure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import resource
import statistics
import subprocess
import time

VARIANTS = {
    "raw": "raw mx.mod.Module.fit(eval_data=...)",
    "plain": "mxlearn fit(eval_data=...), no plot",
    "console": "mxlearn fit(eval_data=...), live console",
    "widget": "mxlearn fit(eval_data=...), live widget",
    "ceiling": "bare forward/backward/update loop + score per epoch",
}


def _quiet_logger() -> logging.Logger:
    logger = logging.getLogger("benchmark")
    logger.addHandler(logging.NullHandler())
    logger.propagate = False
    return logger


def _bare_loop(mx, mxlearn, train, val, epochs: int) -> None:
    """The ceiling: what a fit could cost if nothing ever waited for the device per batch."""
    mod = mx.mod.Module(mxlearn.models.mlp(), context=mx.cpu(), logger=_quiet_logger())
    mod.bind(train.provide_data, train.provide_label)
    mod.init_params(initializer=mx.init.Uniform(0.01))
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    for _ in range(epochs):
        train.reset()
        for batch in train:
            mod.forward(batch, is_train=True)
            mod.backward()
            mod.update()
        mod.score(val, "acc")


def run_one(variant: str, batch_size: int, epochs: int) -> dict:
    """One timed run in this process: samples/s, seconds to the first drawn curve (live
    variants), and the process's peak resident memory."""
    import mxlearn
    from mxlearn import mx

    train, val = mxlearn.datasets.letter_iters(batch_size=batch_size)
    mxlearn.seed(0)
    first_frame = []
    plot_seconds = [0.0, 0.0]  # the plot's own wall and CPU time: its creation, its hooks
    hook_calls, timer_cost = [0], _timer_cost()
    started = time.perf_counter()
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        if variant == "ceiling":
            started = time.perf_counter()
            _bare_loop(mx, mxlearn, train, val, epochs)
        else:
            module_class = mx.mod.Module if variant == "raw" else mxlearn.Module
            mod = module_class(mxlearn.models.mlp(), context=mx.cpu(), logger=_quiet_logger())
            extra = {}
            started = time.perf_counter()
            if variant in ("console", "widget"):
                # inside the timing: fit(live=True) makes its LivePlot inside the cell too
                made, made_cpu = time.perf_counter(), time.thread_time()
                live = mxlearn.LivePlot(backend=variant)
                plot_seconds[:] = time.perf_counter() - made, time.thread_time() - made_cpu
                _note_first_frame(live, first_frame)
                hook_calls = _time_hooks(live, plot_seconds)
                extra["live"] = live
            mod.fit(
                train,
                eval_data=val,
                eval_metric="acc",
                optimizer="sgd",
                optimizer_params={"learning_rate": 0.1},
                num_epoch=epochs,
                **extra,
            )
        mx.nd.waitall()
    # the timers' own cost is no part of the plot's, nor of the fit's
    seconds = time.perf_counter() - started - hook_calls[0] * timer_cost[2]
    plot_seconds = [t - hook_calls[0] * cost for t, cost in zip(plot_seconds, timer_cost)]
    return {
        "seconds": seconds,
        "samples_per_s": epochs * 16000 / seconds,
        "first_curve_s": (first_frame[0] - started) if first_frame else None,
        "plot_ms": plot_seconds[0] * 1000 if variant in ("console", "widget") else None,
        "plot_cpu_ms": plot_seconds[1] * 1000 if variant in ("console", "widget") else None,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _note_first_frame(live, times: list) -> None:
    """Record when the renderer first shows a curve (a frame, or the console's epoch line)."""
    renderer = live.renderer
    name = "figure" if renderer.wants_figure else "epoch"
    shown = getattr(renderer, name)

    def noted(*args, **kwargs):
        if not times:
            times.append(time.perf_counter())
        return shown(*args, **kwargs)

    setattr(renderer, name, noted)


def _timed(hook, seconds: list, calls: list):
    wall, cpu = time.perf_counter, time.thread_time

    def timed(*args):
        began, began_cpu = wall(), cpu()
        hook(*args)
        seconds[0] += wall() - began
        seconds[1] += cpu() - began_cpu
        calls[0] += 1

    return timed


def _timer_cost(repeats: int = 20000) -> tuple[float, float, float]:
    """What the timers add to each call they time, read from a function that does nothing: to
    the plot's wall and CPU time (what falls between their readings), and to the fit's wall time
    (the whole wrapper). Subtracted: a 20-epoch fit makes 2,500 calls."""
    seconds, calls = [0.0, 0.0], [0]

    def nothing(*args):
        return None

    timed = _timed(nothing, seconds, calls)
    began = time.perf_counter()
    for _ in range(repeats):
        timed(None, 0)
    wrapped = time.perf_counter() - began
    began = time.perf_counter()
    for _ in range(repeats):
        nothing(None, 0)
    bare = time.perf_counter() - began
    return seconds[0] / repeats, seconds[1] / repeats, (wrapped - bare) / repeats


def _time_hooks(live, seconds: list) -> list:
    """Add the wall and CPU time the plot spends in each of fit's hooks to ``seconds``; returns
    the number of calls timed. Its CPU time is the steadier on a busy machine."""
    calls = [0]
    for name in ("on_train_begin", "on_batch_end", "on_epoch_done", "on_train_end"):
        setattr(live, name, _timed(getattr(live, name), seconds, calls))
    return calls


def _spawn(variant: str, batch_size: int, epochs: int, code: str | None = None) -> list[dict]:
    """Two timed fits of ``variant`` in a fresh kernel: its first fit, and a later one; with
    ``code``, the mxlearn of that folder (another checkout) instead of the installed one."""
    from jupyter_client.manager import start_new_kernel

    env = {**os.environ, "PYTHONPATH": code} if code else None
    manager, client = start_new_kernel(
        kernel_name="python3", stderr=subprocess.DEVNULL, **({"env": env} if env else {})
    )
    printed: list[str] = []

    def keep_stdout(message) -> None:
        if message["msg_type"] == "stream" and message["content"]["name"] == "stdout":
            printed.append(message["content"]["text"])
        elif message["msg_type"] == "error":
            printed.append("\n".join(message["content"]["traceback"]))

    try:
        setup = f"import json, runpy; bench = runpy.run_path({__file__!r})"
        client.execute_interactive(setup, timeout=300, output_hook=keep_stdout)
        cell = f"print(json.dumps(bench['run_one']({variant!r}, {batch_size}, {epochs})))"
        runs = []
        for _ in range(2):
            printed.clear()
            reply = client.execute_interactive(cell, timeout=600, output_hook=keep_stdout)
            if reply["content"]["status"] != "ok":
                raise RuntimeError("".join(printed))
            runs.append(json.loads("".join(printed).strip().splitlines()[-1]))
        return runs
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def _span(values: list[float], scale: float = 1.0, digits: int = 2) -> str:
    values = [v / scale for v in values]
    return (
        f"{statistics.median(values):.{digits}f} "
        f"({min(values):.{digits}f}-{max(values):.{digits}f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--epochs", type=int, nargs="+", default=[5, 20])
    parser.add_argument("--batches", type=int, nargs="+", default=[32, 128])
    parser.add_argument(
        "--variants",
        nargs="+",
        choices=list(VARIANTS),
        default=list(VARIANTS),
        help="raw and plain are always run: the ratios are to them",
    )
    parser.add_argument(
        "--against",
        metavar="FOLDER",
        help="also time the mxlearn of FOLDER (e.g. a git worktree of an older commit), "
        "interleaved with this one: a table for each",
    )
    parser.add_argument("--one", choices=sorted(VARIANTS), help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, default=32, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.batch, args.epochs[0])))
        return
    variants = [v for v in VARIANTS if v in ("raw", "plain") or v in args.variants]
    codes = {"": None, **({f" (mxlearn of {args.against})": args.against} if args.against else {})}
    for epochs in args.epochs:
        for batch_size in args.batches:
            runs = {(name, fit): {v: [] for v in variants} for name in codes for fit in (0, 1)}
            for _ in range(args.repeats):
                for variant in variants:
                    for name, code in codes.items():
                        for fit, run in enumerate(_spawn(variant, batch_size, epochs, code)):
                            runs[name, fit][variant].append(run)
            for name in codes:
                for fit, which in enumerate(("the first fit in a new kernel", "a later fit")):
                    _table(batch_size, epochs, runs[name, fit], args, which + name)


def _table(batch_size: int, epochs: int, runs: dict, args, which: str) -> None:
    raw = [r["samples_per_s"] for r in runs["raw"]]
    plain = [r["samples_per_s"] for r in runs["plain"]]
    plain_seconds = [r["seconds"] for r in runs["plain"]]
    print(
        f"\nbatch {batch_size}, {which}: {args.repeats} interleaved repeats of {epochs} "
        f"epochs (raw MXNet: {statistics.median(raw):,.0f} samples/s; no plot: "
        f"{_span(plain_seconds)} s)\n"
    )
    print(
        "| variant | vs raw fit (min-max) | vs no plot | the plot's own time, ms "
        "| its CPU time, ms | that time / no plot's fit | first curve, s | peak memory, MB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for variant, name in VARIANTS.items():
        if variant not in runs:
            continue
        speed = [r["samples_per_s"] for r in runs[variant]]
        # paired ratios: each repeat's run against the same repeat's raw / no-plot run
        to_raw = [s / r for s, r in zip(speed, raw)]
        to_plain = [s / p for s, p in zip(speed, plain)]
        firsts = [r["first_curve_s"] for r in runs[variant] if r["first_curve_s"] is not None]
        first = _span(firsts) if firsts else "-"
        own = [r.get("plot_ms") for r in runs[variant]]
        own_cpu = [r.get("plot_cpu_ms") for r in runs[variant]]
        own_ms = cpu_ms = share = "-"
        if None not in own:  # the plot's timers: steadier than the ratios on a busy machine
            own_ms, cpu_ms = _span(own, digits=1), _span(own_cpu, digits=1)
            share = _span([ms / 1000 / p for ms, p in zip(own, plain_seconds)], digits=3)
        memory = _span([r["peak_rss_mb"] for r in runs[variant]], digits=0)
        print(
            f"| {name} | {_span(to_raw)} | {_span(to_plain)} | {own_ms} | {cpu_ms} | {share} "
            f"| {first} "
            f"| {memory} |"
        )


if __name__ == "__main__":
    main()
