"""The course as a website (`make site`, docs/site/build.py): both editions built from the
executed student edition, read in headless Chromium from a plain HTTP server on 127.0.0.1.

Every request a page makes stays on 127.0.0.1 and succeeds; the training curve is an image the
browser loaded; each notebook page links to its notebook on the class hub; no answer line of the
teacher's edition is on any page or in any file of the site.

Outside CI a machine without Chromium skips the browser test with the reason; in CI (CI=true) a
missing Chromium is a failure.
"""

from __future__ import annotations

import functools
import html.parser
import http.server
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import pytest
from test_browser import CHROMIUM_FLAGS, _chromium

from mxlearn.commands.student_edition import (
    _spaced,
    read_teacher_notebook,
    searched_lines,
    student_notebook,
    teacher_notebooks,
)

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "docs" / "site" / "build.py"
HUB, REPO = "hub.example.org", "https://git.example.org/teacher/student"
# nbgitpuller's link as the teacher's guide writes it, the repository URL-encoded
HUB_LINKS = {
    "en/02_fit.html": "https://hub.example.org/hub/user-redirect/git-pull?repo=https%3A%2F%2F"
    "git.example.org%2Fteacher%2Fstudent&branch=main&urlpath=lab/tree/student/02_fit.ipynb",
    "zh/02_fit.html": "https://hub.example.org/hub/user-redirect/git-pull?repo=https%3A%2F%2F"
    "git.example.org%2Fteacher%2Fstudent&branch=main&urlpath=lab/tree/student/zh/02_fit.ipynb",
}
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
# a resource a page loads (not a link it shows): from anywhere but the site itself
LOADED_FROM_AFAR = re.compile(
    r"<(?:script|img|iframe|source|audio|video)\b[^>]*\bsrc=[\"'](?:https?:)?//"
    r"|<link\b[^>]*\bhref=[\"'](?:https?:)?//|url\(\s*[\"']?(?:https?:)?//|@import\s+[\"']?https?:",
    re.I,
)
STUB_ERROR = re.compile(r"^NotImplementedError\b", re.M)  # a traceback's last line
# the notebook page's state: its text, its images, the training curve (fit's plot) of 02
PAGE_STATE = """() => {
  const images = [...document.querySelectorAll('img')];
  const fit = [...document.querySelectorAll('div.cell')].find(cell =>
      (cell.querySelector('.cell_input') || {}).innerText?.includes('mod.fit(train_iter, eval_data'));
  const curve = fit && fit.querySelector('.cell_output img');
  return {
    text: document.body.innerText,
    outputs: [...document.querySelectorAll('.cell_output')].map(e => e.innerText).join('\\n'),
    links: [...document.querySelectorAll('a')].map(a => a.getAttribute('href')),
    unloaded: images.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src),
    curve: curve ? {src: curve.getAttribute('src'), width: curve.naturalWidth} : null,
  };
}"""


