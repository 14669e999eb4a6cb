"""``make site``: the course as a website, both languages, readable offline (issue 29, item 6).

What is published is the **student edition, executed**: ``python -m mxlearn course --student``
makes it (every answer replaced by nbgrader's stub, checked that no answer line is left), and
``mxlearn.commands.course.run_notebook`` runs each notebook as ``make tour`` does, in a fresh
kernel. Its cells tagged ``raises-exception`` (the exercises' answer and check cells, and only
those) may fail; an error anywhere else stops the build. Why not the teacher's executed outputs
with the answers' source stubbed? An answer's outputs (its printout, its figure, the check that
passes) show the answer, and each would need a rule of its own; the student edition leaks nothing
by construction, and every lesson cell (every training curve) is above the exercises and runs
unchanged. On the site, an answer cell shows its stub without the stub's NotImplementedError;
its check shows what a student sees before answering.

Each notebook page begins with a link that opens the notebook on the class hub through
nbgitpuller (``--hub`` and ``--repo``, from ``make site HUB=... REPO=...``); built without
them, the page says how to set them instead of pointing at an address of its own invention.
Sphinx and MyST-NB then render the executed notebooks (``nb_execution_mode = "off"``), one
build a language with the same ``conf.py`` beside this file.

    python docs/site/build.py --out runs/site --hub hub.school.edu --repo https://.../student.git
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import nbformat

from mxlearn.commands.course import offline_outputs, run_notebook
from mxlearn.commands.student_edition import write_student_edition

HERE = Path(__file__).resolve().parent
MARK = ".mxlearn-site"  # in a folder this script made, and so may replace
LANGUAGES = {"en": "en", "zh": "zh_CN"}  # the edition's folder: Sphinx's language (its labels)
# the first cell of each notebook page: where its notebook opens on the class hub
HUB_LINK = {
    "en": "**On the class hub:** [open {name} in JupyterLab]({link}) (your own copy; clicking "
    "again later brings in the teacher's updates and keeps your answers).",
    "zh": "**在课程服务器上**：[在 JupyterLab 中打开 {name}]({link})（打开的是你自己的副本；"
    "以后再点一次，会取回老师的更新，并保留你的答案）。",
}
NO_HUB = {
    "en": "**On the class hub:** this site was built without the hub's address, so it cannot "
    "link to the notebook there. The teacher sets it when building the site: `make site "
    "HUB=<the hub's address> REPO=<the student edition's git repository>` (see TEACHING.md).",
    "zh": "**在课程服务器上**：构建本网站时没有给出课程服务器的地址，所以这里无法链接到服务器上的"
    "笔记本。老师在构建网站时设置它：`make site HUB=<服务器地址> REPO=<学生版的 git 仓库>`"
    "（见 TEACHING.md）。",
}


class SiteNotBuilt(SystemExit):
    """The site is not published: the reason, said to the teacher (exit status 1)."""

    def __init__(self, reason: str):
        super().__init__(f"make site: {reason}")


def hub_link(hub: str, repo: str, path: str) -> str:
    """nbgitpuller's link to the student edition's ``path`` (``zh/02_fit.ipynb``), as the
    teacher's guide writes them. The clone's folder is the repository's last name, the way
    nbgitpuller names it (its UIHandler: ``repo.rstrip('/').split('/')[-1]``)."""
    base = hub.rstrip("/") if "://" in hub else f"https://{hub.rstrip('/')}"
    folder = repo.rstrip("/").split("/")[-1]
    return (
        f"{base}/hub/user-redirect/git-pull?repo={quote(repo, safe='')}&branch=main"
        f"&urlpath={quote(f'lab/tree/{folder}/{path}', safe='/')}"
    )


def hub_cell(language: str, path: str, hub: str | None, repo: str | None):
    name = path.rsplit("/", 1)[-1]
    if hub and repo:
        text = HUB_LINK[language].format(name=name, link=hub_link(hub, repo, path))
    else:
        text = NO_HUB[language]
    return nbformat.v4.new_markdown_cell(text, metadata={"mxlearn": {"role": "hub-link"}})


def site_notebook(executed: Path, language: str, path: str, hub, repo):
    """The page's notebook: outputs a browser shows without a kernel, the hub's link under the
    title, the stubs' NotImplementedError left out."""
    nb = nbformat.read(executed, as_version=4)
    offline_outputs(nb)
    for cell in nb.cells:
        if cell.metadata.get("mxlearn", {}).get("role") == "answer":
            cell.metadata.setdefault("tags", []).append("remove-output")  # MyST-NB's tag
    nb.cells.insert(1, hub_cell(language, path, hub, repo))  # cell 0 is the title
    return nb


def build_site(notebooks: Path, out: Path, hub: str | None, repo: str | None) -> None:
    if bool(hub) != bool(repo):
        raise SiteNotBuilt("give both HUB and REPO (the links need the hub and the repository)")
    work = out.parent / f"{out.name}-work"  # the edition, its runs, the pages' sources
    for folder in (out, work):  # replaced whole: only when an earlier build made them
        if folder.exists() and any(folder.iterdir()) and not (folder / MARK).exists():
            raise SiteNotBuilt(f"{folder} holds files of its own; choose another --out")
        shutil.rmtree(folder, ignore_errors=True)
    work.mkdir(parents=True)
    (work / MARK).touch()
    started = time.perf_counter()
    student = work / "student"
    for source in write_student_edition(notebooks, student):
        path = source.relative_to(student).as_posix()
        language = "zh" if path.startswith("zh/") else "en"
        run = run_notebook(source, work / "executed" / language)
        print(f"  {path:40s} {run.seconds:5.1f} s", flush=True)
        if run.error:
            raise SiteNotBuilt(f"{path} failed outside its exercises: {run.error}")
        pages = work / "pages" / language
        pages.mkdir(parents=True, exist_ok=True)
        nbformat.write(site_notebook(run.executed, language, path, hub, repo), pages / source.name)
    executed = time.perf_counter()
    for language, sphinx_language in LANGUAGES.items():
        pages = work / "pages" / language
        shutil.copy(HERE / language / "index.md", pages / "index.md")
        command = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", "--keep-going"]
        command += ["-c", str(HERE), "-D", f"language={sphinx_language}"]
        # MyST-NB writes the outputs' images beside the HTML folder, so it is built in work/
        html = work / "html" / language / "html"
        command += ["-d", str(work / "doctrees" / language), str(pages), str(html)]
        if subprocess.run(command).returncode:
            raise SiteNotBuilt(f"Sphinx could not build the {language} pages (said above)")
        shutil.copytree(html, out / language)
    shutil.copy(HERE / "index.html", out / "index.html")
    (out / MARK).touch()
    print(
        f"The course site: {(out / 'index.html').resolve()} (notebooks run in "
        f"{executed - started:.0f} s, pages built in {time.perf_counter() - executed:.0f} s)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebooks", type=Path, default=Path("notebooks"))
    parser.add_argument("--out", type=Path, default=Path("runs/site"))
    parser.add_argument("--hub", default=None, help="the class hub's address (hub.school.edu)")
    parser.add_argument("--repo", default=None, help="the student edition's git repository URL")
    args = parser.parse_args(argv)
    build_site(args.notebooks, args.out, args.hub or None, args.repo or None)


if __name__ == "__main__":
    main()
