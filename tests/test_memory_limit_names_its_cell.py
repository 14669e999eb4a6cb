"""The memory limit is blamed on the cell that reached it: a cell that ends over the limit is
stopped before the next cell starts, even when the watchdog's poll has not come round yet (on a
busy machine the next cell used to be named). A real kernel; nothing mocked."""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest

from mxlearn.commands import grading_run
from mxlearn.commands.grade_exercises import stop_of

HOLD = "kept = b'x' * (700 * 2**20)"  # written, so resident: over a 512 MB limit


@pytest.mark.slow
def test_a_cell_that_ends_over_the_limit_is_named_before_the_next_one_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(grading_run, "POLL_SECONDS", 3600.0)  # the watchdog looks once, at start
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# A student's notebook"),
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_code_cell(HOLD),
        nbformat.v4.new_code_cell("y = 2"),
    ]
    path, results = tmp_path / "student.ipynb", tmp_path / "results.jsonl"
    nbformat.write(notebook, path)

    grading_run.run(str(path), str(tmp_path), str(results), 512, {"sandbox": None})

    events = grading_run.read_events(str(results))
    assert {"memory": 512, "cell": 2} in events
    assert not any(e.get("cell") == 3 and "status" in e for e in events)  # "y = 2" never ran
    status, message = stop_of(events, [1, 2, 3], False, {"timeout": 60, "tail": ""})
    assert (status, message) == (
        "error",
        "the memory limit of 512 MB was reached in cell 3; the kernel was stopped",
    )


def test_a_kernel_gone_before_its_watch_starts_is_left_to_its_first_cell(tmp_path):
    """A kernel that died at start is the first cell's dead kernel, not the grader's crash."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    events = grading_run._Events(str(tmp_path / "results.jsonl"))
    watch = grading_run._MemoryWatch(gone.pid, 512, events)
    watch.starting(1)
    assert watch.stopped_over() is False
    assert grading_run.read_events(str(tmp_path / "results.jsonl")) == []
