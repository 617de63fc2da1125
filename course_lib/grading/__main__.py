"""Instructor commands: ``python -m course_lib.grading release PS [PS ...]``."""

from __future__ import annotations

import argparse
import sys

from .release import release


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.grading", description="Problem-set tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    rel = commands.add_parser("release", help="write the student version of problem sets from their solutions")
    rel.add_argument("problem_sets", nargs="+", help="e.g. ps1")
    rel.add_argument("--out", help="output folder (default: problem_sets/)")
    ns = parser.parse_args(argv)
    if ns.command == "release":
        for ps in ns.problem_sets:
            print(f"wrote {release(ps, ns.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
