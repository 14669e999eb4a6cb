"""mxlearn's warnings print as one line naming their kind, without the file and line Python
adds by default (an absolute path into mxlearn or the script); other warnings keep Python's."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _stderr(code: str, tmp_path) -> str:
    script = tmp_path / "warns.py"
    script.write_text(textwrap.dedent(code))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_a_training_warning_is_one_line_without_a_source_path(tmp_path):
    stderr = _stderr(
        """
        import mxlearn
        from mxlearn import mx
        mxlearn.set_language('en')
        X, y = mxlearn.datasets.synthetic_classification(num_samples=128)
        mod = mxlearn.Module(mxlearn.models.mlp(num_classes=4))
        train = mx.io.NDArrayIter(X, y, 32)
        mod.bind(train.provide_data, train.provide_label)
        mod.init_params()
        mod.init_optimizer(optimizer=mx.optimizer.SGD(learning_rate=0.1))  # rescale_grad 1
        import warnings
        warnings.warn("a plain one")
        """,
        tmp_path,
    )
    lines = [line for line in stderr.splitlines() if "rescale_grad=1" in line]
    assert len(lines) == 1 and lines[0].startswith("TrainingWarning: The optimizer was made")
    assert ".py:" not in lines[0] and str(tmp_path) not in lines[0]
    assert "warns.py:12: UserWarning: a plain one" in stderr  # Python's own format kept
