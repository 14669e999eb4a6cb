"""Damaged parameter files never crash the process that loads them.

Each mutated file is loaded by a worker subprocess; a crash (a signal) ends the worker and
names the file, and a new worker goes on with the rest.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

import mxlearn
from mxlearn import checkpoint as ckpt
from mxlearn import mx

pytestmark = pytest.mark.slow  # worker subprocesses

WORKER = r"""
import json, sys
import mxlearn
from mxlearn import checkpoint as ckpt
from mxlearn.errors import MXLearnError
for line in sys.stdin:
    path, expected = json.loads(line)
    try:
        ckpt.load_params(path, expected)
        result = "loaded"
    except MXLearnError as err:
        result = "explained"
    except Exception as err:
        result = "other " + type(err).__name__ + ": " + str(err)[:200]
    print(json.dumps([path, result]), flush=True)
"""


def _mutations(data: bytes, count: int, seed: int = 0):
    rng = random.Random(seed)
    for i in range(count):
        b = bytearray(data)
        kind = i % 4
        if kind == 0:  # flip a bit
            pos = rng.randrange(len(b))
            b[pos] ^= 1 << rng.randrange(8)
        elif kind == 1:  # cut short
            b = b[: rng.randrange(len(b))]
        elif kind == 2:  # overwrite 8 bytes, often a count or a dimension
            pos = rng.randrange(max(1, len(b) - 8))
            b[pos : pos + 8] = rng.randbytes(8)
        else:  # a large number where the header's fields are
            pos = rng.choice([16, 24, 28, 32, 36, 40, 48])
            b[pos : pos + 8] = rng.choice([2**31 - 1, 2**62, 2**40]).to_bytes(8, "little")
        yield bytes(b)


def _load_all(jobs):
    """Results for [(path, expected)], each loaded in a worker subprocess."""
    results, remaining, crashes = {}, list(jobs), []
    while remaining:
        worker = subprocess.Popen(
            [sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        out, _ = worker.communicate("".join(json.dumps(j) + "\n" for j in remaining), timeout=600)
        for line in out.splitlines():
            path, result = json.loads(line)
            results[path] = result
        remaining = [j for j in remaining if j[0] not in results]
        if remaining:  # the worker died on the first of these
            crashes.append((remaining[0][0], worker.returncode))
            results[remaining[0][0]] = f"crash {worker.returncode}"
            remaining = remaining[1:]
    return results, crashes


def test_mutated_params_files_never_crash(tmp_path):
    prefix = str(tmp_path / "m")
    X, y = mxlearn.datasets.synthetic_classification(num_samples=256)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4))
    mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1, checkpoint=prefix)
    good = open(ckpt.params_file(prefix, 1), "rb").read()
    expected = ckpt.read_manifest(prefix, 1)["files"]["params"]
    jobs = []
    for i, data in enumerate(_mutations(good, 300)):
        path = str(tmp_path / f"mutant-{i:03d}.params")
        with open(path, "wb") as f:
            f.write(data)
        jobs.append((path, None))  # without a manifest: the structural check alone
        jobs.append((path, {k: expected[k] for k in ("size", "sha256")}))  # with one
    results, crashes = _load_all(jobs)
    assert not crashes, crashes[:5]
    with_manifest = [results[p] for p, e in jobs if e is not None]
    without = [results[p] for p, e in jobs if e is None]
    assert all(r == "explained" for r in with_manifest)
    assert all(r in ("loaded", "explained") for r in without), [
        r for r in without if r.startswith("other")
    ][:3]
    assert without.count("explained") > 200  # most mutations are caught before MXNet reads them


SAVER = r"""
import sys
import mxlearn
from mxlearn import checkpoint as ckpt
from mxlearn import mx
prefix = sys.argv[1]
X, y = mxlearn.datasets.synthetic_classification(num_samples=256)
mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=256))
mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1)
epoch = max(ckpt.manifested_epochs(prefix), default=0)
print("saving", flush=True)
while True:
    epoch += 1
    ckpt.save(mod, prefix, epoch)
