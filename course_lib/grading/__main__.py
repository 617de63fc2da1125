"""Instructor commands (also ``course grading ...``)::

    python -m course_lib.grading release PS [PS ...] [--out DIR]
    python -m course_lib.grading grade PS SUBMISSIONS... --out grades.csv [--jobs N] [--force]
        [--timeout S] [--memory MB] [--feedback DIR] [--seed N]

PS is a problem set's id (``ps2``) or its unit's name (``spmv``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter

from .catalog import problem_set_id
from .release import release


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.grading", description="Problem-set tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    rel = commands.add_parser("release", help="write the student version of problem sets from their solutions")
    rel.add_argument("problem_sets", nargs="+", help="problem set ids or unit names, e.g. ps1 or nbody")
    rel.add_argument("--out", help="output folder (default: problem_sets/)")
    gr = commands.add_parser("grade", help="grade students' notebooks into a CSV file, each in its own process")
    gr.add_argument("problem_set", help="a problem set id or unit name, e.g. ps2 or spmv")
    gr.add_argument("submissions", nargs="+", help="students' notebooks (one file per student), or folders holding them")
    gr.add_argument("--out", required=True, help="grades CSV (one row per student and question); re-runs resume")
    gr.add_argument("--jobs", type=int, default=1, help="submissions graded at once (default 1)")
    gr.add_argument("--force", action="store_true", help="grade again students already in the CSV")
    gr.add_argument("--timeout", type=float, default=60.0,
                    help="seconds allowed to run the notebook and to each test (default 60)")
    gr.add_argument("--memory", type=int, default=4096, help="memory limit per submission in MB (default 4096; 0: none)")
    gr.add_argument("--feedback", help="folder for one Markdown feedback file per student")
    gr.add_argument("--seed", type=int,
                    help="seed of the hidden tests (default: random; a seed given here is visible in the process list)")
    gr.add_argument("--quiet", action="store_true", help="no progress bar")
    ns = parser.parse_args(argv)
    try:
        if ns.command == "release":
            ns.problem_sets = [problem_set_id(ps) for ps in ns.problem_sets]
        else:
            ns.problem_set = problem_set_id(ns.problem_set)
    except ValueError as exc:
        parser.error(str(exc))
    if ns.command == "release":
        for ps in ns.problem_sets:
            try:
                print(f"wrote {release(ps, ns.out)}")
            except ValueError as exc:
                parser.error(str(exc))
    elif ns.command == "grade":
        from .grader import GradeOptions, grade, not_dumpable

        not_dumpable()  # workers (same user) cannot read this process's memory, where Linux allows
        try:
            rows = grade(ns.problem_set, ns.submissions, ns.out, jobs=ns.jobs, force=ns.force,
                         options=GradeOptions(timeout=ns.timeout, memory_mb=ns.memory), feedback_dir=ns.feedback,
                         seed=ns.seed, progress=not ns.quiet, log=print)
        except ValueError as exc:
            parser.error(str(exc))
        except RuntimeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        totals = Counter()
        for row in rows:
            totals[row["student"]] += float(row["points"])
        print(f"{len(totals)} students in {os.fspath(ns.out)}; mean total {sum(totals.values()) / max(len(totals), 1):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
