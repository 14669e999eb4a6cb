"""Command line: ``python -m mxlearn tour | course | mark | grade | doctor | launch``."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from . import rules
from .boundary import public
from .commands.doctor import run_doctor
from .commands.grading_run import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT, refuse_missing_packages
from .commands.tour import run_tour
from .distributed import launch as run_job
from .errors import N_, InputError, MXLearnError
from .hosts import DEFAULT_REMOTE_SHELL
from .language import say


class TwoCourseOutputs(InputError):
    says = N_("mxlearn course: --out and --student both name where to write.")
    fix_says = N_("give one: --out for the executed course, --student for the edition")


class HostOptionsWithoutHosts(InputError):
    says = N_("mxlearn launch: {option} says how to reach other hosts, and --hosts names none.")
    fix_code = "python -m mxlearn launch -n 2 --hosts hostfile {option} ... train.py"


class GitWithoutStudent(InputError):
    says = N_(
        "mxlearn course: --git makes a repository of the student edition, which --student writes."
    )
    fix_code = "python -m mxlearn course --student runs/student --git"


def _typed(convert, rule: rules.Rule):
    """An argparse type that reads a value and checks it by the rule a Python call declares:
    a refusal exits with argparse's code 2 and its usage line, before anything runs."""

    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or rule.test(value) is not None:
            raise argparse.ArgumentTypeError(
                say("{text!r} is not {expected}", text=text, expected=rule.said())
            )
        return value

    return parse


def _existing(exists, template: str):
    """An argparse type that refuses a path ``exists`` does not accept."""

    def parse(text: str) -> str:
        if not exists(text):
            raise argparse.ArgumentTypeError(say(template, text=text))
        return text

    return parse


FOLDER = _existing(os.path.isdir, N_("{text!r} is not a folder here"))
FILE = _existing(os.path.isfile, N_("{text!r} is not a file here"))
COUNT = _typed(int, rules.whole(1, "2"))
SECONDS = _typed(float, rules.number("600", above=0))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mxlearn",
        description=say(
            "Command line: ``python -m mxlearn tour | course | mark | grade | doctor | launch``."
        ),
    )
    commands = parser.add_subparsers(dest="command", required=True)
    tour = commands.add_parser("tour", help=say("the Module API walk-through, headless"))
    tour.add_argument("--out", default="runs/tour", help=say("folder for checkpoints (runs/tour)"))
    tour.add_argument("--epochs", type=COUNT, default=5, help=say("epochs per training phase (5)"))
    course = commands.add_parser(
        "course", help=say("run every course notebook headless, with HTML")
    )
    course.add_argument(
        "--notebooks", type=FOLDER, default="notebooks", help=say("the course folder (notebooks)")
    )
    course.add_argument("--out", help=say("where the copies go (runs/course)"))
    course.add_argument(
        "--student",
        metavar="OUT",
        help=say("write the student edition (answers replaced by stubs) to OUT instead"),
    )
    course.add_argument(
        "--git",
        action="store_true",
        help=say("with --student: make OUT a git repository (for nbgitpuller) and commit"),
    )
    mark = commands.add_parser(
        "mark", help=say("write each exercise cell's metadata (mxlearn's, nbgrader's)")
    )
    mark.add_argument(
        "notebooks", metavar="NOTEBOOK", nargs="+", type=FILE, help=say("a teacher notebook")
    )
    _add_grade(commands)
    commands.add_parser("doctor", help=say("versions, device, and whether widgets will render"))
    _add_launch(commands)
    return parser


def _add_launch(commands) -> None:
    """The ``launch`` command's arguments: on 127.0.0.1, or on the hosts of a hostfile."""
    launch = commands.add_parser(
        "launch",
        help=say(
            "run a dist_sync training script as workers + servers + scheduler on 127.0.0.1, "
            "or on the hosts of --hosts"
        ),
    )
    launch.add_argument("-n", "--workers", type=COUNT, default=2, help=say("worker processes (2)"))
    launch.add_argument("-s", "--servers", type=COUNT, default=1, help=say("server processes (1)"))
    launch.add_argument("--timeout", type=SECONDS, help=say("stop the whole job after this many s"))
    launch.add_argument(
        "--hosts",
        metavar="HOSTFILE",
        help=say("run the job on these hosts (lines 'HOST [ADDRESS]') instead of 127.0.0.1"),
    )
    launch.add_argument(
        "--scheduler", metavar="HOST", help=say("with --hosts: the scheduler's host (the first)")
    )
    launch.add_argument(
        "--remote-shell",
        metavar="TEMPLATE",
        default=DEFAULT_REMOTE_SHELL,
        help=say(
            "with --hosts: how a command reaches {{host}} ({template})",
            template=DEFAULT_REMOTE_SHELL,
        ),
    )
    launch.add_argument("script", help=say("the training script (fit(..., kvstore='dist_sync'))"))
    launch.add_argument("script_args", nargs=argparse.REMAINDER, help=say("its arguments"))


