"""Instructor commands (also ``course grading ...``)::

    python -m course_lib.grading release PS [PS ...] [--out DIR]
    python -m course_lib.grading manifest [--out FILE]
    python -m course_lib.grading gradebook GRADES.csv [GRADES.csv ...] --out gradebook.csv [--missing-as-zero]
        [--points-possible] [--format plain|canvas|moodle] [--roster CANVAS_EXPORT.csv] [--deadlines FILE
        --times PS=WHERE ... --late-penalty PCT --grace-days N --max-late-days N]
    python -m course_lib.grading report GRADES.csv --out report.html [--tests GRADES.tests.csv]
    python -m course_lib.grading gradescope PS --out PS_autograder.zip [--lock FILE] [--timeout S] [--memory MB]
        [--sandbox auto|require|off]
    python -m course_lib.grading similarity GRADES.csv|SUBMISSIONS... --out similarity.html [--submissions DIR]
        [--problem-set PS] [--top N] [--threshold X]
    python -m course_lib.grading prairielearn PS --out DIR [--image NAME] [--timeout S]
    python -m course_lib.grading grade PS SUBMISSIONS... --out grades.csv [--jobs N] [--force]
        [--timeout S] [--memory MB] [--feedback DIR] [--seed N] [--sandbox auto|require|off] [--manifest FILE]

PS is a problem set's id (``ps2``) or its unit's name (``spmv``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter

# jsonschema (through nbformat) imports rfc3987_syntax where it is installed (JupyterLab's jupyter-events needs
# it), and that module builds a Lark grammar as it is imported: about a second of every command's start, paid by
# each grading run. Only jsonschema's "iri" format check uses it, and nothing here checks formats.
sys.modules.setdefault("rfc3987_syntax", None)

from .catalog import problem_set_id
from .reporting.release import release

_ARGS_FD = "COURSE_GRADING_ARGS_FD"


def _hide_arguments(argv: list) -> None:
    """Start again with the arguments in an anonymous file instead of the command line, so that
    ``/proc/<pid>/cmdline`` (readable by every process) names no student's file. Returns only
    where that cannot be done."""
    if os.environ.get(_ARGS_FD) or not hasattr(os, "memfd_create"):
        return
    fd = os.memfd_create("course-grading-arguments", 0)
    os.write(fd, json.dumps(argv).encode())
    os.lseek(fd, 0, os.SEEK_SET)
    os.set_inheritable(fd, True)
    options = sys.orig_argv[1:sys.orig_argv.index("-m")] if "-m" in sys.orig_argv else []
    env = dict(os.environ, **{_ARGS_FD: str(fd)})
    # The new process starts with the interrupt signals blocked, so that every thread it makes (NumPy's and
    # Numba's too) blocks them and only the grader's waiting thread receives them (grading.running.interrupts).
    import signal

    from .running.interrupts import SIGNALS

    signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable,
                  [sys.executable, *options, "-m", "course_lib.grading", "grade", "(arguments hidden)"], env)
    except OSError:  # grade as started, arguments visible
        signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)
        os.close(fd)


def _hidden_arguments() -> list | None:
    fd = os.environ.pop(_ARGS_FD, None)
    if fd is None:
        return None
    with os.fdopen(int(fd), "rb") as f:
        return json.loads(f.read())


def _print_or_fail(action) -> int:
    """Run a command's ``action`` and print the line it returns: exit status 0.

    A ``ValueError`` is a mistake in the command's input (a missing file, a wrong column): its message goes
    to stderr, and the exit status is 2.

    Parameters
    ----------
    action : callable
        Takes nothing; does the command's work and returns the line that reports it.

    Returns
    -------
    int
        The exit status.
    """
    try:
        message = action()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(message)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.grading", description="Problem-set tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    rel = commands.add_parser("release", help="write the student version of problem sets from their solutions")
    rel.add_argument("problem_sets", nargs="+", help="problem set ids or unit names, e.g. ps1 or nbody")
    rel.add_argument("--out", help="output folder (default: problem_sets/)")
    man = commands.add_parser("manifest", help="record the hashes of the course files the grader judges with")
    man.add_argument("--out", help="manifest file (default: $COURSE_GRADING_MANIFEST or ~/.local/share/course_lib/)")
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
    gr.add_argument("--seed", type=int, help="seed of the hidden tests (default: random)")
    gr.add_argument("--sandbox", choices=("auto", "require", "off"), default="auto",
                    help="run each submission under bubblewrap: when installed (auto, default), always (require: "
                         "refuse without it) or never (off)")
    gr.add_argument("--manifest", help="course manifest to verify first (default: the one `manifest` wrote, if any)")
    gr.add_argument("--quiet", action="store_true", help="no progress bar")
    book = commands.add_parser("gradebook",
                               help="one row per student from grades CSVs (for Canvas, Moodle, Gradescope)")
    book.add_argument("grades", nargs="+", help="grades CSVs written by `grade` (one or more problem sets)")
    book.add_argument("--out", required=True,
                      help="gradebook CSV (see course_lib.grading.reporting.gradebook for its columns)")
    book.add_argument("--missing-as-zero", action="store_true",
                      help="a problem set a student has no grades for counts 0 (default: left empty, as missing)")
    book.add_argument("--points-possible", action="store_true",
                      help="a second row 'Points Possible' with each column's maximum (Canvas's layout)")
    book.add_argument("--format", choices=("plain", "canvas", "moodle"), default="plain",
                      help="plain (default), Canvas's gradebook import or Moodle's CSV grade import "
                           "(course_lib.grading.reporting.lms)")
    book.add_argument("--roster", help="Canvas: its exported gradebook CSV, to fill the students' Canvas ids")
    book.add_argument("--match", default="SIS Login ID",
                      help="Canvas: the roster column holding the students' notebook names (default SIS Login ID)")
    book.add_argument("--moodle-id", default="Username", help="Moodle: the user column's name (default Username)")
    book.add_argument("--columns", choices=("all", "totals", "questions"), default="all",
                      help="Canvas and Moodle: questions, problem sets and total (all), or only some")
    book.add_argument("--deadlines", help="CSV of problem_set,deadline: late penalties and grace days "
                                          "(course_lib.grading.reporting.deadlines)")
    book.add_argument("--times", action="append", metavar="PS=WHERE",
                      help="submission times of a problem set: its folder of notebooks (nbgrader timestamp.txt, "
                           "else the file's time) or a CSV; once per problem set")
    book.add_argument("--time-column", default="submitted_at", help="times CSV: the time column")
    book.add_argument("--student-column", default="student", help="times CSV: the student column")
    book.add_argument("--timezone", default="UTC", help="zone of times written without one (default UTC)")
    book.add_argument("--late-penalty", type=float, default=10.0,
                      help="percent of a problem set's points per late day (default 10)")
    book.add_argument("--grace-days", type=int, default=0, help="late days without penalty per student and term")
    book.add_argument("--max-late-days", type=int, help="beyond this many days late, no points")
    rep = commands.add_parser("report", help="a self-contained HTML class report of one problem set's grades")
    rep.add_argument("grades", help="grades CSV of one problem set, written by `grade`")
    rep.add_argument("--out", required=True, help="HTML file to write (figures embedded; opens without a server)")
    rep.add_argument("--tests", help="tests CSV written by `grade` (default: GRADES.tests.csv beside GRADES, if any)")
    rep.add_argument("--top", type=int, default=10, help="how many of the most failed tests to show (default 10)")
    sim = commands.add_parser("similarity", help="pairs of submissions sharing unusual code, as a self-contained "
                                                 "HTML report (course_lib.grading.reporting.similarity)")
    sim.add_argument("inputs", nargs="+", help="a grades CSV written by `grade`, or notebooks / folders of them")
    sim.add_argument("--out", required=True, help="HTML file to write")
    sim.add_argument("--submissions", help="folder of the grades CSV's notebooks (default: the CSV's folder)")
    sim.add_argument("--problem-set", help="problem set (default: the grades CSV's, or the notebooks')")
    sim.add_argument("--top", type=int, default=20, help="pairs shown side by side besides the flagged (default 20)")
    sim.add_argument("--threshold", type=float, default=0.6, help="score from which a pair is flagged (default 0.6)")
    pl = commands.add_parser("prairielearn", help="write a PrairieLearn external-grader question of a problem set "
                                                  "(course_lib.grading.reporting.prairielearn)")
    pl.add_argument("problem_set", help="a problem set id or unit name, e.g. ps1 or nbody")
    pl.add_argument("--out", required=True, help="folder for questions/, serverFilesCourse/ and grader_image/")
    pl.add_argument("--image", help="the grader image's name in info.json (default course-grader-PS)")
    pl.add_argument("--timeout", type=int, default=600, help="PrairieLearn's limit on a grading job (s, max 600)")
    pl.add_argument("--test-timeout", type=float, default=60.0, help="as grade's --timeout (default 60)")
    pl.add_argument("--memory", type=int, default=4096, help="as for grade (default 4096)")
    pl.add_argument("--sandbox", choices=("auto", "require", "off"), default="auto", help="as for grade (default auto)")
    pl.add_argument("--lock", help="lock file to install with (default: the repository's requirements/lock.txt)")
    gs = commands.add_parser("gradescope", help="write a Gradescope autograder archive of a problem set")
    gs.add_argument("problem_set", help="a problem set id or unit name, e.g. ps1 or nbody")
    gs.add_argument("--out", required=True, help="the .zip to upload to Gradescope")
    gs.add_argument("--lock", help="lock file to install with (default: the repository's requirements/lock.txt)")
    gs.add_argument("--timeout", type=float, default=60.0, help="as for grade (default 60)")
    gs.add_argument("--memory", type=int, default=4096, help="as for grade (default 4096)")
    gs.add_argument("--sandbox", choices=("auto", "require", "off"), default="auto", help="as for grade (default auto)")
    hidden = _hidden_arguments()
    if hidden is not None:
        argv = hidden
    else:
        command_line = argv is None or list(argv) == sys.argv[len(sys.argv) - len(argv):]  # also `course grading`
        argv = sys.argv[1:] if argv is None else list(argv)
        if command_line and argv[:1] == ["grade"]:
            _hide_arguments(argv)
    ns = parser.parse_args(argv)
    try:
        if ns.command == "release":
            ns.problem_sets = [problem_set_id(ps) for ps in ns.problem_sets]
        elif ns.command == "grade":
            ns.problem_set = problem_set_id(ns.problem_set)
    except ValueError as exc:
        parser.error(str(exc))
    if ns.command == "release":
        from .running.manifest import build, default_path

        for ps in ns.problem_sets:
            try:
                print(f"wrote {release(ps, ns.out)}")
            except ValueError as exc:
                parser.error(str(exc))
        if default_path().exists():  # the course changed: an instructor's manifest follows it
            print(f"updated the course manifest {build()}")
    elif ns.command == "manifest":
        from .running.manifest import build

        print(f"recorded the course files' hashes in {build(ns.out)}")
    elif ns.command == "gradebook":
        from .reporting.gradebook import write

        def gradebook():
            if ns.format == "plain" and ns.deadlines is None:
                book = write(ns.grades, ns.out, missing_as_zero=ns.missing_as_zero,
                             points_possible=ns.points_possible)
            else:
                from .reporting.deadlines import LatePolicy, parse_times_arguments
                from .reporting.lms import export

                book, late = export(
                    ns.grades, ns.out, format=ns.format, missing_as_zero=ns.missing_as_zero,
                    points_possible=ns.points_possible, deadlines=ns.deadlines, times=parse_times_arguments(ns.times),
                    policy=LatePolicy(ns.late_penalty, ns.grace_days, ns.max_late_days), timezone=ns.timezone,
                    student_column=ns.student_column, time_column=ns.time_column, roster=ns.roster, match=ns.match,
                    moodle_id=ns.moodle_id, columns=ns.columns)
                if late:
                    print(f"late: {sum(1 for x in late.values() if x.days_late)} submission(s), "
                          f"{sum(1 for x in late.values() if x.penalty)} with a penalty")
            return (f"wrote {os.fspath(ns.out)}: {len(book.students)} students, "
                    f"problem sets {', '.join(book.problem_sets)}")

        return _print_or_fail(gradebook)
    elif ns.command == "report":
        from .reporting.classreport import write_report

        return _print_or_fail(lambda: f"wrote {write_report(ns.grades, ns.out, ns.tests, top=ns.top)}")
    elif ns.command == "prairielearn":
        from .reporting.prairielearn import write_question

        def prairielearn():
            question = write_question(ns.problem_set, ns.out, image=ns.image, timeout=ns.timeout,
                                      test_timeout=ns.test_timeout, memory_mb=ns.memory, sandbox=ns.sandbox,
                                      lock=ns.lock)
            return (f"wrote {question}, {os.path.join(ns.out, 'serverFilesCourse', 'course_grader')} and "
                    f"{os.path.join(ns.out, 'grader_image')}: build and push the image (its README.md), then copy "
                    "questions/ and serverFilesCourse/ into the PrairieLearn course")

        return _print_or_fail(prairielearn)
    elif ns.command == "similarity":
        from .reporting.similarity import write_report as write_similarity

        def similarity():
            pairs, problem_set = write_similarity(ns.inputs, ns.out, problem_set=ns.problem_set,
                                                  submissions=ns.submissions, top=ns.top, threshold=ns.threshold)
            flagged = [p for p in pairs if p.flagged]
            return (f"wrote {os.fspath(ns.out)}: {problem_set}, {len(flagged)} flagged pair(s)"
                    + "".join(f"\n  {p.score:.2f} {p.a} & {p.b}" for p in flagged))

        return _print_or_fail(similarity)
    elif ns.command == "gradescope":
        from .reporting.gradescope import build_archive

        def gradescope():
            path = build_archive(ns.problem_set, ns.out, lock=ns.lock, timeout=ns.timeout, memory_mb=ns.memory,
                                 sandbox=ns.sandbox)
            return f"wrote {path}: upload it as the autograder of a Gradescope programming assignment"

        return _print_or_fail(gradescope)
    elif ns.command == "grade":
        from .running.grader import GradeOptions, grade
        from .running.interrupts import instructor_interrupts

        try:
            with instructor_interrupts() as interrupts:
                rows = grade(ns.problem_set, ns.submissions, ns.out, jobs=ns.jobs, force=ns.force,
                             options=GradeOptions(timeout=ns.timeout, memory_mb=ns.memory), feedback_dir=ns.feedback,
                             seed=ns.seed, progress=not ns.quiet, log=print, sandbox=ns.sandbox,
                             manifest=ns.manifest)
        except ValueError as exc:
            parser.error(str(exc))
        except RuntimeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print(f"interrupted: the students graded so far are in {os.fspath(ns.out)}; run the same command again "
                  "to grade the others", file=sys.stderr)
            return 130
        if interrupts["ignored"]:
            print(f"ignored {interrupts['ignored']} interrupt signal(s) sent by submissions")
        totals = Counter()
        for row in rows:
            totals[row["student"]] += float(row["points"])
        print(f"{len(totals)} students in {os.fspath(ns.out)}; mean total {sum(totals.values()) / max(len(totals), 1):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