"""


def test_kill_during_saves_never_leaves_a_broken_newest_checkpoint(tmp_path):
    import time

    prefix = str(tmp_path / "k")
    rng = random.Random(1)
    saves = 0
    for _ in range(8):
        proc = subprocess.Popen(
            [sys.executable, "-c", SAVER, prefix], stdout=subprocess.PIPE, text=True
        )
        while proc.stdout.readline().strip() != "saving":  # after fit's epoch lines
            assert proc.poll() is None
        time.sleep(rng.uniform(0.05, 0.4))
        proc.kill()  # SIGKILL: no cleanup of any kind
        proc.wait()
        epochs = ckpt.manifested_epochs(prefix)
        saves = max(epochs, default=0)
        if epochs:
            epoch, _ = ckpt.latest(prefix)
            assert epoch == epochs[-1]  # the newest manifest always verifies
            symbol, args, auxs = ckpt.load_checkpoint(prefix, epoch)
            assert "fc1_weight" in args
    assert saves >= 50, saves


TRAINER = r"""
import json, os, sys
import mxlearn
from mxlearn import checkpoint as ckpt
from mxlearn import mx
prefix, trial, last = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "last"
sys.stdin.readline()  # started while the trial before runs; goes on once it is killed
folder = os.path.dirname(prefix)
X, y = mxlearn.datasets.synthetic_classification(num_samples=64, num_classes=4, seed=3)
data = mx.io.NDArrayIter(X, y, 32, shuffle=True)


class Report(mxlearn.Callback):  # after fit's own Checkpoint: this epoch's save is done
    def on_epoch_end(self, run, epoch):  # training done: the epoch's save comes next
        print("%", flush=True)

    def on_epoch_done(self, run, epoch):
        left = sorted(n for n in os.listdir(folder) if n.endswith(".tmp"))
        print("@" + json.dumps({"saved": epoch + 1, "tmp": left}), flush=True)


if trial == 0:
    mxlearn.seed(1)
    mod, begin = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=16)), 0
else:
    begin = ckpt.latest(prefix)[0]
    mod = mxlearn.resume(prefix)
print("@" + json.dumps({"resumed": begin}), flush=True)
# every other trial keeps 2 checkpoints, so that kills hit the pruning too
saver = prefix if trial % 2 == 0 else mxlearn.Checkpoint(prefix, keep=2)
mod.fit(data, num_epoch=begin + 2 if last else 10**6, checkpoint=saver, callbacks=[Report()],
        optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
"""


def _next_report(proc):
    """The trainer's next report line (the others are fit's and resume's own words)."""
    for line in proc.stdout:
        if line.startswith("@"):
            return json.loads(line[1:])
    return None


def _partial_epochs(prefix: str) -> list[int]:
    """Checkpoints a kill left without their manifest: files of the epoch, none of it .json."""
    return sorted(set(ckpt.saved_epochs(prefix)) - set(ckpt.manifested_epochs(prefix)))


def test_a_kill_at_any_moment_of_fit_is_resumed_from_the_newest_complete_checkpoint(tmp_path):
    """20 fits with checkpoint=, each in a fresh process killed (SIGKILL) at a random moment
    (two in three within 20 ms after an epoch's training ended, when its save runs);
    each next process resumes the prefix with mxlearn.resume and fit(checkpoint=prefix), so
    it is the resume of the kill before it. Each continues from the newest complete
    checkpoint, a partial one counts as unwritten, and its first save leaves no .tmp."""
    import time

    prefix = str(tmp_path / "k")
    rng = random.Random(26)
    trials, hit_a_save, partial = 20, 0, 0

    def start(trial):
        last = "last" if trial == trials else "go"
        args = [sys.executable, "-c", TRAINER, prefix, str(trial), last]
        pipes = dict(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return subprocess.Popen(args, text=True, **pipes)

    waiting = start(0)
    for trial in range(trials + 1):
        last = trial == trials
        proc, waiting = waiting, None if last else start(trial + 1)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        first = _next_report(proc)
        assert first, proc.communicate()[1][-3000:]  # refused: the resume did not continue
        newest = max(ckpt.manifested_epochs(prefix), default=0)
        assert first == {"resumed": newest}
        report = _next_report(proc)
        assert report == {"saved": newest + 1, "tmp": []}, proc.communicate()[1][-3000:]
        if last:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err[-3000:]
            break
        if trial % 3 == 0:  # at any moment
            time.sleep(rng.uniform(0.0, 0.4))
        else:  # as an epoch's training ends: in its save, most often
            next(line for line in proc.stdout if line.startswith("%"))
            time.sleep(rng.uniform(0.0, 0.02))
        proc.kill()  # SIGKILL: no cleanup of any kind
        proc.communicate()
        left = [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
        hit_a_save += bool(left or _partial_epochs(prefix))
        partial += bool(_partial_epochs(prefix))
    assert hit_a_save >= 5, (hit_a_save, partial)  # the kills did hit saves in progress
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
