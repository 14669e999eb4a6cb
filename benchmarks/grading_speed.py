"""How long ``python -m mxlearn grade`` takes for a class: STUDENTS students each handing in the
teacher's edition of every course notebook (every check passes: the longest run a notebook
has), graded with each ``--jobs`` given, in the sandbox (or without it, ``--no-sandbox``). Says
each notebook's median seconds, the wall time, and what 40 students would take at that rate.

    MXLEARN_DATA=... python benchmarks/grading_speed.py --students 2 --jobs 1 2
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=2)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--no-sandbox", action="store_true")
    args = parser.parse_args()
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
