"""Command line: ``python -m mxlearn tour | doctor``."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mxlearn", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    tour = commands.add_parser("tour", help="the Module API walk-through, headless")
    tour.add_argument("--out", default="runs/tour", help="folder for checkpoints (runs/tour)")
    tour.add_argument("--epochs", type=int, default=5, help="epochs per training phase (5)")
    commands.add_parser("doctor", help="versions, device, and whether widgets will render")
    args = parser.parse_args(argv)

    from .errors import MXLearnError

    try:
        if args.command == "tour":
            from .tour import run_tour

            run_tour(args.out, epochs=args.epochs)
        else:
            from .doctor import run_doctor

            run_doctor()
    except MXLearnError as err:
        print(f"\nmxlearn: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
