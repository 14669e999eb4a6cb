"""The live plot and every English course notebook in a real browser: JupyterLab on 127.0.0.1,
driven in headless Chromium.

Chromium comes from the system (Debian's `chromium`; `.ci/run` installs it), never downloaded
by Playwright. Outside CI, a machine without Chromium skips this test with the reason; in CI
(CI=true) a missing Chromium is a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from conftest import SHARED_DATA

pytestmark = pytest.mark.slow  # JupyterLab and Chromium

COURSE = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
# the Chinese edition of the newest notebook too (the others' code is the English one's)
CHINESE = [COURSE[0].parent / "zh" / "07_experiments.ipynb"]

CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

TRAINING_CELLS = [
    "import mxlearn\nfrom mxlearn import mx\nmxlearn.seed(0)",
    "X, y = mxlearn.datasets.letter_recognition()\n"
    "train = mx.io.NDArrayIter(X[:8000], y[:8000], 32, shuffle=True)\n"
    "val = mx.io.NDArrayIter(X[16000:17000], y[16000:17000], 32)",
    # A run of a few seconds with a generous budget: a run predicted to be over within 2 s
    # shows only its final frame (tests/test_live.py), and this test must see frames change.
    "live = mxlearn.LivePlot(min_interval=0.1, budget=0.1)",
    "mod = mxlearn.Module(mxlearn.models.mlp())\n"
    "mod.fit(train, eval_data=val, optimizer_params={'learning_rate': 0.1}, num_epoch=40, "
    "live=live)",
    "print('TRAINING-DONE', live.backend)",
]


def _chromium() -> str:
    for candidate in (os.environ.get("MXLEARN_CHROMIUM"), "chromium", "chromium-browser"):
        path = candidate and shutil.which(candidate)
        if path:
            return path
    if os.environ.get("CI"):
        pytest.fail("Chromium is not installed; .ci/run installs it with apt-get install chromium")
    pytest.skip("no Chromium on this machine (install Debian's chromium to run the browser test)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_notebook(path, cells=TRAINING_CELLS) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source) for source in cells],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def jupyterlab(tmp_path_factory):
    """One JupyterLab for the module's tests; yields (base url, token, its root folder)."""
    tmp_path = tmp_path_factory.mktemp("jupyterlab")
    root = tmp_path / "lab"
    root.mkdir()
    settings = tmp_path / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    # every cell stays in the page (JupyterLab 4 otherwise detaches cells scrolled out of view),
    # so that each widget can be seen to have rendered
    (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter-config"),
        "JUPYTER_DATA_DIR": str(tmp_path / "jupyter-data"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "IPYTHONDIR": str(tmp_path / "ipython"),
        "MPLCONFIGDIR": str(tmp_path / "matplotlib"),
    }
    if SHARED_DATA.is_dir():
        env["MXLEARN_DATA"] = str(SHARED_DATA)
    env.pop("MXLEARN_LIVE_BACKEND", None)
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    log = open(tmp_path / "jupyterlab.log", "w")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as r:
                json.load(r)
            break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                log.close()
                pytest.fail(
                    "JupyterLab did not start:\n"
                    + (tmp_path / "jupyterlab.log").read_text()[-3000:]
                )
            time.sleep(0.3)
    yield base, token, root
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
    log.close()


@pytest.fixture(autouse=True)
def _stop_kernels_afterwards(request):
    """Each test leaves no kernel running: the next notebook gets the machine to itself."""
    yield
    if "jupyterlab" not in request.fixturenames:
        return
    base, token, _ = request.getfixturevalue("jupyterlab")
    with urllib.request.urlopen(f"{base}/api/sessions?token={token}", timeout=10) as r:
        sessions = json.load(r)
    for session in sessions:
        stop = urllib.request.Request(
            f"{base}/api/sessions/{session['id']}?token={token}", method="DELETE"
        )
        urllib.request.urlopen(stop, timeout=30).close()


def _open_when_kernel_idle(page, url: str) -> None:
    page.goto(url)  # a URL with ?reset: a fresh workspace, not the tabs a previous test left
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " const k = w && w.sessionContext && w.sessionContext.session"
        " && w.sessionContext.session.kernel;"
        " return k && k.status === 'idle'; }",
        timeout=90_000,
    )


