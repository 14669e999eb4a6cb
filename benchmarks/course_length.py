"""How long each course notebook is, read and run: prose, code, exercises and the time its cells
take here. Prints a Markdown table for the teacher's guides.

    .venv/bin/python benchmarks/course_length.py            # both editions, executed here
    .venv/bin/python benchmarks/course_length.py --no-run   # sizes only

A lab's minutes are estimated from what is measured: the prose read at 120 English words (or 300
Chinese characters and 240 names in them) a minute, one minute a code cell to read, run and look at, the cells' run
time, and the exercises' minutes of the guide's table (notebooks/TEACHING.md)."""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mxlearn.commands.course import run_notebook  # noqa: E402

EXERCISE_ROW = re.compile(r"^\| (\d\d\.\d) \|.*\| (\d+) \|$", re.M)


def exercise_minutes() -> dict[str, int]:
    guide = (ROOT / "notebooks" / "TEACHING.md").read_text(encoding="utf-8")
    return {name: int(minutes) for name, minutes in EXERCISE_ROW.findall(guide)}


def size(path: Path) -> dict:
    nb = nbformat.read(path, as_version=4)
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    code = [c for c in nb.cells if c.cell_type == "code"]
    chinese = len(re.findall(r"[\u4e00-\u9fff]", prose))
    words = len(re.findall(r"[A-Za-z][\w'-]*", prose))
    # Chinese prose: its characters, and the names in it (code) at half the English pace
    reading = chinese / 300 + words / 240 if chinese else words / 120
    exercises = sorted({c.metadata.get("mxlearn", {}).get("exercise") for c in code} - {None})
    sections = sum(line.startswith("## ") for line in prose.splitlines())
    return dict(
        prose=chinese or words,
        unit="characters" if chinese else "words",
        code_cells=len(code),
        code_lines=sum(len(c.source.splitlines()) for c in code),
        sections=sections,
        exercises=exercises,
        reading=reading,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-run", action="store_true", help="sizes only, no execution")
    args = parser.parse_args()
    minutes = exercise_minutes()
    print(
        "| notebook | sections | prose | code cells (lines) | run here | exercises | lab minutes |"
    )
    print("|---|---:|---:|---:|---:|---|---:|")
    total = 0.0
    paths = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted(
        (ROOT / "notebooks" / "zh").glob("*.ipynb")
    )
    for path in paths:
        facts = size(path)
        seconds = 0.0
        if not args.no_run:
            run = run_notebook(path, Path(tempfile.mkdtemp(prefix="course-length-")))
            seconds = run.seconds
            total += seconds
        work = sum(minutes.get(e, 0) for e in facts["exercises"])
        lab = facts["reading"] + facts["code_cells"] + seconds / 60 + work
        name = str(path.relative_to(ROOT / "notebooks"))
        print(
            f"| {name} | {facts['sections']} | {facts['prose']:,} {facts['unit']} "
            f"| {facts['code_cells']} ({facts['code_lines']}) | {seconds:.0f} s "
            f"| {', '.join(facts['exercises'])} ({work} min) | {lab:.0f} |",
            flush=True,
        )
    if not args.no_run:
        print(f"\nall notebooks executed one after another: {total:.0f} s")


if __name__ == "__main__":
    main()
