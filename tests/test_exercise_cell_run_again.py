"""A student runs an exercise cell again (a wrong answer fixed, a kernel restarted): the cell
must still run. 04.2 is the course's one exercise that leaves files behind (its checkpoints),
which a second fit would refuse to overwrite; its cell removes them first, in both editions."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

import mxlearn
from mxlearn import mx

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def _cells(path: Path, exercise: str) -> tuple[str, str]:
    """The answer cell of ``exercise`` and its check cell, as the notebook holds them."""
    cells = ["".join(c["source"]) for c in json.loads(path.read_text("utf-8"))["cells"]]
    answer = next(i for i, s in enumerate(cells) if s.splitlines()[:1] in (
        [f"# Exercise {exercise}"], [f"# 练习 {exercise}"]))  # fmt: skip
    return cells[answer], cells[answer + 1]


@pytest.mark.slow
@pytest.mark.parametrize("edition", ["", "zh"])
def test_the_checkpoint_exercise_runs_again_and_passes(tmp_path, monkeypatch, edition):
    answer, check = _cells(NOTEBOOKS / edition / "04_checkpoints_and_resume.ipynb", "04.2")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs" / "checkpoints").mkdir(parents=True)
    namespace = {"mxlearn": mxlearn, "mx": mx, "net": mxlearn.models.mlp(), "ctx": mx.cpu()}
    namespace["train_iter"], _ = mxlearn.datasets.letter_iters(batch_size=200)
    exec("import glob, os, shutil", namespace)
    for _ in range(2):  # the second run found the first one's checkpoints on disk
        with contextlib.redirect_stdout(io.StringIO()) as said:
            exec(answer, namespace)
            exec(check, namespace)
        assert said.getvalue().count("OK") == 2, said.getvalue()
