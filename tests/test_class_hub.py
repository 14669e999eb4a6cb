"""A class on one JupyterHub, tested: a real JupyterHub (with its configurable-http-proxy) on
127.0.0.1, three students logging in through its login page in headless Chromium, each with a
home folder of their own, all three working at once behind the hub's proxy.

Each student runs the student edition of notebook 01 to its end (its exercise cells stop at the
stub, by design) and a notebook training with the live plot, whose widget must be seen to redraw.
Each user's server reads the data from the shared MXLEARN_DATA folder (no download), and each
user's peak memory and time are measured and printed (pytest -s), never asserted.

Outside CI a machine without JupyterHub, configurable-http-proxy or Chromium skips this test with
the reason; in CI (CI=true) a missing one is a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest
from test_browser import CHROMIUM_FLAGS, NOTEBOOK_STATE, TRAINING_CELLS

pytestmark = pytest.mark.slow  # a hub, three lab servers, three kernels and three browsers

USERS = ("ana", "ben", "chen")
STUDENT_NOTEBOOK = "01_module_step_by_step.ipynb"
LIVE_NOTEBOOK = "live_plot.ipynb"
LIVE_CELLS = [
    *TRAINING_CELLS[:-1],
    # where the kernel found the data: the shared folder, never a download into the home
    "print('DATA-FILE', mxlearn.datasets.letter_file())",
    TRAINING_CELLS[-1] + "\nprint('PLOT-DRAWS', live.throttle.draws)",
]
VENV_BIN = Path(os.path.abspath(sys.executable)).parent  # not resolved: the venv, not its base

# The notebook state (test_browser's) plus what the live plot shows: its frames, its text.
PAGE_STATE = f"""() => {{
  const state = ({NOTEBOOK_STATE})();
  state.srcs = [...document.querySelectorAll('.jupyter-widgets img')].map(i => i.src);
  state.html = [...document.querySelectorAll('.widget-html-content')].map(e => e.textContent);
  return state;
}}"""
SHOWN_TEXT = (
    "[...document.querySelectorAll('.jp-OutputArea-output')].map(e => e.innerText).join('\\n')"
)
KERNEL_IDLE = (
    "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
    " const k = w && w.sessionContext && w.sessionContext.session"
    " && w.sessionContext.session.kernel;"
    " return k && k.status === 'idle'; }"
)
PROGRESS_BAR = (
    "() => { const b = document.querySelector('.widget-hprogress .progress-bar');"
    " return b ? {width: b.style.width, cls: b.className} : null; }"
)


def _required(command: str, how: str) -> str:
    """The path of ``command``; a skip with the reason when it is missing, a failure in CI."""
    path = shutil.which(command)
    if path:
        return path
    if os.environ.get("CI"):
        pytest.fail(f"{command} is not installed; {how}")
    pytest.skip(f"no {command} on this machine for the class hub test; {how}")


def _free_ports(n: int) -> list[int]:
    """``n`` different free ports on 127.0.0.1 (each socket held until all are chosen)."""
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]


def _tools() -> dict[str, str]:
    candidates = (os.environ.get("MXLEARN_CHROMIUM"), "chromium", "chromium-browser")
    chromium = next((c for c in candidates if c and shutil.which(c)), "chromium")
    setup = "make setup installs it (requirements/lock.txt)"
    return {
        "jupyterhub": _required(str(VENV_BIN / "jupyterhub"), setup),
        "singleuser": _required(str(VENV_BIN / "jupyterhub-singleuser"), setup),
        "proxy": _required(
            "configurable-http-proxy",
            "install it with npm install -g configurable-http-proxy (.ci/run does)",
        ),
        "chromium": _required(chromium, "install Debian's chromium (.ci/run does)"),
    }


# -- the hub --------------------------------------------------------------------------------


@dataclass
class Hub:
    url: str
    root: Path  # everything of the hub's: its files, the homes, the browsers' profiles
    homes: Path
    password: str
    process: subprocess.Popen
    log: Path
    users: tuple[str, ...]


def _hub_config(tmp_path: Path, tools: dict, data: Path, users, password: str):
    """The hub's jupyterhub_config.py, and the port of its proxy."""
    port, hub_port, api_port = _free_ports(3)
    args = [
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp, which the test reads
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if os.geteuid() == 0:  # CI containers run as root; a Jupyter server then needs to be told
        args.append("--ServerApp.allow_root=True")
    settings = {
        "JupyterHub.ip": "127.0.0.1",
        "JupyterHub.port": port,
        "JupyterHub.hub_ip": "127.0.0.1",
        "JupyterHub.hub_port": hub_port,
        "ConfigurableHTTPProxy.api_url": f"http://127.0.0.1:{api_port}",
        "ConfigurableHTTPProxy.command": [tools["proxy"]],
        "JupyterHub.db_url": f"sqlite:///{tmp_path / 'jupyterhub.sqlite'}",
        "JupyterHub.cookie_secret_file": str(tmp_path / "jupyterhub_cookie_secret"),
        "JupyterHub.pid_file": str(tmp_path / "jupyterhub.pid"),
        "JupyterHub.cleanup_servers": True,
        "JupyterHub.cleanup_proxy": True,
        # the test's authenticator: one shared password (a real class logs in with its accounts)
        "JupyterHub.authenticator_class": "shared-password",
        "SharedPasswordAuthenticator.user_password": password,
        "Authenticator.allowed_users": set(users),
        # testing only: every user's server runs as this user, in a home folder of its own
        "JupyterHub.spawner_class": "jupyterhub.spawner.SimpleLocalProcessSpawner",
        "SimpleLocalProcessSpawner.home_dir_template": str(tmp_path / "home" / "{username}"),
        "Spawner.cmd": [tools["singleuser"]],
        "Spawner.args": args,
        "Spawner.default_url": "/lab",
        "Spawner.environment": {"MXLEARN_DATA": str(data)},
        # three servers starting at once on a busy machine
        "Spawner.start_timeout": 300,
        "Spawner.http_timeout": 300,
    }
    lines = ["c = get_config()  # noqa: F821"]
    for key, value in settings.items():
        lines.append(f"c.{key} = {value!r}")
    return "\n".join(lines) + "\n", port


@contextlib.contextmanager
def running_hub(tmp_path: Path, tools: dict, data: Path, users=USERS):
    """A JupyterHub on 127.0.0.1 for ``users``; every process it started is gone afterwards."""
    password = secrets.token_urlsafe(12)
    config, port = _hub_config(tmp_path, tools, data, users, password)
    (tmp_path / "home").mkdir(parents=True)
    (tmp_path / "jupyterhub_config.py").write_text(config)
    log_path = tmp_path / "jupyterhub.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "XDG_"))}
    with open(log_path, "w") as log:
        hub = subprocess.Popen(
            [tools["jupyterhub"], "-f", str(tmp_path / "jupyterhub_config.py")],
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_for_hub(hub, url, log_path)
            yield Hub(url, tmp_path, tmp_path / "home", password, hub, log_path, tuple(users))
        except BaseException:
            _stop_everything(hub, tmp_path)
            raise
        left = _stop_everything(hub, tmp_path)
        assert not left, f"processes of the class hub outlived it: {left}"


def _wait_for_hub(hub: subprocess.Popen, url: str, log_path: Path) -> None:
    deadline = time.monotonic() + 120
    while True:
        try:  # through the proxy: both the proxy and the hub are up
            with urllib.request.urlopen(f"{url}/hub/api/", timeout=2) as r:
                json.load(r)
            return
        except (OSError, ValueError):
            if hub.poll() is not None or time.monotonic() > deadline:
                pytest.fail("JupyterHub did not start:\n" + log_path.read_text()[-4000:])
            time.sleep(0.3)


def _ours(tmp_path: Path) -> list:
    """Every process started for this test: its command line or its folder is under tmp_path
    (the hub, the proxy, the users' servers and kernels, the browsers' profiles)."""
    import psutil

    skip = {os.getpid(), *(p.pid for p in psutil.Process().parents())}
    found = []
    for process in psutil.process_iter(["pid", "cwd", "cmdline"]):
        info = process.info
        if info["pid"] in skip:
            continue
        text = " ".join(info["cmdline"] or []) + " " + (info["cwd"] or "")
        if str(tmp_path) in text:
            found.append(process)
    return found


def _stop_everything(hub: subprocess.Popen, tmp_path: Path) -> list[str]:
    """Stop the hub (which stops the servers and the proxy), then whatever is left; what
    still runs after that."""
    import psutil

    started = _ours(tmp_path)
    if hub.poll() is None:
        hub.send_signal(signal.SIGTERM)  # the hub stops the users' servers and the proxy
        try:
            hub.wait(timeout=60)
        except subprocess.TimeoutExpired:
            hub.kill()
            hub.wait()
    left = [p for p in {p.pid: p for p in started + _ours(tmp_path)}.values() if p.is_running()]
    for process in left:
        with contextlib.suppress(psutil.Error):
            process.terminate()
    _, alive = psutil.wait_procs(left, timeout=10)
    for process in alive:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(alive, timeout=10)
    return [" ".join((p.info["cmdline"] or [])[:3]) for p in _ours(tmp_path)]


# -- what each user's processes use -----------------------------------------------------------


class MemoryWatch(threading.Thread):
    """Samples, every 0.2 s, the resident memory (RSS) of each user's server plus what it runs
    (its kernels), and of the hub plus its proxy."""

    def __init__(self, hub: Hub):
        super().__init__(daemon=True)
        self.hub, self.stop = hub, threading.Event()
        self.peak = {name: 0 for name in hub.users}  # server + kernels, bytes
        self.kernel_peak = {name: 0 for name in hub.users}  # the largest kernel alone
        self.hub_peak = 0  # the hub and the proxy
        self.kernels = {name: set() for name in hub.users}
        self.servers = {name: {} for name in hub.users}  # what each user's server was given
        self._users: dict[int, str] = {}  # server pid -> user
        self._hub_command: list[str] = []

    def run(self) -> None:
        import psutil

        hub = psutil.Process(self.hub.process.pid)
        self._hub_command = hub.cmdline()
        while not self.stop.wait(0.2):
            with contextlib.suppress(psutil.Error):
                overhead = hub.memory_info().rss
                for child in hub.children():
                    with contextlib.suppress(psutil.Error):
                        overhead += self._sample(child)
                self.hub_peak = max(self.hub_peak, overhead)

    def _sample(self, server) -> int:
        """A user's server: its sample, 0 returned; the proxy: its RSS."""
        import psutil

        name = self._users.get(server.pid)
        if name is None:
            if server.cmdline() == self._hub_command:
                return 0  # forked, not yet the server it will be: its pages are the hub's
            env = server.environ()
            if env.get("JUPYTERHUB_USER") not in self.servers:
                return server.memory_info().rss  # the proxy
            name = self._users[server.pid] = env["JUPYTERHUB_USER"]
            self.servers[name] = {k: env.get(k) for k in ("HOME", "MXLEARN_DATA")}
        total, command = server.memory_info().rss, server.cmdline()
        for child in server.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if child.cmdline() == command:
                    continue  # forked, not yet the program it runs: its pages are the server's
                rss = child.memory_info().rss
                total += rss
                if "ipykernel_launcher" in child.cmdline():
                    self.kernel_peak[name] = max(self.kernel_peak[name], rss)
                    self.kernels[name].add(child.pid)
        self.peak[name] = max(self.peak[name], total)
        return 0


# -- one student in a browser -----------------------------------------------------------------


@dataclass
class Student:
    name: str
    hub_user: str | None = None  # whom the hub's lab page says it serves
    seconds: dict = field(default_factory=dict)
    notebooks: dict = field(default_factory=dict)  # file name -> what the page showed
    error: BaseException | None = None


def _log_in(page, hub: Hub, name: str) -> str:
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", name)
    page.fill("#password_input", hub.password)
    page.click("#login_submit")
    page.wait_for_url(lambda url: "/hub/login" not in url, timeout=60_000)  # the hub let in
    # the hub spawns the server, then its spawn page sends the browser on to the lab
    page.wait_for_url(f"**/user/{name}/lab**", timeout=300_000)
    page.wait_for_function("() => !!window.jupyterapp", timeout=300_000)
    # whom the lab was served to, in its page config
    return page.evaluate(
        "() => JSON.parse(document.getElementById('jupyter-config-data').textContent).hubUser"
    )


def _run_notebook(page, hub: Hub, name: str, notebook: str, tmp_path: Path) -> dict:
    """Run All on ``notebook`` in the user's lab; what the page showed while it ran and after."""
    stem = notebook.removesuffix(".ipynb")
    page.goto(f"{hub.url}/user/{name}/lab/workspaces/{stem}/tree/{notebook}?reset")
    page.wait_for_function(KERNEL_IDLE, timeout=300_000)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    frames = {}  # each frame of the plot (its blob URL): whether it came while training
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        state = page.evaluate(PAGE_STATE)
        # training until the plot says done (the kernel's status is no guide: the widgets'
        # comm messages make it idle for a moment while a cell still runs)
        training = not any(t.startswith("done:") for t in state["html"])
        for src in state["srcs"]:
            if src and src not in frames:
                frames[src] = training
        if state["idle"] and not state["pending"] and not state["running"]:
            break
        time.sleep(0.1)
    page.wait_for_timeout(1000)  # widgets render once the kernel is idle
    state = page.evaluate(PAGE_STATE)
    page.screenshot(path=str(tmp_path / f"{name}-{stem}.png"), full_page=True)
    shown = page.evaluate(SHOWN_TEXT)
    bar = page.evaluate(PROGRESS_BAR)
    # done with it, as a student closing the notebook: its kernel stops
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
    return {
        "state": state,  # the final one
        "frames": sum(frames.values()),  # seen while training
        "shown": shown,
        "bar": bar,
    }


def _student(hub: Hub, student: Student, chromium: str, tmp_path: Path, notebooks) -> None:
    from playwright.sync_api import sync_playwright

    start = time.monotonic()
    try:
        with sync_playwright() as p:  # each thread its own Playwright, browser and context
            context = p.chromium.launch_persistent_context(
                str(hub.root / "browsers" / student.name),  # the profile: found at cleanup
                executable_path=chromium,
                headless=True,
                args=CHROMIUM_FLAGS,
                viewport={"width": 1400, "height": 1000},
            )
            try:
                page = context.new_page()
                student.hub_user = _log_in(page, hub, student.name)
                student.seconds["login"] = time.monotonic() - start
                for notebook in notebooks:
                    began = time.monotonic()
                    student.notebooks[notebook] = _run_notebook(
                        page, hub, student.name, notebook, tmp_path
                    )
                    student.seconds[notebook] = time.monotonic() - began
            finally:
                context.close()
    except BaseException as error:  # raised again by the main thread, with the user's name
        student.error = error
    student.seconds["total"] = time.monotonic() - start


def run_class(hub: Hub, chromium: str, tmp_path: Path, notebooks) -> tuple[dict, MemoryWatch]:
    """Every user of ``hub`` logs in and runs ``notebooks`` in their lab, all at once."""
    students = {name: Student(name) for name in hub.users}
    watch = MemoryWatch(hub)
    watch.start()
    threads = [
        threading.Thread(target=_student, args=(hub, s, chromium, tmp_path, notebooks), daemon=True)
        for s in students.values()
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 1800
    for thread in threads:
        thread.join(timeout=max(0, deadline - time.monotonic()))
    stuck = [s.name for s, t in zip(students.values(), threads) if t.is_alive()]
    watch.stop.set()
    watch.join(timeout=10)
    assert not stuck, f"still running after 30 min: {stuck}"
    for student in students.values():
        if student.error is not None:
            raise AssertionError(
                f"{student.name}: {student.error!r}\nhub log:\n{hub.log.read_text()[-3000:]}"
            ) from student.error
    return students, watch


def report(students: dict, watch: MemoryWatch, tmp_path: Path) -> Path:
    """Each user's peak memory and times, written to a JSON file and printed (pytest -s)."""
    mb = 1024 * 1024
    users = {
        name: {
            "peak_mb_server_and_kernels": round(watch.peak[name] / mb),
            "peak_mb_kernel": round(watch.kernel_peak[name] / mb),
            "seconds": {k: round(v, 1) for k, v in s.seconds.items()},
            # the live plots' frames the page showed while training, and the plot's own count
            "plot_frames_seen": {nb: run["frames"] for nb, run in s.notebooks.items()},
            "plot_draws": [
                int(line.split()[1])
                for run in s.notebooks.values()
                for line in run["shown"].splitlines()
                if line.startswith("PLOT-DRAWS")
            ],
        }
        for name, s in students.items()
    }
    figures = {
        "users_at_once": len(students),
        "cpus": os.cpu_count(),
        "memory": "RSS, sampled every 0.2 s",
        "hub_and_proxy_peak_mb": round(watch.hub_peak / mb),
        "users": users,
    }
    path = tmp_path / "class_hub_figures.json"
    path.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"\nthe class hub's figures ({path}):\n{path.read_text()}")
    return path


def give_notebooks(hub: Hub, files: dict[str, Path]) -> None:
    """Each user's home: the notebooks, and the lab setting that keeps every cell in the page
    (JupyterLab 4 otherwise detaches cells scrolled out of view, and their widgets)."""
    for name in hub.users:
        home = hub.homes / name
        settings = home / ".jupyter" / "lab" / "user-settings" / "@jupyterlab"
        (settings / "notebook-extension").mkdir(parents=True)
        (settings / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
            '{"windowingMode": "none"}'
        )
        (settings / "apputils-extension").mkdir()  # and no question about news over the page
        (settings / "apputils-extension" / "notification.jupyterlab-settings").write_text(
            '{"fetchNews": "false"}'
        )
        for target, source in files.items():
            shutil.copy(source, home / target)


def write_notebook(path: Path, cells) -> Path:
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source) for source in cells],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    nbformat.write(nb, path)
    return path