def _builder():
    spec = importlib.util.spec_from_file_location("course_site_build", BUILD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _answers() -> set[str]:
    """Every answer line of the teacher's edition worth searching for (the student edition's
    own rule: code, or a phrase of three words or more, 8 characters at least)."""
    answers = []
    for path, language in teacher_notebooks(ROOT / "notebooks"):
        answers += student_notebook(read_teacher_notebook(path), language, path.name)[1]
    return searched_lines(answers)


class _Text(html.parser.HTMLParser):
    """A page's text as a reader sees it: highlighted code is one span per token in HTML."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts = []

    def handle_data(self, data):
        self.parts.append(data)


def _page_text(path: Path) -> str:
    parser = _Text()
    parser.feed(path.read_text(encoding="utf-8"))
    return _spaced("".join(parser.parts))


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built once as `make site HUB=... REPO=...` builds it."""
    root = tmp_path_factory.mktemp("course-site")
    env = dict(os.environ)
    env.pop("PYTEST_CURRENT_TEST", None)  # the kernels run as under make, not as under pytest
    for name, folder in [("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython")]:
        env[name] = str(root / folder)
    env.update(MPLCONFIGDIR=str(root / "matplotlib"), XDG_CACHE_HOME=str(root / "cache"))
    command = [sys.executable, str(BUILD), "--notebooks", str(ROOT / "notebooks")]
    command += ["--out", str(root / "site"), "--hub", HUB, "--repo", REPO]
    subprocess.run(command, check=True, env=env, cwd=root, timeout=1200)
    return root / "site"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # a line a request is noise; a failed one the test names
        pass


@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def chromium() -> str:
    """Found (or the test skipped, or failed in CI) before the site is built for it."""
    return _chromium()


@pytest.mark.slow
def test_both_editions_read_offline_with_curves_and_hub_links(chromium, served, site, tmp_path):
    from playwright.sync_api import sync_playwright

    requests, failed = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"),  # a fresh profile: nothing cached from another run
            executable_path=chromium,
            headless=True,
            args=CHROMIUM_FLAGS,
        )
        page = browser.new_page()
        page.on("request", lambda r: requests.append(r.url))
        page.on("requestfailed", lambda r: failed.append(r.url))
        page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
        try:
            states = {}
            for name in ["index.html", "en/index.html", "zh/index.html", *HUB_LINKS]:
                page.goto(f"{served}/{name}", wait_until="networkidle")
                states[name] = page.evaluate(PAGE_STATE)
        finally:
            browser.close()

    afar = [u for u in requests if urlsplit(u).scheme not in ("data", "blob")]
    afar = [u for u in afar if urlsplit(u).hostname != "127.0.0.1"]
    assert not afar, afar  # a font, a script or MathJax from the internet
    assert not failed, failed  # everything the pages load is in the site
    assert len(requests) > 20  # the theme's scripts, stylesheets, fonts and the figures
    assert {"en/index.html", "zh/index.html"} <= set(states["index.html"]["links"])
    for language in ("en", "zh"):
        links = states[f"{language}/index.html"]["links"]
        assert [n for n in NOTEBOOKS if f"{n}.html" in links] == NOTEBOOKS  # all seven
    assert "Training with" in states["en/02_fit.html"]["text"]
    assert "用 fit 训练" in states["zh/02_fit.html"]["text"]
    for name, link in HUB_LINKS.items():
        state = states[name]
        assert link in state["links"], name
        assert state["curve"] and state["curve"]["width"] > 0, (name, state["curve"])
        assert not state["unloaded"], state["unloaded"]
        assert not STUB_ERROR.search(state["outputs"])  # the stub's traceback: left out
        assert "CheckFailed" in state["outputs"]  # the checks say what they will look for
    answers = _answers()
    assert len(answers) >= 30
    for state in states.values():
        text = _spaced(state["text"])
        assert not [line for line in answers if line in text]


@pytest.mark.slow
def test_no_file_of_the_site_holds_an_answer_or_loads_from_the_internet(site):
    answers = _answers()
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= 2 * (len(NOTEBOOKS) + 1)
    for path in pages:
        text = _page_text(path)
        leaked = [line for line in answers if line in text]
        assert not leaked, (path.relative_to(site), leaked[:3])
    for path in [*pages, *site.rglob("*.css"), *site.rglob("*.js"), *site.rglob("_sources/*")]:
        raw = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix in (".html", ".css"):  # scripts make URLs as they run: the browser test
            found = LOADED_FROM_AFAR.search(raw)
            assert not found, (path.relative_to(site), raw[found.start() : found.start() + 120])
        escaped = [line for line in answers if json.dumps(line)[1:-1] in raw]
        assert not escaped, (path.relative_to(site), escaped[:3])
    notebook = nbformat.read(site / "en" / "_sources" / "02_fit.ipynb", as_version=4)
    assert any(
        o.get("data", {}).get("image/png") for c in notebook.cells for o in c.get("outputs", [])
    )


def test_without_the_hub_a_page_says_how_to_set_it_and_links_nowhere():
    from markdown_it import MarkdownIt  # the parser MyST renders the page's Markdown with

    build = _builder()
    for language in ("en", "zh"):
        cell = build.hub_cell(language, "02_fit.ipynb", None, None)
        assert "make site HUB=" in cell.source and "REPO=" in cell.source
        assert "http" not in cell.source  # no address invented
        shown = MarkdownIt().render(cell.source)
        assert "<strong>" in shown and "**" not in shown  # "：**" before Chinese stays literal
    with pytest.raises(SystemExit, match="both HUB and REPO"):
        build.build_site(ROOT / "notebooks", Path("unused"), HUB, None)


def test_the_hub_link_opens_the_folder_nbgitpuller_clones_into():
    build = _builder()
    link = build.hub_link(
        "https://hub.school.edu/", "https://git.school.edu/c/course.git", "zh/01.ipynb"
    )
    assert link == (
        "https://hub.school.edu/hub/user-redirect/git-pull?repo=https%3A%2F%2Fgit.school.edu"
        "%2Fc%2Fcourse.git&branch=main&urlpath=lab/tree/course.git/zh/01.ipynb"
    )
