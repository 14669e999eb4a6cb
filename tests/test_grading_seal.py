"""The seal a check cell runs first, run over every part of mxlearn imported, in a fresh
process as a kernel is (other tests' patches in this one are not a notebook's): clean on
mxlearn as installed (no honest kernel called tampered), and naming what a notebook changed."""

from __future__ import annotations

import importlib
import subprocess
import sys

from mxlearn.commands.grade import SEAL_FILE

RUN = """
import builtins, importlib, pkgutil
import mxlearn
for found in pkgutil.walk_packages(mxlearn.__path__, "mxlearn."):
    if found.name != "mxlearn.commands.grading_seal":
        importlib.import_module(found.name)
{change}
space = {{"__builtins__": vars(builtins), "__name__": "mxlearn_grading_seal"}}
space |= {{"__file__": {seal!r}, "user": {{"mxlearn": mxlearn}}}}
try:
    exec(compile(open({seal!r}, encoding="utf-8").read(), {seal!r}, "exec"), space)
    print("sealed", space["sealed"])
except Exception as changed:
    print(type(changed).__name__, changed)
"""


def _sealed(change: str = "") -> str:
    code = RUN.format(change=change, seal=SEAL_FILE)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def test_mxlearn_as_installed_is_sealed():
    assert _sealed() == "sealed True"


def test_a_replaced_check_is_named():
    said = _sealed(
        "import mxlearn.checks, mxlearn.work_checks\n"
        "mxlearn.checks.learned = lambda *args, **kwargs: print('OK')\n"
        "mxlearn.work_checks.holds_layers.__code__ = (lambda: 0).__code__\n"
    )
    assert said.startswith("ChecksChanged ")
    assert "mxlearn.checks.learned" in said and "mxlearn.work_checks.holds_layers" in said


def test_importing_the_seal_checks_nothing():
    importlib.import_module("mxlearn.commands.grading_seal")  # doctests collect it so
