"""The seal a check cell runs first, run over every part of mxlearn imported, in a fresh
process as a kernel is (other tests' patches in this one are not a notebook's): clean on
mxlearn as installed (no honest kernel called tampered), and naming what a notebook changed."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

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
    assert _sealed(SHELL) == "sealed True"  # IPython's shell as it starts


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


SHELL = (  # IPython's shell, made as a kernel makes it
    "from IPython.core.interactiveshell import InteractiveShell\n"
    "shell = InteractiveShell.instance()\n"
)

STAND_INS = {  # the hostile pass's changes a check cell's seal once let through, by name
    "a callable object wrapping the check": (
        "import functools\n"
        "class Pass:\n"
        "    def __init__(self, real): functools.update_wrapper(self, real)\n"
        "    def __call__(self, *a, **k): print('OK')\n"
        "mxlearn.checks.counts_by_hand = Pass(mxlearn.checks.counts_by_hand)\n",
        "mxlearn.checks.counts_by_hand",
    ),
    "a callable object in the wrapper's closure": (
        "class Nop:\n"
        "    def __call__(self, *a, **k): print('OK')\n"
        "g = mxlearn.checks.counts_by_hand.__wrapped__\n"
        "g.__closure__[g.__code__.co_freevars.index('function')].cell_contents = Nop()\n",
        "mxlearn.checks.counts_by_hand",
    ),
    "the check's own code with forged globals": (
        "import types\n"
        "g = mxlearn.checks.counts_by_hand.__wrapped__\n"
        "cell = g.__closure__[g.__code__.co_freevars.index('function')]\n"
        "raw = cell.cell_contents\n"
        "cell.cell_contents = types.FunctionType(raw.__code__, dict(raw.__globals__), "
        "raw.__name__, raw.__defaults__, raw.__closure__)\n",
        "mxlearn.checks.counts_by_hand",
    ),
    "a check module popped from sys.modules and replaced": (
        "import sys\n"
        "sys.modules.pop('mxlearn.checks')\n"
        "class Passing:\n"
        "    def __getattr__(self, name): return print\n"
        "mxlearn.checks = Passing()\n",
        "mxlearn.checks",
    ),
    "a trace function that skips a check's raise": (
        "import sys\nsys.settrace(lambda frame, event, arg: None)\n",
        "sys.settrace",
    ),
    "a profile function that swaps the checks around the seal": (
        "import sys\nsys.setprofile(lambda frame, event, arg: None)\n",
        "sys.setprofile",
    ),
    "an IPython callback after each cell": (
        SHELL + "shell.events.register('post_run_cell', lambda result: None)\n",
        "IPython.events",
    ),
    "an IPython input transformer": (
        SHELL + "shell.input_transformers_post.append(lambda lines: lines)\n",
        "IPython.input_transformers",
    ),
    "a method of IPython's shell replaced": (
        SHELL + "type(shell).run_cell = lambda self, *a, **k: None\n",
        "IPython.shell",
    ),
    "a class posing as Python's float": (
        "import builtins\n"
        "class Float(float): pass\n"
        "Float.__module__, Float.__name__ = 'builtins', 'float'\n"
        "builtins.float = Float\n",
        "builtins.float",
    ),
    "a callable object posing as len": (
        "import builtins\n"
        "class Len:\n"
        "    __name__ = 'len'\n"
        "    def __call__(self, x): return 4000\n"
        "builtins.len = Len()\n",
        "builtins.len",
    ),
    "a property replaced by a value on its class": (
        "from mxlearn.module.inspection import ModuleInspection\n"
        "ModuleInspection.kvstore_type = 'device'\n",
        "kvstore_type",
    ),
}


@pytest.mark.parametrize("change", sorted(STAND_INS))
def test_a_stand_in_for_a_check_is_named(change):
    code, named = STAND_INS[change]
    said = _sealed("import mxlearn.checks\n" + code)
    assert said.startswith("ChecksChanged ") and named in said, said