@contextlib.contextmanager
def _running_in_lab(jupyterlab, name: str):
    """A headless Chromium page on notebook ``name`` (in the server's root), its kernel idle,
    Run All started (not awaited: the command settles only when every cell has run)."""
    chromium = _chromium()
    from playwright.sync_api import sync_playwright

    base, token, _ = jupyterlab
    stem = name.removesuffix(".ipynb")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            _open_when_kernel_idle(
                page, f"{base}/lab/workspaces/{stem}/tree/{name}?reset&token={token}"
            )
            page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
            yield page
        finally:
            browser.close()


def test_live_plot_renders_and_updates_in_jupyterlab(jupyterlab, tmp_path):
    _write_notebook(jupyterlab[2] / "live.ipynb")
    with _running_in_lab(jupyterlab, "live.ipynb") as page:
        images, texts = set(), []
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            state = page.evaluate(
                "() => ({"
                " srcs: [...document.querySelectorAll('.jupyter-widgets img')].map(i => i.src),"
                " html: [...document.querySelectorAll('.widget-html-content')]"
                "       .map(e => e.textContent),"
                " page: [...document.querySelectorAll('.jp-OutputArea-output')]"
                "       .map(e => e.innerText).join('\\n') })"
            )
            images.update(s for s in state["srcs"] if s)
            texts.extend(state["html"])
            if "TRAINING-DONE" in state["page"]:
                break
            time.sleep(0.05)
        page.wait_for_timeout(500)  # let the last comm messages land
        final = page.evaluate(
            "[...document.querySelectorAll('.jp-OutputArea-output')]"
            ".map(e => e.innerText).join('\\n')"
        )
        bar = page.evaluate(
            "() => { const b = document.querySelector('.widget-hprogress .progress-bar');"
            " return b ? {width: b.style.width, cls: b.className} : null; }"
        )
        page.screenshot(path=str(tmp_path / "jupyterlab-live-plot.png"), full_page=True)

    assert "TRAINING-DONE widget" in final, final[-2000:]
    assert "Error displaying widget" not in final
    # the plot carries the numbers: no MXNet epoch log lines under it
    assert "Train-accuracy=" not in final and "Time cost=" not in final, final[-2000:]
    assert len(images) >= 3, f"the plot changed {len(images) - 1} times while training"
    assert any(t.startswith("done:") for t in texts + [final]) or "done:" in final
    assert bar is not None and bar["width"] == "100%" and "success" in bar["cls"]
    assert (tmp_path / "jupyterlab-live-plot.png").stat().st_size > 10_000