def _data_listing(data: Path) -> dict:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(data.iterdir())}


# -- the test ---------------------------------------------------------------------------------


def test_three_students_work_at_once_on_one_jupyterhub(tmp_path, shared_data):
    """ana, ben and chen log in and work at once; every user's MXLEARN_DATA is conftest's
    SHARED_DATA (the shared_data fixture), read by all, written by none."""
    from mxlearn.commands.student_edition import write_student_edition

    tools = _tools()
    notebooks = Path(__file__).resolve().parents[1] / "notebooks"
    edition = tmp_path / "student"
    write_student_edition(notebooks, edition)
    files = {
        STUDENT_NOTEBOOK: edition / STUDENT_NOTEBOOK,
        LIVE_NOTEBOOK: write_notebook(tmp_path / LIVE_NOTEBOOK, LIVE_CELLS),
    }
    roles = [
        c.metadata.get("mxlearn", {}).get("role")
        for c in nbformat.read(files[STUDENT_NOTEBOOK], 4).cells
    ]
    data_before = _data_listing(shared_data)

    with running_hub(tmp_path / "hub", tools, shared_data) as hub:
        give_notebooks(hub, files)
        students, watch = run_class(hub, tools["chromium"], tmp_path, list(files))
    report(students, watch, tmp_path)

    for name, student in students.items():
        home = hub.homes / name
        # logged in through the login page: each user's own server, home, data folder, kernels
        assert student.hub_user == name, (name, student.hub_user)
        assert watch.servers[name] == {"HOME": str(home), "MXLEARN_DATA": str(shared_data)}
        assert watch.kernels[name], f"{name}: no kernel was seen under the user's server"

        student_run = student.notebooks[STUDENT_NOTEBOOK]
        state = student_run["state"]
        assert state["pending"] == 0 and state["idle"], (name, state)
        # the exercises stop at the stub and their checks say so; nothing else errors
        names = sorted({error.split(":")[0] for error in state["errors"]})
        assert names == ["CheckFailed", "NotImplementedError"], (name, state["errors"])
        assert len(state["errors"]) == roles.count("answer") + roles.count("check")
        assert "nothing to check yet" in student_run["shown"]
        assert state["widgetErrors"] == 0 and state["widgetsShown"] >= state["widgetViews"]

        live = student.notebooks[LIVE_NOTEBOOK]
        assert not live["state"]["errors"], (name, live["state"]["errors"])
        assert "TRAINING-DONE widget" in live["shown"], (name, live["shown"][-2000:])
        assert "Error displaying widget" not in live["shown"]
        assert live["frames"] >= 2, f"{name}: the plot never changed while training"
        assert [s for s in live["state"]["srcs"] if s], f"{name}: no plot once trained"
        assert any(t.startswith("done:") for t in live["state"]["html"]), live["state"]["html"]
        assert live["bar"] and live["bar"]["width"] == "100%" and "success" in live["bar"]["cls"]

        # the data came from the shared folder: nothing downloaded into the user's home
        data_line = next(x for x in live["shown"].splitlines() if x.startswith("DATA-FILE"))
        assert Path(data_line.split(maxsplit=1)[1]).parent == shared_data, data_line
        assert not list(home.rglob("letter-recognition*")), f"{name} downloaded the data"
    assert _data_listing(shared_data) == data_before
