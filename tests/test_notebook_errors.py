"""In IPython an MXLearnError shows as a short block with the fix; %tb still gives the whole
traceback; outside IPython nothing changes."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow  # IPython and Python subprocesses

SCRIPT = textwrap.dedent(
    """
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    shell.run_cell("import mxlearn")  # nothing to install: IPython asks the error itself
    print("=== misuse")
    shell.run_cell("mod = mxlearn.Module(mxlearn.models.mlp())\\nmod.get_outputs()")
    print("=== tb")
    shell.run_line_magic("tb", "")
    print("=== other error")
    shell.run_cell("1 / 0")
    """
)


def _sections(output: str) -> dict:
    found, name = {}, None
    for line in output.splitlines():
        if line.startswith("=== "):
            name = line[4:]
            found[name] = []
        elif name:
            found[name].append(line)
    return found


def test_a_misuse_shows_a_short_block_with_the_fix_and_tb_shows_the_rest():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    sections = _sections(done.stdout)
    block = [line for line in sections["misuse"] if line.strip()]
    assert 3 <= len(block) <= 10, block
    assert block[0].startswith("NotBound at line 2: mod.get_outputs()")  # the kind, where
    assert any(line.strip().startswith("Fix: mod.bind(") for line in block)
    assert block[-1] == "(the full traceback: run %tb in the next cell)"
    assert "mxlearn/module/module.py" in "\n".join(sections["tb"])  # the whole story, on demand
    assert "ZeroDivisionError" in "\n".join(sections["other error"])  # others untouched


def test_outside_ipython_tracebacks_are_pythons_own():
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import mxlearn\nmxlearn.Module(mxlearn.models.mlp()).get_outputs()",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stderr.startswith("Traceback (most recent call last):")
    assert "mxlearn.guards.lifecycle.NotBound: mod.get_outputs()" in done.stderr
