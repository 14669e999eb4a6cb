"""``python -m mxlearn course``: run every course notebook headless, each in a fresh kernel in
its own folder under ``runs/course/``, and save it executed and as HTML readable offline
(figures as embedded PNGs; widget views and scripts that load from the internet dropped).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from nbconvert import HTMLExporter

from ..language import say

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# a <script> that loads anything from the internet: by src=, or an import() in its body
EXTERNAL_SCRIPT = re.compile(
    r"<script\b[^>]*\bsrc=[\"']https?://[^>]*>\s*</script>"
    r"|<script\b[^>]*>(?:(?!</script>).)*?import\(\s*[\"']https?://(?:(?!</script>).)*?</script>",
    re.I | re.S,
)


@dataclass
class NotebookRun:
    source: Path
    executed: Path
    html: Path
    seconds: float
    error: str | None  # the first error's name and message, when a cell failed


def course_notebooks(folder: Path) -> list[Path]:
    """The course: notebooks/*.ipynb, then each edition in a subfolder (notebooks/zh/)."""
    english = sorted(folder.glob("*.ipynb"))
    editions = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    return english + [nb for edition in editions for nb in sorted(edition.glob("*.ipynb"))]


def offline_outputs(nb) -> None:
    """Keep what a browser can show without a kernel or the internet: a widget whose final
    PNG is in the same output shows as that PNG; a widget alone (a progress bar) is dropped."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        kept = []
        for output in cell.outputs:
            data = output.get("data", {})
            if WIDGET_VIEW in data:
                data.pop(WIDGET_VIEW)
                if not any(key.startswith("image/") for key in data):
                    continue
            kept.append(output)
        cell.outputs = kept


def run_notebook(source: Path, out_folder: Path, timeout: int = 900) -> NotebookRun:
    out_folder.mkdir(parents=True, exist_ok=True)
    nb = nbformat.read(source, as_version=4)
    started = time.perf_counter()
    error = None
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(out_folder)}},  # the kernel's working folder
        store_widget_state=False,
    )
    # The kernel process's own messages (not the cells' output, which the notebook keeps) go to
    # a log beside the copy instead of the terminal.
    with open(out_folder / f"{source.stem}.kernel.log", "w") as kernel_log:
        try:
            client.execute(stderr=kernel_log)
        except CellExecutionError as failure:
            error = f"{failure.ename}: {failure.evalue}"
        except (CellTimeoutError, DeadKernelError) as failure:  # the run stops; the copy stays
            error = say(
                "{error}: {message} (see {log})",
                error=type(failure).__name__,
                message=str(failure).splitlines()[0],
                log=kernel_log.name,
            )
    seconds = time.perf_counter() - started
    executed = out_folder / source.name
    nbformat.write(nb, executed)
    offline_outputs(nb)
    html = executed.with_suffix(".html")
    body, _ = HTMLExporter().from_notebook_node(nb)  # the JupyterLab look; images inline
    html.write_text(EXTERNAL_SCRIPT.sub("", body), encoding="utf-8")
    return NotebookRun(source, executed, html, seconds, error)


def run_course(notebooks: str = "notebooks", out: str = "runs/course") -> list[NotebookRun]:
    """Run every course notebook; print a line per notebook and where the copies are."""
    folder, out_root = Path(notebooks), Path(out)
    runs = []
    started = time.perf_counter()
    for source in course_notebooks(folder):
        edition = source.parent.relative_to(folder)
        target = out_root / ("en" if str(edition) == "." else edition)
        run = run_notebook(source, target)
        runs.append(run)
        status = say("ok") if run.error is None else say("FAILED: {error}", error=run.error)
        print(f"  {str(source):48s} {run.seconds:5.1f} s  {status}", flush=True)
    failed = [r for r in runs if r.error]
    print(
        say(
            "{count} notebooks in {seconds:.0f} s, {failed} failed. Executed notebooks and HTML "
            "copies (curves included, readable offline): {folder}/",
            count=len(runs),
            seconds=time.perf_counter() - started,
            failed=len(failed),
            folder=out_root.resolve(),
        )
    )
    return runs
