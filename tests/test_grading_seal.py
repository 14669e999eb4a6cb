"""The seal a check cell runs first, run here in-process over every part of mxlearn imported:
clean on mxlearn as installed (no honest kernel called tampered), and naming what a notebook
changed."""

from __future__ import annotations

import builtins
import importlib
import pkgutil

import pytest

import mxlearn
from mxlearn.commands.grade import SEAL_FILE


def _seal(user: dict) -> dict:
    space = {"__builtins__": vars(builtins), "__name__": "mxlearn_grading_seal"}
    space |= {"__file__": SEAL_FILE, "user": user}
    with open(SEAL_FILE, encoding="utf-8") as f:
        exec(compile(f.read(), SEAL_FILE, "exec"), space)
    return space


@pytest.fixture(scope="module")
def everything():
    for found in pkgutil.walk_packages(mxlearn.__path__, "mxlearn."):
        if found.name != "mxlearn.commands.grading_seal":
            importlib.import_module(found.name)


def test_mxlearn_as_installed_is_sealed(everything):
    assert _seal({"mxlearn": mxlearn})["sealed"] is True


def test_a_replaced_check_is_named(everything, monkeypatch):
    import mxlearn.checks
    import mxlearn.work_checks

    monkeypatch.setattr(mxlearn.checks, "learned", lambda *args, **kwargs: print("OK"))
    monkeypatch.setattr(mxlearn.work_checks.holds_layers, "__code__", (lambda: 0).__code__)
    with pytest.raises(Exception) as changed:
        _seal({"mxlearn": mxlearn})
    assert type(changed.value).__name__ == "ChecksChanged"
    assert "mxlearn.checks.learned" in str(changed.value)
    assert "mxlearn.work_checks.holds_layers" in str(changed.value)


def test_importing_the_seal_checks_nothing():
    importlib.import_module("mxlearn.commands.grading_seal")  # doctests collect it so
