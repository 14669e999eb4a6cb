"""A PrefetchingIter whose inner iterator raises is explained, not a hang: in MXNet's own fit
its thread dies and the training thread waits for ever for a batch that never comes. Run in a
subprocess with a time limit, so that a hang fails the test instead of blocking the suite."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow  # each case in a subprocess

SCRIPT = textwrap.dedent(
    """
    import sys
    import mxlearn
    from mxlearn import mx

    class Breaks(mx.io.DataIter):
        def __init__(self, inner, at):
            super().__init__(inner.batch_size)
            self.inner, self.at, self.count = inner, at, 0
            self.provide_data, self.provide_label = inner.provide_data, inner.provide_label
        def reset(self):
            self.inner.reset()
        def next(self):
            self.count += 1
            if self.count == self.at:
                raise ValueError("row 97 cannot be decoded")
            return self.inner.next()

    X, y = mxlearn.datasets.synthetic_classification(num_samples=256, num_classes=4)
    at, call = int(sys.argv[1]), sys.argv[2]
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=8))
    if call in ("score", "predict", "iter_predict"):
        mod.fit(mx.io.NDArrayIter(X, y, 32), num_epoch=1)
    it = mx.io.PrefetchingIter(Breaks(mx.io.NDArrayIter(X, y, 32), at))
    try:
        if call == "fit":
            mod.fit(it, num_epoch=2)
        elif call == "validation":
            mod.fit(mx.io.NDArrayIter(X, y, 32), eval_data=it, num_epoch=2)
        elif call == "predict":
            print("predict returned", mod.predict(it).shape)
        elif call == "iter_predict":
            print("iter_predict gave", sum(1 for _ in mod.iter_predict(it)), "batches")
        else:
            print("score returned", mod.score(it, "acc"))
    except mxlearn.MXLearnError as err:
        print("EXPLAINED:", err)
    """
)


def _run(at: int, call: str = "fit") -> str:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(at), call], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_an_inner_iterator_error_during_fit_is_explained_not_a_hang():
    out = _run(at=4)  # the fourth batch of the first epoch
    assert "EXPLAINED:" in out
    assert "ValueError: row 97 cannot be decoded" in out
    assert "PrefetchingIter" in out


def test_an_inner_iterator_error_before_fit_is_explained_not_a_hang():
    out = _run(at=1)  # the prefetch thread dies at once, while the iterator is made
    assert "EXPLAINED:" in out
    assert "ValueError: row 97 cannot be decoded" in out


@pytest.mark.parametrize("call", ["validation", "score", "predict", "iter_predict"])
def test_an_inner_iterator_error_while_scoring_is_explained_not_a_short_score(call):
    out = _run(at=3, call=call)
    assert "EXPLAINED:" in out and "returned" not in out and "gave" not in out
    assert "ValueError: row 97 cannot be decoded" in out


def test_a_healthy_prefetching_iterator_trains_and_scores():
    assert "EXPLAINED" not in _run(at=10**6, call="validation")
    assert "score returned [('accuracy'," in _run(at=10**6, call="score")
