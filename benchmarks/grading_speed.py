"""How long ``python -m mxlearn grade`` takes for a class: STUDENTS students each handing in the
teacher's edition of every course notebook (every check passes: the longest run a notebook
has), graded with each ``--jobs`` given, in the sandbox (or without it, ``--no-sandbox``). Says
each notebook's median seconds, the wall time, and what 40 students would take at that rate.
With ``--plain``, first each notebook run once as a student runs it (nbclient, one kernel, no
sandbox, no seal, no grader): what grading adds is the difference.

    MXLEARN_DATA=... python benchmarks/grading_speed.py --plain --students 2 --jobs 1 2
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from mxlearn.commands.grade import grade

TEACHER = Path(__file__).resolve().parents[1] / "notebooks"


def _class(folder: Path, students: int) -> Path:
    submitted = folder / "submitted"
    for n in range(students):
        mine = submitted / f"student{n:02d}"
        mine.mkdir(parents=True)
        for notebook in sorted(TEACHER.glob("*.ipynb")):
            shutil.copy(notebook, mine / notebook.name)
    return submitted


def _plain() -> None:
    """Each teacher notebook executed once, in a copy, as Jupyter would run it."""
    import nbformat
    from nbclient import NotebookClient

    print("plain run (one kernel, no grader):")
    total = 0.0
    for notebook in sorted(TEACHER.glob("*.ipynb")):
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copy(notebook, Path(tmp) / notebook.name)
            nb = nbformat.read(Path(tmp) / notebook.name, as_version=4)
            started = time.monotonic()
            NotebookClient(nb, timeout=900, resources={"metadata": {"path": tmp}}).execute()
            seconds = time.monotonic() - started
        total += seconds
        print(f"  {notebook.name:40s} {seconds:6.1f} s")
    print(f"  all {total:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=2)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--no-sandbox", action="store_true")
    parser.add_argument("--plain", action="store_true", help="first time each notebook ungraded")
    args = parser.parse_args()
    if args.plain:
        _plain()
    for jobs in args.jobs:
        with tempfile.TemporaryDirectory() as tmp:
            submitted = _class(Path(tmp), args.students)
            started = time.monotonic()
            grading = grade(
                submitted,
                Path(tmp) / "out" / "grades.csv",
                jobs=jobs,
                teacher=TEACHER,
                sandbox=False if args.no_sandbox else None,
            )
            wall = time.monotonic() - started
        per = defaultdict(list)
        for (_, notebook), seconds in grading.seconds.items():
            per[notebook].append(seconds)
        medians = {nb: statistics.median(s) for nb, s in sorted(per.items())}
        notebooks = len(grading.seconds)
        counts = grading.counts()
        print(f"\n--jobs {jobs}: {notebooks} notebooks in {wall:.0f} s ({counts['passed']} passed)")
        for notebook, seconds in medians.items():
            print(f"  {notebook:40s} {seconds:6.1f} s")
        one_class = wall / args.students * 40
        print(
            f"  per student {wall / args.students:.0f} s; 40 students at this rate: "
            f"{one_class / 60:.0f} min"
        )


if __name__ == "__main__":
    main()
