"""What students install (make wheel): the mxlearn package with its Chinese catalogue, and none
of the course's notebooks, whose teacher's edition holds the answers."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # builds the wheel with pip

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_holds_the_package_and_no_notebook(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--quiet",
            "--wheel-dir",
            tmp_path,
            str(ROOT),
        ],
        check=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("mxlearn-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "mxlearn/locale/zh/LC_MESSAGES/mxlearn.mo" in names
    assert "mxlearn/exercises.toml" in names  # the titles and hints hint() shows
    assert not [n for n in names if n.endswith((".ipynb", "TEACHING.md"))]
    assert not [n for n in names if n.startswith(("notebooks/", "tests/"))]
    # unpacked on its own (not this checkout), it speaks both languages
    target = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(target)
    script = (
        f"import mxlearn; assert mxlearn.__file__.startswith({str(target)!r})\n"
        "mxlearn.set_language('zh'); mxlearn.hint('01.1')"
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    shown = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "练习 01.1" in shown