# What the notebook model says once Run All has finished: cells run, errors, widget outputs.
NOTEBOOK_STATE = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const session = panel && panel.sessionContext && panel.sessionContext.session;
  const kernel = session && session.kernel;
  const code = panel.content.widgets.filter(c => c.model.type === 'code');
  const outputs = code.map(c => c.model.outputs.toJSON());
  const widgetViews = outputs.flat().filter(
    o => o.data && o.data['application/vnd.jupyter.widget-view+json']).length;
  const areas = [...document.querySelectorAll('.jp-OutputArea-output')];
  return {
    idle: !!kernel && kernel.status === 'idle',
    kernel: kernel ? kernel.status : 'none',
    pending: code.filter(c => c.model.executionCount === null).length,
    running: code.filter(c => c.node.querySelector('.jp-InputPrompt') &&
                              c.node.querySelector('.jp-InputPrompt').textContent.includes('*')).length,
    errors: outputs.flat().filter(o => o.output_type === 'error')
                   .map(o => o.ename + ': ' + o.evalue),
    widgetViews: widgetViews,
    widgetsShown: areas.filter(a => a.querySelector(':scope > .jupyter-widgets, .jupyter-widgets')).length,
    widgetErrors: areas.filter(a => a.innerText.includes('Error displaying widget')).length,
  };
}"""


@pytest.mark.parametrize(
    "notebook",
    COURSE + CHINESE,
    ids=lambda p: f"{p.parent.name}/{p.name}".removeprefix("notebooks/"),
)
def test_course_notebook_runs_in_jupyterlab_with_every_widget_rendered(
    jupyterlab, notebook, tmp_path
):
    shutil.copy(notebook, jupyterlab[2] / notebook.name)
    with _running_in_lab(jupyterlab, notebook.name) as page:
        deadline = time.monotonic() + 420
        state = page.evaluate(NOTEBOOK_STATE)
        while time.monotonic() < deadline:
            state = page.evaluate(NOTEBOOK_STATE)
            if state["errors"] or (state["idle"] and not state["pending"] and not state["running"]):
                break
            time.sleep(0.5)
        page.wait_for_timeout(1000)  # widgets render once the kernel is idle
        state = page.evaluate(NOTEBOOK_STATE)
        page.screenshot(path=str(tmp_path / f"{notebook.stem}.png"), full_page=True)

    assert not state["errors"], state["errors"]
    assert state["pending"] == 0 and state["idle"], state
    assert state["widgetErrors"] == 0
    assert state["widgetsShown"] >= state["widgetViews"], state


def test_a_student_notebook_runs_all_and_stops_only_at_the_exercises(jupyterlab, tmp_path):
    """The student edition in JupyterLab: Run All runs every cell; the answer cells show the
    stub's NotImplementedError, their checks say the exercise is not answered, nothing else
    errors."""
    from mxlearn.commands.student_edition import write_student_edition

    edition = write_student_edition(COURSE[0].parent, tmp_path / "student")
    shutil.copy(edition[0], jupyterlab[2] / "student.ipynb")
    with _running_in_lab(jupyterlab, "student.ipynb") as page:
        deadline = time.monotonic() + 420
        state = page.evaluate(NOTEBOOK_STATE)
        while time.monotonic() < deadline:
            state = page.evaluate(NOTEBOOK_STATE)
            if state["idle"] and not state["pending"] and not state["running"]:
                break
            time.sleep(0.5)
        page.wait_for_timeout(1000)
        state = page.evaluate(NOTEBOOK_STATE)
        shown = page.evaluate(
            "[...document.querySelectorAll('.jp-OutputArea-output')]"
            ".map(e => e.innerText).join('\\n')"
        )
        page.screenshot(path=str(tmp_path / "student.png"), full_page=True)

    assert state["pending"] == 0 and state["idle"], state
    names = sorted({error.split(":")[0] for error in state["errors"]})
    assert names == ["CheckFailed", "NotImplementedError"], state["errors"]
    roles = [c.metadata.get("mxlearn", {}).get("role") for c in nbformat.read(edition[0], 4).cells]
    # each answer cell and each check cell (01.1 is graded in two parts: two checks)
    assert len(state["errors"]) == roles.count("answer") + roles.count("check") == 5
    assert shown.count("YOUR CODE HERE") >= 2 and "nothing to check yet" in shown


def test_a_misuse_shows_a_short_error_with_the_fix_in_jupyterlab(jupyterlab, tmp_path):
    """An MXLearnError in a notebook: at most 10 lines, the fix among them."""
    cells = ["import mxlearn", "mod = mxlearn.Module(mxlearn.models.mlp())\nmod.get_outputs()"]
    _write_notebook(jupyterlab[2] / "misuse.ipynb", cells)
    with _running_in_lab(jupyterlab, "misuse.ipynb") as page:
        page.wait_for_selector(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
            timeout=90_000,
        )
        shown = page.evaluate(
            "[...document.querySelectorAll(\".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']\")]"
            ".map(e => e.innerText).join('\\n')"
        )
        page.screenshot(path=str(tmp_path / "jupyterlab-misuse.png"), full_page=True)

    lines = [line for line in shown.splitlines() if line.strip()]
    assert 3 <= len(lines) <= 10, shown
    assert lines[0].startswith("NotBound at line 2: mod.get_outputs()")
    assert any(line.strip().startswith("Fix: mod.bind(") for line in lines), shown
    assert "%tb" in lines[-1]