def _add_grade(commands) -> None:
    """The ``grade`` command's arguments; its defaults are the grader's own."""
    grader = commands.add_parser(
        "grade", help=say("run each student's notebook and grade its exercises (CSV and HTML)")
    )
    grader.add_argument(
        "submissions",
        metavar="SUBMISSIONS",
        help=say(
            "a folder of <student>/<notebook>.ipynb or <student>/<assignment>/<notebook>.ipynb"
        ),
    )
    grader.add_argument(
        "--out", default="grades.csv", help=say("the CSV to write, the HTML beside it (grades.csv)")
    )
    grader.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=say("seconds per notebook ({seconds:g})", seconds=DEFAULT_TIMEOUT),
    )
    grader.add_argument(
        "--memory-mb",
        type=int,
        default=DEFAULT_MEMORY_MB,
        help=say("memory per kernel, in MB ({mb})", mb=DEFAULT_MEMORY_MB),
    )
    grader.add_argument("--jobs", type=int, help=say("notebooks run at once (one per CPU)"))
    grader.add_argument(
        "--sandbox",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=say(
            "run each kernel in bubblewrap's sandbox; --no-sandbox: without it (default: the "
            "sandbox where it works, else said)"
        ),
    )
    grader.add_argument(
        "--teacher",
        help=say(
            "the teacher's edition (its notebooks and those of its zh/), whose check cells are "
            "run (default: notebooks/ here)"
        ),
    )


def _interrupted(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM for grade: what finished is written
        print(say("\nmxlearn {command}: interrupted.", command=args.command), file=sys.stderr)
        return 130
    except MXLearnError as err:
        print(f"\nmxlearn: {err}", file=sys.stderr)
        # grade refuses its arguments before any notebook runs: 2, as argparse's own refusals
        return 2 if args.command == "grade" and isinstance(err, InputError) else 1


@public("python -m mxlearn")
def _student_edition(args: argparse.Namespace) -> None:
    from .commands.student_edition import write_student_edition

    if args.out is not None:
        raise TwoCourseOutputs()
    count = len(write_student_edition(args.notebooks, args.student))
    print(say("Student edition: {count} notebooks in {out}", count=count, out=args.student))
    if args.git:
        from .commands.course_repository import BRANCH, commit_edition

        commit = commit_edition(Path(args.student))
        if commit is None:
            print(say("git: nothing changed since the last commit"))
        else:
            print(say("git: committed {commit} on {branch}", commit=commit, branch=BRANCH))


def _launch(args: argparse.Namespace) -> None:
    if args.hosts is None and args.scheduler is not None:
        raise HostOptionsWithoutHosts(option="--scheduler")
    if args.hosts is None and args.remote_shell != DEFAULT_REMOTE_SHELL:
        raise HostOptionsWithoutHosts(option="--remote-shell")
    result = run_job(
        args.script,
        args.script_args,
        args.workers,
        args.servers,
        args.timeout,
        hosts=args.hosts,
        scheduler=args.scheduler,
        remote_shell=args.remote_shell,
    )
    print(
        say(
            "mxlearn launch: {workers} workers finished in {seconds:.1f} s.",
            workers=args.workers,
            seconds=result.seconds,
        )
    )


def _run(args: argparse.Namespace) -> int:
    if args.command == "tour":
        run_tour(args.out, epochs=args.epochs)
    elif args.command == "course" and args.student is not None:
        _student_edition(args)
    elif args.command == "course":
        if args.git:
            raise GitWithoutStudent()
        # Its packages (nbclient, nbconvert) come with the dev extra, not with mxlearn.
        from .commands.course import run_course

        if any(run.error for run in run_course(args.notebooks, args.out or "runs/course")):
            return 1
    elif args.command == "mark":
        from .commands.exercise_cells import mark_files

        for path, (marked, unmarked) in mark_files(args.notebooks).items():
            cells = ", ".join(f"{exercise} {role}" for exercise, role in marked)
            print(say("{path}: {cells}", path=path, cells=cells or say("no exercise cells")))
            if unmarked:
                print(
                    say(
                        "{path}: no longer exercise cells, unmarked: {cells}",
                        path=path,
                        cells=unmarked,
                    )
                )
    elif args.command == "grade":
        # its packages (nbformat, nbclient, ipykernel) come with the dev extra, not with mxlearn:
        # named before grade.py imports them, not an ImportError
        refuse_missing_packages()
        from .commands.grade import grade

        signal.signal(signal.SIGTERM, _interrupted)  # as Ctrl-C: finished grades are written
        grade(
            args.submissions,
            args.out,
            timeout=args.timeout,
            memory_mb=args.memory_mb,
            jobs=args.jobs,
            sandbox=args.sandbox,
            teacher=args.teacher,
        )
    elif args.command == "launch":
        # a closed terminal (SIGHUP) or a kill (SIGTERM) stops the job as Ctrl-C does: its
        # processes run in sessions of their own, and nothing else would stop them
        for number in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, _interrupted)
        _launch(args)
    else:
        run_doctor()
    return 0


if __name__ == "__main__":
    sys.exit(main())
