"""`python -m mxlearn course` (run by `make tour`): each notebook executed in its own folder and
kept as HTML that shows the curves offline, with no script fetched from the internet."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from mxlearn.commands.course import course_notebooks, run_notebook

ROOT = Path(__file__).resolve().parents[1] / "notebooks"


def _notebook(path: Path, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    nbformat.write(nb, path)
    return path


def test_the_course_is_every_english_notebook_then_the_chinese_edition():
    names = [str(p.relative_to(ROOT)) for p in course_notebooks(ROOT)]
    english = sorted(p.name for p in ROOT.glob("*.ipynb"))
    assert names == english + [f"zh/{n}" for n in english]
    assert len(english) == 7  # 01-06 the Module API, 07 the experiment bench


@pytest.mark.slow
def test_a_run_keeps_the_executed_notebook_and_an_offline_html_copy(tmp_path):
    source = _notebook(
        tmp_path / "lesson.ipynb",
        "import mxlearn\nfrom mxlearn import mx\n"
        "X, y = mxlearn.datasets.synthetic_classification(num_samples=256)\n"
        "mxlearn.Module(mxlearn.models.mlp(num_classes=4)).fit(mx.io.NDArrayIter(X, y, 32),\n"
        "    num_epoch=3, live=mxlearn.LivePlot(backend='widget'))\n"
        "open('written-here.txt', 'w').write('x')",
    )
    run = run_notebook(source, tmp_path / "out")
    assert run.error is None
    assert (tmp_path / "out" / "written-here.txt").exists()  # the kernel ran in the out folder
    executed = nbformat.read(run.executed, as_version=4)
    assert executed.cells[0].outputs  # the executed copy keeps its outputs
    page = run.html.read_text(encoding="utf-8")
    assert page.count("data:image/png;base64") >= 1  # the live plot's final figure, inline
    assert "widget-view+json" not in page
    scripts = re.findall(r"<script\b[^>]*>.*?</script>", page, re.S | re.I)
    assert not [s for s in scripts if "http://" in s or "https://" in s]


@pytest.mark.slow
def test_a_failing_notebook_is_reported_and_still_saved(tmp_path):
    source = _notebook(tmp_path / "broken.ipynb", "print('before')", "1 / 0", "print('after')")
    run = run_notebook(source, tmp_path / "out")
    assert run.error == "ZeroDivisionError: division by zero"
    assert run.html.exists() and "before" in run.html.read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_kernel_that_dies_is_reported_and_the_run_goes_on(tmp_path):
    source = _notebook(tmp_path / "dies.ipynb", "print('before')", "import os\nos._exit(1)")
    run = run_notebook(source, tmp_path / "out")
    assert run.error.startswith("DeadKernelError") and "dies.kernel.log" in run.error
    assert run.html.exists()
