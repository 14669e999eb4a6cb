"""A MutableModule's run resumes as a MutableModule: ``mxlearn.resume(prefix,
max_data_shapes=...)`` (its own arguments name it), in a fresh process, continues a run whose
batches change shape to the bytes of a run never interrupted."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import mxlearn
from mxlearn.guards.arguments import NoSuchArgument

SCRIPT = textwrap.dedent(
    """
    import hashlib, json, sys
    import numpy as np
    import mxlearn
    from mxlearn import mx

    class TwoSizes(mx.io.DataIter):  # batches of 16 rows, then 8, then 16...
        def __init__(self):
            super().__init__(16)
            rng = np.random.RandomState(0)
            self.X = rng.rand(72, 5).astype("float32")
            self.y = (self.X[:, 0] > 0.5).astype("float32")
            self.provide_data = [mx.io.DataDesc("data", (16, 5))]
            self.provide_label = [mx.io.DataDesc("softmax_label", (16,))]
            self.reset()
        def reset(self):
            self.at, self.sizes = 0, [16, 8] * 3
        def next(self):
            if not self.sizes:
                raise StopIteration
            rows = self.sizes.pop(0)
            part = slice(self.at, self.at + rows)
            self.at += rows
            return mx.io.DataBatch([mx.nd.array(self.X[part])], [mx.nd.array(self.y[part])])

    folder, step = sys.argv[1], sys.argv[2]
    shapes = dict(max_data_shapes=[("data", (16, 5))], max_label_shapes=[("softmax_label", (16,))])
    fit = dict(optimizer="adam", optimizer_params={"learning_rate": 0.01})
    if step == "resume":
        mod = mxlearn.resume(f"{folder}/part", **shapes)
        mod.fit(TwoSizes(), num_epoch=4, checkpoint=f"{folder}/part", **fit)
    else:
        mxlearn.seed(5)
        mod = mxlearn.MutableModule(mxlearn.models.mlp(num_classes=2, num_hidden=8), **shapes)
        epochs = 4 if step == "whole" else 2
        mod.fit(TwoSizes(), num_epoch=epochs, checkpoint=f"{folder}/{step}",
                initializer=mx.init.Xavier(), **fit)
    args, _ = mod.get_params()
    digest = hashlib.sha256(b"".join(args[n].asnumpy().tobytes() for n in sorted(args)))
    print(json.dumps([type(mod).__name__, digest.hexdigest(), mod.optimizer.num_update]))
    """
)


def _run(folder, step) -> list:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(folder), step], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_mutable_modules_run_resumes_as_one_to_the_same_bytes(tmp_path):
    whole = _run(tmp_path, "whole")
    _run(tmp_path, "part")
    resumed = _run(tmp_path, "resume")
    assert resumed == whole
    assert whole[0] == "MutableModule" and whole[2] == 4 * 6


def test_a_misspelt_argument_of_either_module_is_named_with_the_nearest(tmp_path):
    with pytest.raises(NoSuchArgument) as refused:
        mxlearn.resume(str(tmp_path / "none"), max_data_shape=[("data", (16, 5))])
    assert refused.value.fields["nearest"] == "max_data_shapes"
