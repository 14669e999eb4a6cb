"""Command line: ``python -m mxlearn tour | course | doctor | launch``."""

from __future__ import annotations

import argparse
import sys

from .commands.doctor import run_doctor
from .commands.tour import run_tour
from .distributed import launch as run_job
from .errors import MXLearnError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mxlearn", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    tour = commands.add_parser("tour", help="the Module API walk-through, headless")
    tour.add_argument("--out", default="runs/tour", help="folder for checkpoints (runs/tour)")
    tour.add_argument("--epochs", type=int, default=5, help="epochs per training phase (5)")
    course = commands.add_parser("course", help="run every course notebook headless, with HTML")
    course.add_argument("--notebooks", default="notebooks", help="the course folder (notebooks)")
    course.add_argument("--out", default="runs/course", help="where the copies go (runs/course)")
    commands.add_parser("doctor", help="versions, device, and whether widgets will render")
    launch = commands.add_parser(
        "launch",
        help="run a dist_sync training script as workers + servers + scheduler on 127.0.0.1",
    )
    launch.add_argument("-n", "--workers", type=int, default=2, help="worker processes (2)")
    launch.add_argument("-s", "--servers", type=int, default=1, help="server processes (1)")
    launch.add_argument("--timeout", type=float, help="stop the whole job after this many s")
    launch.add_argument("script", help="the training script (fit(..., kvstore='dist_sync'))")
    launch.add_argument("script_args", nargs=argparse.REMAINDER, help="its arguments")
    args = parser.parse_args(argv)

    try:
        if args.command == "tour":
            run_tour(args.out, epochs=args.epochs)
        elif args.command == "course":
            # Its packages (nbclient, nbconvert) come with the dev extra, not with mxlearn.
            from .commands.course import run_course

            if any(run.error for run in run_course(args.notebooks, args.out)):
                return 1
        elif args.command == "launch":
            result = run_job(
                args.script, args.script_args, args.workers, args.servers, args.timeout
            )
            print(f"mxlearn launch: {args.workers} workers finished in {result.seconds:.1f} s.")
        else:
            run_doctor()
    except MXLearnError as err:
        print(f"\nmxlearn: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
