"""dist_sync workers whose epochs have different numbers of batches would wait for each other for
ever: every worker refuses the run before training, naming each worker's count, and the advised
split trains."""

from __future__ import annotations

import io
import textwrap

import pytest

from mxlearn.distributed import DistributedJobError, launch

SCRIPT = textwrap.dedent(
    """
    import os, sys
    import mxlearn
    from mxlearn import mx

    given = sys.argv[1]
    kv = mx.kv.create("dist_sync") if given == "object" else "dist_sync"
    # the launcher's index, or MXNet's rank (ps-lite numbers the workers as they connect)
    rank = kv.rank if given == "object" else int(os.environ["MXLEARN_WORKER_INDEX"])
    workers = 2
    X, y = mxlearn.datasets.synthetic_classification(num_samples=1001, num_features=16,
                                                     num_classes=4, seed=1)
    if os.environ.get("EVEN"):  # the refusal's advice
        keep = len(X) // workers * workers
        X, y = X[:keep], y[:keep]
    train = mx.io.NDArrayIter(X[rank::workers], y[rank::workers], 100)
    mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4, num_hidden=16))
    mod.fit(train, kvstore=kv, num_epoch=2, optimizer_params={"learning_rate": 0.1})
    print("trained", mod._kvstore.rank, "of", mod._kvstore.num_workers)
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("given", ["name", "object"])
def test_workers_with_other_epoch_lengths_are_refused_and_the_advice_trains(
    tmp_path, monkeypatch, given
):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    output = io.StringIO()
    # 1001 rows split by rank: 501 and 500, in batches of 100 (the last padded): 6 and 5
    with pytest.raises(DistributedJobError):
        launch(str(script), [given], workers=2, servers=1, timeout=120, output=output)
    said = output.getvalue()
    counts = ("kv.rank 0: 6, kv.rank 1: 5", "kv.rank 0: 5, kv.rank 1: 6")
    assert any(f"different numbers of batches an epoch ({c})" in said for c in counts), said
    assert "trained" not in said

    monkeypatch.setenv("EVEN", "1")
    output = io.StringIO()
    launch(str(script), [given], workers=2, servers=1, timeout=120, output=output)
    lines = output.getvalue().splitlines()
    assert "[worker 0] trained 0 of 2" in lines or "[worker 0] trained 1 of 2" in lines, lines
    assert sum("trained" in line for line in lines) == 2
