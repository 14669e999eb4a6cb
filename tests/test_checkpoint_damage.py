"""Damaged parameter files never crash the process that loads them.

Each mutated file is loaded by a worker subprocess; a crash (a signal) ends the worker and
names the file, and a new worker goes on with the rest.
"""

from __future__ import annotations

import json
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
